"""The case rule: one case's outcome against its expectation, as a category and a report.

Pure: no sandbox, no worker, no I/O. It decodes the candidate's value with the codec and
compares it with :func:`critpt_grader.compare.compare_values` under the case's policy
(:func:`case_policy`: the statement, the task's and the case's tolerances, the reference's
symbol facts). A fault of the candidate is a scored 0; an expectation that cannot be read is
the task's fault; a comparison that cannot decide is ``comparator_uncertain`` — never a score.
"""

from __future__ import annotations

from typing import Any

from critpt_grader import codec, raised
from critpt_grader.compare import CaseVerdict, Policy, compare_expectation, compare_values
from critpt_grader.errors import CodecError
from critpt_grader.result import CaseReport, LeafReport
from critpt_grader.sandbox.base import CaseOutcome
from critpt_grader.tasks import Expectation, LeafTolerance, Task
from critpt_grader.verdict import Category

# What a candidate's case outcome means when a value was due.
CASE_FAULTS = {
    "exception": Category.CANDIDATE_EXCEPTION,
    "timeout": Category.CANDIDATE_TIMEOUT,
    "memory": Category.CANDIDATE_MEMORY,
    # An unencodable value is not an answer of any declared type: a candidate fault,
    # scored 0, rather than "uncertain" (which would let odd return types dodge a score).
    "encode_error": Category.CANDIDATE_INVALID_OUTPUT,
    "crashed": Category.CANDIDATE_INVALID_OUTPUT,
    # The run stopped at an earlier decisive case (a timeout, out of memory), which decides
    # the row; a case left unrun is never a pass.
    "not_run": Category.CANDIDATE_INVALID_OUTPUT,
}
# What a candidate run that did not finish means.
RUN_FAULTS = {
    "source_error": Category.CANDIDATE_SOURCE_ERROR,
    "timeout": Category.CANDIDATE_TIMEOUT,
    "memory": Category.CANDIDATE_MEMORY,
    "output_limit": Category.CANDIDATE_INVALID_OUTPUT,
    "no_result": Category.CANDIDATE_INVALID_OUTPUT,
}

Verdict = tuple[Category, str, CaseReport]


def judge_case(
    index: int, expectation: Expectation, expected: Any, outcome: CaseOutcome, policy: Policy
) -> Verdict:
    """Case ``index``: the candidate's ``outcome`` against ``expectation`` (``expected``
    decoded), under ``policy``."""

    def report(status: str, detail: str, verdict: CaseVerdict | None = None) -> CaseReport:
        leaves = [leaf_report(leaf) for leaf in verdict.leaves] if verdict else []
        return CaseReport(
            index=index, status=status, outcome=outcome.kind, detail=detail, leaves=leaves
        )

    where = f"case {index}"
    if outcome.kind == "not_run":
        detail = outcome.message or "not run: an earlier case decided the row"
        return CASE_FAULTS["not_run"], f"{where}: {detail}", report("not_run", detail)
    if expectation.kind == "exception":
        if outcome.kind == "exception":
            # Only a class that is the expected builtin type by its genuine builtin bases,
            # never a never-pass type (raised.py).
            verdict = compare_expectation(
                "exception", expectation.error_type, "exception", raised.Raised.of(outcome)
            )
            reason = verdict.leaves[0].reason
            if verdict.status == "equal":
                return Category.PASSED, "", report("equal", reason, verdict)
            detail = f"{reason}: {(outcome.message or '')[:200]}"
            return (
                Category.CANDIDATE_MISMATCH,
                f"{where}: {reason}",
                report("mismatch", detail, verdict),
            )
        if outcome.kind == "value":
            detail = "returned a value where an exception is expected"
            return Category.CANDIDATE_MISMATCH, f"{where}: {detail}", report("mismatch", detail)
    if outcome.kind != "value":
        detail = outcome_detail(outcome)
        return CASE_FAULTS[outcome.kind], f"{where}: {detail}", report("mismatch", detail)
    try:
        observed = codec.decode(outcome.value)
    except CodecError as exc:
        detail = f"the value does not decode: {exc}"
        return Category.CANDIDATE_INVALID_OUTPUT, f"{where}: {detail}", report("invalid", detail)
    verdict = compare_values(expected, observed, policy)
    status = verdict.status
    if status == "equal":
        return Category.PASSED, "", report("equal", "", verdict)
    first = verdict.first_difference()
    detail = f"{first.path or '/'}: {first.reason}" if first else status
    if status == "uncertain":
        return Category.COMPARATOR_UNCERTAIN, f"{where}: {detail}", report(status, detail, verdict)
    if status == "invalid":  # the expectation itself cannot be read: the task's fault, never 0
        return Category.TASK_INVALID, f"{where}: {detail}", report(status, detail, verdict)
    return Category.CANDIDATE_MISMATCH, f"{where}: {detail}", report(status, detail, verdict)


def outcome_detail(outcome: CaseOutcome) -> str:
    """One line on a case that gave no value."""
    if outcome.kind == "exception":
        return f"raised {raised.Raised.of(outcome).name}: {(outcome.message or '')[:200]}"
    if outcome.kind == "encode_error":
        return f"returned a value that cannot be encoded ({outcome.error_type})"
    return {"timeout": "ran out of time", "memory": "ran out of memory"}.get(
        outcome.kind, outcome.message or f"ended without a result ({outcome.kind})"
    )


def case_policy(task: Task, index: int, symbols: dict[str, dict[str, bool]]) -> Policy:
    """The comparison policy of case ``index``; ``symbols``: the reference's symbol facts."""
    # A case's leaf entry replaces the task's entry for the same path as a whole.
    leaves: dict[str, LeafTolerance] = {leaf.path: leaf for leaf in task.tolerances}
    leaves.update({leaf.path: leaf for leaf in task.cases[index].tolerances})
    return Policy(
        problem=task.problem,
        output_doc=task.output_doc,
        task_rtol=task.rtol,
        task_atol=task.atol,
        leaf_tolerances=tuple(leaves.values()),
        symbols=symbols,
    )


def leaf_report(leaf: Any) -> LeafReport:
    """A comparator leaf verdict in its one serialized form."""
    tolerance = leaf.tolerance
    return LeafReport(
        path=leaf.path,
        kind=leaf.kind,
        status=leaf.status,
        reason=leaf.reason,
        tolerance=tolerance.text if tolerance else None,
        tolerance_source=tolerance.source if tolerance else None,
        expected=leaf.expected,
        observed=leaf.observed,
    )
