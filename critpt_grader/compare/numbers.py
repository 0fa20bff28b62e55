"""Exact numeric views of decoded values and the tolerance test on them.

A number is held as a pair of exact rationals (real and imaginary part). A float contributes
its exact binary64 value, a Decimal its exact decimal value. A constant SymPy expression
(``sqrt(2)``, ``pi/3``) is evaluated to 60 significant digits; its pair then carries an error
bound, and a tolerance test that falls within that bound of its boundary is undecided
rather than guessed.

**Bounded work.** Every conversion checks the size of its result *before* building it, and
raises :class:`OversizeValue` rather than start work whose cost the value chooses:

* exact rationals are held only within ``2^±EXACT_BITS`` (``10^±2466``), which covers every
  number the wire can carry with room to spare; a value beyond (``exp(exp(exp(9)))``,
  ``gamma(10**100)``, ``factorial(10**9)``, the text ``1e99999999``) is too costly to compare;
* a constant expression is evaluated only after a magnitude check of the arguments of its
  functions and powers, innermost first, at 15 digits: an argument beyond
  ``2^MAX_ARGUMENT_BITS`` (``exp`` of ``exp(exp(exp(9)))``, ``sin`` of a tower) is refused
  before SymPy tries to compute with it; the evaluation itself is ``strict`` (60 correct
  digits or no value);
* a nonzero value smaller than ``2^-EXACT_BITS`` (a Boltzmann factor ``exp(-10**12)``) is held
  as ``±2^-(EXACT_BITS+1)`` within an error of as much (an interval from 0 to the bound, which
  holds it) and marked nonzero, so it still meets ``0.0`` (different), a tolerance wider than
  it (equal) or a normal number (different) correctly;
* running out of memory or stack while converting is :class:`OversizeValue` too.

Who pays for an oversize value — the candidate (scored 0) or the reference (unscorable) — is
decided by the caller, never here.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Literal

import mpmath

from critpt_grader.codec.values import ExactComplex
from critpt_grader.compare.closeness import within
from critpt_grader.policy.tolerance import Tolerance
from critpt_grader.symbolic.magnitudes import (
    OversizeValue,
    check_magnitudes,
    magnitude_text,
    oversize_on_exhaustion,
)

_EVAL_DIGITS = 60
_EVAL_RELATIVE_ERROR = Fraction(1, 10**45)

EXACT_BITS = 8192  # exact rationals stay within 2**±EXACT_BITS (about 10**±2466)
EXACT_DIGITS = 2466  # the same bound in decimal digits (numerator and denominator)
_TINY = Fraction(1, 1 << EXACT_BITS)


@dataclass(frozen=True)
class ExactNumber:
    """``re + i*im`` exactly, or within ``error`` (absolute, per part) when evaluated."""

    re: Fraction
    im: Fraction = Fraction(0)
    error: Fraction = Fraction(0)
    nonzero: bool = False  # known to be nonzero although re ± error includes 0 (a tiny value)

    @property
    def is_real(self) -> bool:
        return self.im == 0 and self.error == 0

    def scale(self) -> Fraction:
        """The magnitude a tolerance scales with: ``max(|Re|, |Im|)``."""
        if not self.im:
            return abs(self.re)
        return max(abs(self.re), abs(self.im))

    def negated(self) -> ExactNumber:
        return ExactNumber(-self.re, -self.im, self.error, self.nonzero)


@dataclass(frozen=True)
class NonfiniteNumber:
    """A non-finite value. ``label`` names it; a complex one keeps both part labels."""

    label: str  # "inf", "-inf", "nan", "zoo", or "(inf, 1/2)" for complex parts

    @property
    def has_nan(self) -> bool:
        return "nan" in self.label


def real_to_exact(value: int | float | Fraction | Decimal) -> Fraction | str:
    """Exact rational of a real, or the non-finite label (``nan``, ``inf``, ``-inf``)."""
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return Fraction(value)
    if isinstance(value, Decimal):
        if value.is_nan():
            return "nan"
        if value.is_infinite():
            return "inf" if value > 0 else "-inf"
        check_decimal_size(value)
        return Fraction(value)
    return Fraction(value)


def check_decimal_size(value: Decimal, text: str | None = None) -> None:
    """Refuse a finite Decimal whose exact rational needs more than EXACT_DIGITS digits
    above or below the fraction bar (``1e99999999`` would build a 10**8-digit integer)."""
    _, digits, exponent = value.as_tuple()
    if not isinstance(exponent, int):  # NaN and infinities hold no digits to expand
        return
    if max(len(digits) + max(exponent, 0), -exponent) > EXACT_DIGITS:
        shown = text if text is not None else str(value)
        if len(shown) > 40:
            shown = shown[:37] + "..."
        raise OversizeValue(f"the number {shown} is beyond the exact range 10^±{EXACT_DIGITS}")


def number_of(value) -> ExactNumber | NonfiniteNumber | None:
    """Exact view of a Python numeric value (not bool); ``None`` for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float | Fraction | Decimal):
        exact = real_to_exact(value)
        return NonfiniteNumber(exact) if isinstance(exact, str) else ExactNumber(exact)
    if isinstance(value, complex | ExactComplex):
        re, im = (
            real_to_exact(value.real if isinstance(value, complex) else value.re),
            (real_to_exact(value.imag if isinstance(value, complex) else value.im)),
        )
        if isinstance(re, str) or isinstance(im, str):
            return NonfiniteNumber(f"({_label(re)}, {_label(im)})")
        return ExactNumber(re, im)
    return None


def _label(part: Fraction | str) -> str:
    # The finite part of a non-finite complex keeps its exact value: (inf, 1) is not
    # (inf, 2), and no tolerance applies beside an infinite part.
    return part if isinstance(part, str) else str(part)


def from_sympy_number(value) -> ExactNumber:
    """Exact value of a parsed SymPy ``Rational`` or ``Float``. A parsed Float carries enough
    precision to print back as the decimal it was written as; that decimal is its value."""
    import sympy

    if isinstance(value, sympy.Rational):
        return ExactNumber(_exact_rational(int(value.p), int(value.q)))
    part, tiny = _exact_part(value)  # checks the magnitude before any exact work
    if tiny:
        return ExactNumber(part, error=_TINY / 2, nonzero=True)
    try:
        decimal = Decimal(str(value))
    except (ArithmeticError, ValueError):
        return ExactNumber(part)
    if not decimal.is_finite():
        return ExactNumber(part)
    check_decimal_size(decimal)
    return ExactNumber(Fraction(decimal))


def _exact_rational(p: int, q: int) -> Fraction:
    bits = max(p.bit_length(), q.bit_length())
    if bits > EXACT_BITS + 64:
        raise OversizeValue(f"a rational of {bits} bits, beyond the exact range")
    return Fraction(p, q)


def _exact_part(part) -> tuple[Fraction, bool]:
    """The exact rational of one evaluated part (a Float or a SymPy rational), and whether it
    is a nonzero value below ``2**-EXACT_BITS``: then it is held as ``±_TINY/2`` (its sign),
    which is within ``_TINY/2`` of every value between 0 and ``±_TINY``."""
    import sympy

    if isinstance(part, sympy.Rational):
        return _exact_rational(int(part.p), int(part.q)), False
    if not isinstance(part, sympy.Float):
        raise ValueError(f"not a number: {type(part).__name__}")
    sign, mantissa, exponent, bits = part._mpf_
    if not mantissa:
        if bits:  # mpmath's special values (inf, nan) have a zero mantissa and bc != 0
            raise ValueError("not finite")
        return Fraction(0), False
    magnitude = exponent + bits  # 2**(magnitude-1) <= |part| < 2**magnitude
    if magnitude > EXACT_BITS:
        raise OversizeValue(f"a magnitude of {magnitude_text(magnitude)}")
    if magnitude < -EXACT_BITS:
        return (-_TINY / 2 if sign else _TINY / 2), True
    mantissa = -mantissa if sign else mantissa
    if exponent >= 0:
        return Fraction(mantissa << exponent), False
    return Fraction(mantissa, 1 << -exponent), False


def evaluate_constant(expr) -> ExactNumber:
    """Evaluate a constant expression to 60 correct digits; ``error`` bounds each part.

    Raises :class:`OversizeValue` for a value beyond the exact range or an argument too large
    to evaluate (checked first, see :func:`check_magnitudes`), and ``ValueError`` for one
    that is not a finite number or cannot be evaluated to 60 digits (an exact zero written as
    a cancelling sum, for example): the caller then leaves the comparison undecided.

    Outcomes are remembered per expression (the last :data:`_REMEMBERED`), so a value repeated
    across a list or a set is evaluated, or refused, once.
    """
    remembered = _evaluated.get(expr)
    if remembered is None:
        try:
            remembered = _evaluate(expr)
        except (OversizeValue, ValueError) as exc:
            remembered = exc
        with _evaluated_lock:
            _evaluated[expr] = remembered
            while len(_evaluated) > _REMEMBERED:
                del _evaluated[next(iter(_evaluated))]
    if isinstance(remembered, Exception):
        raise type(remembered)(*remembered.args)
    return remembered


_REMEMBERED = 512
_evaluated: dict = {}  # expression -> ExactNumber, or the exception its evaluation raised
_evaluated_lock = threading.Lock()


def _evaluate(expr) -> ExactNumber:
    import sympy

    from critpt_grader.symbolic.functions import numeric_form

    try:
        with oversize_on_exhaustion():
            expr = numeric_form(expr)  # special functions by mpmath, never expanded
            check_magnitudes(expr)
            value = expr.evalf(_EVAL_DIGITS, strict=True)
    except sympy.core.evalf.PrecisionExhausted:
        raise ValueError(f"cannot be evaluated to {_EVAL_DIGITS} correct digits") from None
    except mpmath.libmp.NoConvergence:
        raise ValueError("its series does not converge within mpmath's bounds") from None
    re, im = value.as_real_imag()
    if not (re.is_number and im.is_number):
        raise ValueError("not a constant")
    if re.has(sympy.oo, -sympy.oo, sympy.zoo, sympy.nan) or im.has(
        sympy.oo, -sympy.oo, sympy.zoo, sympy.nan
    ):
        raise ValueError("not finite")
    (re_exact, re_tiny), (im_exact, im_tiny) = _exact_part(re), _exact_part(im)
    tiny = _TINY / 2 * (re_tiny + im_tiny)  # a tiny part is held within _TINY/2
    # An exact zero from a strict evaluation is zero; the floor only keeps every bound positive.
    error = (abs(re_exact) + abs(im_exact)) * _EVAL_RELATIVE_ERROR + tiny + _TINY
    return ExactNumber(re_exact, im_exact, error, nonzero=re_tiny or im_tiny)


Outcome = Literal["equal", "mismatch", "uncertain"]


def compare_numbers(expected: ExactNumber, observed: ExactNumber, tolerance: Tolerance) -> Outcome:
    """``|o - e| <= atol + rtol*|e|`` with moduli for complex numbers, exactly; undecided only
    when an evaluated side's error bound straddles the boundary (see
    :mod:`critpt_grader.compare.closeness`)."""
    if tolerance.integral and not is_integer(observed):
        return "mismatch"  # an integer is asked for ("rounded to the nearest integer")
    if _zero_against_nonzero(expected, observed) and not tolerance.atol and tolerance.rtol < 1:
        # A tiny value (held near 0 within its error, marked nonzero) against an exact 0: the
        # distance is the nonzero side's modulus, which only an absolute width can cover.
        return "mismatch"
    return within(expected, observed, tolerance)


def is_integer(number: ExactNumber) -> bool:
    """Exactly an integer: no imaginary part, no evaluation error, denominator 1."""
    return not number.im and not number.error and number.re.denominator == 1


def _zero_against_nonzero(expected: ExactNumber, observed: ExactNumber) -> bool:
    def zero(n: ExactNumber) -> bool:
        return not (n.re or n.im or n.error)

    def nonzero(n: ExactNumber) -> bool:
        return n.nonzero or abs(n.re) > n.error or abs(n.im) > n.error

    return (zero(expected) and nonzero(observed)) or (zero(observed) and nonzero(expected))
