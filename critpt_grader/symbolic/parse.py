"""Symbolic text → SymPy, through the restricted Lark grammar and nothing else.

The text never reaches ``eval``, ``sympify`` or ``parse_expr``. The LALR parser (iterative, so
deep nesting cannot exhaust the stack) yields a syntax tree; :class:`_Builder` walks it without
recursion and constructs SymPy objects itself, checking every limit *before* SymPy could do
expensive work: an exponent is vetted before a power is built, so ``2**2**2**2**99`` and
``(x+1)**100000`` are refused in microseconds.

Reading of the text (the choices a user needs to know):

* ``^`` means ``**``. Integers are exact. A decimal literal (with a point or an exponent) is
  the exact rational it denotes, made *before* SymPy combines anything: ``0.1`` is ``1/10``, so
  ``5e18 + 2 - 5e18`` is ``2``, ``t*(1 + 3e-33)`` is not ``t`` and ``0.7*y + 0.2*y`` is
  ``9*y/10``. No binary float ever stands for a literal. :func:`read` also says whether the text
  held a decimal literal (the comparator meets two decimal numbers with the tolerance).
* ``E`` is Euler's number; ``I`` and ``i`` are the imaginary unit; ``e`` is an ordinary symbol
  (the elementary charge in most tasks). A name listed in ``symbols`` is always a symbol, which
  lets a task that declares ``E`` (a field amplitude) or ``i`` (an index) keep them as symbols.
* A bare name is a constant (``pi E I i GoldenRatio EulerGamma Catalan``) or a symbol. Table
  function names are functions only when called, so ``gamma`` and ``beta`` stay symbols.
  Python keywords carry no meaning here (``lambda`` is a symbol, as in SymPy's own output);
  ``True``/``False`` are booleans and ``None`` is refused.
* The function table holds the elementary functions and the special functions physicists
  write, by the names SymPy prints (:mod:`critpt_grader.symbolic.functions`: ``polylog``,
  ``zeta``, ``hyper((a, b), (c,), z)``, the orthogonal polynomials, ``jn``, ``LambertW``,
  ``Ei``, ``fresnels``, ``sinc``...). A number *order* of a special function (a degree, an
  index, a series parameter) may be at most ``MAX_ORDER`` (256) in modulus
  (``order_too_large``); the polynomial families and the incomplete gamma functions are
  expanded while read only up to order 32, and ``laguerre``, ``assoc_laguerre``,
  ``gegenbauer`` and ``jacobi`` take a nonnegative integer degree or a symbol (SymPy builds a
  wrong polynomial for any other number).
* Names applied to arguments that are not in the table become opaque ``sympy.Function(name)``:
  no value, never evaluated (a comparison with one can be proved only by its structure).
  Their arguments may be tuples, so ``Piecewise((x, Gt(x, 0)), (0, True))`` reads (opaquely).
  Sets: ``Interval(a, b)`` and ``Interval.open|closed|Lopen|Ropen(a, b)``, ``FiniteSet(...)``,
  ``Union(...)`` of sets, ``EmptySet``, ``Reals``, ``Complexes``, ``Integers``, ``Naturals``,
  ``Naturals0``; ``Intersection(...)``, ``Complement(a, b)`` and
  ``SymmetricDifference(a, b)`` of sets are read unevaluated (the comparator reduces them under
  its CPU cap); tuples ``(a,)``, ``(a, b)``.
* ``oo``, ``Infinity``, ``inf``, ``zoo`` and ``nan`` are refused (``nonfinite_expression``), as is
  anything that evaluates to a non-finite value (``x/0``, ``0**-1``), unless
  ``allow_infinity=True``. Interval ends may always be ``-oo``/``oo``.
* Exponents: a number exponent must be small (|p/q| and q ≤ ``max_exponent`` for a rational
  p/q, except that a decimal exponent such as ``1.23`` may have any power-of-ten denominator); a
  rational base may take an integer exponent as long as the result stays within
  ``max_integer_bits``. ``E**x`` is ``exp(x)``. Exponents containing symbols (``(1-2*p)**l``)
  are accepted because physics answers need them; ``Limits(symbolic_exponents=False)`` refuses
  them as the task_data v1 wire format does.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from functools import cache
from importlib import resources
from pathlib import Path

import sympy
from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput
from sympy.core.assumptions import _assume_defined
from sympy.core.function import AppliedUndef

from critpt_grader.errors import GrammarError
from critpt_grader.symbolic.functions import (
    EAGER_ORDER,
    ELEMENTARY_ORDERS,
    MAX_ORDER,
    MAX_PARAMETERS,
    SPECIAL_FUNCTIONS,
)
from critpt_grader.symbolic.magnitudes import OversizeValue, order_magnitude


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on symbolic text. Each one, when exceeded, raises :class:`GrammarError`."""

    max_text_bytes: int = 4096
    max_syntax_nodes: int = 2048  # tokens and tree nodes of the parse
    max_depth: int = 512  # nesting of the syntax tree
    max_call_nesting: int = 4  # function calls inside function calls
    max_symbols: int = 32  # distinct symbol and undefined-function names
    max_terms: int = 512  # summands over every sum of the result
    max_integer_bits: int = 4096  # any integer numerator or denominator
    max_exponent: int = 32  # |p| and q of a number exponent p/q on a non-rational base
    max_decimal_digits: int = 128  # significant digits of a decimal literal
    max_decimal_exponent: int = 128  # |e| of a decimal literal's exponent
    max_name_length: int = 64
    max_result_nodes: int = 2048  # nodes of the SymPy result
    symbolic_exponents: bool = True  # allow exponents that contain symbols


DEFAULT_LIMITS = Limits()

# The codes of text that is well formed but over a limit: unreadable here, never a category
# and never evidence that two values differ.
LIMIT_CODES = frozenset(
    {
        "text_too_long",
        "too_many_nodes",
        "too_deep",
        "call_nesting",
        "too_many_symbols",
        "too_many_terms",
        "integer_too_large",
        "exponent_too_large",
        "result_too_large",
        "decimal_too_long",
        "symbolic_exponent",
        "order_too_large",
        "too_many_parameters",
    }
)


@dataclass(frozen=True, slots=True)
class Reading:
    """What :func:`read` made of symbolic text: the SymPy ``value`` and whether the text
    held a decimal literal (``decimals``), which :func:`parse` forgets."""

    value: sympy.Basic
    decimals: bool


_CONSTANTS: dict[str, sympy.Basic] = {
    "pi": sympy.pi,
    "E": sympy.E,
    "I": sympy.I,
    "i": sympy.I,
    "GoldenRatio": sympy.GoldenRatio,
    "EulerGamma": sympy.EulerGamma,
    "Catalan": sympy.Catalan,
}
_NONFINITE_NAMES: dict[str, sympy.Basic] = {
    "oo": sympy.oo,
    "Infinity": sympy.oo,
    "inf": sympy.oo,
    "zoo": sympy.zoo,
    "nan": sympy.nan,
}
_NONFINITE_ATOMS = frozenset({sympy.oo, -sympy.oo, sympy.zoo, sympy.nan})
_BOOLEANS = {"True": sympy.true, "False": sympy.false}
_SET_CONSTANTS = {
    "EmptySet": sympy.S.EmptySet,
    "Reals": sympy.S.Reals,
    "Complexes": sympy.S.Complexes,
    "Integers": sympy.S.Integers,
    "Naturals": sympy.S.Naturals,
    "Naturals0": sympy.S.Naturals0,
}


@dataclass(frozen=True, slots=True)
class _Function:
    build: object  # the SymPy callable
    arities: tuple[int, ...] | None  # None: one or more arguments
    eager_bound: bool = False  # evaluate only while number arguments stay small
    orders: tuple[int, ...] = ()  # positions whose number values are at most MAX_ORDER
    tuples: tuple[int, ...] = ()  # positions taking a tuple of parameters (hyper)
    whole_orders: bool = False  # a number degree (first order) is a nonnegative integer
    expands: bool = False  # expanded by SymPy when built: eagerly only up to EAGER_ORDER


def _f(build, *arities: int, eager_bound: bool = False) -> _Function:
    return _Function(build, arities or None, eager_bound)


_FUNCTIONS: dict[str, _Function] = {
    "sqrt": _f(sympy.sqrt, 1),
    "cbrt": _f(sympy.cbrt, 1),
    "exp": _f(sympy.exp, 1),
    "log": _f(sympy.log, 1, 2),
    "ln": _f(sympy.log, 1, 2),
    **{n: _f(getattr(sympy, n), 1) for n in ["sin", "cos", "tan", "cot", "sec", "csc"]},
    **{n: _f(getattr(sympy, n), 1) for n in ["asin", "acos", "atan", "acot", "asec", "acsc"]},
    "atan2": _f(sympy.atan2, 2),
    **{n: _f(getattr(sympy, n), 1) for n in ["sinh", "cosh", "tanh", "coth", "sech", "csch"]},
    **{n: _f(getattr(sympy, n), 1) for n in ["asinh", "acosh", "atanh", "acoth"]},
    "Abs": _f(sympy.Abs, 1),
    "abs": _f(sympy.Abs, 1),
    **{
        n: _f(getattr(sympy, n), 1)
        for n in ["sign", "re", "im", "conjugate", "arg", "floor", "ceiling"]
    },
    "Max": _f(sympy.Max),
    "Min": _f(sympy.Min),
    **{n: _f(getattr(sympy, n), 1) for n in ["erf", "erfc", "erfi"]},
    "gamma": _f(sympy.gamma, 1, eager_bound=True),
    "loggamma": _f(sympy.loggamma, 1, eager_bound=True),
    "polygamma": _f(sympy.polygamma, 2, eager_bound=True),
    "zeta": _f(sympy.zeta, 1, 2, eager_bound=True),
    "factorial": _f(sympy.factorial, 1, eager_bound=True),
    "binomial": _f(sympy.binomial, 2, eager_bound=True),
    **{
        n: _Function(getattr(sympy, n), (2,), orders=ELEMENTARY_ORDERS[n])
        for n in ["besselj", "bessely", "besseli", "besselk"]
    },
    "Heaviside": _f(sympy.Heaviside, 1, 2),
    "DiracDelta": _f(sympy.DiracDelta, 1, 2),
    "KroneckerDelta": _f(sympy.KroneckerDelta, 2),
    **{
        name: _Function(
            s.build, s.arities, s.eager_bound, s.orders, s.tuples, s.whole_orders, s.expands
        )
        for name, s in SPECIAL_FUNCTIONS.items()
    },
}
# factorial(10**100) or zeta(10**4) would be evaluated eagerly; above this bound they stay
# unevaluated calls.
_EAGER_ARGUMENT_BOUND = 256
# Max and Min compare their arguments pairwise through the assumption system: 32 symbols take
# a third of a second. Longer lists stay unevaluated.
_PAIRWISE = frozenset({"Max", "Min"})
_EAGER_PAIRWISE_ARGUMENTS = 4
# Integer**Rational factors the base; beyond this size the power is kept unevaluated.
_EAGER_ROOT_BITS = 1024
_NOT_CALLABLE = frozenset({*_CONSTANTS, *_NONFINITE_NAMES, *_BOOLEANS, *_SET_CONSTANTS, "None"})
_ROOTS = {"sqrt": sympy.S.Half, "cbrt": sympy.Rational(1, 3)}
# Set operations read unevaluated: SymPy's set algebra may be costly, so the comparator runs
# it under its CPU cap (compare.walk), never the parser. (name -> builder, arities)
_LAZY_SET_OPERATIONS = {
    "Intersection": (sympy.Intersection, None),
    "Complement": (sympy.Complement, (2,)),
    "SymmetricDifference": (sympy.SymmetricDifference, (2,)),
}

# SymPy has no Interval.closed; the wire format names it, and it means Interval(a, b).
_INTERVAL_METHODS = {
    "open": sympy.Interval.open,
    "closed": sympy.Interval,
    "Lopen": sympy.Interval.Lopen,
    "Ropen": sympy.Interval.Ropen,
}
_LOG10_2 = math.log10(2)


def parse(
    text: str,
    symbols: Mapping[str, Mapping[str, bool]] | None = None,
    *,
    limits: Limits = DEFAULT_LIMITS,
    allow_infinity: bool = False,
) -> sympy.Basic:
    """Read symbolic ``text`` into SymPy.

    ``symbols`` maps a name to its SymPy assumptions (``{"x": {"positive": True}}``); unlisted
    names are assumption-free symbols. Raises :class:`GrammarError` for text outside the
    grammar or over a limit (its ``code`` is then in :data:`LIMIT_CODES`).
    """
    return read(text, symbols, limits=limits, allow_infinity=allow_infinity).value


def read(
    text: str,
    symbols: Mapping[str, Mapping[str, bool]] | None = None,
    *,
    limits: Limits = DEFAULT_LIMITS,
    allow_infinity: bool = False,
) -> Reading:
    """:func:`parse`, also saying whether ``text`` held a decimal literal."""
    if not isinstance(text, str):
        raise GrammarError("syntax_error", f"expected text, got {type(text).__name__}")
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise GrammarError("syntax_error", "text is not valid Unicode") from None
    if size > limits.max_text_bytes:
        raise GrammarError("text_too_long", f"{size} bytes > {limits.max_text_bytes}")
    tree = _parse_tree(text)
    _check_shape(tree, limits)
    builder = _Builder(_checked_assumptions(symbols or {}), limits, allow_infinity)
    value = builder.finish(builder.build(tree))
    return Reading(value, builder.decimals)


# --- parsing --------------------------------------------------------------------------------


def _grammar_text() -> str:
    packaged = resources.files("critpt_grader") / "_grammar" / "symbolic.lark"
    if packaged.is_file():
        return packaged.read_text(encoding="utf-8")
    # Source checkouts and editable installs: the grammar sits at the repository root.
    return (Path(__file__).resolve().parents[2] / "grammar" / "symbolic.lark").read_text(
        encoding="utf-8"
    )


@cache
def _parser() -> Lark:
    return Lark(_grammar_text(), parser="lalr", maybe_placeholders=False)


def _parse_tree(text: str) -> Tree | Token:
    try:
        return _parser().parse(text)
    except UnexpectedCharacters as exc:
        char = text[exc.pos_in_stream] if exc.pos_in_stream < len(text) else ""
        raise GrammarError(
            "syntax_error", f"unexpected character {char!r} at column {exc.column}"
        ) from None
    except UnexpectedEOF:
        raise GrammarError("syntax_error", "unexpected end of text") from None
    except UnexpectedInput as exc:
        token = getattr(exc, "token", None)
        raise GrammarError(
            "syntax_error", f"unexpected {str(token)!r} at column {exc.column}"
        ) from None


def _check_shape(tree: Tree | Token, limits: Limits) -> None:
    """Count nodes and measure depth before any SymPy object is built."""
    stack: list[tuple[Tree | Token, int]] = [(tree, 1)]
    count = 0
    while stack:
        node, depth = stack.pop()
        count += 1
        if count > limits.max_syntax_nodes:
            raise GrammarError("too_many_nodes", f"more than {limits.max_syntax_nodes}")
        if depth > limits.max_depth:
            raise GrammarError("too_deep", f"nesting deeper than {limits.max_depth}")
        if isinstance(node, Tree):
            stack.extend((child, depth + 1) for child in node.children)


def _checked_assumptions(
    symbols: Mapping[str, Mapping[str, bool]],
) -> Mapping[str, Mapping[str, bool]]:
    for name, facts in symbols.items():
        if not isinstance(name, str) or not isinstance(facts, Mapping):
            raise GrammarError("invalid_assumption", f"bad entry for {name!r}")
        for fact, value in facts.items():
            if fact not in _assume_defined or not isinstance(value, bool):
                raise GrammarError("invalid_assumption", f"{name}: {fact}={value!r}")
    return symbols


# --- building -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Value:
    obj: sympy.Basic
    calls: int  # depth of function-call nesting inside


_OPERATOR_TOKENS = frozenset({"ADD_OP", "MUL_OP", "POW"})
_INT_RE = re.compile(r"[0-9]+")
_LEADING_ZERO_RE = re.compile(r"0[0-9]")


class _Builder:
    """Turns one syntax tree into SymPy. Holds the per-parse settings and symbol cache."""

    def __init__(
        self,
        symbols: Mapping[str, Mapping[str, bool]],
        limits: Limits,
        allow_infinity: bool,
    ) -> None:
        self._symbols = symbols
        self._limits = limits
        self._allow_infinity = allow_infinity
        self._max_int_digits = int(limits.max_integer_bits * _LOG10_2) + 2
        self.decimals = False  # the text held a decimal literal

    # The walk: post-order over an explicit stack, so depth costs no Python recursion.
    def build(self, root: Tree | Token) -> sympy.Basic:
        results: list[object] = []
        stack: list[tuple[Tree | Token, bool]] = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            if isinstance(node, Token):
                results.append(self._leaf(node))
            elif not expanded:
                stack.append((node, True))
                stack.extend((child, False) for child in reversed(_value_children(node)))
            else:
                count = len(_value_children(node))
                children = results[len(results) - count :]
                del results[len(results) - count :]
                results.append(self._reduce(node, children))
        (value,) = results
        return value.obj

    def _leaf(self, token: Token) -> _Value | Token:
        if token.type in _OPERATOR_TOKENS:
            return token
        if token.type == "NUMBER":
            return _Value(self._number(str(token)), 0)
        return _Value(self._name(str(token)), 0)

    def _reduce(self, node: Tree, children: list) -> _Value | list[_Value]:
        kind = node.data
        if kind == "arguments":
            return children
        calls = max((c.calls for c in children if isinstance(c, _Value)), default=0)
        if kind == "sum":
            return _Value(self._sum(children), calls)
        if kind == "product":
            return _Value(self._product(children), calls)
        if kind == "signed":
            operator, operand = children[0], _expr(children[1].obj, "a signed operand")
            return _Value(-operand if operator == "-" else operand, calls)
        if kind == "power":
            base, exponent = (_expr(c.obj, "a power's operand") for c in children[::2])
            return _Value(self._power(base, exponent), calls)
        if kind == "tuple":
            return _Value(sympy.Tuple(*(c.obj for c in children)), calls)
        if kind == "empty_tuple":
            return _Value(sympy.Tuple(), 0)
        args = children[0] if children else []
        calls = max((a.calls for a in args), default=0)
        if kind == "call":
            name = str(node.children[0])
            obj, counts = self._call(name, [a.obj for a in args])
            calls += counts
            if calls > self._limits.max_call_nesting:
                raise GrammarError(
                    "call_nesting", f"calls nested deeper than {self._limits.max_call_nesting}"
                )
            return _Value(obj, calls)
        if kind == "method_call":
            owner, method = str(node.children[0]), str(node.children[1])
            return _Value(self._method(owner, method, [a.obj for a in args]), calls)
        raise AssertionError(f"unhandled syntax node {kind!r}")

    # Leaves --------------------------------------------------------------------------------

    def _number(self, text: str) -> sympy.Number:
        if _LEADING_ZERO_RE.match(text):
            raise GrammarError("invalid_number", f"leading zero in {text!r}")
        if _INT_RE.fullmatch(text):
            if len(text) > self._max_int_digits:
                raise GrammarError("integer_too_large", f"{len(text)} digits")
            value = int(text)
            self._check_bits(value)
            return sympy.Integer(value)
        mantissa, _, exponent = text.lower().partition("e")
        if exponent:
            digits_of_exponent = exponent.lstrip("+-").lstrip("0")
            if (
                len(digits_of_exponent) > 4
                or abs(int(exponent)) > self._limits.max_decimal_exponent
            ):
                raise GrammarError("decimal_too_long", f"exponent too large in {text!r}")
        significant = len(mantissa.replace(".", "").lstrip("0"))
        if significant > self._limits.max_decimal_digits:
            raise GrammarError("decimal_too_long", f"{significant} significant digits")
        # The exact value, before SymPy sees it: a Float would round 3e-33 into 1 + 3e-33 and
        # let 5e18 + 2 - 5e18 cancel to 0. Both limits above keep the rational small.
        self.decimals = True
        exact = Fraction(Decimal(text))
        return sympy.Rational(exact.numerator, exact.denominator)

    def _name(self, name: str) -> sympy.Basic:
        self._check_name(name)
        facts = self._symbols.get(name)
        if facts is not None:
            try:
                return sympy.Symbol(name, **facts)
            except Exception as exc:  # SymPy's InconsistentAssumptions and friends
                raise GrammarError("invalid_assumption", f"{name}: {exc}") from None
        if name in _CONSTANTS:
            return _CONSTANTS[name]
        if name in _NONFINITE_NAMES:
            return _NONFINITE_NAMES[name]
        if name in _BOOLEANS:
            return _BOOLEANS[name]
        if name in _SET_CONSTANTS:
            return _SET_CONSTANTS[name]
        if name == "None":
            raise GrammarError("invalid_name", "None is not a value")
        return sympy.Symbol(name)

    def _check_name(self, name: str) -> None:
        if "__" in name:
            raise GrammarError("invalid_name", f"{name!r} contains '__'")
        if len(name) > self._limits.max_name_length:
            raise GrammarError("invalid_name", f"{name[:16]!r}... is longer than allowed")

    # Arithmetic ----------------------------------------------------------------------------

    def _sum(self, children: list) -> sympy.Expr:
        """``children`` alternates operands and operator tokens."""
        terms = [_expr(children[0].obj, "a term")]
        for operator, child in zip(children[1::2], children[2::2], strict=True):
            term = _expr(child.obj, "a term")
            terms.append(-term if operator == "-" else term)
        return sympy.Add(*terms)

    def _product(self, children: list) -> sympy.Expr:
        factors = [_expr(children[0].obj, "a factor")]
        for operator, child in zip(children[1::2], children[2::2], strict=True):
            factor = _expr(child.obj, "a factor")
            if operator == "/":
                if factor.is_zero is True and not self._allow_infinity:
                    raise GrammarError("nonfinite_expression", "division by zero")
                factor = sympy.Pow(factor, -1)
            factors.append(factor)
        return sympy.Mul(*factors)

    def _power(self, base: sympy.Expr, exponent: sympy.Expr) -> sympy.Expr:
        if base is sympy.E:
            return sympy.exp(exponent)
        if exponent.free_symbols:
            if not self._limits.symbolic_exponents:
                raise GrammarError("symbolic_exponent", "exponents must be numbers")
            return sympy.Pow(base, exponent)
        self._check_exponent(base, exponent)
        if base.is_zero and (exponent.is_extended_nonpositive) and not self._allow_infinity:
            raise GrammarError("nonfinite_expression", "zero to a non-positive power")
        if base.is_Rational and not exponent.is_Integer and self._bits(base) > _EAGER_ROOT_BITS:
            return sympy.Pow(base, exponent, evaluate=False)
        return sympy.Pow(base, exponent)

    def _check_exponent(self, base: sympy.Expr, exponent: sympy.Expr) -> None:
        limits = self._limits
        if exponent.has(*_NONFINITE_ATOMS):
            raise GrammarError("exponent_too_large", "non-finite exponent")
        if exponent.is_Rational:
            p, q = abs(exponent.p), exponent.q
            decimal = q > limits.max_exponent and _is_decimal_denominator(q)
            if q > limits.max_exponent and not decimal:
                raise GrammarError("exponent_too_large", f"denominator {q} > {limits.max_exponent}")
            if base.is_Rational:
                if p * self._log2(base) >= limits.max_integer_bits * q:
                    raise GrammarError("exponent_too_large", "result would exceed the bit limit")
                return
            if base.is_Float:
                if p > limits.max_integer_bits * q:
                    raise GrammarError("exponent_too_large", f"{exponent} is too large")
                return
            if (p > limits.max_exponent * q) if decimal else (p > limits.max_exponent):
                raise GrammarError("exponent_too_large", f"{exponent} > {limits.max_exponent}")
            return
        # A Float or a constant such as pi or sqrt(2): bound its magnitude.
        try:
            magnitude = abs(complex(exponent.evalf(15)))
        except (TypeError, ValueError, ArithmeticError):
            raise GrammarError("exponent_too_large", f"cannot bound exponent {exponent}") from None
        bound = limits.max_integer_bits if base.is_Number else limits.max_exponent
        if not magnitude <= bound:
            raise GrammarError("exponent_too_large", f"|{exponent}| > {bound}")

    @staticmethod
    def _log2(number: sympy.Rational) -> float:
        """log2 of the larger of |numerator| and denominator: the bits a power grows by."""
        return math.log2(max(abs(number.p), number.q, 1))

    @staticmethod
    def _bits(number: sympy.Rational) -> int:
        return max(abs(number.p).bit_length(), number.q.bit_length(), 1)

    def _check_bits(self, value: int) -> None:
        if abs(value).bit_length() > self._limits.max_integer_bits:
            limit = self._limits.max_integer_bits
            raise GrammarError("integer_too_large", f"more than {limit} bits")

    # Calls ---------------------------------------------------------------------------------

    def _call(self, name: str, args: list[sympy.Basic]) -> tuple[sympy.Basic, int]:
        """Return the built call and how much it adds to the call nesting."""
        self._check_name(name)
        if name == "Rational":
            return self._rational(args), 0
        if name == "Interval":
            return self._interval(sympy.Interval, args), 0
        if name == "Union":
            return self._union(args), 0
        if name in _LAZY_SET_OPERATIONS:
            return self._lazy_set_operation(name, args), 0
        if name == "FiniteSet":
            return sympy.FiniteSet(*(_expr(a, "a FiniteSet member") for a in args)), 0
        if name in _NOT_CALLABLE:
            raise GrammarError("not_callable", f"{name} is not a function")
        spec = _FUNCTIONS.get(name)
        if spec is None:
            if not args:
                raise GrammarError("invalid_arity", f"{name}() needs at least one argument")
            # Opaque calls keep any argument, so Piecewise((x, Gt(x, 0)), (0, True)) and
            # Integral(x, (x, 0, 1)) are read (and compared structurally), never evaluated.
            try:
                return sympy.Function(name)(*args), 1
            except (ValueError, TypeError) as exc:
                raise GrammarError("invalid_argument", f"{name}: {exc}") from None
        _check_arity(name, spec.arities, len(args))
        exprs = [
            _parameters(name, a) if index in spec.tuples else _expr(a, f"an argument of {name}")
            for index, a in enumerate(args)
        ]
        _check_orders(name, spec, exprs)
        if name in _ROOTS:
            # Roots are powers: the same exponent and size checks apply.
            return self._power(exprs[0], _ROOTS[name]), 1
        eager = _evaluates_eagerly(name, spec, exprs)
        try:
            return (spec.build(*exprs) if eager else spec.build(*exprs, evaluate=False)), 1
        except (ValueError, TypeError, ArithmeticError) as exc:
            raise GrammarError("invalid_argument", f"{name}: {exc}") from None

    def _rational(self, args: list[sympy.Basic]) -> sympy.Rational:
        _check_arity("Rational", (2,), len(args))
        p, q = args
        if not (isinstance(p, sympy.Integer) and isinstance(q, sympy.Integer)):
            raise GrammarError("invalid_argument", "Rational takes two integers")
        if q == 0:
            if self._allow_infinity:
                return sympy.Rational(p, q)
            raise GrammarError("nonfinite_expression", "Rational with denominator 0")
        return sympy.Rational(p, q)

    def _interval(self, build, args: list[sympy.Basic]) -> sympy.Set:
        _check_arity("Interval", (2,), len(args))
        start, end = (_expr(a, "an interval end") for a in args)
        try:
            return build(start, end)
        except (ValueError, TypeError) as exc:
            raise GrammarError("invalid_argument", f"Interval: {exc}") from None

    def _union(self, args: list[sympy.Basic]) -> sympy.Set:
        if not args or not all(isinstance(a, sympy.Set) for a in args):
            raise GrammarError("invalid_argument", "Union takes one or more sets")
        return sympy.Union(*args)

    def _lazy_set_operation(self, name: str, args: list[sympy.Basic]) -> sympy.Set:
        build, arities = _LAZY_SET_OPERATIONS[name]
        _check_arity(name, arities, len(args))
        if not all(isinstance(a, sympy.Set) for a in args):
            raise GrammarError("invalid_argument", f"{name} takes sets")
        return build(*args, evaluate=False)

    def _method(self, owner: str, method: str, args: list[sympy.Basic]) -> sympy.Set:
        if owner != "Interval" or method not in _INTERVAL_METHODS:
            raise GrammarError("attribute_not_allowed", f"{owner}.{method}")
        return self._interval(_INTERVAL_METHODS[method], args)

    # Whole-result checks -------------------------------------------------------------------

    def finish(self, result: sympy.Basic) -> sympy.Basic:
        """Check the finished result: size, integers, names, non-finite values."""
        limits = self._limits
        names: set[str] = set()
        nodes = terms = 0
        stack: list[tuple[sympy.Basic, bool]] = [(result, False)]
        while stack:
            node, is_interval_end = stack.pop()
            nodes += 1
            if nodes > limits.max_result_nodes:
                raise GrammarError("result_too_large", f"more than {limits.max_result_nodes} nodes")
            if node.is_Symbol:
                names.add(node.name)
            elif isinstance(node, AppliedUndef):
                names.add(f"{node.func.__name__}()")
            elif node.is_Rational:
                self._check_bits(node.p)
                self._check_bits(node.q)
            elif node in _NONFINITE_ATOMS and not (
                self._allow_infinity or (is_interval_end and node in (sympy.oo, -sympy.oo))
            ):
                raise GrammarError("nonfinite_expression", f"{node} is not allowed here")
            if node.is_Add:
                terms += len(node.args)
                if terms > limits.max_terms:
                    raise GrammarError("too_many_terms", f"more than {limits.max_terms}")
            ends = isinstance(node, sympy.Interval)
            stack.extend((arg, ends) for arg in node.args)
        if len(names) > limits.max_symbols:
            raise GrammarError("too_many_symbols", f"{len(names)} > {limits.max_symbols}")
        return result


def _is_decimal_denominator(q: int) -> bool:
    """``q`` divides a power of ten: the denominator of a decimal such as ``1.23``."""
    for prime in (2, 5):
        while q % prime == 0:
            q //= prime
    return q == 1


def _evaluates_eagerly(name: str, spec: _Function, args: list[sympy.Expr]) -> bool:
    if spec.eager_bound and any(a.is_Number and abs(a) > _EAGER_ARGUMENT_BOUND for a in args):
        return False
    if spec.expands and not _small_expansion(spec, args):
        return False
    return not (name in _PAIRWISE and len(args) > _EAGER_PAIRWISE_ARGUMENTS)


def _small_expansion(spec: _Function, args: list[sympy.Expr]) -> bool:
    """Whether SymPy may expand this call while it is read: its degree is no number (then
    nothing is expanded), or every order is a number no larger than EAGER_ORDER (a small sum;
    with a symbolic parameter beside a number degree, ``jacobi(8, a, b, x)`` alone takes
    seconds)."""
    orders = [args[i] for i in spec.orders]
    if not orders[0].is_number:
        return True
    return all(o.is_Number and abs(o) <= EAGER_ORDER for o in orders)


def _parameters(name: str, value: sympy.Basic) -> sympy.Tuple:
    """A tuple of parameters (``hyper((a, b), (c,), z)``): expressions, at most
    MAX_PARAMETERS of them."""
    if not isinstance(value, sympy.Tuple) or not all(isinstance(p, sympy.Expr) for p in value):
        raise GrammarError("type_error", f"{name} takes tuples of parameters, not {value}")
    if len(value) > MAX_PARAMETERS:
        raise GrammarError(
            "too_many_parameters", f"{name}: {len(value)} parameters > {MAX_PARAMETERS}"
        )
    return value


def _check_orders(name: str, spec: _Function, args: list[sympy.Basic]) -> None:
    """Number orders are at most MAX_ORDER in modulus; a whole degree is a nonnegative
    integer. Checked before SymPy builds the call (some expand while built)."""
    orders = [args[i] for i in spec.orders if i < len(args)]  # LambertW(z) has no branch
    orders += [p for i in spec.tuples for p in args[i]]
    for order in orders:
        if not order.is_number:
            continue
        try:
            size = order_magnitude(order)
        except OversizeValue:
            size = None
        if size is None or size > MAX_ORDER:
            raise GrammarError("order_too_large", f"{name}: an order beyond {MAX_ORDER} in modulus")
    if spec.whole_orders:
        degree = args[spec.orders[0]]
        if degree.is_number and not (degree.is_Integer and degree >= 0):
            raise GrammarError(
                "invalid_argument", f"{name}: the degree must be a nonnegative integer or a symbol"
            )


def _value_children(node: Tree) -> list:
    """The children that are built into values (function names are not)."""
    if node.data == "call":
        return node.children[1:]
    if node.data == "method_call":
        return node.children[2:]
    return node.children


def _expr(obj: sympy.Basic, role: str) -> sympy.Expr:
    if not isinstance(obj, sympy.Expr):
        raise GrammarError("type_error", f"{role} must be an expression, not {obj}")
    return obj


def _check_arity(name: str, arities: tuple[int, ...] | None, count: int) -> None:
    if arities is None:
        if count == 0:
            raise GrammarError("invalid_arity", f"{name} needs at least one argument")
    elif count not in arities:
        wanted = " or ".join(str(a) for a in arities)
        raise GrammarError("invalid_arity", f"{name} takes {wanted} argument(s), got {count}")
