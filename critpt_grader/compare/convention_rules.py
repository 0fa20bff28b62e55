"""Value-level helpers for statement conventions: negation for "up to an overall sign",
exact modulus checks for "up to a global phase", and order checks for sorted outputs."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Any

from critpt_grader.codec.values import ExactComplex, Legacy, Symbolic, WireSet
from critpt_grader.compare.closeness import sqrt_interval
from critpt_grader.compare.numbers import (
    ExactNumber,
    number_of,
)
from critpt_grader.compare.verdicts import Status
from critpt_grader.policy.tolerance import Tolerance


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
    """``| |o| - |e| | <= atol + rtol*|e|``, in rationals. Moduli are square roots: equal
    squares settle it exactly, otherwise both are bracketed to 2^-200 relative and only a
    value within that of the boundary is undecided."""
    e2 = e.re**2 + e.im**2
    o2 = o.re**2 + o.im**2
    if e2 == o2:
        return "equal"
    e_low, e_high = sqrt_interval(e2)
    o_low, o_high = sqrt_interval(o2)
    width_low = tolerance.atol + tolerance.rtol * e_low
    width_high = tolerance.atol + tolerance.rtol * e_high
    if max(o_low - e_high, e_low - o_high) > width_high:
        return "mismatch"
    if max(o_high - e_low, e_high - o_low) <= width_low:
        return "equal"
    return "uncertain"


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
