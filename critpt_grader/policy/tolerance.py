"""Which tolerance a numeric leaf is compared with, and the exact pass test.

Precedence for one expected numeric leaf (first that applies wins):

1. a **statement promise** that governs the leaf (see :mod:`critpt_grader.policy.promises`): the
   tightest, at this leaf, of the clauses about the leaf's output or about the whole answer;
2. the task's **per-leaf** entry for the leaf's path;
3. the **task-level** ``rtol``/``atol``;
4. the **default** ``rtol=5e-12, atol=0`` — except that an **exact** candidate against an
   **exact** expected value compares exactly (:data:`Exactness`): exactness follows the
   value, not its tag. Exact are a Python ``int``, a ``Fraction``, an :class:`ExactComplex` of
   int or Fraction parts, symbolic text whose value is a SymPy ``Integer`` or ``Rational`` (or
   a sum or product of rationals and ``I``) written without decimals (``binomial(100, 50)``,
   ``2**70``, ``1/3``), and legacy text that reads as an integer or ``a/b``. Written with
   decimals (``1.5``, ``2.0e3``, a ``Decimal``), a float, or an irrational constant keeps
   the default tolerance as an expectation. An **inexact** candidate (a binary64 float or
   complex, a ``Decimal``, decimal text) against an exact expected value gets the default
   too, as against an inexact one: a float is judged as a float, so ``0.2`` meets
   ``Fraction(1, 5)`` and ``5.000000000000001`` meets ``5``, while ``2**100 + 1`` (an int)
   never meets ``2**100`` (see ``candidate_exact`` in :func:`resolve`).

A promise is adjusted before use:

* the clause has already been turned into a pair at this leaf's magnitude
  (:meth:`critpt_grader.policy.promises.Clause.pair`: significant figures are half a unit of the
  expected value, an unqualified error the tighter of relative and absolute);
* **scale guard**: an absolute part wider than the expected magnitude is dropped, so "four
  decimal places" never lets ``0`` pass for an expected ``3e-6`` (integer rounding excepted:
  it states how the answer is rounded, not how accurate it is);
* when the task author gave tolerances, the promise wins whether tighter or looser, unless the
  guard emptied it to ``(0, 0)``; then the author's values apply;
* when no author spoke, the promise is floored at the default: a promise never makes the
  comparison stricter than ``rtol=5e-12``.

A tolerance that does not come from a promise says why when the statement had precision
wording: ``rtol=5e-12 (default; no promise read: 'as accurate as possible')``.

The pass test is ``|observed - expected| <= atol + rtol * scale``, evaluated in exact
rationals (a float contributes its exact binary64 value); ``scale`` is ``|expected|``. For
complex numbers both ``|·|`` are moduli (:mod:`critpt_grader.compare.closeness`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Any, Literal

from critpt_grader.codec.values import ExactComplex

ToleranceSource = Literal["promise", "leaf", "task", "default"]

DEFAULT_RTOL = "5e-12"
DEFAULT_ATOL = "0"


@dataclass(frozen=True)
class Tolerance:
    """The tolerance one leaf was compared with. ``text`` says where it came from, e.g.
    ``rtol=1e-6 (promise: 'relative error below 1e-6')``."""

    rtol: Fraction
    atol: Fraction
    source: ToleranceSource
    text: str
    # "rounded to the nearest integer": the candidate must be an integer, within atol 1/2 of
    # the expected value (the expected value rounded; at a half either neighbour).
    integral: bool = False

    @property
    def exact(self) -> bool:
        return self.rtol == 0 and self.atol == 0

    def width(self, scale: Fraction) -> Fraction:
        """Largest allowed absolute difference at this expected magnitude."""
        return self.atol + self.rtol * scale


@functools.lru_cache(maxsize=256)
def exact_fraction(text: str) -> Fraction:
    """Exact value of nonnegative decimal text such as ``"1e-6"`` or ``"0.001"``."""
    try:
        value = Decimal(text.strip())
    except InvalidOperation as exc:
        raise ValueError(f"not a decimal tolerance: {text!r}") from exc
    if not value.is_finite() or value < 0:
        raise ValueError(f"tolerance must be finite and nonnegative: {text!r}")
    return Fraction(value)


def format_number(value: Fraction) -> str:
    """Short human text for a tolerance value (``1e-6``, ``0.005``, ``5e-12``)."""
    if value == 0:
        return "0"
    text = f"{float(value):.6g}"
    mantissa, _, exponent = text.partition("e")
    if exponent:
        return f"{mantissa}e{int(exponent)}"
    return mantissa


def describe(rtol: Fraction, atol: Fraction, source: ToleranceSource, note: str = "") -> str:
    parts = []
    if rtol or not atol:
        parts.append(f"rtol={format_number(rtol)}")
    if atol:
        parts.append(f"atol={format_number(atol)}")
    where = source if not note else f"{source}: {note}"
    return f"{', '.join(parts)} ({where})"


def make(
    rtol: Fraction,
    atol: Fraction,
    source: ToleranceSource,
    note: str = "",
    *,
    integral: bool = False,
) -> Tolerance:
    text = describe(rtol, atol, source, note)
    if integral:
        text = f"an integer, {text}"
    return Tolerance(rtol, atol, source, text, integral)


Exactness = Literal["int", "integer", "rational", "complex rational"]
"""How an expected value is exact, so that the default tolerance compares it exactly with an
exact candidate:
``"int"`` a Python ``int`` or legacy integer text (as before), ``"integer"`` any other exact
integer (symbolic ``2**70``, ``Fraction(6)``), ``"rational"`` an exact non-integer rational,
``"complex rational"`` an exact ``a + b*I`` with rational parts. ``None``: not exact."""

_EXACT_WHAT: dict[str, str] = {
    "int": "an int",
    "integer": "an exact integer",
    "rational": "an exact rational",
    "complex rational": "an exact complex rational",
}


def exact_tolerance(exact: Exactness = "int") -> Tolerance:
    """The default for an exact expected value and an exact candidate: no width at all."""
    text = f"exact (expected {_EXACT_WHAT[exact]}, no tolerance given)"
    return Tolerance(Fraction(0), Fraction(0), "default", text)


def is_integer_exactness(exact: Exactness | None) -> bool:
    """An exact integer value, in any form (what the statement's promises call an int)."""
    return exact in ("int", "integer")


def exactness_of_number(value: Any) -> Exactness | None:
    """How a decoded number is exact (``None`` for a float, ``complex``, ``Decimal``, bool or
    anything else). A Fraction that is how the codec carries an extended-precision binary
    value (:func:`is_binary_carrier`) is a float of more precision, not an exact rational."""
    if type(value) is int:
        return "int"
    if isinstance(value, Fraction):
        if is_binary_carrier(value):
            return None
        return "integer" if value.denominator == 1 else "rational"
    if isinstance(value, ExactComplex):
        parts = (value.re, value.im)
        if all(
            type(part) is int or (isinstance(part, Fraction) and not is_binary_carrier(part))
            for part in parts
        ):
            return "complex rational"
    return None


def is_binary_carrier(value: Fraction) -> bool:
    """A Fraction the codec may have made from a numpy ``longdouble`` or an mpmath ``mpf``
    (:mod:`critpt_grader.codec.adapters`): its denominator is a power of two and it is no
    binary64 value (one that is becomes a float). ``Fraction(1, 3)`` and ``Fraction(1, 2)``
    are not; ``Fraction(2**70 + 1)`` is, and keeps the tolerance."""
    denominator = value.denominator
    if denominator & (denominator - 1):
        return False
    try:
        return Fraction(float(value)) != value
    except OverflowError:
        return True


@dataclass(frozen=True, eq=False)
class AuthorTolerances:
    """What the task author said: the per-leaf entry for this path and the task-level pair,
    as exact decimal text (``None`` = not given)."""

    leaf_rtol: str | None = None
    leaf_atol: str | None = None
    task_rtol: str | None = None
    task_atol: str | None = None
    default_rtol: str = DEFAULT_RTOL
    default_atol: str = DEFAULT_ATOL

    @property
    def has_leaf(self) -> bool:
        return self.leaf_rtol is not None or self.leaf_atol is not None

    @property
    def has_task(self) -> bool:
        return self.task_rtol is not None or self.task_atol is not None

    @functools.cached_property
    def author_pair(self) -> Tolerance | None:
        """The author's pair replaces the default as a whole; a missing part is strict."""
        if self.has_leaf:
            rtol, atol, source = self.leaf_rtol, self.leaf_atol, "leaf"
        elif self.has_task:
            rtol, atol, source = self.task_rtol, self.task_atol, "task"
        else:
            return None
        return make(
            exact_fraction(rtol if rtol is not None else DEFAULT_RTOL),
            exact_fraction(atol if atol is not None else DEFAULT_ATOL),
            source,  # type: ignore[arg-type]
        )

    @functools.cached_property
    def default(self) -> Tolerance:
        return make(exact_fraction(self.default_rtol), exact_fraction(self.default_atol), "default")


@dataclass(frozen=True)
class PromisedPair:
    """A governing promise already turned into a pair at one leaf (see
    :meth:`critpt_grader.policy.promises.Clause.pair`). ``phrase`` says which clause and for what;
    ``scale_guard=False`` keeps an absolute width wider than the value (integer rounding)."""

    rtol: Fraction
    atol: Fraction
    phrase: str
    scale_guard: bool = True
    integral: bool = False  # integer rounding: the candidate must be an integer


def resolve(
    *,
    scale: Fraction,
    expected_exact: Exactness | None,
    promise: PromisedPair | None,
    author: AuthorTolerances,
    why: str = "",
    candidate_exact: bool = True,
) -> Tolerance:
    """Pick the tolerance for one numeric leaf whose expected magnitude is ``scale``.
    ``expected_exact``: how the expected value is exact (``None``: it is not); only the default
    fallback becomes exact, promises and the author's tolerances apply as given.
    ``candidate_exact=False``: the candidate is inexact (a float, a ``Decimal``, decimal
    text), so the fallback is the default an inexact expectation gets: nothing a rounded
    number could meet exactly but by luck (``0.1111111111111111`` for ``1/9``).
    ``why``: why no promise applies (from the statement reader), added to the text of a
    tolerance that does not come from a promise."""
    author_pair = author.author_pair
    if promise is not None:
        rtol, atol = promise.rtol, promise.atol
        note = promise.phrase
        if atol > scale and promise.scale_guard:
            # an absolute width larger than the value proves nothing
            atol = Fraction(0)
            note += ", absolute part dropped: wider than the expected value"
        emptied = rtol == 0 and atol == 0
        integral = promise.integral
        if author_pair is not None and not emptied:
            return make(rtol, atol, "promise", note, integral=integral)
        if author_pair is None and not emptied:
            floor = author.default
            if integral or _wider_or_equal(rtol, atol, floor, scale):
                return make(rtol, atol, "promise", note, integral=integral)
            return make(
                floor.rtol, floor.atol, "default", f"promise {note} is stricter than the default"
            )
        why = why or f"promise {note} gives nothing here"
    if author_pair is not None:
        return _noted(author_pair, why)
    if expected_exact is not None and candidate_exact:
        return _noted(exact_tolerance(expected_exact), why)
    if expected_exact is not None:
        inexact = f"an inexact answer to {_EXACT_WHAT[expected_exact]}"
        return _noted(author.default, f"{inexact}; {why}" if why else inexact)
    return _noted(author.default, why)


def _noted(tolerance: Tolerance, why: str) -> Tolerance:
    """``rtol=5e-12 (default; no promise read: '…')``: why no promise applied."""
    if not why:
        return tolerance
    return Tolerance(
        tolerance.rtol, tolerance.atol, tolerance.source, f"{tolerance.text[:-1]}; {why})"
    )


def _wider_or_equal(rtol: Fraction, atol: Fraction, floor: Tolerance, scale: Fraction) -> bool:
    width, floor_width = atol + rtol * scale, floor.width(scale)
    if width != floor_width:
        return width > floor_width
    return rtol >= floor.rtol


def within(expected: Fraction, observed: Fraction, tolerance: Tolerance, scale: Fraction) -> bool:
    """Exact pass test for one real part: ``|observed - expected| <= atol + rtol * scale``."""
    return abs(observed - expected) <= tolerance.width(scale)
