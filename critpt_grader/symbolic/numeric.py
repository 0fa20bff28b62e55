"""Numbers from constant expressions, at fixed and increasing precision.

The sampler needs each side's value at a point, and whether the two values differ. Both are
read off a fixed **ladder** of precisions (:data:`LADDER`: 30, 60, 120, 240 digits). At each
rung SymPy's ``evalf`` works at that precision and no higher (mpmath underneath, for every
special function: gamma, erf, Bessel functions at complex points included) and reports, for
each part, how many bits of it are right (it tracks cancellation through sums and products).
A rung's :class:`Reading` is therefore an interval: a value and a bound on its error. The work
is counted in digits, never in seconds.

* **A value** is accepted at the first rung whose error is below :data:`AGREEING` of it (25
  digits) *and* whose value the next rung confirms within both errors: two precisions must
  agree, so a digit SymPy believes but mpmath got wrong is not taken. A value is 0 when its
  interval holds 0 and is narrower than half the rung's digits.
* **A difference** of two accepted values is *certified* at a rung where the interval of
  ``a - b`` excludes 0 and the next rung sees the same difference within both rungs' errors
  (SymPy's error bound for ``cos`` of a complex number with a large imaginary part can be
  too small by a factor of ten: the rung above must not contradict the digits), and
  *vanishes* at a rung of at least 60 digits where it holds 0 and is
  narrower than half the rung's digits of the larger value (differences down to about
  ``1e-30`` of the values are seen, at once; smaller ones as the ladder climbs). Otherwise the
  next rung is tried; past the top, the difference is unsettled.

Before any rung, :func:`~critpt_grader.symbolic.magnitudes.check_magnitudes` refuses an
argument (or a special function's order) too large to evaluate: :class:`TooCostly`, a kind of
:class:`NoValue` that says the value's cost, not its finiteness, is the reason. Special
functions are read through their numeric forms
(:func:`~critpt_grader.symbolic.functions.numeric_form`): mpmath's value at the rung's
precision, never a symbolic expansion. What is left to a clock is only the CPU cap the
caller sets around the whole, which ordinary values never reach.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import mpmath
import sympy
from sympy.core.evalf import dps_to_prec
from sympy.core.evalf import evalf as evalf_parts

from critpt_grader.symbolic.functions import numeric_form
from critpt_grader.symbolic.magnitudes import OversizeValue, check_magnitudes

LADDER = (30, 60, 120, 240)  # digits
_FIRST_VANISHING_RUNG = 1  # a difference vanishes only from the 60-digit rung up
# A private context, wide enough to subtract two values of the top rung exactly enough:
# mpmath's global one is shared by every thread and by SymPy.
MP = mpmath.MPContext()
MP.dps = LADDER[-1] + 40
AGREEING = MP.mpf("1e-25")
CLEARLY_NONZERO = MP.mpf("1e-12")

_INFINITIES = (sympy.oo, -sympy.oo, sympy.zoo, sympy.nan)


class NoValue(Exception):
    """The expression has no finite value here; the message says why."""


class TooCostly(NoValue):
    """The expression may have a value, but computing it is refused before the work: an
    argument or an order beyond the size checks. A cost of the value, like a CPU cap."""


@dataclass(frozen=True, slots=True)
class Reading:
    """A value at one rung and a bound on its absolute error."""

    value: object  # an mpc of MP
    error: object  # an mpf of MP

    def holds_zero(self) -> bool:
        return abs(self.value) <= self.error


@dataclass(frozen=True, slots=True)
class Settled:
    """A value accepted at ``rung`` (an index into :data:`LADDER`)."""

    value: object  # an mpc of MP
    rung: int


class Ladder:
    """One constant expression's readings, rung by rung, each computed once."""

    def __init__(self, expr: sympy.Expr) -> None:
        self.expr = numeric_form(expr)
        self._readings: dict[int, Reading] = {}
        self._checked = False

    def at(self, rung: int) -> Reading:
        """The reading at ``rung``, or :class:`NoValue`."""
        if rung not in self._readings:
            if not self._checked:
                try:
                    check_magnitudes(self.expr)
                except OversizeValue as exc:
                    raise TooCostly(f"too large to evaluate: {exc}") from None
                self._checked = True
            self._readings[rung] = read(self.expr, LADDER[rung])
        return self._readings[rung]

    def settle(self) -> Settled:
        """The value at the first rung that knows it and that the next rung confirms, or
        :class:`NoValue`."""
        for rung in range(len(LADDER) - 1):
            here = self.at(rung)
            size = abs(here.value)
            known = here.error <= AGREEING * size
            zero = here.holds_zero() and here.error <= _half_digits(rung)
            if not (known or zero):
                continue
            above = self.at(rung + 1)
            if abs(here.value - above.value) <= here.error + above.error + AGREEING * size:
                return Settled(MP.mpc(0) if zero and not known else here.value, rung)
        raise NoValue(f"no two precisions up to {LADDER[-1]} digits agree on its value")


Verdict = Literal["vanishes", "certified", "unsettled"]


@dataclass(frozen=True, slots=True)
class Difference:
    verdict: Verdict
    size: object = None  # |a - b| when certified (an mpf of MP)


def difference(a: Ladder, b: Ladder, start: int) -> Difference:
    """Whether ``a - b`` vanishes, is certified nonzero, or neither, from rung ``start`` up.
    Both values exist at every rung (a rung where one has none raises :class:`NoValue`)."""
    for rung in range(start, len(LADDER)):
        first, second = a.at(rung), b.at(rung)
        gap = abs(first.value - second.value)
        error = first.error + second.error
        if gap > 2 * error and _confirmed(a, b, rung, first.value - second.value, error):
            return Difference("certified", gap)
        # Not certified: gap <= 2*error. It vanishes once that interval is narrow.
        scale = max(abs(first.value), abs(second.value))
        narrow = error <= _half_digits(rung) * max(scale, 1)
        if rung >= _FIRST_VANISHING_RUNG and narrow:
            return Difference("vanishes")
    return Difference("unsettled")


def _confirmed(a: Ladder, b: Ladder, rung: int, delta, error) -> bool:
    """The rung above sees the difference ``delta`` found at ``rung``, within the errors of
    both rungs: as for a value, digits the next precision contradicts are not taken. At the
    top rung there is nothing above to ask."""
    if rung + 1 >= len(LADDER):
        return True
    first, second = a.at(rung + 1), b.at(rung + 1)
    above = first.value - second.value
    return abs(delta - above) <= error + first.error + second.error


def clearly_nonzero(size, scale) -> bool:
    """A certified difference is *clear* when it exceeds ``1e-12`` of the larger value."""
    return size > CLEARLY_NONZERO * scale


def _half_digits(rung: int):
    """``10**-(digits/2)`` of a rung: the width under which an interval around 0 is 0."""
    return MP.mpf(10) ** (-(LADDER[rung] // 2))


def read(expr: sympy.Expr, digits: int) -> Reading:
    """``expr`` evaluated at ``digits`` and no more, with SymPy's bound on the error."""
    prec = dps_to_prec(digits)
    options = {"maxprec": prec, "strict": False, "chop": False, "verbose": False}
    try:
        try:
            parts = evalf_parts(expr, prec, options)
        except NotImplementedError:  # no evalf rule: SymPy's own fallback, trusted to prec
            value = expr.evalf(digits, strict=False, maxn=digits)
            return _from_number(value, prec)
    except (ValueError, TypeError, ArithmeticError, RecursionError, AttributeError) as exc:
        raise NoValue(f"it cannot be evaluated ({type(exc).__name__})") from None
    except mpmath.libmp.NoConvergence:
        raise NoValue("its series does not converge within mpmath's bounds") from None
    if parts is sympy.S.ComplexInfinity or not isinstance(parts, tuple):
        raise NoValue("it is not finite")
    re, im, re_acc, im_acc = parts
    if re is sympy.S.NaN or im is sympy.S.NaN:
        raise NoValue("it is not finite")
    values, error = [], MP.mpf(0)
    for part, accuracy in ((re, re_acc), (im, im_acc)):
        if not part:  # an exact 0 (None or fzero)
            values.append(MP.mpf(0))
            continue
        number = MP.mpf(part)
        if not MP.isfinite(number):
            raise NoValue("it is not finite")
        values.append(number)
        bits = prec if accuracy is None else min(accuracy, prec)
        error += abs(number) * MP.mpf(2) ** (-bits)
    return Reading(MP.mpc(*values), error)


def _from_number(value: sympy.Expr, prec: int) -> Reading:
    number = as_mpc(value)
    if number is None:
        if value.has(*_INFINITIES):
            raise NoValue("it is not finite")
        raise NoValue("it does not evaluate to a number")
    return Reading(number, abs(number) * MP.mpf(2) ** (-prec))


def as_mpc(value: sympy.Expr):
    """An evaluated SymPy number as a finite complex of :data:`MP`, or None."""
    if value.has(*_INFINITIES) or value.free_symbols:
        return None
    re, im = value.as_real_imag()
    parts = []
    for part in (re, im):
        if isinstance(part, sympy.Float):
            parts.append(MP.mpf(part._mpf_))
        elif part.is_Rational:
            parts.append(MP.mpf(part.p) / part.q)
        else:
            return None
    if not all(MP.isfinite(part) for part in parts):
        return None
    return MP.mpc(*parts)
