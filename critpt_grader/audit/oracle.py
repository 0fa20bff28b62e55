"""How a mutant's outcomes stand against the reference's: identical, equal under the task's
rules, equal under the strict oracle, and by how much they differ.

Pure (no sandbox, no clock). The comparisons are the pipeline's own case rule
(:func:`critpt_grader.judge.case.judge_case`) with the reference's outcome as the
expectation, under one of two policies:

* the **task's** policy (:func:`critpt_grader.judge.case.case_policy`): the statement's
  promises, the author's tolerances, the conventions — what grading does;
* the **strict** policy: the statement's conventions (sign, phase, order, normalization) and
  the default ``rtol = 5e-12`` only — no promise, no author tolerance. A mutant equal to the
  reference under it everywhere is the same answer (proved equal, or a freedom the statement
  grants, or rounding); one equal under the task's policy but not this one passed by a
  tolerance alone.

The values compared come from the task's trusted reference and small edits of it; each proof
step runs under its own CPU cap (:mod:`critpt_grader.symbolic.cpu_cap`).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

from critpt_grader import codec, raised
from critpt_grader.codec.values import ExactComplex
from critpt_grader.compare import Policy
from critpt_grader.compare.verdicts import render
from critpt_grader.errors import CodecError
from critpt_grader.judge.case import case_policy, judge_case
from critpt_grader.result import CaseReport
from critpt_grader.sandbox.base import CaseOutcome
from critpt_grader.tasks import Expectation, Task
from critpt_grader.verdict import Category


def identical(reference: CaseOutcome, other: CaseOutcome) -> bool:
    """The same outcome to the bit: the same wire value, or a raise of the same class."""
    if reference.kind != other.kind:
        return False
    if reference.kind == "value":
        return reference.value == other.value
    if reference.kind == "exception":
        return (reference.error_module, reference.error_qualname or reference.error_type) == (
            other.error_module,
            other.error_qualname or other.error_type,
        )
    return True


def strict_policy(task: Task, symbols: dict[str, dict[str, bool]]) -> Policy:
    """The statement's conventions and the default tolerance: no promise, no author's width."""
    return Policy(problem=task.problem, output_doc=task.output_doc, symbols=symbols, promises=False)


def task_policy(task: Task, case: int, symbols: dict[str, dict[str, bool]]) -> Policy:
    return case_policy(task, case, symbols)


@dataclass(frozen=True, slots=True)
class Judged:
    equal: bool
    report: CaseReport


def judge(index: int, reference: CaseOutcome, other: CaseOutcome, policy: Policy) -> Judged:
    """``other`` against ``reference`` as its expectation, under ``policy``."""
    if identical(reference, other):
        return Judged(True, CaseReport(index=index, status="equal", outcome=other.kind))
    if reference.kind == "exception":
        expectation = Expectation("exception", error_type=raised.Raised.of(reference).builtin_type)
        expected = None
    elif reference.kind == "value":
        expectation = Expectation("value", value=reference.value)
        try:
            expected = codec.decode(reference.value)
        except CodecError as exc:  # the reference's own value: the audit cannot read it
            detail = f"the reference's value does not decode: {exc}"
            return Judged(
                False, CaseReport(index=index, status="invalid", outcome="value", detail=detail)
            )
    else:
        detail = f"the reference gave no value ({reference.kind})"
        return Judged(
            False, CaseReport(index=index, status="invalid", outcome=other.kind, detail=detail)
        )
    category, _, report = judge_case(index, expectation, expected, other, policy)
    return Judged(category is Category.PASSED, report)


@dataclass(frozen=True, slots=True)
class Difference:
    """The largest numeric difference between two values, at one leaf."""

    path: str
    absolute: Fraction
    relative: Fraction | None  # None where the expected leaf is 0


def largest_difference(reference: CaseOutcome, other: CaseOutcome) -> Difference | None:
    """The leaf where ``other``'s number is relatively farthest from the reference's (two
    values of one shape; ``None`` when no numeric leaf differs or the shapes differ)."""
    if reference.kind != "value" or other.kind != "value":
        return None
    try:
        expected, observed = codec.decode(reference.value), codec.decode(other.value)
    except CodecError:
        return None
    found: list[Difference] = []
    _walk(expected, observed, "", found)
    if not found:
        return None
    return max(found, key=lambda d: (d.relative is None, d.relative or d.absolute))


def _walk(expected: Any, observed: Any, path: str, found: list[Difference]) -> None:
    e, o = _exact(expected), _exact(observed)
    if e is not None and o is not None:
        distance = _modulus(o[0] - e[0], o[1] - e[1])
        if distance:
            size = _modulus(*e)
            found.append(Difference(path or "/", distance, distance / size if size else None))
        return
    if isinstance(expected, list | tuple) and isinstance(observed, list | tuple):
        if len(expected) == len(observed):
            for k, (a, b) in enumerate(zip(expected, observed, strict=True)):
                _walk(a, b, f"{path}/{k}", found)
    elif isinstance(expected, dict) and isinstance(observed, dict):
        for key in expected.keys() & observed.keys():
            _walk(expected[key], observed[key], f"{path}/{key}", found)


def _exact(value: Any) -> tuple[Fraction, Fraction] | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | Fraction):
        return Fraction(value), Fraction(0)
    if isinstance(value, float | Decimal):
        return (Fraction(value), Fraction(0)) if _finite(value) else None
    if isinstance(value, complex):
        if _finite(value.real) and _finite(value.imag):
            return Fraction(value.real), Fraction(value.imag)
        return None
    if isinstance(value, ExactComplex):
        re, im = _exact(value.re), _exact(value.im)
        return (re[0], im[0]) if re is not None and im is not None else None
    return None


def _finite(value: float | Decimal) -> bool:
    return value == value and value not in (float("inf"), float("-inf"))


def _modulus(re: Fraction, im: Fraction) -> Fraction:
    # Exact where it can be (real numbers); the complex modulus to double precision suffices
    # for a report's "by how much".
    if not im:
        return abs(re)
    return Fraction(abs(complex(float(re), float(im))))


def shown(outcome: CaseOutcome) -> str:
    """A short text of one outcome for a report."""
    if outcome.kind == "value":
        try:
            return render(tidy(codec.decode(outcome.value)))
        except CodecError:
            return "(a value that does not decode)"
    if outcome.kind == "exception":
        return f"raises {raised.Raised.of(outcome).name}"
    return outcome.kind


def inputs_text(case: dict[str, Any]) -> str:
    """``(1.0625, 2)`` or ``(x=1.0625)``: a case's inputs for a report."""
    if "names" in case:
        return "(" + ", ".join(case["names"]) + ")"
    parts = [_value_text(arg) for arg in case.get("args", [])]
    parts += [f"{k}={_value_text(v)}" for k, v in case.get("kwargs", {}).items()]
    return "(" + ", ".join(parts) + ")"


def _value_text(envelope: dict[str, Any]) -> str:
    try:
        return render(tidy(codec.decode(envelope)))
    except CodecError:
        return "?"


SHOWN_DIGITS = 13  # a difference at the strict oracle's 5e-12 still shows


def tidy(value: Any) -> Any:
    """``value`` with every float (and complex part) rounded to :data:`SHOWN_DIGITS`
    significant digits, so a report prints ``10.996``, not ``10.995999999999999``. For
    display only: every comparison uses the values as they are."""
    if isinstance(value, float):
        return float(f"{value:.{SHOWN_DIGITS}g}")
    if isinstance(value, complex):
        return complex(tidy(value.real), tidy(value.imag))
    if isinstance(value, list | tuple) and type(value) in (list, tuple):
        return type(value)(tidy(item) for item in value)
    if isinstance(value, dict) and type(value) is dict:
        return {key: tidy(item) for key, item in value.items()}
    return value
