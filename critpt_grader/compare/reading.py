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
from typing import Any

from critpt_grader.codec.values import Legacy, Symbolic, WireSet
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
    return evaluate_constant(value.expr)


def string_as_math(ctx: CaseContext, text: str):
    reading = read_legacy(text)
    if reading.kind in ("number", "nonfinite"):
        return from_legacy(ctx, reading)
    if reading.kind in ("refused", "relation"):
        return Unreadable("not an expression")
    return read_expression(ctx, text)


def is_int_expectation(expected) -> bool:
    """An exact integer expectation: an int, or legacy text that is an integer."""
    if isinstance(expected, Legacy):
        return (
            read_legacy(expected.text).kind == "number"
            and expected.text.strip().lstrip("+-").isdigit()
        )
    return type(expected) is int


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
