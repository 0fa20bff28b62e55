"""How a delivered string expectation (``["legacy", text]``) is read.

In order:

1. **Refused** (``ambiguous_legacy_literal``): text starting with ``[``, ``{``, ``'`` or
   ``"``, the words ``True``/``False``/``None``, and digit groups with underscores (``1_000``).
2. **Number**: an integer, ``a/b`` (b > 0) or a decimal (``0.25``, ``-1.5e-3``) is the exact
   number; ``nan``, ``inf``, ``-inf``, ``infinity``, ``oo``, ``-oo`` are non-finite. A number
   whose exact rational would need more than ``EXACT_DIGITS`` (2466) digits above or below the
   fraction bar (``1e99999999``, a 5000-digit integer) is never expanded (that is checked on
   the text's length and exponent before any integer is built): it is handed on as an
   expression, and the grammar, whose limits are far tighter, refuses it. So it reads as a
   value too large to read, never as a category: a candidate's such text is a mismatch, an
   expectation's is invalid.
3. **Relation**: text with a top-level ``=``, ``<`` or ``>`` is kept as an exact string.
4. **Expression**: text that looks mathematical is parsed through the grammar: it contains a
   digit or one of ``* ^ ( ) +``, or starts with a minus sign (``-x``), or every name in it
   is a declared symbol (``policy.symbols``), a grammar constant or function, or a name that
   occurs in another expression of the same expected value. So ``x-1``, ``-x``, ``2*x``,
   ``sqrt(2)``, ``pi/2`` are expressions, and ``x`` is one when ``x`` is a declared symbol.
5. **Category**: everything else, compared as an exact string: ``Yes``, ``N/A``,
   ``ferromagnetic``, ``Non-trivial``, and a bare capital letter such as ``A`` (a
   multiple-choice answer) unless it is a declared symbol. Text that looks mathematical but
   does not parse is a category too.

A category still meets a mathematical candidate fairly: against a SymPy or numeric candidate
the comparator tries the text as an expression (so ``pi`` matches ``sympy.pi``), while a
candidate string must match it exactly.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Literal

from critpt_grader.compare.numbers import EXACT_DIGITS, OversizeValue, check_decimal_size

ReadingKind = Literal["number", "nonfinite", "expression", "category", "relation", "refused"]

_INTEGER = re.compile(r"[+-]?\d+")
_RATIO = re.compile(r"([+-]?\d+)\s*/\s*(\d+)")
_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE](?P<exponent>[+-]?\d+))?")
# An exponent of more digits than this is far outside the exact range whatever the digits
# before it; Decimal is not even asked to read it.
_MAX_EXPONENT_DIGITS = 9
_NONFINITE = {
    "nan": "nan",
    "+nan": "nan",
    "-nan": "nan",
    "inf": "inf",
    "+inf": "inf",
    "infinity": "inf",
    "+infinity": "inf",
    "oo": "inf",
    "+oo": "inf",
    "-inf": "-inf",
    "-infinity": "-inf",
    "-oo": "-inf",
}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MATH_MARK = re.compile(r"[\d*^()+]")
KNOWN_NAMES = frozenset(
    [
        "pi",
        "E",
        "I",
        "i",
        "GoldenRatio",
        "EulerGamma",
        "Catalan",
        "sqrt",
        "sin",
        "cos",
        "tan",
        "cot",
        "sec",
        "csc",
        "asin",
        "acos",
        "atan",
        "sinh",
        "cosh",
        "tanh",
        "asinh",
        "acosh",
        "atanh",
        "exp",
        "Abs",
        "abs",
        "conjugate",
        "re",
        "im",
        "sign",
        "erf",
        "erfc",
        "gamma",
        "loggamma",
        "factorial",
        "atan2",
        "besselj",
        "bessely",
        "log",
        "ln",
        "zeta",
        "Rational",
        "Interval",
    ]
)


@dataclass(frozen=True)
class LegacyReading:
    kind: ReadingKind
    text: str
    number: Fraction | None = None
    nonfinite: str | None = None


def read_legacy(
    text: str, symbols: Iterable[str] = (), context_names: Iterable[str] = ()
) -> LegacyReading:
    """Read one legacy string (see the module docstring for the order of rules)."""
    stripped = text.strip()
    if (
        not stripped
        or stripped[0] in "[{'\""
        or stripped in ("True", "False", "None")
        or re.fullmatch(r"\d+(?:_\d+)+", stripped)
    ):
        return LegacyReading("refused", text)
    try:
        number = _number(stripped)
    except OversizeValue:
        return LegacyReading("expression", text)
    if number is not None:
        return LegacyReading("number", text, number=number)
    if stripped.lower() in _NONFINITE:
        return LegacyReading("nonfinite", text, nonfinite=_NONFINITE[stripped.lower()])
    if _has_top_level_relation(stripped):
        return LegacyReading("relation", text)
    if looks_mathematical(stripped, set(symbols) | set(context_names)):
        return LegacyReading("expression", text)
    return LegacyReading("category", text)


def _number(text: str) -> Fraction | None:
    if _INTEGER.fullmatch(text):
        return Fraction(_integer(text))
    ratio = _RATIO.fullmatch(text)
    if ratio and _integer(ratio.group(2)) > 0:
        return Fraction(_integer(ratio.group(1)), _integer(ratio.group(2)))
    decimal = _DECIMAL.fullmatch(text)
    if decimal:
        exponent = decimal.group("exponent")
        if exponent is not None and len(exponent.lstrip("+-")) > _MAX_EXPONENT_DIGITS:
            raise OversizeValue(f"the number {_excerpt(text)} is beyond the exact range")
        try:
            value = Decimal(text)
        except InvalidOperation:
            return None
        if not value.is_finite():
            return None
        check_decimal_size(value, _excerpt(text))
        return Fraction(value)
    return None


def _integer(text: str) -> int:
    """``int(text)`` once its length is known to be within the exact range (``int()`` of a
    long digit string is quadratic, and Python refuses one over 4300 digits)."""
    digits = len(text.lstrip("+-"))
    if digits > EXACT_DIGITS:
        raise OversizeValue(f"an integer of {digits} digits is beyond the exact range")
    return int(text)


def _excerpt(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."


def _has_top_level_relation(text: str) -> bool:
    depth = 0
    for char in text:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char in "=<>" and depth == 0:
            return True
    return False


def looks_mathematical(text: str, known_symbols: set[str]) -> bool:
    """Whether ``text`` reads as an expression rather than a category."""
    names = _NAME.findall(text)
    if _MATH_MARK.search(text) or (text.startswith("-") and len(text) > 1):
        return True
    if not names:
        return False
    if len(names) == 1 and names[0] == text:
        return text in known_symbols  # a bare name: only a declared symbol is mathematical
    return all(n in known_symbols or n in KNOWN_NAMES for n in names)


def names_in(text: str) -> set[str]:
    return set(_NAME.findall(text))
