"""Synthetic batch OUT rows for report tests."""

from __future__ import annotations

import json

from critpt_grader.verdict import Category, disposition
from tests.support.paths import PUBLIC_FIXTURES

PUBLIC_TASKS = PUBLIC_FIXTURES / "tasks.jsonl"


def out_row(index: int, problem: str, category: str, *, seconds: float | None = 0.5) -> dict:
    """An OUT row shaped as ``critpt-grader batch`` writes it."""
    d = disposition(Category(category))
    row = {
        "row": index,
        "problem_id": problem,
        "response": "…",
        "reward": d.reward,
        "category": category,
        "outcome": d.outcome,
        "failure_kind": d.failure_kind.value if d.failure_kind else None,
        "terminal": d.terminal,
        "mask_sample": d.outcome != "scored",
    }
    if row["mask_sample"]:
        row["_ng_failure_class"] = row["failure_kind"]
        row["_ng_failure_subcategory"] = category
    info = {"row_id": None, "reason": f"{category}: {d.meaning}", "preflight": None}
    if seconds is not None:
        info["seconds"] = seconds
    row["critpt_grader"] = info
    return row


def synthetic_out(problems: list[str], *, flip: int | None = None, timing: bool = True):
    rows = []
    for p, problem in enumerate(problems):
        for category in PATTERNS[p % len(PATTERNS)]:
            index = len(rows)
            if flip is not None and index % flip == 0:  # a second model or grader version
                category = "candidate_mismatch" if category == "passed" else "passed"
            seconds = 0.1 + (index % 7) * 0.3 if timing else None
            rows.append(out_row(index, problem, category, seconds=seconds))
    rows.append(
        {  # a row the batch could not grade
            "row": len(rows),
            "category": "unknown_problem_id",
            "detail": "no task set holds problem_id 'nope'",
            "problem_id": "nope",
            "rejected": True,
            "reward": None,
            "mask_sample": True,
        }
    )
    return rows


def public_problems(n: int) -> list[str]:
    with PUBLIC_TASKS.open() as file:
        lines = zip(file, range(n), strict=False)
        return [json.loads(line)["task_data"]["problem_id"] for line, _ in lines]


# Per problem, the categories of its rollouts in order (cycled over the problems).
PATTERNS = (
    ("passed", "passed", "candidate_mismatch", "passed"),
    ("candidate_mismatch", "candidate_mismatch", "comparator_uncertain", "passed"),
    ("passed", "provider_unavailable", "passed", "candidate_timeout"),
    ("candidate_exception", "candidate_mismatch", "candidate_mismatch", "candidate_mismatch"),
)
