"""What a client of the server sees of a verdict: the hidden-answer rule.

A server that grades for outside submitters, or for several trainers, must answer each with
its verdict and nothing from which the expected value can be computed; a trusted training
loop may want everything. So what leaves over HTTP (``/verify``, ``GET /verdict/{key}``, the
NeMo Gym server) is a **view** of the :class:`~critpt_grader.result.GradeResult`, chosen by
``server_reveal``; the journal, ``grade``, ``batch``, ``report`` and ``reverify`` keep the
full result.

* ``full``: the result as graded: every leaf's expected and observed values, the
  comparator's reasons (differences, proofs), the reference's cases when its preflight
  failed. For a trusted loop only.
* ``rules`` (the default): the reward, the category and, per case and per leaf, its path,
  kind and status, with a reason that names the rule (``beyond rtol=5e-12 (default)``) and
  nothing measured against the expected value.
* ``verdict``: the reward and the category, with the category's meaning as the reason; no
  cases.

**How the ``rules`` view is built.** From the structured fields of each leaf (status, kind,
path, the tolerance's source and, for the author's and the default tolerance, its numbers),
never by editing the comparator's text: a reason is written here, from a closed vocabulary,
so a new comparator message cannot leak through. Text is passed on only where it is the
client's own: what its response or its run did (a syntax error, an exception it raised, a
timeout, a value that does not decode), matched by the judge's own prefixes; anything else
falls back to a fixed line. What is withheld, and why:

* the expected value, and the observed one (the client has it; the comparator may show it
  normalized against the expected value, as after removing a common phase);
* any difference, and any count or key of the expected side ("expected 3 elements", "missing
  key 'N'", "expected member /1 (2.0) equals none"); the leaves under a container whose
  shape differs are dropped too, since which of the client's indices or keys got a leaf
  would tell the expected length or keys;
* **the width of a statement promise**: "3 significant figures" is half a unit in the third
  digit *of the expected value* (its magnitude, to a power of ten), the scale guard drops an
  absolute width wider than the expected value, and the floor at the default compares
  widths at it; so which width applied, or even that the promise gave way to the default or
  the author's tolerance, would bound the expected value. A leaf a promise was considered
  for shows ``the statement's precision promise``, whatever it came to;
* the reason of a task fault (a reference that does not reproduce its expectations, a task
  that does not load): it would show the reference's values; its category says enough.

What stays: the author's and the default tolerance (fixed numbers, the same whatever the
expected value), ``exact`` where the default compares exactly (as ``kind`` tells the type,
this tells that the expected value is an exact integer or rational, never which), each leaf's
status. Those statuses are, like the reward itself, an oracle: a client may bisect a value by
sending many answers. No view can close that; rate-limit submitters if it matters.
"""

from __future__ import annotations

import re
from typing import Literal

from critpt_grader.result import CaseReport, GradeResult, LeafReport
from critpt_grader.verdict import DISPOSITIONS, Category

Reveal = Literal["verdict", "rules", "full"]
REVEALS: tuple[Reveal, ...] = ("verdict", "rules", "full")

# Categories whose reason is about the client's own response or the machine, never the
# task's values: passed on as they are.
_OWN_REASON = frozenset(
    {
        Category.RESPONSE_INCOMPLETE,
        Category.CANDIDATE_SOURCE_MISSING,
        Category.CANDIDATE_SOURCE_ERROR,
        Category.PROVIDER_UNAVAILABLE,
    }
)
# A task fault: its reason would show the reference's or the expected values.
_TASK_FAULT = frozenset(
    {Category.REFERENCE_MISMATCH, Category.REFERENCE_ERROR, Category.TASK_INVALID}
)
# Leaf kinds that are containers: a mismatch there is a difference of shape.
_CONTAINERS = frozenset({"sequence", "map", "set", "structure"})
# What a mismatch is called, by the leaf's kind, when no tolerance names the rule.
_MISMATCH = {
    "str": "a different string (compared as categories)",
    "bool": "a different boolean",
    "symbolic": "not equal",
    "interval": "a different interval",
    "legacy": "not equal",
    "sequence": "the length differs",
    "map": "the keys differ",
    "set": "no one-to-one matching between the members",
    "structure": "a different type or shape",
    "nonfinite": "a different or non-finite value",
    "exception": "not the expected exception",
    "none": "a different value",
}
# A case's own text is the client's when the judge wrote it from the client's run alone:
# these prefixes (judge/case.py, judge/row.py), by the case's outcome.
_OWN_CASE_TEXT: dict[str, tuple[str, ...]] = {
    "exception": ("raised ",),
    "timeout": ("ran out of time",),
    "memory": ("ran out of memory",),
    "encode_error": ("returned a value that cannot be encoded",),
    "value": (
        "returned a value where an exception is expected",
        "the value does not decode: ",
        "the candidate's value is too costly to compare",
        "not compared: the row's comparison budget was spent on an earlier case",
        "the comparison got too little CPU time",
    ),
}
_GENERIC_CASE = {
    "equal": "matched",
    "mismatch": "does not match",
    "uncertain": "equality neither proved nor disproved",
    "invalid": "cannot be judged",
    "not_run": "not run: an earlier case decided the row",
}
_PROMISE = re.compile(r"\bpromise '")  # a promise was weighed at this leaf (policy/tolerance)
_NUMBER = r"[0-9][0-9.e+-]*"
_PAIR = re.compile(rf"(?:an integer, )?(rtol={_NUMBER})?(?:, )?(atol={_NUMBER})? \(")
_CASE_INDEX = re.compile(r"case (\d+): ")


def for_client(result: GradeResult, reveal: Reveal) -> GradeResult:
    """The view of ``result`` a client gets under ``reveal`` (see the module docstring)."""
    if reveal == "full":
        return result
    # The reference's own cases, or an expectation that cannot be read, are the task's; a
    # verdict-only view shows no case at all.
    hidden = reveal == "verdict" or result.preflight == "failed" or result.category in _TASK_FAULT
    cases = [] if hidden else [_case(case) for case in result.cases]
    return result.model_copy(update={"reason": client_reason(result, reveal), "cases": cases})


def client_reason(result: GradeResult, reveal: Reveal) -> str:
    """``for_client(result, reveal).reason``, without building the view's cases: what a
    ``/verify`` answer shows of a verdict (it echoes the reason, never the cases)."""
    if reveal == "full":
        return result.reason
    if reveal == "verdict":
        return _meaning(result.category)
    if result.preflight == "failed" and result.category in _OWN_REASON:
        return result.reason  # the machine, not the task: retry
    if result.preflight == "failed" or result.category in _TASK_FAULT:
        return _task_fault(result.category)
    return _reason(result)


def _meaning(category: Category) -> str:
    return DISPOSITIONS[category].meaning


def _task_fault(category: Category) -> str:
    return f"{_meaning(category)} (a fault of the task; the server's journal has the detail)"


def _reason(result: GradeResult) -> str:
    """The view's reason; only the deciding case is redacted (:func:`_case` keeps each
    case's index and status, so the same case decides in the view)."""
    cases = result.cases
    category = result.category
    if category is Category.PASSED:
        return "every case matched"
    if category in _OWN_REASON:
        return result.reason
    if not cases:  # a run-level fault of the candidate (time, memory, output, case count)
        return result.reason if category.value.startswith("candidate_") else _meaning(category)
    # The judge's reason names the case that decided the row; only its index is read.
    found = _CASE_INDEX.match(result.reason)
    index = int(found.group(1)) if found else None
    deciding = next((c for c in cases if c.index == index), None) or next(
        (c for c in cases if c.status != "equal"), cases[0]
    )
    return f"case {deciding.index}: {_case(deciding).detail}"


def _case(case: CaseReport) -> CaseReport:
    leaves = _visible_leaves(case.leaves)
    first = next((leaf for leaf in leaves if leaf.status != "equal"), None)
    if case.status == "equal":
        detail = ""
    elif first is not None:
        detail = f"{first.path or '/'}: {first.reason}"
    else:
        detail = _case_text(case)
    return CaseReport(
        index=case.index, status=case.status, outcome=case.outcome, detail=detail, leaves=leaves
    )


def _case_text(case: CaseReport) -> str:
    """A case with no leaf to speak for it: its own text when the client's run alone wrote
    it, else a fixed line."""
    own = _OWN_CASE_TEXT.get(case.outcome, ())
    if case.outcome in ("crashed", "not_run") or (own and case.detail.startswith(own)):
        return case.detail
    return _GENERIC_CASE.get(case.status, "does not match")


def _visible_leaves(leaves: list[LeafReport]) -> list[LeafReport]:
    """Each leaf redacted; the leaves under a container whose shape differs dropped."""
    shapes = [
        leaf.path for leaf in leaves if leaf.status == "mismatch" and leaf.kind in _CONTAINERS
    ]
    return [
        _leaf(leaf)
        for leaf in leaves
        if not any(leaf.path.startswith(f"{path}/") for path in shapes)
    ]


def _leaf(leaf: LeafReport) -> LeafReport:
    tolerance, source = _tolerance(leaf)
    return LeafReport(
        path=leaf.path,
        kind=leaf.kind,
        status=leaf.status,
        reason=_leaf_reason(leaf, tolerance),
        tolerance=tolerance,
        tolerance_source=source,
    )


def _tolerance(leaf: LeafReport) -> tuple[str | None, str | None]:
    """The rule a numeric leaf was compared under, without anything measured at the expected
    value: the author's or the default numbers, ``exact``, or the statement's promise."""
    text, source = leaf.tolerance, leaf.tolerance_source
    if text is None or source is None:
        return None, None
    if source == "promise" or _PROMISE.search(text):
        return "the statement's precision promise", "promise"
    if text.startswith("exact ("):
        return f"exact ({source})", source
    pair = _PAIR.match(text)
    if pair and (pair.group(1) or pair.group(2)):
        numbers = ", ".join(part for part in pair.groups() if part)
        return f"{numbers} ({source})", source
    return f"the {source} tolerance", source


def _leaf_reason(leaf: LeafReport, tolerance: str | None) -> str:
    if leaf.status == "uncertain":
        return "equality neither proved nor disproved"
    if leaf.status == "invalid":
        return "the expected value cannot be read (a fault of the task)"
    if tolerance is not None and tolerance.startswith("exact"):
        where = f"compared exactly ({leaf.tolerance_source})"
        return f"equal, {where}" if leaf.status == "equal" else f"not equal, {where}"
    if leaf.status == "equal":
        return "equal" if tolerance is None else f"within {tolerance}"
    if tolerance is not None:
        return f"beyond {tolerance}"
    return _MISMATCH.get(leaf.kind, "does not match")
