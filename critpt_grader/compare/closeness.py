"""The tolerance test on exact numbers: ``|o - e| <= atol + rtol*|e|``, with moduli.

For complex numbers ``|·|`` is the modulus, as the manual states (docs/decide/comparison.md):
the error is the distance in the complex plane and the scale is the size of the expected
value, so a rotation of the same size is judged the same way whatever the phase. (Testing
each part against ``max(|Re|, |Im|)`` would let a value off by the full width in both parts
pass.)

Everything is decided in exact rationals. Moduli are square roots: the exact test squares
them away; when a side was evaluated (a constant expression to 60 digits, with an error bound
per part) square roots are bracketed to 2^-200 relative, and an outcome within the error of the
boundary is ``uncertain`` rather than guessed.
"""

from __future__ import annotations

from fractions import Fraction
from math import isqrt
from typing import Literal, Protocol

from critpt_grader.policy.tolerance import Tolerance


class ExactNumber(Protocol):
    """What the test reads of a number (:class:`critpt_grader.compare.numbers.ExactNumber`):
    exact parts and the error bound of an evaluated side."""

    re: Fraction
    im: Fraction
    error: Fraction


Outcome = Literal["equal", "mismatch", "uncertain"]

_SQRT_BITS = 200


def within(expected: ExactNumber, observed: ExactNumber, tolerance: Tolerance) -> Outcome:
    """``|o - e| <= atol + rtol*|e|`` exactly; undecided only when an evaluated side's error
    bound straddles the boundary."""
    atol, rtol = tolerance.atol, tolerance.rtol
    dre, dim = observed.re - expected.re, observed.im - expected.im
    distance2 = dre * dre + dim * dim
    size2 = expected.re * expected.re + expected.im * expected.im
    slack = expected.error + observed.error
    if not slack:
        return "equal" if _exactly_within(distance2, size2, atol, rtol) else "mismatch"
    # The parts are each known within their error, so a modulus is known within twice it.
    d_low, d_high = sqrt_interval(distance2)
    m_low, m_high = sqrt_interval(size2)
    d_low, d_high = d_low - 2 * slack, d_high + 2 * slack
    m_low, m_high = max(m_low - 2 * expected.error, Fraction(0)), m_high + 2 * expected.error
    if d_low > atol + rtol * m_high:
        return "mismatch"
    if d_high <= atol + rtol * m_low:
        return "equal"
    return "uncertain"


def magnitude(number: ExactNumber) -> Fraction:
    """``|number|`` as a rational: exact for reals, otherwise within 2^-200 relative (for
    choosing a tolerance, where that error cannot matter)."""
    if not number.im:
        return abs(number.re)
    if not number.re:
        return abs(number.im)
    return sqrt_interval(number.re * number.re + number.im * number.im)[1]


def _exactly_within(distance2: Fraction, size2: Fraction, atol: Fraction, rtol: Fraction) -> bool:
    """``sqrt(D) <= a + r*sqrt(M)`` for rationals, by squaring: ``D - a² - r²M <= 2ar*sqrt(M)``."""
    excess = distance2 - atol * atol - rtol * rtol * size2
    if excess <= 0:
        return True
    if not (atol and rtol and size2):
        return False
    return excess * excess <= 4 * atol * atol * rtol * rtol * size2


def sqrt_interval(square: Fraction) -> tuple[Fraction, Fraction]:
    """Rationals ``lo <= sqrt(square) <= hi`` with ``hi - lo <= 2^-200 * sqrt(square)``."""
    if square <= 0:
        return Fraction(0), Fraction(0)
    p, q = square.numerator, square.denominator
    # sqrt(p/q) = sqrt(p*q*4^k) / (q * 2^k); k makes the integer root long enough.
    k = max(0, _SQRT_BITS + 2 - (p * q).bit_length() // 2)
    n = p * q << (2 * k)
    root = isqrt(n)
    scale = q << k
    if root * root == n:
        return Fraction(root, scale), Fraction(root, scale)
    return Fraction(root, scale), Fraction(root + 1, scale)
