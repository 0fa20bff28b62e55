"""Exact numeric views of decoded values and the tolerance test on them.

A number is held as a pair of exact rationals (real and imaginary part). A float contributes
its exact binary64 value, a Decimal its exact decimal value. A constant SymPy expression
(``sqrt(2)``, ``pi/3``) is evaluated to 60 significant digits; its pair then carries an error
bound, and a tolerance test that falls within that bound of its boundary is undecided
rather than guessed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Literal

from critpt_grader.tolerance import Tolerance
from critpt_grader.values import ExactComplex

Nonfinite = Literal["nan", "inf", "-inf", "zoo"]

_EVAL_DIGITS = 60
_EVAL_RELATIVE_ERROR = Fraction(1, 10**45)


@dataclass(frozen=True)
class ExactNumber:
    """``re + i*im`` exactly, or within ``error`` (absolute, per part) when evaluated."""

    re: Fraction
    im: Fraction = Fraction(0)
    error: Fraction = Fraction(0)

    @property
    def is_real(self) -> bool:
        return self.im == 0 and self.error == 0

    def scale(self) -> Fraction:
        """The magnitude a tolerance scales with: ``max(|Re|, |Im|)``."""
        if not self.im:
            return abs(self.re)
        return max(abs(self.re), abs(self.im))

    def negated(self) -> ExactNumber:
        return ExactNumber(-self.re, -self.im, self.error)


@dataclass(frozen=True)
class NonfiniteNumber:
    """A non-finite value. ``label`` names it; a complex one keeps both part labels."""

    label: str  # "inf", "-inf", "nan", "zoo", or "(inf, nan)" for complex parts

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
        return Fraction(value)
    return Fraction(value)


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
    return part if isinstance(part, str) else "finite"


def from_sympy_number(value) -> ExactNumber:
    """Exact value of a parsed SymPy ``Rational`` or ``Float``. A parsed Float carries enough
    precision to print back as the decimal it was written as; that decimal is its value."""
    import sympy

    if isinstance(value, sympy.Rational):
        return ExactNumber(Fraction(int(value.p), int(value.q)))
    try:
        return ExactNumber(Fraction(Decimal(str(value))))
    except (ArithmeticError, ValueError):
        return ExactNumber(_exact_real(value))


def _exact_real(value) -> Fraction:
    import sympy

    rational = sympy.Rational(value)  # exact for Float (binary mantissa) and Rational
    return Fraction(int(rational.p), int(rational.q))


def evaluate_constant(expr) -> ExactNumber:
    """Evaluate a constant expression to 60 digits; ``error`` bounds each part."""
    import sympy

    value = sympy.N(expr, _EVAL_DIGITS)
    re, im = value.as_real_imag()
    if not (re.is_number and im.is_number):
        raise ValueError("not a constant")
    if re.has(sympy.oo, -sympy.oo, sympy.zoo, sympy.nan) or im.has(
        sympy.oo, -sympy.oo, sympy.zoo, sympy.nan
    ):
        raise ValueError("not finite")
    re_exact, im_exact = _exact_real(re), _exact_real(im)
    error = (abs(re_exact) + abs(im_exact)) * _EVAL_RELATIVE_ERROR + Fraction(1, 10**300)
    return ExactNumber(re_exact, im_exact, error)


Outcome = Literal["equal", "mismatch", "uncertain"]


def compare_numbers(expected: ExactNumber, observed: ExactNumber, tolerance: Tolerance) -> Outcome:
    """Per part ``|o - e| <= atol + rtol * max(|Re e|, |Im e|)``, exactly; undecided only
    when an evaluated side's error bound straddles the boundary."""
    scale = expected.scale()
    slack = expected.error + observed.error
    if not slack:
        width = tolerance.width(scale)
        if abs(observed.re - expected.re) > width:
            return "mismatch"
        if (expected.im or observed.im) and abs(observed.im - expected.im) > width:
            return "mismatch"
        return "equal"
    # the scale itself is known only within the expected side's error
    width_low = tolerance.atol + tolerance.rtol * max(scale - expected.error, Fraction(0))
    width_high = tolerance.atol + tolerance.rtol * (scale + expected.error)
    outcome: Outcome = "equal"
    for e, o in ((expected.re, observed.re), (expected.im, observed.im)):
        diff = abs(o - e)
        if diff - slack > width_high:
            return "mismatch"
        if diff + slack > width_low:
            outcome = "uncertain"
    return outcome
