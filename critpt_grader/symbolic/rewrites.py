"""The exact rewrites the prover tries on a difference, cheapest first.

Each is an identity-preserving transformation, so a difference it turns into 0 is proved
zero. They cover the forms physicists write the same quantity in:

* algebra: ``expand``, ``together``, ``radsimp``, ``powsimp``;
* trigonometry: the Pythagorean identity, ``expand_trig``;
* the **exponential form** of trigonometric and hyperbolic functions, put over one
  denominator (``tanh(x)`` against its exponentials; Planck's ``1/(exp(x)-1) + 1/2`` against
  ``coth(x/2)/2``; Fermi's ``1/(exp(x)+1)`` against ``(1 - tanh(x/2))/2``);
* **gamma functions**: ``gammasimp`` (the recurrence ``gamma(x+1) = x*gamma(x)``, the
  reflection ``gamma(x)*gamma(1-x) = pi/sin(pi*x)``, factorials and binomials) and
  ``expand_func``;
* **error functions**: everything in terms of ``erf`` (``erfc = 1 - erf``,
  ``erfi(x) = -I*erf(I*x)``);
* **Bessel functions of half-integer order**: ``expand_func`` reduces the order to ±1/2 by
  the recurrences, then the closed forms of DLMF 10.16.1, 10.39.1 and 10.39.2 on principal
  branches (``besseli(1/2, z) = sqrt(2/pi)*sinh(z)/sqrt(z)``...);
* **special functions by their definitions** (:func:`special_function_forms`), each an
  identity on the whole cut plane, checked against mpmath at complex points and on both
  halves of the real axis: ``sinc(z) = sin(z)/z``; ``beta`` in gamma functions;
  ``dirichlet_eta`` and ``harmonic`` in zeta functions; ``Li(z) = li(z) - li(2)`` and
  ``li(z) = Ei(log(z))``; ``erfcinv(z) = erfinv(1 - z)``, ``erf2``; the Hankel functions as
  ``J ± iY``; the spherical Bessel functions as ``sqrt(pi/2)*J_{n+1/2}(z)/sqrt(z)`` (then the
  half-integer closed forms); ``exp(k*LambertW(z)) = (z/LambertW(z))**k`` for integer ``k``;
  ``airyai`` and ``airybi`` as modified Bessel functions (SymPy's forms, on principal
  branches) and ``besselk`` of a non-integer order as ``besseli``;
* **algebraic numbers** (principal roots, nested radicals such as Gauss's ``cos(2*pi/17)``):
  a constant difference whose minimal polynomial is ``t`` is 0;
* ``trigsimp`` and, last, ``simplify``.
"""

from __future__ import annotations

from collections.abc import Callable

import sympy

Rewrite = Callable[[sympy.Expr], sympy.Expr]

_T = sympy.Symbol("t")


def _pythagoras(expr: sympy.Expr) -> sympy.Expr:
    from sympy.simplify.fu import TR6  # cos(u)**2 -> 1 - sin(u)**2, an exact identity

    # A sum of many Pythagorean pairs cancels in microseconds where trigsimp takes seconds.
    return sympy.expand(TR6(expr))


def _exponential_form(expr: sympy.Expr) -> sympy.Expr:
    rewritten = sympy.expand(expr.rewrite(sympy.exp))
    if rewritten == 0:
        return rewritten
    return sympy.cancel(sympy.together(rewritten))


def _gamma_functions(expr: sympy.Expr) -> sympy.Expr:
    return sympy.gammasimp(expr)


def _expanded_functions(expr: sympy.Expr) -> sympy.Expr:
    return sympy.expand(sympy.expand_func(expr))


def _error_functions(expr: sympy.Expr) -> sympy.Expr:
    return sympy.expand(sympy.expand_func(expr).rewrite(sympy.erf))


def _half_integer_bessel(expr: sympy.Expr) -> sympy.Expr:
    calls = expr.atoms(sympy.besselj, sympy.bessely, sympy.besseli, sympy.besselk)
    if not any(_half_integer(call.args[0]) for call in calls):
        return expr
    reduced = sympy.expand_func(expr)  # the recurrences, down to orders ±1/2
    rewritten = reduced.replace(
        lambda node: isinstance(node, _BESSEL) and node.args[0] in (sympy.S.Half, -sympy.S.Half),
        lambda node: _closed_form(type(node), node.args[0], node.args[1]),
    )
    return sympy.cancel(sympy.expand(rewritten))


_BESSEL = (sympy.besselj, sympy.bessely, sympy.besseli, sympy.besselk)


def _half_integer(order: sympy.Expr) -> bool:
    return bool((2 * order).is_integer and not order.is_integer)


def _closed_form(kind: type, order: sympy.Expr, z: sympy.Expr) -> sympy.Expr:
    """Orders ±1/2 in elementary functions; ``sqrt(2/pi)/sqrt(z)`` is the principal
    ``(2/(pi*z))**(1/2)`` of DLMF, valid on the whole cut plane."""
    root = sympy.sqrt(2 / sympy.pi) / sympy.sqrt(z)
    half = order == sympy.S.Half
    if kind is sympy.besselj:
        return root * (sympy.sin(z) if half else sympy.cos(z))
    if kind is sympy.bessely:
        return root * (-sympy.cos(z) if half else sympy.sin(z))
    if kind is sympy.besseli:
        return root * (sympy.sinh(z) if half else sympy.cosh(z))
    return sympy.sqrt(sympy.pi / 2) / sympy.sqrt(z) * sympy.exp(-z)  # K(1/2) = K(-1/2)


def _lambert_exponential(node: sympy.Expr) -> sympy.Expr:
    """``exp(k*W(z) + rest)`` as ``(z/W(z))**k * exp(rest)`` for integer ``k``: ``W*exp(W) = z``
    on every branch."""
    factor, rest = sympy.S.One, []
    for term in sympy.Add.make_args(node.args[0]):
        coefficient, body = term.as_coeff_Mul()
        if isinstance(body, sympy.LambertW) and coefficient.is_Integer:
            factor *= (body.args[0] / body) ** coefficient
        else:
            rest.append(term)
    if factor == 1:
        return node
    return factor * sympy.exp(sympy.Add(*rest))


def _spherical(kind: type) -> Callable:
    def closed(nu: sympy.Expr, z: sympy.Expr) -> sympy.Expr:
        return sympy.sqrt(sympy.pi / 2) * kind(nu + sympy.S.Half, z) / sympy.sqrt(z)

    return closed


def _non_integer_besselk(node: sympy.Expr) -> sympy.Expr:
    """``K_nu = pi/2 * (I_{-nu} - I_nu)/sin(nu*pi)`` (DLMF 10.27.4) for a non-integer number
    order."""
    nu, z = node.args
    if not (nu.is_Rational and not nu.is_Integer):
        return node
    return sympy.pi / 2 * (sympy.besseli(-nu, z) - sympy.besseli(nu, z)) / sympy.sin(nu * sympy.pi)


# Each a definition or an identity on the whole cut plane
# (tests/unit/symbolic/test_special_functions.py checks them against mpmath); applied in
# one pass, innermost calls first.
_DEFINITIONS: dict[type, Callable[..., sympy.Expr]] = {
    sympy.sinc: lambda z: sympy.sin(z) / z,
    sympy.beta: lambda a, b: sympy.gamma(a) * sympy.gamma(b) / sympy.gamma(a + b),
    sympy.dirichlet_eta: lambda s, a=None: (
        (1 - 2 ** (1 - s)) * sympy.zeta(s)
        if a is None
        else sympy.zeta(s, a) - 2 ** (1 - s) * sympy.zeta(s, (a + 1) / 2)
    ),
    sympy.harmonic: lambda n, m=None: (
        sympy.polygamma(0, n + 1) + sympy.EulerGamma
        if m is None
        else sympy.zeta(m) - sympy.zeta(m, n + 1)
    ),
    sympy.Li: lambda z: sympy.li(z) - sympy.li(2),
    sympy.li: lambda z: sympy.Ei(sympy.log(z)),
    sympy.erfcinv: lambda z: sympy.erfinv(1 - z),
    sympy.erf2: lambda x, y: sympy.erf(y) - sympy.erf(x),
    sympy.hankel1: lambda nu, z: sympy.besselj(nu, z) + sympy.I * sympy.bessely(nu, z),
    sympy.hankel2: lambda nu, z: sympy.besselj(nu, z) - sympy.I * sympy.bessely(nu, z),
    sympy.jn: _spherical(sympy.besselj),
    sympy.yn: _spherical(sympy.bessely),
    sympy.airyai: lambda z: sympy.airyai(z).rewrite(sympy.besseli),
    sympy.airybi: lambda z: sympy.airybi(z).rewrite(sympy.besseli),
}


def special_function_forms(expr: sympy.Expr) -> sympy.Expr:
    """The special functions of ``expr`` by their definitions (see the module docstring)."""
    rewritten = expr
    for _ in range(3):  # a definition may bring in another (Li in li, li in Ei)
        if not rewritten.has(*_DEFINITIONS):
            break
        rewritten = rewritten.replace(
            lambda node: type(node) in _DEFINITIONS,
            lambda node: _DEFINITIONS[type(node)](*node.args),
        )
    rewritten = rewritten.replace(
        lambda node: isinstance(node, sympy.exp) and node.has(sympy.LambertW),
        _lambert_exponential,
    )
    return rewritten.replace(lambda node: isinstance(node, sympy.besselk), _non_integer_besselk)


def _special_functions(expr: sympy.Expr) -> sympy.Expr:
    """:func:`special_function_forms`, then the simplifications that close them: algebra,
    the half-integer Bessel forms, gamma functions, one denominator."""
    rewritten = special_function_forms(expr)
    if rewritten == expr:
        return expr
    for step in (
        sympy.expand,
        _half_integer_bessel,
        sympy.gammasimp,
        lambda e: sympy.cancel(sympy.together(e)),
        _exponential_form,
    ):
        rewritten = step(rewritten)
        if rewritten == 0:
            break
    return rewritten


def _algebraic_number(expr: sympy.Expr) -> sympy.Expr:
    """0 when ``expr`` is a constant algebraic number whose minimal polynomial is ``t``."""
    if expr.free_symbols or expr.is_algebraic is False:
        return expr
    if sympy.minimal_polynomial(expr, _T) == _T:
        return sympy.S.Zero
    return expr


REWRITES: tuple[tuple[str, Rewrite], ...] = (
    ("expand", sympy.expand),
    ("together", sympy.together),
    ("radsimp", sympy.radsimp),
    ("powsimp", sympy.powsimp),
    ("pythagoras", _pythagoras),
    ("expand_trig", lambda e: sympy.expand(sympy.expand_trig(e))),
    ("exponential form", _exponential_form),
    ("gammasimp", _gamma_functions),
    ("expand_func", _expanded_functions),
    ("error functions", _error_functions),
    ("half-integer Bessel", _half_integer_bessel),
    ("special functions", _special_functions),
    ("minimal polynomial", _algebraic_number),
    ("trigsimp", sympy.trigsimp),
    ("simplify", sympy.simplify),
)
