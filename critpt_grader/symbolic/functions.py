"""The special functions the grammar knows beyond the elementary ones, and how the grader
evaluates them safely.

Three things about a special function matter to the grader, and this module holds them in one
table so that the parser, the size checks and the sampler agree:

* **Its text.** A name, its arities, and which arguments are *orders* (a degree, an index, a
  parameter of a hypergeometric series), written as SymPy prints them (``polylog(2, x)``,
  ``assoc_legendre(n, m, x)``, ``hyper((a, b), (c,), x)``). :data:`SPECIAL_FUNCTIONS` is the
  parser's table; :mod:`critpt_grader.symbolic.parse` adds the elementary functions.
* **Its cost.** Work grows with an order, not with a size of text: ``hermite(10**8, x)`` is a
  polynomial of degree 10**8, ``polylog(-10**5, z)`` a rational function as large, and SymPy
  expands some of them the moment they are built. So a number order beyond
  :data:`MAX_ORDER` is refused by the grammar (``order_too_large``, a limit of the text), and
  at a sample point :func:`order_arguments` lets the size check of
  :mod:`critpt_grader.symbolic.magnitudes` refuse an order that grew past it (``10**6*n``).
  The polynomial families and the incomplete gamma functions are expanded while the text is
  read only for small number orders (:data:`EAGER_ORDER`), where the result is small.
* **Its value at a point.** SymPy evaluates some of these calls symbolically when a number
  is put in: ``gegenbauer(7/3, a, x)`` becomes a polynomial (wrong: the degree is not an
  integer), ``hermite(10**6, 13/10)`` a million-term sum. :func:`numeric_form` replaces
  such calls with *numeric stand-ins* that never evaluate symbolically and take their value
  from mpmath, at the precision asked, and nothing else; the sampler and the constant
  evaluator substitute points into that form. Stand-ins also give a value to calls SymPy
  cannot evaluate (``assoc_laguerre``, ``jn`` of a non-integer order, ``erfcinv``).

Two functions come from mpmath alone (SymPy has no Struve functions): ``struveh`` and
``struvel``, defined here as SymPy functions that never evaluate symbolically.

**Left out:** ``meijerg`` (mpmath's evaluation of a Meijer G-function runs for seconds with
parameters as small as 100, and its parameters nest tuples in tuples), and the number-theory
functions. A name outside the table is an opaque function with no value
(:mod:`critpt_grader.symbolic.sampling`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import mpmath
import sympy

MAX_ORDER = 256  # |order| of a special function, in the text and at a sample point
EAGER_ORDER = 32  # number orders up to which SymPy may expand a call while it is read
MAX_PARAMETERS = 8  # parameters in each tuple of a hypergeometric function


class struveh(sympy.Function):  # lower case: the name is the text's
    """The Struve function H_nu(z) (mpmath's ``struveh``); never evaluated symbolically."""

    nargs = 2


class struvel(sympy.Function):  # lower case: the name is the text's
    """The modified Struve function L_nu(z) (mpmath's ``struvel``); never evaluated
    symbolically."""

    nargs = 2


@dataclass(frozen=True, slots=True)
class Special:
    """One entry of the grammar's table of special functions.

    ``orders``: positions of arguments whose size sets the cost (degree, index, series
    parameter); a number there must be at most :data:`MAX_ORDER` in modulus. ``tuples``:
    positions that take a tuple of such parameters (``hyper``). ``whole_orders``: a number
    order must be a nonnegative integer (SymPy builds the polynomial of the integer part of any
    other number, a wrong value). ``expands``: SymPy expands a call with number orders into a
    sum as large as the order, so it is built unevaluated above :data:`EAGER_ORDER`.
    ``eager_bound``: evaluated only while its number arguments stay small (the parser's rule
    for ``zeta`` and ``factorial``)."""

    build: Callable
    arities: tuple[int, ...]
    orders: tuple[int, ...] = ()
    tuples: tuple[int, ...] = ()
    whole_orders: bool = False
    expands: bool = False
    eager_bound: bool = False


def _alias(make: Callable) -> Callable:
    """A builder for a name SymPy spells otherwise (``E1(z)`` is ``expint(1, z)``)."""

    def build(*args, evaluate: bool = True):
        return make(*args, evaluate=evaluate)

    return build


SPECIAL_FUNCTIONS: dict[str, Special] = {
    # zeta functions and polylogarithms
    "polylog": Special(sympy.polylog, (2,), orders=(0,)),
    "dirichlet_eta": Special(sympy.dirichlet_eta, (1, 2), eager_bound=True),
    "lerchphi": Special(sympy.lerchphi, (3,), orders=(1,)),
    "harmonic": Special(sympy.harmonic, (1, 2), orders=(1,), eager_bound=True),
    # gamma family
    "beta": Special(sympy.beta, (1, 2)),
    "uppergamma": Special(sympy.uppergamma, (2,), orders=(0,), expands=True),
    "lowergamma": Special(sympy.lowergamma, (2,), orders=(0,), expands=True),
    "digamma": Special(_alias(lambda z, evaluate: sympy.polygamma(0, z, evaluate=evaluate)), (1,)),
    "trigamma": Special(_alias(lambda z, evaluate: sympy.polygamma(1, z, evaluate=evaluate)), (1,)),
    # elliptic integrals
    "elliptic_k": Special(sympy.elliptic_k, (1,)),
    "elliptic_e": Special(sympy.elliptic_e, (1, 2)),
    "elliptic_f": Special(sympy.elliptic_f, (2,)),
    "elliptic_pi": Special(sympy.elliptic_pi, (2, 3)),
    # Airy functions
    **{name: Special(getattr(sympy, name), (1,)) for name in ("airyai", "airybi")},
    **{name: Special(getattr(sympy, name), (1,)) for name in ("airyaiprime", "airybiprime")},
    # Bessel relatives
    "jn": Special(sympy.jn, (2,), orders=(0,)),
    "yn": Special(sympy.yn, (2,), orders=(0,)),
    "hankel1": Special(sympy.hankel1, (2,), orders=(0,)),
    "hankel2": Special(sympy.hankel2, (2,), orders=(0,)),
    "struveh": Special(struveh, (2,), orders=(0,)),
    "struvel": Special(struvel, (2,), orders=(0,)),
    # the generalized hypergeometric function
    "hyper": Special(sympy.hyper, (3,), tuples=(0, 1)),
    # orthogonal polynomials
    "legendre": Special(sympy.legendre, (2,), orders=(0,), expands=True),
    "assoc_legendre": Special(sympy.assoc_legendre, (3,), orders=(0, 1), expands=True),
    "hermite": Special(sympy.hermite, (2,), orders=(0,), expands=True),
    "chebyshevt": Special(sympy.chebyshevt, (2,), orders=(0,), expands=True),
    "chebyshevu": Special(sympy.chebyshevu, (2,), orders=(0,), expands=True),
    "laguerre": Special(sympy.laguerre, (2,), orders=(0,), whole_orders=True, expands=True),
    "assoc_laguerre": Special(
        sympy.assoc_laguerre, (3,), orders=(0, 1), whole_orders=True, expands=True
    ),
    "gegenbauer": Special(sympy.gegenbauer, (3,), orders=(0, 1), whole_orders=True, expands=True),
    "jacobi": Special(sympy.jacobi, (4,), orders=(0, 1, 2), whole_orders=True, expands=True),
    "Ynm": Special(sympy.Ynm, (4,), orders=(0, 1)),
    # Lambert W
    "LambertW": Special(sympy.LambertW, (1, 2), orders=(1,)),
    # exponential, logarithmic, sine and cosine integrals
    "Ei": Special(sympy.Ei, (1,)),
    "expint": Special(sympy.expint, (2,), orders=(0,), expands=True),
    "E1": Special(_alias(lambda z, evaluate: sympy.expint(1, z, evaluate=evaluate)), (1,)),
    "li": Special(sympy.li, (1,)),
    "Li": Special(sympy.Li, (1,)),
    **{name: Special(getattr(sympy, name), (1,)) for name in ("Si", "Ci", "Shi", "Chi")},
    # Fresnel integrals, sinc, inverse error functions
    "fresnels": Special(sympy.fresnels, (1,)),
    "fresnelc": Special(sympy.fresnelc, (1,)),
    "sinc": Special(sympy.sinc, (1,)),
    "erfinv": Special(sympy.erfinv, (1,)),
    "erfcinv": Special(sympy.erfcinv, (1,)),
    "erf2": Special(sympy.erf2, (2,)),
}

# Order positions of the elementary table's functions with orders (the parser's own entries).
ELEMENTARY_ORDERS: dict[str, tuple[int, ...]] = {
    name: (0,) for name in ("besselj", "bessely", "besseli", "besselk")
}


# --- orders of a built call --------------------------------------------------------------------


def _positions(*positions: int) -> Callable[[sympy.Basic], tuple]:
    return lambda call: tuple(call.args[i] for i in positions if i < len(call.args))


def _hyper_parameters(call: sympy.Basic) -> tuple:
    return (*call.args[0], *call.args[1])


# What sets the cost of evaluating a call, by its SymPy class. ``dirichlet_eta``, ``zeta`` and
# ``harmonic`` are absent: mpmath evaluates them at any size in microseconds, and SymPy's own
# large-argument work is kept away by the parser's eager bound and by the numeric forms.
_ORDERS: dict[type, Callable[[sympy.Basic], tuple]] = {
    sympy.polylog: _positions(0),
    sympy.lerchphi: _positions(1),
    sympy.uppergamma: _positions(0),
    sympy.lowergamma: _positions(0),
    sympy.jn: _positions(0),
    sympy.yn: _positions(0),
    sympy.hankel1: _positions(0),
    sympy.hankel2: _positions(0),
    struveh: _positions(0),
    struvel: _positions(0),
    sympy.besselj: _positions(0),
    sympy.bessely: _positions(0),
    sympy.besseli: _positions(0),
    sympy.besselk: _positions(0),
    sympy.hyper: _hyper_parameters,
    sympy.legendre: _positions(0),
    sympy.assoc_legendre: _positions(0, 1),
    sympy.hermite: _positions(0),
    sympy.chebyshevt: _positions(0),
    sympy.chebyshevu: _positions(0),
    sympy.laguerre: _positions(0),
    sympy.assoc_laguerre: _positions(0, 1),
    sympy.gegenbauer: _positions(0, 1),
    sympy.jacobi: _positions(0, 1, 2),
    sympy.Ynm: _positions(0, 1),
    sympy.LambertW: _positions(1),
    sympy.expint: _positions(0),
}


def order_arguments(call: sympy.Basic) -> tuple:
    """The arguments of ``call`` that set the cost of evaluating it (its orders), or ()."""
    orders = _ORDERS.get(_original(type(call)))
    return orders(call) if orders is not None else ()


# --- numeric forms ---------------------------------------------------------------------------


class _Numeric(sympy.Function):
    """A call evaluated by mpmath only: no symbolic evaluation when it is built (so a point
    put into it stays a call), and ``evalf`` computes it at the precision asked."""

    original: type = sympy.Function
    # mpmath's function of the call's mpmath arguments; None: the original's own evalf
    mp: Callable | None = None

    @classmethod
    def eval(cls, *args):
        return None

    def _eval_evalf(self, prec):
        if not all(arg.is_number for arg in self.args):
            return None
        if self.mp is None:
            return self.original(*self.args, evaluate=False)._eval_evalf(prec)
        try:
            args = [arg._to_mpmath(prec + 5) for arg in self.args]
        except (ValueError, TypeError, AttributeError):
            return None
        with mpmath.workprec(prec):
            value = self.mp(*args)
        return sympy.Expr._from_mpmath(value, prec)

    def _sympystr(self, printer) -> str:
        return f"{self.original.__name__}({printer.stringify(self.args, ', ')})"


def _spherical(kind: Callable) -> Callable:
    """``jn``/``yn`` of any order: ``sqrt(pi/2)/sqrt(z) * J_{nu+1/2}(z)`` on principal
    branches (the order-1/2 power of the Bessel function meets ``1/sqrt(z)``)."""

    def value(nu, z):
        return mpmath.sqrt(mpmath.pi / 2) / mpmath.sqrt(z) * kind(nu + mpmath.mpf(1) / 2, z)

    return value


def _dirichlet_eta(s, a=None):
    if a is None:
        return mpmath.altzeta(s)
    return mpmath.zeta(s, a) - mpmath.power(2, 1 - s) * mpmath.zeta(s, (a + 1) / 2)


def _harmonic(n, m=None):
    if m is None:
        return mpmath.harmonic(n)
    return mpmath.zeta(m) - mpmath.zeta(m, n + 1)


# The classes SymPy evaluates symbolically at number arguments in a way that is costly or
# wrong, or cannot evaluate numerically at all, and how mpmath evaluates them instead.
_NUMERIC: dict[type, Callable | None] = {
    sympy.legendre: None,
    sympy.assoc_legendre: None,
    sympy.hermite: None,
    sympy.chebyshevt: None,
    sympy.chebyshevu: None,
    sympy.gegenbauer: None,
    sympy.jacobi: None,
    sympy.laguerre: lambda n, z: mpmath.laguerre(n, 0, z),
    sympy.assoc_laguerre: lambda n, a, z: mpmath.laguerre(n, a, z),
    sympy.jn: _spherical(mpmath.besselj),
    sympy.yn: _spherical(mpmath.bessely),
    sympy.expint: None,
    sympy.uppergamma: None,
    sympy.lowergamma: None,
    sympy.zeta: None,
    sympy.dirichlet_eta: _dirichlet_eta,
    sympy.harmonic: _harmonic,
    sympy.erfcinv: lambda x: mpmath.erfinv(1 - x),
    sympy.erf2: lambda x, y: mpmath.erf(y) - mpmath.erf(x),
}
_STAND_INS: dict[type, type[_Numeric]] = {
    original: type(
        f"numeric_{original.__name__}",
        (_Numeric,),
        {"original": original, "mp": staticmethod(mp) if mp is not None else None},
    )
    for original, mp in _NUMERIC.items()
}
_ORIGINALS = {stand_in: original for original, stand_in in _STAND_INS.items()}


def _original(cls: type) -> type:
    return _ORIGINALS.get(cls, cls)


def numeric_form(expr: sympy.Basic) -> sympy.Basic:
    """``expr`` with every call SymPy would evaluate symbolically at a number replaced by its
    numeric stand-in (see the module docstring). Substitute points into this form."""
    if not expr.has(*_STAND_INS):
        return expr
    return _rebuild(expr, lambda node, args: _STAND_INS[type(node)](*args), _STAND_INS)


def _rebuild(expr: sympy.Basic, make: Callable, kinds: Iterable[type]) -> sympy.Basic:
    """Rebuild ``expr`` bottom-up (without recursion), replacing the nodes of ``kinds``."""
    kinds = tuple(kinds)
    done: dict[sympy.Basic, sympy.Basic] = {}
    stack: list[tuple[sympy.Basic, bool]] = [(expr, False)]
    while stack:
        node, expanded = stack.pop()
        if node in done:
            continue
        if not node.args:
            done[node] = node
            continue
        if not expanded:
            stack.append((node, True))
            stack.extend((arg, False) for arg in node.args if arg not in done)
            continue
        args = [done[arg] for arg in node.args]
        if type(node) in kinds:  # exactly: a subclass has no entry of its own
            done[node] = make(node, args)
        elif any(new is not old for new, old in zip(args, node.args, strict=True)):
            done[node] = node.func(*args)
        else:
            done[node] = node
    return done[expr]
