"""Reading one side of a comparison into a comparable form.

A scalar becomes an exact number (:class:`~critpt_grader.compare.numbers.ExactNumber`), a
non-finite value, a parsed expression (:class:`Expr`), a category string (:class:`Categorical`),
a boolean, ``None``, a SymPy set (intervals, unions), a :class:`WireSet` of read members (a
``FiniteSet``), a tuple of read members, or :class:`Unreadable`. Symbolic text goes through the
restricted grammar only (:func:`critpt_grader.symbolic.parse.read`), which reads decimal
literals as exact rationals and says whether there were any.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

from critpt_grader.codec.values import ExactComplex, Legacy, Symbolic, WireSet
from critpt_grader.compare.legacy import LegacyReading, names_in, read_legacy
from critpt_grader.compare.numbers import (
    ExactNumber,
    NonfiniteNumber,
    evaluate_constant,
    from_sympy_number,
    number_of,
)
from critpt_grader.errors import GrammarError
from critpt_grader.policy.context import CaseContext
from critpt_grader.policy.tolerance import Exactness, exactness_of_number


@dataclass(frozen=True)
class Expr:
    """A parsed SymPy value. ``free``: it has free symbols or opaque functions, so it is not
    a number; ``decimals``: its text held decimal literals (read as exact rationals)."""

    expr: Any
    text: str
    decimals: bool
    free: bool


@dataclass(frozen=True)
class Unreadable:
    """Text that could not be read (outside the grammar, refused legacy literal...).
    ``limit``: well-formed, but over a limit of the grammar."""

    reason: str
    limit: bool = False


@dataclass(frozen=True)
class Categorical:
    """A categorical string. ``legacy`` marks delivered text, which may still be read as an
    expression when it meets a mathematical candidate."""

    text: str
    legacy: bool = False


def _parse(ctx: CaseContext, text: str) -> Any:
    from critpt_grader.symbolic.parse import read

    if text not in ctx.parsed:  # sets compare members pairwise: parse each text once
        try:
            ctx.parsed[text] = read(text, ctx.policy.symbols or None, allow_infinity=True)
        except GrammarError as exc:
            ctx.parsed[text] = exc
    result = ctx.parsed[text]
    if isinstance(result, GrammarError):
        raise result
    return result


def read_expression(ctx: CaseContext, text: str):
    """Parse symbolic text into a non-finite value, set, tuple or expression."""
    try:
        reading = _parse(ctx, text)
    except GrammarError as exc:
        return Unreadable(f"outside the grammar ({exc})", limit=is_limit(exc))
    return classify_sympy(reading.value, text, decimals=reading.decimals)


def is_limit(exc: GrammarError) -> bool:
    """Well-formed text over one of the grammar's limits (not a syntax error)."""
    from critpt_grader.symbolic.parse import LIMIT_CODES

    return exc.code in LIMIT_CODES


def classify_sympy(expr: Any, text: str, *, decimals: bool = False):
    import sympy

    from critpt_grader.symbolic.printer import safe_str

    if expr is sympy.true or expr is sympy.false:
        return bool(expr)
    if isinstance(expr, sympy.Tuple):
        return tuple(classify_sympy(item, safe_str(item), decimals=decimals) for item in expr.args)
    if isinstance(expr, sympy.FiniteSet):
        # members compare one to one, each with its own evidence
        members = (classify_sympy(m, safe_str(m), decimals=decimals) for m in expr.args)
        return WireSet(tuple(members))
    if expr in (sympy.oo, -sympy.oo, sympy.zoo, sympy.nan):
        label = {sympy.oo: "inf", -sympy.oo: "-inf", sympy.zoo: "zoo", sympy.nan: "nan"}
        return NonfiniteNumber(label[expr])
    if isinstance(expr, sympy.Set):
        return expr
    free = bool(getattr(expr, "free_symbols", None)) or bool(
        expr.atoms(sympy.core.function.AppliedUndef)
    )
    return Expr(expr, text, decimals, free)


def read_value(ctx: CaseContext, value: Any, context_names: set[str]):
    """The comparable form of a scalar (containers are handled by the walker)."""
    if value is None or isinstance(
        value, bool | ExactNumber | NonfiniteNumber | Expr | Categorical
    ):
        return value
    if isinstance(value, Unreadable) or is_sympy_set(value):
        return value
    number = number_of(value)
    if number is not None:
        return number
    if isinstance(value, str):
        return Categorical(value)
    if isinstance(value, Symbolic):
        return read_expression(ctx, value.text)
    if isinstance(value, Legacy):
        reading = read_legacy(value.text, ctx.policy.symbols.keys(), context_names)
        return from_legacy(ctx, reading)
    return Unreadable(f"not a comparable value: {type(value).__name__}")


def from_legacy(ctx: CaseContext, reading: LegacyReading):
    if reading.kind == "refused":
        return Unreadable("ambiguous legacy literal")
    if reading.kind == "number":
        return ExactNumber(reading.number)
    if reading.kind == "nonfinite":
        return NonfiniteNumber(reading.nonfinite)
    if reading.kind == "expression":
        parsed = read_expression(ctx, reading.text)
        if not isinstance(parsed, Unreadable) or parsed.limit:
            # Over a grammar limit it is a value we cannot read, not a category: the
            # comparison is invalid rather than a proven mismatch against the text.
            return parsed
    return Categorical(reading.text.strip(), legacy=True)


def is_decimal_number(value: Expr) -> bool:
    """A number written in decimals: its text held decimal literals, and its value is a
    plain (complex) rational, with no constants or functions (``0.5*pi`` is an expression
    that needs a proof)."""
    import sympy

    expr = value.expr
    if not value.decimals or not getattr(expr, "is_number", False):
        return False
    return all(
        isinstance(node, sympy.Number | sympy.Add | sympy.Mul) or node is sympy.I
        for node in sympy.preorder_traversal(expr)
    )


def as_number(value: ExactNumber | Expr) -> ExactNumber:
    import sympy

    if isinstance(value, ExactNumber):
        return value
    if isinstance(value.expr, sympy.Rational | sympy.Float):
        return from_sympy_number(value.expr)
    parts = gaussian_rational(value.expr)
    if parts is not None:  # 1/2 + I/3: exactly, not to 60 digits
        re, im = (from_sympy_number(sympy.Rational(p.numerator, p.denominator)) for p in parts)
        return ExactNumber(re.re, im.re)
    return evaluate_constant(value.expr)


def gaussian_rational(expr: Any) -> tuple[Fraction, Fraction] | None:
    """The exact real and imaginary parts of a SymPy value built only of rationals, ``I``,
    sums and products (``1/2 + I/3``, ``(1 + I)*(2 - I)``); ``None`` for anything else (a
    Float, a constant, a power, a function). Post-order over an explicit stack."""
    import sympy

    if not isinstance(expr, sympy.Add | sympy.Mul) and expr is not sympy.I:
        return None
    done: dict[Any, tuple[Fraction, Fraction]] = {}
    stack: list[tuple[Any, bool]] = [(expr, False)]
    while stack:
        node, expanded = stack.pop()
        if node in done:
            continue
        if node is sympy.I:
            done[node] = (Fraction(0), Fraction(1))
        elif isinstance(node, sympy.Rational):
            done[node] = (Fraction(int(node.p), int(node.q)), Fraction(0))
        elif not isinstance(node, sympy.Add | sympy.Mul):
            return None
        elif not expanded:
            stack.append((node, True))
            stack.extend((arg, False) for arg in node.args)
        else:
            parts = [done[arg] for arg in node.args]
            if isinstance(node, sympy.Add):
                done[node] = (sum(p[0] for p in parts), sum(p[1] for p in parts))
            else:
                re, im = Fraction(1), Fraction(0)
                for a, b in parts:
                    re, im = re * a - im * b, re * b + im * a
                done[node] = (re, im)
    return done[expr]


def string_as_math(ctx: CaseContext, text: str):
    reading = read_legacy(text)
    if reading.kind in ("number", "nonfinite"):
        return from_legacy(ctx, reading)
    if reading.kind in ("refused", "relation"):
        return Unreadable("not an expression")
    return read_expression(ctx, text)


def exact_expectation(expected: Any, read: Any, number: ExactNumber) -> Exactness | None:
    """How an expectation is exact, so that the default tolerance compares it exactly
    (``None``: it is not). Exactness follows the value, not its tag: ``expected`` is the leaf
    as decoded, ``read`` its comparable form (:func:`read_value`), ``number`` its value
    (:func:`as_number`).

    * a number from the wire by its type (:func:`exactness_of_number`): an ``int``, a
      ``Fraction``, an ``ExactComplex`` of int or Fraction parts;
    * legacy text that reads as a number: an integer (``"int"``, as before) or ``a/b``; a
      decimal (``2.5``, ``1e3``) is not exact;
    * symbolic (or legacy expression) text written without decimals whose value SymPy holds
      as an ``Integer`` or ``Rational`` (``binomial(100, 50)``, ``2**70``, ``1/3``), or as
      sums and products of rationals and ``I`` (``1/2 + I/3``). Decimals (``1.5``,
      ``0.5 + 2.0*I``) keep the tolerance, as do constants (``sqrt(2)``, ``pi/3``)."""
    by_type = exactness_of_number(expected)
    if by_type is not None:
        return by_type
    if isinstance(expected, Legacy):
        reading = read_legacy(expected.text)
        if reading.kind == "number":
            if expected.text.strip().lstrip("+-").isdigit():
                return "int"
            if _exact_number_text(expected.text):
                return _exactness(number)
            return None
    if isinstance(read, Expr) and number.error == 0 and is_exact_rational_text(read):
        return _exactness(number)
    return None


def is_exact_rational_text(read: Expr) -> bool:
    """Text written without decimals whose value is an exact (complex) rational: ``1/3``,
    ``binomial(100, 50)``, ``1/2 + I/3`` (what :func:`exact_expectation` calls exact)."""
    return not read.decimals and not read.free and is_rational_arithmetic(read.expr)


def exact_candidate(observed: Any, read: Any) -> bool:
    """Whether a candidate is an exact value, so that it meets an exact expectation exactly
    (``False``: it is inexact, and meets it with the tolerance an inexact expectation would
    get; see :func:`critpt_grader.policy.tolerance.resolve`). ``observed`` is the leaf as
    decoded, ``read`` its comparable form.

    * **inexact**: a ``float`` or ``complex`` (binary64; numpy floats decode as these), a
      ``Decimal``, an :class:`ExactComplex` with a ``Decimal`` part, a non-integer Fraction
      that carries an extended-precision binary value (:func:`is_binary_carrier`: a numpy
      ``longdouble``, an mpmath ``mpf``), and a number written in decimals
      (:func:`is_decimal_number`), whether a string (``"0.2"``, ``"1e-3"``) or symbolic
      (``0.5 + 2.0*I``);
    * **exact**: an ``int``, any other ``Fraction`` — an integer one included, even where it
      could carry a huge ``longdouble``: an off-by-one count is caught whatever its type —,
      an :class:`ExactComplex` of those, text that reads as an integer or ``a/b``, and any
      other symbolic text, whatever its value: ``sqrt(2)`` or ``1.0*pi`` is an exact
      irrational, no rounded number, and near a rational it is decided by proof, never by a
      width it did not earn.

    Anything else stays exact: the strict side is the safe one."""
    if isinstance(observed, bool):
        return True
    if isinstance(observed, int | float | complex | Fraction | Decimal | ExactComplex):
        parts = (observed.re, observed.im) if isinstance(observed, ExactComplex) else (observed,)
        if all(type(p) is int or (type(p) is Fraction and p.denominator == 1) for p in parts):
            return True  # an exact integer (a Fraction the carrier test would call inexact)
        return exactness_of_number(observed) is not None
    if isinstance(observed, str | Legacy):
        text = observed if isinstance(observed, str) else observed.text
        if read_legacy(text).kind == "number":
            return _exact_number_text(text)
    if isinstance(read, Expr):
        return not is_decimal_number(read)
    return True


def _exact_number_text(text: str) -> bool:
    """Number text (:func:`read_legacy` read it as a number) that is an integer or ``a/b``,
    not a decimal."""
    return "." not in text and "e" not in text.lower()


def is_rational_arithmetic(expr: Any) -> bool:
    """A SymPy value made of rationals, ``I``, sums and products only: an exact (complex)
    rational. A Float, a constant, a power or a function is not."""
    import sympy

    return all(
        isinstance(node, sympy.Rational | sympy.Add | sympy.Mul) or node is sympy.I
        for node in sympy.preorder_traversal(expr)
    )


def _exactness(number: ExactNumber) -> Exactness:
    if number.im:
        return "complex rational"
    return "integer" if number.re.denominator == 1 else "rational"


def to_sympy(value) -> Any:
    import sympy

    if isinstance(value, ExactNumber):
        return sympy.Rational(value.re.numerator, value.re.denominator) + sympy.I * sympy.Rational(
            value.im.numerator, value.im.denominator
        )
    return value


def expression_names(value: Any) -> set[str]:
    """Names used in the expected value's expressions (so a bare legacy ``x`` beside
    ``x**2`` reads as the symbol ``x``)."""
    names: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, list | tuple):
            stack.extend(item)
        elif isinstance(item, WireSet):
            stack.extend(item.items)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, Symbolic):
            names |= names_in(item.text)
        elif isinstance(item, Legacy):
            reading = read_legacy(item.text)
            if reading.kind == "expression":
                names |= names_in(item.text)
    return names


def is_sympy_set(value) -> bool:
    # A SymPy set exists only once SymPy's sets module is loaded. Ask that module, not the
    # package: while another thread is still importing SymPy, the package is only partly
    # initialized and has no ``Set`` yet.
    sets = sys.modules.get("sympy.sets.sets")
    set_class = getattr(sets, "Set", None)
    return set_class is not None and isinstance(value, set_class)
