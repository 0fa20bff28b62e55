"""Value-level helpers for statement conventions: negation for "up to an overall sign",
exact modulus checks for "up to a global phase", and order checks for sorted outputs."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Any

from critpt_grader.compare.numbers import (
    ExactNumber,
    number_of,
)
from critpt_grader.compare.verdicts import Status
from critpt_grader.tolerance import Tolerance
from critpt_grader.values import ExactComplex, Legacy, Symbolic, WireSet


def negate(value: Any) -> Any:
    """``-value`` leaf by leaf (strings, booleans and None are left alone)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float | Fraction | Decimal | complex):
        return -value
    if isinstance(value, ExactComplex):
        return ExactComplex(-value.re, -value.im)
    if isinstance(value, Symbolic):
        return Symbolic(f"-({value.text})")
    if isinstance(value, Legacy):
        return Legacy(f"-({value.text})")
    if isinstance(value, list):
        return [negate(v) for v in value]
    if isinstance(value, tuple):
        return tuple(negate(v) for v in value)
    if isinstance(value, dict):
        return {k: negate(v) for k, v in value.items()}
    if isinstance(value, WireSet):
        return WireSet(tuple(negate(v) for v in value.items))
    return value


def modulus_status(e: ExactNumber, o: ExactNumber, tolerance: Tolerance) -> Status:
    """``| |o| - |e| | <= width``, decided on squares so everything stays rational."""
    e2 = e.re**2 + e.im**2
    o2 = o.re**2 + o.im**2
    width = tolerance.width(e.scale())
    # |o| within [|e| - w, |e| + w]  <=>  o2 within [(|e|-w)^2, (|e|+w)^2] when |e| >= w;
    # |e| is irrational in general, so bound it by rationals around its square root.
    low, high = _sqrt_bounds(e2)
    upper = (high + width) ** 2
    lower = max(low - width, Fraction(0)) ** 2
    if o2 > upper or (low - width > 0 and o2 < lower):
        return "mismatch"
    tight_upper = (low + width) ** 2
    tight_lower = max(high - width, Fraction(0)) ** 2
    if tight_lower <= o2 <= tight_upper:
        return "equal"
    return "uncertain"


def _sqrt_bounds(square: Fraction) -> tuple[Fraction, Fraction]:
    from math import isqrt

    scale = 10**40
    root = isqrt(square.numerator * scale * scale // square.denominator)
    return Fraction(root, scale), Fraction(root + 1, scale)


def numbers_flat(value) -> list[ExactNumber] | None:
    flat = flat_values(value)
    numbers = [number_of(v) for v in flat]
    if any(not isinstance(n, ExactNumber) for n in numbers):
        return None
    return numbers  # type: ignore[return-value]


def flat_values(value) -> list[Any]:
    if isinstance(value, list | tuple):
        return [leaf for item in value for leaf in flat_values(item)]
    return [value]


def flat_paths(value, path: str) -> list[str]:
    if isinstance(value, list | tuple):
        return [p for i, item in enumerate(value) for p in flat_paths(item, f"{path}/{i}")]
    return [path]


def order_breach(values, order: str) -> int | None:
    numbers = [number_of(v) for v in values]
    if any(not isinstance(n, ExactNumber) or not n.is_real for n in numbers):
        return None  # order is checked only on real numbers
    for i in range(1, len(numbers)):
        a, b = numbers[i - 1].re, numbers[i].re  # type: ignore[union-attr]
        if (order == "ascending" and b < a) or (order == "descending" and b > a):
            return i
    return None
