"""Evidence from evaluating two expressions at sample points.

A point where both sides have values and their difference is certified and clearly nonzero
(more than ``1e-12`` of the larger side) proves them **different**. Every point is tried
whatever happens at the others, so the status stays symmetric; otherwise the points leave
:class:`Evidence`, in the caller's order.

Points respect assumptions (positive symbols get positive values, integer symbols integers,
assumption-free symbols complex values, and every other point on the real line, where branch
cuts lie). A constant pair has a single point: its value. Points are drawn from a generator
seeded by the two expressions, so the same pair is always sampled at the same points.

**An opaque call has no value.** A name outside the grammar's function table
(``tr(psi**2)``, ``Integral(...)``, a special function the grader does not know) may denote a
function with identities of its own, so a value made up for it proves nothing: a side that
holds one is not evaluated, and the points it takes part in are not evidence either way.

Values come from :mod:`critpt_grader.symbolic.numeric`: fixed precisions, accepted where two
agree. Nothing here reads a clock: every point is evaluated, and the only bound besides the
counted ones is a CPU cap per side and point that only a costly value reaches. A side whose
value is found *too costly* at one point (it reaches that cap, or a size check refuses it)
is not evaluated again at later points: a cost its own structure sets does not go away, and
evaluating it eight times would spend eight caps.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Iterable
from dataclasses import dataclass

import sympy
from sympy.core.function import AppliedUndef

from critpt_grader.symbolic.cpu_cap import CpuCapReached, run_with_cpu_cap
from critpt_grader.symbolic.functions import numeric_form
from critpt_grader.symbolic.numeric import (
    LADDER,
    MP,
    Ladder,
    NoValue,
    Settled,
    TooCostly,
    clearly_nonzero,
    difference,
)
from critpt_grader.symbolic.printer import safe_str

SAMPLE_POINTS = 8
REQUIRED_POINTS = 4  # counted points before agreement of non-constant expressions means anything
_DIRECTED = (sympy.oo, -sympy.oo)


@dataclass(frozen=True, slots=True)
class Evidence:
    """What evaluating two expressions at the sample points showed, in ``decide``'s argument
    order (``first``, ``second``).

    A point is *counted* when the first side has a value there (finite, or a directed
    infinity): the points where the first side has no value are not evidence about the second.
    At a counted point the second side *agrees* when it has a value too and their difference
    vanishes as the precision grows (:mod:`critpt_grader.symbolic.numeric`); a difference
    certified nonzero, however small, is disagreement.
    ``required`` is how many counted points agreement needs to mean anything: 1 for constants
    (their one value), :data:`REQUIRED_POINTS` when either side has symbols.
    ``second_costly``: the second side had no value at a counted point because of its cost
    (a CPU cap or a size check), not because it is undefined there.
    """

    tried: int  # points drawn and evaluated
    counted: int  # points at which the first side has a value
    agreed: int  # counted points at which the second side agreed
    required: int
    first_failure: str | None = None  # why the first side had no value at some point
    # Why the second side did not agree at the first counted point where it did not (no
    # value there, a difference...), or why no point could count because of the second side
    # alone (opaque calls in it, assumptions no point meets).
    second_failure: str | None = None
    second_costly: bool = False


@dataclass(frozen=True, slots=True)
class Different:
    """The sides differ at a point: a proof of difference."""

    reason: str


class Sampler:
    """Evaluates both sides at up to :data:`SAMPLE_POINTS` admissible points, in a fixed
    order; :meth:`first_point` evaluates the first alone (the rest wait for :meth:`run`)."""

    def __init__(
        self, a: sympy.Expr, b: sympy.Expr, *, first_is_a: bool, cpu_seconds: float
    ) -> None:
        self._a, self._b = a, b
        self._first_is_a = first_is_a
        self._cpu_seconds = cpu_seconds
        self.evidence: Evidence | None = None
        self._sides: tuple[_Side, _Side] | None = None
        self._agreements: list[bool | str] = []  # per point tried: agreed, or why not
        self._index = 0
        self._done = False
        self._found: Different | None = None

    def run(self) -> Different | None:
        """Every point; a :class:`Different`, or None with :attr:`evidence` set."""
        sides = self._start()
        while not self._done:
            self._step(sides)
        if self._found is None:
            self.evidence = self._evidence(sides, self._agreements, not self._symbols)
        return self._found

    def first_point(self) -> Different | None:
        """The first point only: a :class:`Different` if the sides clearly differ there."""
        sides = self._start()
        if self._index == 0 and not self._done:
            self._step(sides)
        return self._found

    def evidence_so_far(self) -> Evidence:
        """The evidence of the points evaluated until now."""
        return self._evidence(self._start(), self._agreements, not self._symbols)

    def _start(self) -> tuple[_Side, _Side]:
        if self._sides is None:
            a, b = self._a, self._b
            self._symbols = a.free_symbols | b.free_symbols
            self._sides = (_Side(a, self._cpu_seconds), _Side(b, self._cpu_seconds))
            for side in self._sides:
                unknown = opaque_call(side.expr)
                if unknown is not None:
                    side.fail(f"{unknown} is a function the grader does not know: no value")
            self._rng = random.Random(seed(a, b))
        return self._sides

    def _step(self, sides: tuple[_Side, _Side]) -> None:
        """Draw and evaluate the next point."""
        index = self._index
        if index >= (SAMPLE_POINTS if self._symbols else 1):
            self._done = True
            return
        self._index += 1
        point = draw_point(self._symbols, self._rng, on_real_line=index % 2 == 1)
        if point is None:
            for side in sides:
                if _undrawable(side.expr.free_symbols):
                    side.fail("no sample point meets its symbols' assumptions")
            self._done = True
            return
        for side in sides:
            side.evaluate(point)
        found = self._compare_at(sides, point)
        if isinstance(found, Different):
            self._found, self._done = found, True
            return
        self._agreements.append(found)

    def _compare_at(self, sides: tuple[_Side, _Side], point: dict) -> Different | bool | str:
        """Different when the sides clearly differ at this point; else True when they
        agree there, or why they do not."""
        a, b = sides[0].values[-1], sides[1].values[-1]
        if a is None or b is None:
            return "a side has no value here"
        where = point_text(point)
        if a in _DIRECTED or b in _DIRECTED:
            if a == b:
                return True
            return Different(f"the sides differ at {where}: {a} against {b}")
        a_ladder, b_ladder = sides[0].ladders[-1], sides[1].ladders[-1]
        start = max(a.rung, b.rung)
        try:
            found = run_with_cpu_cap(
                lambda: difference(a_ladder, b_ladder, start), self._cpu_seconds
            )
        except (NoValue, CpuCapReached):
            found = None
        if found is None or found.verdict == "unsettled":
            return f"their difference is not settled up to {LADDER[-1]} digits at {where}"
        if found.verdict == "vanishes":
            return True
        shown = MP.nstr(found.size, 3)
        if clearly_nonzero(found.size, max(abs(a.value), abs(b.value))):
            return Different(f"the sides differ at {where} by about {shown}")
        return f"they differ by {shown} at {where}"

    def _evidence(
        self, sides: tuple[_Side, _Side], agreements: list[bool | str], constant: bool
    ) -> Evidence:
        first, second = sides if self._first_is_a else sides[::-1]
        counted = agreed = 0
        second_failure = None
        second_costly = False
        for at_first, at_second, costly, agreement in zip(
            first.values, second.values, second.costs, agreements, strict=True
        ):
            if at_first is None:
                continue
            counted += 1
            if agreement is True:
                agreed += 1
            elif second_failure is None:
                if at_second is not None:
                    second_failure = agreement
                else:
                    second_failure = second.cost_failure if costly else second.failure
            second_costly = second_costly or costly
        if second_costly:
            second_failure = second.cost_failure  # the cost decides the blame: name it
        if counted == 0 and first.failure is None and second.failure is not None:
            second_failure = second.failure  # nothing counted, and only the second is at fault
        return Evidence(
            tried=len(agreements),
            counted=counted,
            agreed=agreed,
            required=1 if constant else REQUIRED_POINTS,
            first_failure=first.failure,
            second_failure=second_failure,
            second_costly=second_costly,
        )


class _Side:
    """One side's values at the points tried (None where it had none) and why it had none
    somewhere."""

    def __init__(self, expr: sympy.Expr, cpu_seconds: float) -> None:
        self.expr = expr
        self.cpu_seconds = cpu_seconds
        self.values: list[Settled | sympy.Expr | None] = []  # Settled, oo or -oo, or None
        self.ladders: list[Ladder | None] = []
        self.failure: str | None = None
        self.costly = False  # found too costly at a point: not evaluated again
        self.costs: list[bool] = []  # per point: no value there because of its cost
        self.cost_failure: str | None = None  # why it was found too costly
        self._numeric: sympy.Expr | None = None

    def fail(self, reason: str) -> None:
        if self.failure is None:
            self.failure = reason

    def _too_costly(self, reason: str) -> None:
        self.costly = True
        self.cost_failure = reason
        self.fail(reason)

    def evaluate(self, point: dict) -> None:
        value = ladder = None
        where = point_text(point)

        def at_point():
            if self._numeric is None:
                self._numeric = numeric_form(self.expr)
            at = self._numeric.xreplace(point)
            if at in _DIRECTED:
                return at, None
            found = Ladder(at)
            return found.settle(), found

        if self.costly or opaque_call(self.expr) is not None:
            pass  # no value here either: see the module docstring
        else:
            try:
                value, ladder = run_with_cpu_cap(at_point, self.cpu_seconds)
            except TooCostly as exc:
                self._too_costly(f"no value at {where}: {exc}")
            except NoValue as exc:
                self.fail(f"no finite value at {where} ({exc})")
            except CpuCapReached:
                self._too_costly(
                    f"no value within {self.cpu_seconds:g} s of CPU at {where} "
                    "(a cap only a costly value reaches)"
                )
            except Exception as exc:  # SymPy failing on the substitution
                self.fail(f"no value at {where} ({type(exc).__name__})")
        self.values.append(value)
        self.ladders.append(ladder)
        self.costs.append(self.costly)


def value_at_a_point(expr: sympy.Expr, cpu_seconds: float) -> tuple[sympy.Expr, str] | None:
    """``expr`` with its symbols replaced by the first admissible point (on the real line
    where the assumptions allow) at which it has a finite value, and that point as text;
    None when none of :data:`SAMPLE_POINTS` points gives one, or when one point shows it too
    costly (a CPU cap, a size check: it would be at the others too). Special functions in the
    value are numeric stand-ins (:func:`~critpt_grader.symbolic.functions.numeric_form`),
    printed as the calls they stand for."""
    found = _first_value(expr, cpu_seconds)
    return found if isinstance(found, tuple) else None


def cost_at_a_point(expr: sympy.Expr, cpu_seconds: float) -> str | None:
    """Why ``expr`` *alone* is too costly to evaluate (it reaches the CPU cap, or a size check
    refuses it, at its first sample point where it is not simply undefined), or None once it
    has a value at a point. The points are its own, seeded by it as in
    :func:`value_at_a_point`. No finite value at a point for another reason is no cost, and
    an expression with opaque calls has no value to cost: both are the comparator's to
    judge."""
    found = _first_value(expr, cpu_seconds)
    return found if isinstance(found, str) else None


def _first_value(expr: sympy.Expr, cpu_seconds: float) -> tuple[sympy.Expr, str] | str | None:
    """The walk both share: ``(value, point)`` at the first point with a finite value, the
    reason it is too costly (a size check or the CPU cap at a point), or None (no point gives
    a value, or ``expr`` has opaque calls and so no value)."""
    if expr.has(AppliedUndef):
        return None
    rng = random.Random(seed(expr, expr))
    numeric = numeric_form(expr)
    for index in range(SAMPLE_POINTS):
        point = draw_point(expr.free_symbols, rng, on_real_line=index % 2 == 0)
        if point is None:
            return None
        where = point_text(point)

        def at_point(p=point):
            at = numeric.xreplace(p)
            Ladder(at).settle()
            return at

        try:
            return run_with_cpu_cap(at_point, cpu_seconds), where
        except TooCostly as exc:
            return f"no value at {where}: {exc}"
        except CpuCapReached:
            cap = f"{cpu_seconds:g} s of CPU"
            return f"no value within {cap} at {where} (a cap only a costly value reaches)"
        except Exception:  # NoValue or SymPy failing on the substitution: try the next point
            continue
    return None


def finite_somewhere(expr: sympy.Expr, cpu_seconds: float) -> bool:
    """Whether ``expr`` has a finite value at one of the sample points."""
    return value_at_a_point(expr, cpu_seconds) is not None


def seed(a: sympy.Basic, b: sympy.Basic) -> int:
    return zlib.crc32(f"{safe_str(a)}\x00{safe_str(b)}".encode())


def point_text(point: dict[sympy.Symbol, sympy.Expr]) -> str:
    if not point:
        return "its value"
    return ", ".join(f"{s} = {v}" for s, v in sorted(point.items(), key=str))


def opaque_call(expr: sympy.Basic) -> str | None:
    """The first opaque call in ``expr`` (by its text), or None: a function the grader does
    not know, which has no value."""
    calls = expr.atoms(AppliedUndef)
    if not calls:
        return None
    first = min(calls, key=safe_str)
    return f"{first.func.__name__}()"


def _undrawable(symbols: Iterable[sympy.Symbol]) -> bool:
    rng = random.Random(0)
    return any(_draw_value(symbol, rng, False) is None for symbol in symbols)


# --- sample points --------------------------------------------------------------------------


def draw_point(
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
