"""``GradeResult``: what ``grade()`` returns, validated and JSON-serializable.

This is an output boundary (the CLI, the HTTP server and the acceptance report all
serialize it), so it is a pydantic model; inside the pipeline plain data is used.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from critpt_grader.verdict import Category, disposition


class LeafReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str  # JSON Pointer into the case's value, "" = the whole value
    kind: str
    status: Literal["equal", "mismatch", "uncertain", "invalid"]
    reason: str
    tolerance: str | None = None  # e.g. "rtol=1e-6 atol=0"
    tolerance_source: Literal["promise", "leaf", "task", "default"] | None = None
    expected: str | None = None
    observed: str | None = None


class CaseReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    index: int
    status: Literal["equal", "mismatch", "uncertain", "invalid", "not_run"]
    outcome: str  # what the candidate's call produced: value, exception, timeout, ...
    detail: str = ""
    leaves: list[LeafReport] = Field(default_factory=list)


class GradeResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    outcome: Literal["scored", "unscorable", "failure"]
    reward: float
    category: Category
    failure_kind: str | None
    terminal: bool
    mask_sample: bool  # True for every row that is not a clean score
    problem_id: str | None = None
    reason: str = ""  # one line a human can act on
    cases: list[CaseReport] = Field(default_factory=list)
    preflight: Literal["passed", "failed", "cached", "skipped"] = "skipped"
    containment: str = ""
    timings: dict[str, float] = Field(default_factory=dict)
    stdout: str = ""  # the candidate's captured output, truncated
    stderr: str = ""

    @classmethod
    def of(cls, category: Category, **fields) -> GradeResult:
        """Build a result whose outcome, reward and failure fields come from the category."""
        d = disposition(category)
        return cls(
            outcome=d.outcome,
            reward=d.reward,
            category=category,
            failure_kind=d.failure_kind.value if d.failure_kind else None,
            terminal=d.terminal,
            mask_sample=d.outcome != "scored",
            **fields,
        )

    def first_difference(self) -> LeafReport | None:
        for case in self.cases:
            for leaf in case.leaves:
                if leaf.status != "equal":
                    return leaf
        return None
