"""Decide whether two SymPy values are equal: by proof, by evidence, or not at all.

A false "equal" rewards a wrong answer, so the rules are asymmetric:

* **equal** only by proof: structural identity; an exact difference that SymPy reduces to 0
  (automatic evaluation, the proof-based ``is_zero``, polynomial and rational-function identity,
  ``expand``/``together``/``radsimp``/``powsimp``/``expand_trig``/``trigsimp``/``simplify``).
  ``Expr.equals`` is never used, because it may decide from numeric samples.
* **different** by exact facts (distinct rationals, a nonzero polynomial with rational
  coefficients, ``is_zero`` False) or by evidence: the difference evaluated at an admissible point
  is clearly nonzero and stable at 30 and 60 digits. Points respect assumptions (positive symbols
  get positive values, integer symbols integers, assumption-free symbols complex values), so
  ``conjugate(x)`` and ``x`` differ for an assumption-free ``x``.
* **uncertain** otherwise. Agreement at any number of points never proves equality.

An uncertain decision between two expressions carries its :class:`Evidence`: the points tried,
at which of them each side could be evaluated, and whether the second side agreed with the
first wherever the first had a value. ``decide`` is symmetric in its status; the evidence is
reported in the caller's order (the comparator passes the expectation first), so that the
comparator can tell a candidate that agreed everywhere from one that could not be evaluated.

The parser reads decimal literals as exact rationals. A ``sympy.Float`` handed to ``decide``
directly is read as the shortest decimal that rounds back to it at its own precision:
``Float(0.1)*x`` equals ``x/10``.

Non-finite values: ``nan`` and ``zoo`` (the undirected infinity: ``zoo - zoo`` is ``nan``) are
never equal to anything, themselves included, nor is anything containing them (``x/0``); the
same directed infinity (``oo``, ``-oo``) on both sides is equal; an infinity against a side that
is finite at a sample point is different; anything else with infinities inside is uncertain
unless structurally identical.

Every SymPy call runs under :func:`~critpt_grader.symbolic.timebox.run_timeboxed`, sharing one
budget; a strategy that times out or raises falls through to the next. The two arguments are put
in a canonical order first, so ``decide(a, b)`` and ``decide(b, a)`` run the same steps.
"""

from __future__ import annotations

import random
import time
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal, TypeVar

import mpmath
import sympy
from sympy import Poly
from sympy.core.function import AppliedUndef

from critpt_grader.symbolic.printer import float_text, safe_str, structural_text
from critpt_grader.symbolic.timebox import TimeBoxExceeded, run_timeboxed

Status = Literal["equal", "different", "uncertain"]
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Evidence:
    """What evaluating two expressions at the sample points showed, in ``decide``'s argument
    order (``first``, ``second``).

    A point is *counted* when the first side has a value there (finite, or a directed
    infinity): the points where the first side has no value are not evidence about the second.
    At a counted point the second side *agrees* when it has a value too and the difference
    evaluates to exactly 0 or cannot be told from 0 at 30 digits (SymPy's strict evaluation
    gives up); a difference certified nonzero, however small, is disagreement.
    ``required`` is how many counted points agreement needs to mean anything: 1 for constants
    (their one value), :data:`REQUIRED_POINTS` when either side has symbols or opaque calls.
    """

    tried: int  # points drawn and evaluated
    counted: int  # points at which the first side has a value
    agreed: int  # counted points at which the second side agreed
    required: int
    first_failure: str | None = None  # why the first side had no value at some point
    # Why the second side did not agree at the first counted point where it did not (no
    # value there, a difference...), or why no point could count because of the second side
    # alone (opaque calls nested in it, assumptions no point meets).
    second_failure: str | None = None
    first_seconds: float = 0.0  # evaluation time spent on each side
    second_seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class Decision:
    status: Status
    reason: str
    method: str
    evidence: Evidence | None = None  # for an uncertain decision between two expressions


_INFINITIES = (sympy.oo, -sympy.oo, sympy.zoo)
_NONFINITE = (*_INFINITIES, sympy.nan)
_UNDEFINED = (sympy.nan, sympy.zoo)  # no definite value: never equal, not even to themselves
_DIRECTED = (sympy.oo, -sympy.oo)
_SAMPLE_POINTS = 8
REQUIRED_POINTS = 4  # counted points before agreement of non-constant expressions means anything
# Sampling (and the evidence it gathers) keeps this share of the budget whatever the exact
# steps before it take.
_SAMPLING_SHARE = 0.35
_MAX_SET_PAIRS = 64
_LOW_DPS, _HIGH_DPS = 30, 60
# The working precision strict evaluation may climb to for its digits to be right: enough
# for the cancellations a sample point of modest size causes (terms near 1e150 summing to 20).
_MAX_DPS = 1000
# A private context: mpmath's global one is shared by every thread and by SymPy.
_MP = mpmath.MPContext()
_MP.dps = _HIGH_DPS + 30
# A point shows a difference when |a-b| exceeds this fraction of max(|a|, |b|) and its values
# at the two precisions agree to this relative error.
_CLEARLY_NONZERO = _MP.mpf("1e-12")
_STABLE = _MP.mpf("1e-20")
# Two 30-digit values agree within this fraction of the larger; below _NOISE both are taken
# as rounding noise around 0 (only when SymPy could not tell their difference from 0 either).
_AGREEING = _MP.mpf("1e-25")
_NOISE = _MP.mpf("1e-100")


def decide(a: sympy.Basic, b: sympy.Basic, *, budget_seconds: float = 2.0) -> Decision:
    """Compare two parsed symbolic values within ``budget_seconds`` of wall time.

    The status does not depend on the order of ``a`` and ``b``; an uncertain decision's
    :class:`Evidence` is in this order (pass the expectation first).
    Plain Python numbers are accepted too (converted exactly); text is not: parse it first.
    """
    prover = _Prover(time.monotonic() + budget_seconds, budget_seconds)
    a, b = _as_basic(a), _as_basic(b)
    try:
        return prover.decide(a, b)
    except Exception as exc:  # SymPy failing outside a bounded step: nothing was shown
        return Decision("uncertain", f"SymPy failed ({type(exc).__name__})", "error")


def value_at_a_point(
    expr: sympy.Expr, *, budget_seconds: float = 0.5
) -> tuple[sympy.Expr, str] | None:
    """``expr`` with its symbols replaced by the first admissible point (on the real line
    where the assumptions allow) at which it evaluates to a finite number, and that point as
    text; None when no such point is found in time. ``decide(expr, value)`` then says whether
    ``expr`` is that constant everywhere."""
    if expr.has(AppliedUndef):
        return None
    deadline = time.monotonic() + budget_seconds
    rng = random.Random(_seed(expr, expr))
    for index in range(_SAMPLE_POINTS):
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        point = _draw_point(expr.free_symbols, rng, on_real_line=index % 2 == 0)
        if point is None:
            return None
        try:
            value = run_timeboxed(lambda p=point: expr.xreplace(p), left)
            number = run_timeboxed(lambda v=value: _number(v, _LOW_DPS), left)
        except Exception:  # TimeBoxExceeded or a failed evaluation: try the next point
            continue
        if number is not None:
            return value, _point_text(point)
    return None


def _as_basic(value: object) -> sympy.Basic:
    if isinstance(value, sympy.Basic):
        return value
    if isinstance(value, str) or not isinstance(value, int | float | complex | Fraction):
        raise TypeError(f"decide() takes SymPy values, not {type(value).__name__}")
    return sympy.sympify(value, strict=True)


def _canonical_order(a: sympy.Basic, b: sympy.Basic) -> tuple[sympy.Basic, sympy.Basic]:
    try:
        swap = sympy.default_sort_key(b) < sympy.default_sort_key(a)
    except Exception:  # no sort key (an exotic object, a number that overflows): by structure
        swap = structural_text(b) < structural_text(a)
    return (b, a) if swap else (a, b)


class _Prover:
    def __init__(self, deadline: float, budget: float) -> None:
        self._deadline = deadline
        self._budget = budget
        self._reserve = 0.0  # seconds the current step must leave for sampling

    def _left(self) -> float:
        return self._deadline - time.monotonic()

    def _bounded(self, fn: Callable[[], T], share: float = 1.0) -> T:
        """Run ``fn`` with at most ``share`` of the whole budget and no more than is left
        (less the time reserved for sampling)."""
        return run_timeboxed(fn, min(self._left() - self._reserve, share * self._budget))

    # Dispatch on the kind of value ----------------------------------------------------------

    def decide(self, a: sympy.Basic, b: sympy.Basic) -> Decision:
        first = a
        a, b = _canonical_order(a, b)  # the same steps whichever way round: a symmetric status
        if isinstance(a, sympy.Expr) and isinstance(b, sympy.Expr):
            return self._expressions(a, b, first_is_a=first is a)
        if isinstance(a, sympy.Tuple) and isinstance(b, sympy.Tuple):
            return self._tuples(a, b)
        if isinstance(a, sympy.Interval) and isinstance(b, sympy.Interval):
            return self._intervals(a, b)
        if isinstance(a, sympy.FiniteSet) and isinstance(b, sympy.FiniteSet):
            return self._finite_sets(a, b)
        if a == b:
            return Decision("equal", "structurally identical", "structural")
        if _kind(a) != _kind(b):
            return Decision("different", f"a {_kind(a)} against a {_kind(b)}", "structural")
        if isinstance(a, sympy.logic.boolalg.BooleanAtom):
            return Decision("different", f"{a} against {b}", "structural")
        return Decision("uncertain", f"cannot compare these {_kind(a)} values", "none")

    def _tuples(self, a: sympy.Tuple, b: sympy.Tuple) -> Decision:
        if len(a) != len(b):
            return Decision("different", f"tuples of length {len(a)} and {len(b)}", "structural")
        return _all_of(self.decide(x, y) for x, y in zip(a, b, strict=True))

    def _intervals(self, a: sympy.Interval, b: sympy.Interval) -> Decision:
        if (a.left_open, a.right_open) != (b.left_open, b.right_open):
            return Decision("different", "intervals with different open ends", "structural")
        return _all_of(self.decide(x, y) for x, y in ((a.start, b.start), (a.end, b.end)))

    def _finite_sets(self, a: sympy.FiniteSet, b: sympy.FiniteSet) -> Decision:
        """Equal when each member of either set is equal to a member of the other; different
        when some member is different from every member of the other set."""
        if len(a) * len(b) > _MAX_SET_PAIRS:
            return Decision("uncertain", "sets too large to match member by member", "parts")
        table = {(x, y): self.decide(x, y).status for x in a for y in b}
        lonely = [x for x in a if all(table[x, y] == "different" for y in b)]
        lonely += [y for y in b if all(table[x, y] == "different" for x in a)]
        if lonely:
            return Decision(
                "different", f"{safe_str(lonely[0])} is in only one of the sets", "parts"
            )
        covered = all(any(table[x, y] == "equal" for y in b) for x in a) and all(
            any(table[x, y] == "equal" for x in a) for y in b
        )
        if covered:
            return Decision("equal", "every member has an equal member in the other set", "parts")
        return Decision("uncertain", "some members could not be matched", "parts")

    # Expressions ---------------------------------------------------------------------------

    def _expressions(self, a: sympy.Expr, b: sympy.Expr, *, first_is_a: bool) -> Decision:
        for side in (a, b):
            if side.has(*_UNDEFINED):
                what = "nan" if side.has(sympy.nan) else "zoo (an undirected infinity)"
                return Decision(
                    "different", f"{what} has no definite value: never equal", "nonfinite"
                )
        sampler = _Sampler(self, a, b, first_is_a)
        decision = self._prove_or_refute(a, b, sampler)
        if decision.status != "uncertain" or decision.evidence is not None:
            return decision
        if sampler.evidence is None:  # the steps stopped before sampling: sample now
            self._reserve = 0.0
            try:
                found = sampler.run(None)
            except Exception:
                found = None
            if found is not None:
                return found
        return Decision(decision.status, decision.reason, decision.method, sampler.evidence)

    def _prove_or_refute(self, a: sympy.Expr, b: sympy.Expr, sampler: _Sampler) -> Decision:
        if a.has(*_INFINITIES) or b.has(*_INFINITIES):
            return self._infinities(a, b)
        if a == b:
            return Decision("equal", "structurally identical", "structural")
        self._reserve = _SAMPLING_SHARE * self._budget
        try:
            a, b = self._bounded(lambda: (_exact_decimals(a), _exact_decimals(b)), 0.25)
        except Exception:
            return Decision("uncertain", "decimals could not be read exactly", "decimals")
        if a == b:
            return Decision("equal", "identical once decimals are read exactly", "structural")
        if a.is_Rational and b.is_Rational:
            return Decision("different", f"distinct rationals {a} and {b}", "structural")
        try:
            diff = self._bounded(lambda: a - b, 0.25)
        except Exception:
            return Decision("uncertain", "the difference could not be formed", "difference")
        if diff == 0:
            return Decision("equal", "the difference evaluates to 0", "difference")
        for step in (
            self._assumptions,
            self._polynomial,
            self._rational_function,
            sampler.step,
            self._rewrites,
        ):
            if step is sampler.step:
                self._reserve = 0.0
            if self._left() <= 0:
                break
            try:
                decision = step(a, b, diff)
            except Exception:  # TimeBoxExceeded, PolynomialError, RecursionError...: next one
                continue
            if decision is not None:
                return decision
        return Decision(
            "uncertain", "neither equality nor a difference could be shown", "exhausted"
        )

    def _infinities(self, a: sympy.Expr, b: sympy.Expr) -> Decision:
        """Infinities are compared as symbols, never through ``a - b`` (``oo - oo`` is nan).
        ``nan`` and ``zoo`` never get here."""
        if a == b:
            what = "the same infinity" if a in _DIRECTED else "identical, infinities included"
            return Decision("equal", what, "nonfinite")
        for infinite, other in ((a, b), (b, a)):
            if infinite in _DIRECTED:
                if other in _DIRECTED:
                    return Decision("different", f"{a} against {b}", "nonfinite")
                if not other.has(*_INFINITIES) and self._finite_somewhere(other):
                    return Decision("different", f"{infinite} against a finite value", "nonfinite")
        return Decision("uncertain", "infinite terms inside expressions", "nonfinite")

    def _finite_somewhere(self, expr: sympy.Expr) -> bool:
        if expr.has(AppliedUndef):
            return False
        rng = random.Random(_seed(expr, expr))
        for _ in range(_SAMPLE_POINTS):
            point = _draw_point(expr.free_symbols, rng)
            if point is None:
                return False
            try:
                value = self._bounded(lambda p=point: _number(expr.xreplace(p), _LOW_DPS), 0.2)
            except Exception:
                continue
            if value is not None:
                return True
        return False

    # Exact steps: each returns a Decision or None (no conclusion) ---------------------------

    def _assumptions(self, a: sympy.Expr, b: sympy.Expr, diff: sympy.Expr) -> Decision | None:
        zero = self._bounded(lambda: diff.is_zero, 0.25)
        if zero is True:
            return Decision("equal", "the difference is zero by its assumptions", "is_zero")
        if zero is False:
            return Decision("different", "the difference is nonzero by its assumptions", "is_zero")
        return None

    def _polynomial(self, a: sympy.Expr, b: sympy.Expr, diff: sympy.Expr) -> Decision | None:
        gens = sorted(diff.free_symbols, key=str)
        if not gens or not self._bounded(lambda: diff.is_polynomial(*gens), 0.1):
            return None
        poly = self._bounded(lambda: Poly(diff, *gens), 0.25)
        if not (poly.domain.is_ZZ or poly.domain.is_QQ):
            return None
        if poly.is_zero:
            return Decision("equal", "polynomial identity", "polynomial")
        return Decision(
            "different",
            "the difference is a nonzero polynomial with rational coefficients",
            "polynomial",
        )

    def _rational_function(self, a: sympy.Expr, b: sympy.Expr, diff: sympy.Expr) -> Decision | None:
        if self._bounded(lambda: sympy.cancel(diff), 0.25) == 0:
            return Decision("equal", "rational function identity", "cancel")
        return None

    def _rewrites(self, a: sympy.Expr, b: sympy.Expr, diff: sympy.Expr) -> Decision | None:
        """Exact simplifiers, cheapest first; the last one gets all the time that is left."""
        for index, (name, rewrite) in enumerate(_REWRITES):
            share = 1.0 if index == len(_REWRITES) - 1 else 0.2
            try:
                result = self._bounded(lambda r=rewrite: r(diff), share)
                if result == 0 or self._bounded(lambda r=result: r.is_zero, 0.1) is True:
                    return Decision("equal", f"{name} of the difference gives 0", name)
            except Exception:
                continue
        return None


_REWRITES: tuple[tuple[str, Callable[[sympy.Expr], sympy.Expr]], ...] = (
    ("expand", sympy.expand),
    ("together", sympy.together),
    ("radsimp", sympy.radsimp),
    ("powsimp", sympy.powsimp),
    # cos(u)**2 -> 1 - sin(u)**2, then expand: a sum of many Pythagorean pairs cancels in
    # microseconds where trigsimp takes seconds.
    ("pythagoras", lambda e: sympy.expand(_cos_squared_to_sin(e))),
    ("expand_trig", lambda e: sympy.expand(sympy.expand_trig(e))),
    ("exponential form", lambda e: sympy.expand(e.rewrite(sympy.exp))),
    ("trigsimp", sympy.trigsimp),
    ("simplify", sympy.simplify),
)


def _cos_squared_to_sin(expr: sympy.Expr) -> sympy.Expr:
    from sympy.simplify.fu import TR6  # cos(u)**2 -> 1 - sin(u)**2, an exact identity

    return TR6(expr)


class _Sampler:
    """Evaluates both sides at up to :data:`_SAMPLE_POINTS` admissible points.

    A point where both sides are finite and their difference is clearly nonzero (more than
    ``1e-12`` of the larger side) and stable at 30 and 60 digits proves them **different**.
    Every point is tried whatever happens at the others, so the status stays symmetric.
    Otherwise the points leave :class:`Evidence`, in the caller's order.

    Points respect assumptions (positive symbols get positive values, integer symbols
    integers, assumption-free symbols complex values, and every other point on the real line,
    where branch cuts lie). Opaque calls such as ``tr(psi**2)`` get one consistent random value
    per call and point. A constant pair has a single point: its value.
    """

    def __init__(self, prover: _Prover, a: sympy.Expr, b: sympy.Expr, first_is_a: bool) -> None:
        self._prover = prover
        self._a, self._b = a, b
        self._first_is_a = first_is_a
        self.evidence: Evidence | None = None

    def step(self, a: sympy.Expr, b: sympy.Expr, diff: sympy.Expr) -> Decision | None:
        """The prover's sampling step (``a``, ``b`` with decimals read exactly)."""
        return self.run(diff)

    def run(self, diff: sympy.Expr | None) -> Decision | None:
        a, b = self._a, self._b
        prover = self._prover
        calls = a.atoms(AppliedUndef) | b.atoms(AppliedUndef)
        symbols = a.free_symbols | b.free_symbols
        constant = not symbols and not calls
        sides = (_Side(a), _Side(b))
        agreements: list[bool | str] = []  # per point tried: agreed, or why not
        stop = time.monotonic() + min(prover._left(), _SAMPLING_SHARE * prover._budget)
        nested = [side for side in sides if _nested_calls(side.expr)]
        for side in nested:
            side.fail("it nests opaque calls, which have no consistent values")
        rng = random.Random(_seed(a, b))
        for index in range(0 if nested else (1 if constant else _SAMPLE_POINTS)):
            if stop - time.monotonic() <= 0:
                break
            point = _draw_point(symbols, rng, on_real_line=index % 2 == 1)
            if point is None:
                for side in sides:
                    if _undrawable(side.expr.free_symbols):
                        side.fail("no sample point meets its symbols' assumptions")
                break
            stand_ins = _stand_ins(calls, point, rng)
            if stand_ins is None:  # two calls of one function meet at equal arguments
                for side in sides:
                    if side.expr.has(AppliedUndef):
                        side.fail(
                            f"its opaque calls have no consistent values at {_point_text(point)}"
                        )
                continue
            # The first side evaluated may take half the time left, so it never starves the
            # second; each side's time is recorded for the evidence.
            a_value = sides[0].evaluate(stand_ins, point, (stop - time.monotonic()) / 2)
            b_value = sides[1].evaluate(stand_ins, point, stop - time.monotonic())
            found = _compare_at(sides, a_value, b_value, diff, stand_ins, point, stop)
            if isinstance(found, Decision):
                return found
            agreements.append(found)
        first, second = sides if self._first_is_a else sides[::-1]
        counted = agreed = 0
        second_failure = None
        for at_first, at_second, agreement in zip(
            first.values, second.values, agreements, strict=True
        ):
            if at_first is None:
                continue
            counted += 1
            if agreement is True:
                agreed += 1
            elif second_failure is None:
                second_failure = second.failure if at_second is None else agreement
        if counted == 0 and first.failure is None and second.failure is not None:
            second_failure = second.failure  # nothing counted, and only the second is at fault
        self.evidence = Evidence(
            tried=len(agreements),
            counted=counted,
            agreed=agreed,
            required=1 if constant else REQUIRED_POINTS,
            first_failure=first.failure,
            second_failure=second_failure,
            first_seconds=first.seconds,
            second_seconds=second.seconds,
        )
        return None


class _Side:
    """One side's values at the points tried (None where it had none), why it had none
    somewhere, and the time its evaluation took."""

    def __init__(self, expr: sympy.Expr) -> None:
        self.expr = expr
        self.values: list = []  # a finite mpc, oo or -oo, or None
        self.at: list[sympy.Expr | None] = []  # the expression at the point, unevaluated
        self.failure: str | None = None
        self.seconds = 0.0

    def fail(self, reason: str) -> None:
        if self.failure is None:
            self.failure = reason

    def evaluate(self, stand_ins: dict, point: dict, seconds: float):
        started = time.monotonic()
        at = value = None
        try:
            at = run_timeboxed(lambda: self.expr.xreplace(stand_ins).xreplace(point), seconds)
            if at in _DIRECTED:
                value = at
            else:
                left = seconds - (time.monotonic() - started)
                # Certified digits only: a value read off a cancellation (sin(20x)**2 +
                # cos(20x)**2 at a complex x) would otherwise "differ" by 1e148.
                value = run_timeboxed(lambda: _number(at, _LOW_DPS, strict=True), left)
                if value is None:
                    self.fail(f"no finite value at {_point_text(point)}")
        except Exception as exc:  # TimeBoxExceeded, or SymPy failing on the substitution
            what = "no value in time" if isinstance(exc, TimeBoxExceeded) else "no value"
            self.fail(f"{what} at {_point_text(point)}")
        self.seconds += time.monotonic() - started
        self.values.append(value)
        self.at.append(at if value is not None else None)
        return value


def _compare_at(
    sides: tuple[_Side, _Side],
    a_value,
    b_value,
    diff: sympy.Expr | None,
    stand_ins: dict,
    point: dict,
    stop: float,
) -> Decision | bool | str:
    """A Decision when the sides clearly differ at this point; else True when they agree
    there, or why they do not."""
    if a_value is None or b_value is None:
        return "a side has no value here"
    where = _point_text(point)
    if a_value in _DIRECTED or b_value in _DIRECTED:
        if a_value == b_value:
            return True
        return Decision(
            "different", f"the sides differ at {where}: {a_value} against {b_value}", "sampling"
        )
    a_at, b_at = sides[0].at[-1], sides[1].at[-1]

    def difference() -> bool | str:
        at_diff = diff.xreplace(stand_ins).xreplace(point) if diff is not None else a_at - b_at
        return _difference(at_diff, a_value, b_value)

    try:
        outcome = run_timeboxed(difference, max(stop - time.monotonic(), 0.05))
    except Exception:  # TimeBoxExceeded: judge by the two values alone
        outcome = _difference_of_values(a_value, b_value)
    if isinstance(outcome, str) and outcome.startswith("clearly "):
        shown = outcome.removeprefix("clearly ")
        return Decision("different", f"the sides differ at {where} by about {shown}", "sampling")
    if isinstance(outcome, str):
        return f"{outcome} at {where}"
    return outcome


def _difference(at_diff: sympy.Expr, a_value, b_value) -> bool | str:
    """True when the difference at a point is 0 or cannot be told from 0 at 30 digits;
    ``"clearly <size>"`` when it is clearly nonzero and stable (proof of a difference);
    otherwise a reason why the sides do not agree (a certified but small difference...)."""
    scale = max(abs(a_value), abs(b_value))
    try:
        low = at_diff.evalf(_LOW_DPS, strict=True, maxn=_MAX_DPS)
    except sympy.core.evalf.PrecisionExhausted:
        # Zero to every digit SymPy would compute: agreement, if the values say so too.
        return _difference_of_values(a_value, b_value, loose=True)
    except (ValueError, TypeError, ArithmeticError):
        return _difference_of_values(a_value, b_value)
    low = _as_mpc(low)
    if low is None:
        return _difference_of_values(a_value, b_value)
    if low == 0:
        return True
    high = _number(at_diff, _HIGH_DPS, strict=True)
    if high is None:
        return _difference_of_values(a_value, b_value)
    shown = _MP.nstr(abs(high), 3)
    if abs(high - low) > _STABLE * abs(high):
        return f"the difference {shown} is not stable between 30 and 60 digits"
    if abs(high) > _CLEARLY_NONZERO * scale:
        return f"clearly {shown}"
    return f"they differ by {shown}"


def _difference_of_values(a_value, b_value, *, loose: bool = False) -> bool | str:
    """Agreement judged from the two 30-digit values alone: within ``1e-25`` of the larger
    (``loose``: when the difference itself could not be told from zero, values that are
    both lost in rounding noise agree too)."""
    gap = abs(a_value - b_value)
    scale = max(abs(a_value), abs(b_value))
    if gap <= _AGREEING * scale:
        return True
    if loose and scale <= _NOISE:
        return True
    return f"their values differ by {_MP.nstr(gap, 3)}"


def _nested_calls(expr: sympy.Expr) -> bool:
    """``f(g(x))``: no consistent stand-in values."""
    return any(arg.has(AppliedUndef) for call in expr.atoms(AppliedUndef) for arg in call.args)


def _undrawable(symbols: Iterable[sympy.Symbol]) -> bool:
    rng = random.Random(0)
    return any(_draw_value(symbol, rng, False) is None for symbol in symbols)


def _point_text(point: dict[sympy.Symbol, sympy.Expr]) -> str:
    if not point:
        return "its value"
    return ", ".join(f"{s} = {v}" for s, v in sorted(point.items(), key=str))


def _all_of(decisions: Iterable[Decision]) -> Decision:
    """Equal when every part is equal; different as soon as one part is."""
    pending: Decision | None = None
    for decision in decisions:
        if decision.status == "different":
            return decision
        if decision.status == "uncertain" and pending is None:
            pending = decision
    return pending or Decision("equal", "every part is equal", "parts")


def _kind(value: sympy.Basic) -> str:
    if isinstance(value, sympy.Expr):
        return "expression"
    if isinstance(value, sympy.Tuple):
        return "tuple"
    if isinstance(value, sympy.Set):
        return "set"
    if isinstance(value, sympy.logic.boolalg.Boolean):
        return "boolean"
    return type(value).__name__


def _exact_decimals(expr: sympy.Expr) -> sympy.Expr:
    floats = expr.atoms(sympy.Float)
    if not floats:
        return expr
    return expr.xreplace({f: sympy.Rational(float_text(f)) for f in floats})


def _seed(a: sympy.Basic, b: sympy.Basic) -> int:
    return zlib.crc32(f"{safe_str(a)}\x00{safe_str(b)}".encode())


# --- sample points --------------------------------------------------------------------------


def _draw_point(
    symbols: Iterable[sympy.Symbol], rng: random.Random, *, on_real_line: bool = False
) -> dict[sympy.Symbol, sympy.Expr] | None:
    """One admissible value per symbol. With ``on_real_line`` symbols without assumptions
    take real values too: a branch cut on the real axis is invisible to complex points."""
    point = {}
    for symbol in sorted(symbols, key=str):
        value = _draw_value(symbol, rng, on_real_line)
        if value is None:
            return None
        point[symbol] = value
    return point


def _draw_value(symbol: sympy.Symbol, rng: random.Random, on_real_line: bool) -> sympy.Expr | None:
    """A value satisfying every assumption of ``symbol``, or None after a few tries."""
    for _ in range(24):
        value = _candidate_value(symbol, rng, on_real_line)
        if _satisfies(symbol, value):
            return value
    return None


def _candidate_value(symbol: sympy.Symbol, rng: random.Random, on_real_line: bool) -> sympy.Expr:
    if symbol.is_extended_nonnegative or symbol.is_extended_positive:
        sign = 1
    elif symbol.is_extended_nonpositive or symbol.is_extended_negative:
        sign = -1
    else:
        sign = rng.choice((1, -1))
    if symbol.is_integer:
        low = 0 if (symbol.is_nonnegative or symbol.is_nonpositive) else 1
        return sympy.Integer(sign * rng.randint(low, 9))
    # A prime denominator keeps points away from integers and simple fractions; the larger
    # scales reach past periods and branch points such as Im(x) = pi for log(exp(x)).
    scale = rng.choice((1, 1, 4, 12))
    real = sympy.Rational(sign * rng.randint(1, 3000) * scale, 997)
    if symbol.is_extended_real or on_real_line:
        return real
    imaginary = sympy.Rational(rng.choice((1, -1)) * rng.randint(1, 3000) * scale, 997)
    if symbol.is_imaginary:
        return sympy.I * imaginary
    return real + sympy.I * imaginary


def _satisfies(symbol: sympy.Symbol, value: sympy.Expr) -> bool:
    for fact, wanted in symbol.assumptions0.items():
        if getattr(value, f"is_{fact}") is not wanted:
            return False
    return True


# --- evaluation at a point ------------------------------------------------------------------


def _stand_ins(
    calls: set[sympy.Expr], point: dict[sympy.Symbol, sympy.Expr], rng: random.Random
) -> dict[sympy.Expr, sympy.Expr] | None:
    """Random values for opaque calls such as ``tr(psi**2)``: one consistent reading of the
    undefined functions, valid only if calls of one function get distinct arguments here."""
    seen: dict[str, list[tuple]] = {}
    values = {}
    for call in sorted(calls, key=safe_str):
        args = tuple(_number(arg.xreplace(point), _LOW_DPS) for arg in call.args)
        if any(arg is None for arg in args):
            return None
        for other in seen.setdefault(call.func.__name__, []):
            if len(other) == len(args) and all(
                abs(x - y) <= 1e-20 * max(1, abs(x)) for x, y in zip(other, args, strict=True)
            ):
                return None
        seen[call.func.__name__].append(args)
        values[call] = sympy.Rational(rng.randint(-3000, 3000), 991) + sympy.I * sympy.Rational(
            rng.randint(-3000, 3000), 991
        )
    return values


def _number(expr: sympy.Expr, dps: int, *, strict: bool = False):
    """``expr`` (no free symbols left) as a complex number of :data:`_MP`, or None unless it
    evaluates to a finite number (with ``dps`` correct digits when ``strict``)."""
    try:
        value = expr.evalf(dps, strict=strict, maxn=_MAX_DPS)
    except (sympy.core.evalf.PrecisionExhausted, ValueError, TypeError, ArithmeticError):
        return None
    return _as_mpc(value)


def _as_mpc(value: sympy.Expr):
    """An evaluated SymPy number as a finite complex of :data:`_MP`, or None."""
    if value.has(*_NONFINITE) or value.free_symbols:
        return None
    re, im = value.as_real_imag()
    parts = []
    for part in (re, im):
        if isinstance(part, sympy.Float):
            parts.append(_MP.mpf(part._mpf_))
        elif part.is_Rational:
            parts.append(_MP.mpf(part.p) / part.q)
        else:
            return None
    if not all(_MP.isfinite(part) for part in parts):
        return None
    return _MP.mpc(*parts)
