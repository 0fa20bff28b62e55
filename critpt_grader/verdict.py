"""The closed set of grading categories and what each one means for a training loop.

Every category maps, once and only here, to an outcome (``scored``, ``unscorable``,
``failure``), a reward, a failure kind a loop can route on, and whether retrying can help.
Candidate faults after a clean preflight are scored 0; reference faults, comparator
uncertainty and infrastructure trouble are never scored.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

Outcome = Literal["scored", "unscorable", "failure"]


class FailureKind(StrEnum):
    PROVIDER_UNAVAILABLE = "provider_unavailable"  # infrastructure: retry the same row
    VERIFIER_ERROR = "verifier_error"  # the task or the grader cannot judge this row
    RESPONSE_INCOMPLETE = "critpt_grader:response_incomplete"  # regenerate the response


class Category(StrEnum):
    PASSED = "passed"
    CANDIDATE_MISMATCH = "candidate_mismatch"
    CANDIDATE_EXCEPTION = "candidate_exception"
    CANDIDATE_TIMEOUT = "candidate_timeout"
    CANDIDATE_MEMORY = "candidate_memory"
    CANDIDATE_SOURCE_ERROR = "candidate_source_error"
    CANDIDATE_SOURCE_MISSING = "candidate_source_missing"
    CANDIDATE_INVALID_OUTPUT = "candidate_invalid_output"
    REFERENCE_MISMATCH = "reference_mismatch"
    REFERENCE_ERROR = "reference_error"
    TASK_INVALID = "task_invalid"
    COMPARATOR_UNCERTAIN = "comparator_uncertain"
    PROVIDER_UNAVAILABLE = "provider_unavailable"
    RESPONSE_INCOMPLETE = "response_incomplete"


@dataclass(frozen=True, slots=True)
class Disposition:
    outcome: Outcome
    reward: float
    failure_kind: FailureKind | None
    terminal: bool  # True: retrying the same row cannot change the verdict
    meaning: str


_CANDIDATE_ZERO = ("scored", 0.0, None, True)
_VERIFIER_FAULT = ("unscorable", 0.0, FailureKind.VERIFIER_ERROR, True)

DISPOSITIONS: dict[Category, Disposition] = {
    Category.PASSED: Disposition("scored", 1.0, None, True, "every case matched"),
    Category.CANDIDATE_MISMATCH: Disposition(*_CANDIDATE_ZERO, "a value or the exception differs"),
    Category.CANDIDATE_EXCEPTION: Disposition(*_CANDIDATE_ZERO, "raised where a value is due"),
    Category.CANDIDATE_TIMEOUT: Disposition(*_CANDIDATE_ZERO, "ran out of time"),
    Category.CANDIDATE_MEMORY: Disposition(*_CANDIDATE_ZERO, "ran out of memory"),
    Category.CANDIDATE_SOURCE_ERROR: Disposition(
        *_CANDIDATE_ZERO, "code does not load: syntax error or no usable entry point"
    ),
    Category.CANDIDATE_SOURCE_MISSING: Disposition(
        *_CANDIDATE_ZERO, "a completed response with no usable code"
    ),
    Category.CANDIDATE_INVALID_OUTPUT: Disposition(
        *_CANDIDATE_ZERO, "no valid result: unencodable value, crash or flood"
    ),
    Category.REFERENCE_MISMATCH: Disposition(
        *_VERIFIER_FAULT,
        "the reference does not reproduce the stored expectations",
    ),
    Category.REFERENCE_ERROR: Disposition(
        *_VERIFIER_FAULT,
        "the reference failed to run (error, timeout, unencodable value)",
    ),
    Category.TASK_INVALID: Disposition(*_VERIFIER_FAULT, "the task itself is malformed"),
    Category.COMPARATOR_UNCERTAIN: Disposition(
        *_VERIFIER_FAULT,
        "equality could be neither proved nor disproved",
    ),
    Category.PROVIDER_UNAVAILABLE: Disposition(
        "failure",
        0.0,
        FailureKind.PROVIDER_UNAVAILABLE,
        False,
        "the sandbox could not run the job; retry",
    ),
    Category.RESPONSE_INCOMPLETE: Disposition(
        "failure",
        0.0,
        FailureKind.RESPONSE_INCOMPLETE,
        False,
        "the response did not complete; regenerate it",
    ),
}


def disposition(category: Category) -> Disposition:
    return DISPOSITIONS[category]


# What a row came to, in one short label: its outcome, a scored row's reward folded in. A row
# the grader failed on has no verdict: ``grader error``. Reports chart these labels; counts
# are keyed by them with "_" for " " (:func:`count_key`), and a batch OUT row the grader
# failed on carries that key, ``grader_error``, as its category.
SCORED_1 = "scored 1"
SCORED_0 = "scored 0"
GRADER_ERROR = "grader error"
VERDICT_LABELS = (SCORED_1, SCORED_0, "unscorable", "failure", GRADER_ERROR)


def verdict_key(outcome: str, reward: float | None) -> str:
    """The label of a verdict: ``scored 1`` / ``scored 0`` for a scored row (by its reward),
    else the outcome (``unscorable``, ``failure``)."""
    if outcome == "scored":
        return SCORED_1 if reward == 1.0 else SCORED_0
    return outcome


def count_key(label: str) -> str:
    """The key a label is counted under in JSON: ``scored_1``, ``grader_error``..."""
    return label.replace(" ", "_")


GRADER_ERROR_CATEGORY = count_key(GRADER_ERROR)
