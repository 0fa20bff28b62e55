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

A ``sympy.Float`` is read as the shortest decimal that rounds back to it at its own precision,
which for a parsed literal is the literal itself: ``0.1*x`` equals ``x/10``, while
``0.333333333333333`` differs from ``1/3`` and ``0.1 + 0.2`` (binary arithmetic) from ``0.3``.

Non-finite values: ``nan`` is never equal to anything; the same infinity (``oo``, ``-oo``,
``zoo``) on both sides is equal; an infinity against a side that is finite at a sample point is
different; anything else with infinities inside is uncertain unless structurally identical.

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

from critpt_grader.symbolic.printer import float_text
from critpt_grader.symbolic.timebox import run_timeboxed

Status = Literal["equal", "different", "uncertain"]
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Decision:
    status: Status
    reason: str
    method: str


_INFINITIES = (sympy.oo, -sympy.oo, sympy.zoo)
_NONFINITE = (*_INFINITIES, sympy.nan)
_SAMPLE_POINTS = 8
_MAX_SET_PAIRS = 64
_LOW_DPS, _HIGH_DPS = 30, 60
# A private context: mpmath's global one is shared by every thread and by SymPy.
_MP = mpmath.MPContext()
_MP.dps = _HIGH_DPS + 30
# A point shows a difference when |a-b| exceeds this fraction of max(|a|, |b|) and its values
# at the two precisions agree to this relative error.
_CLEARLY_NONZERO = _MP.mpf("1e-12")
_STABLE = _MP.mpf("1e-20")


def decide(a: sympy.Basic, b: sympy.Basic, *, budget_seconds: float = 2.0) -> Decision:
    """Compare two parsed symbolic values within ``budget_seconds`` of wall time.

    Plain Python numbers are accepted too (converted exactly); text is not: parse it first.
    """
    prover = _Prover(time.monotonic() + budget_seconds, budget_seconds)
    return prover.decide(_as_basic(a), _as_basic(b))


def _as_basic(value: object) -> sympy.Basic:
    if isinstance(value, sympy.Basic):
        return value
    if isinstance(value, str) or not isinstance(value, int | float | complex | Fraction):
        raise TypeError(f"decide() takes SymPy values, not {type(value).__name__}")
    return sympy.sympify(value, strict=True)


def _canonical_order(a: sympy.Basic, b: sympy.Basic) -> tuple[sympy.Basic, sympy.Basic]:
    try:
        swap = sympy.default_sort_key(b) < sympy.default_sort_key(a)
    except Exception:  # an exotic object without a sort key: order by text
        swap = str(b) < str(a)
    return (b, a) if swap else (a, b)


class _Prover:
    def __init__(self, deadline: float, budget: float) -> None:
        self._deadline = deadline
        self._budget = budget

    def _left(self) -> float:
        return self._deadline - time.monotonic()

    def _bounded(self, fn: Callable[[], T], share: float = 1.0) -> T:
        """Run ``fn`` with at most ``share`` of the whole budget and no more than is left."""
        return run_timeboxed(fn, min(self._left(), share * self._budget))

    # Dispatch on the kind of value ----------------------------------------------------------

    def decide(self, a: sympy.Basic, b: sympy.Basic) -> Decision:
        a, b = _canonical_order(a, b)  # the same steps whichever way round: a symmetric status
        if isinstance(a, sympy.Expr) and isinstance(b, sympy.Expr):
            return self._expressions(a, b)
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
            return Decision("different", f"{lonely[0]} is in only one of the sets", "parts")
        covered = all(any(table[x, y] == "equal" for y in b) for x in a) and all(
            any(table[x, y] == "equal" for x in a) for y in b
        )
        if covered:
            return Decision("equal", "every member has an equal member in the other set", "parts")
        return Decision("uncertain", "some members could not be matched", "parts")

    # Expressions ---------------------------------------------------------------------------

    def _expressions(self, a: sympy.Expr, b: sympy.Expr) -> Decision:
        if a.has(sympy.nan) or b.has(sympy.nan):
            return Decision("different", "nan is never equal to anything", "nonfinite")
        if a.has(*_INFINITIES) or b.has(*_INFINITIES):
            return self._infinities(a, b)
        if a == b:
            return Decision("equal", "structurally identical", "structural")
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
            self._sampling,
            self._rewrites,
        ):
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
        """Infinities are compared as symbols, never through ``a - b`` (``oo - oo`` is nan)."""
        if a == b:
            what = "the same infinity" if a in _INFINITIES else "identical, infinities included"
            return Decision("equal", what, "nonfinite")
        for infinite, other in ((a, b), (b, a)):
            if infinite in _INFINITIES:
                if other in _INFINITIES:
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

    # Evidence of a difference ---------------------------------------------------------------

    def _sampling(self, a: sympy.Expr, b: sympy.Expr, diff: sympy.Expr) -> Decision | None:
        calls = a.atoms(AppliedUndef) | b.atoms(AppliedUndef)
        if any(arg.has(AppliedUndef) for call in calls for arg in call.args):
            return None  # f(g(x)): no consistent stand-in values
        symbols = a.free_symbols | b.free_symbols
        rng = random.Random(_seed(a, b))
        stop = time.monotonic() + 0.35 * self._budget
        for index in range(_SAMPLE_POINTS if symbols or calls else 1):
            left = min(stop - time.monotonic(), self._left())
            if left <= 0:
                break
            point = _draw_point(symbols, rng, on_real_line=index % 2 == 1)
            if point is None:
                return None  # assumptions the sampler cannot satisfy
            try:
                found = run_timeboxed(
                    lambda p=point: _difference_at(a, b, diff, p, calls, rng), left
                )
            except Exception:  # TimeBoxExceeded or a failed evaluation: next point
                continue
            if found is not None:
                shown = ", ".join(f"{s} = {v}" for s, v in sorted(point.items(), key=str))
                where = f" at {shown}" if shown else ""
                return Decision(
                    "different", f"the sides differ{where} by about {found}", "sampling"
                )
        return None


_REWRITES: tuple[tuple[str, Callable[[sympy.Expr], sympy.Expr]], ...] = (
    ("expand", sympy.expand),
    ("together", sympy.together),
    ("radsimp", sympy.radsimp),
    ("powsimp", sympy.powsimp),
    ("expand_trig", lambda e: sympy.expand(sympy.expand_trig(e))),
    ("trigsimp", sympy.trigsimp),
    ("simplify", sympy.simplify),
)


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
    return zlib.crc32(f"{a}\x00{b}".encode())


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


def _difference_at(
    a: sympy.Expr,
    b: sympy.Expr,
    diff: sympy.Expr,
    point: dict[sympy.Symbol, sympy.Expr],
    calls: set[sympy.Expr],
    rng: random.Random,
) -> str | None:
    """``|a-b|`` as text when it is clearly nonzero at ``point``; None when it is not (or the
    point is unusable: a pole, a failed evaluation, an unstable value)."""
    stand_ins = _stand_ins(calls, point, rng)
    if stand_ins is None:
        return None

    def at(expr: sympy.Expr) -> sympy.Expr:
        return expr.xreplace(stand_ins).xreplace(point)

    a_value, b_value = _number(at(a), _LOW_DPS), _number(at(b), _LOW_DPS)
    if a_value is None or b_value is None:
        return None
    diff_at = at(diff)
    low = _number(diff_at, _LOW_DPS, strict=True)
    if low is None or low == 0:
        return None
    high = _number(diff_at, _HIGH_DPS, strict=True)
    if high is None:
        return None
    scale = max(abs(a_value), abs(b_value))
    if abs(high - low) > _STABLE * abs(high) or abs(high) <= _CLEARLY_NONZERO * scale:
        return None
    return _MP.nstr(abs(high), 3)


def _stand_ins(
    calls: set[sympy.Expr], point: dict[sympy.Symbol, sympy.Expr], rng: random.Random
) -> dict[sympy.Expr, sympy.Expr] | None:
    """Random values for opaque calls such as ``tr(psi**2)``: one consistent reading of the
    undefined functions, valid only if calls of one function get distinct arguments here."""
    seen: dict[str, list[tuple]] = {}
    values = {}
    for call in sorted(calls, key=str):
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
        value = expr.evalf(dps, strict=strict)
    except (sympy.core.evalf.PrecisionExhausted, ValueError, TypeError, ArithmeticError):
        return None
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
