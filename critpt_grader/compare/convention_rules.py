"""Value-level helpers for statement conventions: negation for "up to an overall sign",
exact modulus checks for "up to a global phase", the common factor for "up to normalization",
and order checks for sorted outputs."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Any, Literal

from critpt_grader.codec.values import ExactComplex, Legacy, Symbolic, WireSet
from critpt_grader.compare.closeness import magnitude, sqrt_interval
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


Freedom = Literal["positive", "real", "complex"]


def normalization_freedom(conventions) -> Freedom:
    """Which factors "up to normalization" allows beside the other conventions of one output
    (their names): a positive real alone, any nonzero real with an overall sign, any nonzero
    complex number with a global phase."""
    if "phase" in conventions:
        return "complex"
    if "sign" in conventions:
        return "real"
    return "positive"


def normalization_factor(expected: Any, observed: Any, freedom: Freedom) -> ExactNumber | None:
    """The one factor ``c`` for which ``observed`` may equal ``c·expected``, or ``None`` when
    normalization grants nothing here.

    As for the global phase, ``c`` is read at the expected component of largest modulus:
    ``o/e`` there, exactly; a real freedom keeps its real part, and a positive one refuses a
    factor whose real part is not positive. Nothing is granted to a scalar (a rescaled number
    could be anything), to a value with a leaf that is not a finite number, to values of
    different shapes, to an all-zero expectation, or for ``c = 0``."""
    if not (isinstance(expected, list | tuple) and same_shape(expected, observed)):
        return None
    e_flat = numbers_flat(expected)
    o_flat = numbers_flat(observed)
    if e_flat is None or o_flat is None or not e_flat:
        return None
    anchor = max(range(len(e_flat)), key=lambda k: magnitude(e_flat[k]))
    e, o = e_flat[anchor], o_flat[anchor]
    if e.error or o.error or magnitude(e) == 0:
        return None
    denominator = e.re**2 + e.im**2
    re = (o.re * e.re + o.im * e.im) / denominator
    im = (o.im * e.re - o.re * e.im) / denominator if freedom == "complex" else Fraction(0)
    if (freedom == "positive" and re <= 0) or (re == 0 and im == 0):
        return None
    return ExactNumber(re, im)


def scaled(number: ExactNumber, factor: ExactNumber) -> ExactNumber:
    """``factor·number``, exactly (an error bound grows with the factor's parts)."""
    return ExactNumber(
        factor.re * number.re - factor.im * number.im,
        factor.re * number.im + factor.im * number.re,
        number.error * (abs(factor.re) + abs(factor.im)),
    )


def same_shape(a: Any, b: Any) -> bool:
    """The same nesting of lists and tuples (either kind), of the same lengths."""
    a_seq, b_seq = isinstance(a, list | tuple), isinstance(b, list | tuple)
    if not (a_seq and b_seq):
        return a_seq == b_seq
    return len(a) == len(b) and all(same_shape(x, y) for x, y in zip(a, b, strict=True))


def factor_text(factor: ExactNumber) -> str:
    """``c`` for a reason: 12 significant digits (``2``, ``-0.5``, ``0.6+0.8i``)."""

    def part(x: Fraction) -> str:
        text = f"{Decimal(x.numerator) / Decimal(x.denominator):.12g}"
        mantissa, e, exponent = text.partition("e")
        if "." in mantissa:
            mantissa = mantissa.rstrip("0").rstrip(".")
        return mantissa + e + exponent

    if not factor.im:
        return part(factor.re)
    imaginary = f"{part(abs(factor.im))}i"
    if not factor.re:
        return imaginary if factor.im > 0 else f"-{imaginary}"
    return f"{part(factor.re)}{'+' if factor.im > 0 else '-'}{imaginary}"


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
