"""How a delivered string expectation (``["legacy", text]``) is read.

In order:

1. **Refused** (``ambiguous_legacy_literal``): text starting with ``[``, ``{``, ``'`` or
   ``"``, the words ``True``/``False``/``None``, and digit groups with underscores (``1_000``).
2. **Number**: an integer, ``a/b`` (b > 0) or a decimal (``0.25``, ``-1.5e-3``) is the exact
   number; ``nan``, ``inf``, ``-inf``, ``infinity``, ``oo``, ``-oo`` are non-finite.
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

ReadingKind = Literal["number", "nonfinite", "expression", "category", "relation", "refused"]

_INTEGER = re.compile(r"[+-]?\d+")
_RATIO = re.compile(r"([+-]?\d+)\s*/\s*(\d+)")
_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
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
    number = _number(stripped)
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
        return Fraction(int(text))
    ratio = _RATIO.fullmatch(text)
    if ratio and int(ratio.group(2)) > 0:
        return Fraction(int(ratio.group(1)), int(ratio.group(2)))
    if _DECIMAL.fullmatch(text):
        try:
            value = Decimal(text)
        except InvalidOperation:
            return None
        return Fraction(value) if value.is_finite() else None
    return None


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
