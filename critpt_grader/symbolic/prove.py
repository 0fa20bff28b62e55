"""Decide whether two SymPy values are equal: by proof, by evidence, or not at all.

A false "equal" rewards a wrong answer, so the rules are asymmetric:

* **equal** only by proof: structural identity; an exact difference that SymPy reduces to 0
  (automatic evaluation, the proof-based ``is_zero``, polynomial and rational-function
  identity, then the exact rewrites of :mod:`critpt_grader.symbolic.rewrites`: algebra,
  trigonometry, exponential forms, gamma, error and half-integer Bessel functions, algebraic
  numbers, ``simplify``). ``Expr.equals`` is never used, because it may decide from numeric
  samples.
* **different** by exact facts (distinct rationals, a nonzero polynomial with rational
  coefficients, ``is_zero`` False) or by evidence: the difference at an admissible point is
  certified and clearly nonzero (:mod:`critpt_grader.symbolic.sampling`).
* **uncertain** otherwise. Agreement at any number of points never proves equality.

An uncertain decision between two expressions carries its
:class:`~critpt_grader.symbolic.sampling.Evidence`, in the caller's order (the comparator
passes the expectation first), so that the comparator can tell a candidate that agreed
everywhere from one that could not be evaluated. ``decide`` is symmetric in its status.

The parser reads decimal literals as exact rationals. A ``sympy.Float`` handed to ``decide``
directly is read as the shortest decimal that rounds back to it at its own precision:
``Float(0.1)*x`` equals ``x/10``.

Non-finite values: ``nan`` and ``zoo`` (the undirected infinity: ``zoo - zoo`` is ``nan``) are
never equal to anything, themselves included, nor is anything containing them (``x/0``); the
same directed infinity (``oo``, ``-oo``) on both sides is equal; an infinity against a side that
is finite at a sample point is different; anything else with infinities inside is uncertain
unless structurally identical.

**The decision is a function of the two values alone.** The steps run in a fixed order, each
to its end: none shares a budget with another or reads a clock. Numeric evidence is counted
in digits (:mod:`critpt_grader.symbolic.numeric`). Each step also runs under a CPU cap
(:func:`~critpt_grader.symbolic.cpu_cap.run_with_cpu_cap`: ``cpu_seconds``, default
:data:`STEP_CPU_SECONDS`, twice that for ``simplify``) that ordinary values never come near;
a step that reaches it proves nothing and the next one runs. The two arguments are put in a
canonical order first, so ``decide(a, b)`` and ``decide(b, a)`` run the same steps.

**Blame follows the value** (``blame_second``, the comparator's call, expectation first): the
first sample point is evaluated before any proof step, and a clear difference there is the
decision. When a sample point shows the second side too costly to evaluate (a CPU cap, a
size check) where the first side has a value, the remaining proof steps are skipped and the
decision is ``uncertain`` with that evidence, which the comparator scores as the
candidate's mismatch: no proof could change that verdict, and the skipped steps would only
spend their caps. So a value that is costly only to evaluate costs one cap, before any
symbolic step could spend others.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal, TypeVar

import sympy
from sympy import Poly

from critpt_grader.symbolic.cpu_cap import STEP_CPU_SECONDS, run_with_cpu_cap
from critpt_grader.symbolic.printer import float_text, safe_str, structural_text
from critpt_grader.symbolic.rewrites import REWRITES
from critpt_grader.symbolic.sampling import Evidence, Sampler, finite_somewhere

Status = Literal["equal", "different", "uncertain"]
T = TypeVar("T")

_SIMPLIFY_FACTOR = 2  # simplify, the last and broadest step, may take twice as long


@dataclass(frozen=True, slots=True)
class Decision:
    status: Status
    reason: str
    method: str
    evidence: Evidence | None = None  # for an uncertain decision between two expressions


_INFINITIES = (sympy.oo, -sympy.oo, sympy.zoo)
_UNDEFINED = (sympy.nan, sympy.zoo)  # no definite value: never equal, not even to themselves
_DIRECTED = (sympy.oo, -sympy.oo)
_MAX_SET_PAIRS = 64
_SECOND_COSTLY = "not proved: the second value is too costly to have where the first has one"


def decide(
    a: sympy.Basic,
    b: sympy.Basic,
    *,
    cpu_seconds: float = STEP_CPU_SECONDS,
    blame_second: bool = False,
) -> Decision:
    """Compare two parsed symbolic values; every step is capped at ``cpu_seconds`` of CPU.

    The status does not depend on the order of ``a`` and ``b``; an uncertain decision's
    :class:`Evidence` is in this order (pass the expectation first).
    Plain Python numbers are accepted too (converted exactly); text is not: parse it first.
    With ``blame_second``, a second side too costly to evaluate ends the proof (see the
    module docstring); the status is then symmetric only in the default mode.
    """
    a, b = _as_basic(a), _as_basic(b)
    # Only between two expressions: parts of tuples and sets are decided in canonical order.
    both = isinstance(a, sympy.Expr) and isinstance(b, sympy.Expr)
    prover = _Prover(cpu_seconds, blame_second and both)
    try:
        return prover.decide(a, b)
    except Exception as exc:  # SymPy failing outside a capped step: nothing was shown
        return Decision("uncertain", f"SymPy failed ({type(exc).__name__})", "error")


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
    def __init__(self, cpu_seconds: float, blame_second: bool = False) -> None:
        self._cpu_seconds = cpu_seconds
        self._blame_second = blame_second

    def _capped(self, fn: Callable[[], T], factor: int = 1) -> T:
        """``fn()`` under the step's CPU cap."""
        return run_with_cpu_cap(fn, factor * self._cpu_seconds)

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
        sampler = Sampler(a, b, first_is_a=first_is_a, cpu_seconds=self._cpu_seconds)
        if a.has(*_INFINITIES) or b.has(*_INFINITIES):
            decision = self._infinities(a, b)
        elif a == b:
            return Decision("equal", "structurally identical", "structural")
        else:
            early = self._first_point(sampler) if self._blame_second else None
            if early is not None:
                return early
            decision = self._prove_or_refute(a, b, sampler)
        if decision.status != "uncertain":
            return decision
        if sampler.evidence is None:  # the steps stopped before sampling: sample now
            found = sampler.run()
            if found is not None:
                return Decision("different", found.reason, "sampling")
        return Decision(decision.status, decision.reason, decision.method, sampler.evidence)

    def _first_point(self, sampler: Sampler) -> Decision | None:
        """Blame mode: the first sample point, before any proof step (see the module
        docstring)."""
        try:
            found = sampler.first_point()
        except Exception:  # SymPy failing on a point: the full sampling says what it can
            return None
        if found is not None:
            return Decision("different", found.reason, "sampling")
        evidence = sampler.evidence_so_far()
        if evidence.second_costly:
            return Decision("uncertain", _SECOND_COSTLY, "sampling", evidence)
        return None

    def _prove_or_refute(self, a: sympy.Expr, b: sympy.Expr, sampler: Sampler) -> Decision:
        try:
            a, b = self._capped(lambda: (_exact_decimals(a), _exact_decimals(b)))
        except Exception:
            return Decision("uncertain", "decimals could not be read exactly", "decimals")
        if a == b:
            return Decision("equal", "identical once decimals are read exactly", "structural")
        if a.is_Rational and b.is_Rational:
            return Decision("different", f"distinct rationals {a} and {b}", "structural")
        try:
            diff = self._capped(lambda: a - b)
        except Exception:
            return Decision("uncertain", "the difference could not be formed", "difference")
        if diff == 0:
            return Decision("equal", "the difference evaluates to 0", "difference")

        def sample(a: sympy.Expr, b: sympy.Expr, diff: sympy.Expr) -> Decision | None:
            found = sampler.run()
            return None if found is None else Decision("different", found.reason, "sampling")

        for step in (self._assumptions, self._polynomial, self._rational_function, sample):
            try:
                decision = step(a, b, diff)
            except Exception:  # CpuCapReached, PolynomialError, RecursionError...: next one
                continue
            if decision is not None:
                return decision
        evidence = sampler.evidence
        if self._blame_second and evidence is not None and evidence.second_costly:
            return Decision("uncertain", _SECOND_COSTLY, "sampling")
        decision = self._rewrites(diff)
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
                if not other.has(*_INFINITIES) and finite_somewhere(other, self._cpu_seconds):
                    return Decision("different", f"{infinite} against a finite value", "nonfinite")
        return Decision("uncertain", "infinite terms inside expressions", "nonfinite")

    # Exact steps: each returns a Decision or None (no conclusion) ---------------------------

    def _assumptions(self, a: sympy.Expr, b: sympy.Expr, diff: sympy.Expr) -> Decision | None:
        zero = self._capped(lambda: diff.is_zero)
        if zero is True:
            return Decision("equal", "the difference is zero by its assumptions", "is_zero")
        if zero is False:
            return Decision("different", "the difference is nonzero by its assumptions", "is_zero")
        return None

    def _polynomial(self, a: sympy.Expr, b: sympy.Expr, diff: sympy.Expr) -> Decision | None:
        gens = sorted(diff.free_symbols, key=str)
        if not gens or not self._capped(lambda: diff.is_polynomial(*gens)):
            return None
        poly = self._capped(lambda: Poly(diff, *gens))
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
        if self._capped(lambda: sympy.cancel(diff)) == 0:
            return Decision("equal", "rational function identity", "cancel")
        return None

    def _rewrites(self, diff: sympy.Expr) -> Decision | None:
        """The exact rewrites in order, each under its own cap (``simplify`` twice as
        long); the first that turns the difference into 0 proves equality."""
        for index, (name, rewrite) in enumerate(REWRITES):
            factor = _SIMPLIFY_FACTOR if index == len(REWRITES) - 1 else 1
            try:
                result = self._capped(lambda r=rewrite: r(diff), factor)
                if result == 0 or self._capped(lambda r=result: r.is_zero) is True:
                    return Decision("equal", f"{name} of the difference gives 0", name)
            except Exception:
                continue
        return None


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
