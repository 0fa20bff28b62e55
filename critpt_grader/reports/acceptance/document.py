"""The acceptance report as one JSON document; the Markdown, HTML and console views render it.

What it assumes: the grades of one acceptance run (:mod:`critpt_grader.acceptance.run`) and
the sets they came from; it computes nothing about verdicts itself (the tallies are
:mod:`critpt_grader.acceptance.summary`'s).

What it guarantees: plain JSON data (str, numbers, bools, None, lists, dicts), so the views and
any other consumer read one shape, and ``passed`` is true only when something was graded and
every expectation was met.

Shape (``format: critpt-acceptance-report-v1``)::

    generated_at, duration_seconds, passed (every expectation met), filters {kinds, tasks}
    sets          [{name, path, description, tasks, candidates, selected, labelled}]
    skipped_sets  [{name, path, reason}]
    summary       {candidates, met, not_met, by_kind {kind: tally}, by_output_type {label: tally}}
    candidates    [{set, line, task_id, against, kind, label, labels, expect, observed, met,
                    reason, first_difference, error, seconds, response, result}]

A tally is ``{candidates, met, not_met, expected {verdict: n}, observed {verdict: n}}``;
``result`` is the full ``GradeResult`` dump, ``observed`` its outcome, reward and category.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from critpt_grader.acceptance.run import Graded
from critpt_grader.acceptance.sets import AcceptanceSet, SkippedSet
from critpt_grader.acceptance.summary import tally_by_kind, tally_by_output_type, total
from critpt_grader.private_files import write_private_text

REPORT_FORMAT = "critpt-acceptance-report-v1"


@dataclass(frozen=True, slots=True)
class RunContext:
    """What was asked for and when; everything else in the report comes from the grades."""

    sets: Sequence[AcceptanceSet]
    skipped: Sequence[SkippedSet]
    kinds: Sequence[str] | None
    task_ids: Sequence[str] | None
    generated_at: datetime
    duration_seconds: float


def build_report(context: RunContext, graded: Sequence[Graded]) -> dict[str, Any]:
    overall = total(graded)
    selected_per_set = {s.name: 0 for s in context.sets}
    for item in graded:
        selected_per_set[item.candidate.set_name] += 1
    return {
        "format": REPORT_FORMAT,
        "generated_at": context.generated_at.astimezone(UTC).isoformat(timespec="seconds"),
        "duration_seconds": round(context.duration_seconds, 3),
        "passed": overall.not_met == 0 and overall.candidates > 0,
        "filters": {
            "kinds": list(context.kinds) if context.kinds is not None else None,
            "tasks": list(context.task_ids) if context.task_ids is not None else None,
        },
        "sets": [
            {
                "name": s.name,
                "path": str(s.path),
                "description": s.description,
                "tasks": len(s.tasks),
                "candidates": len(s.candidates),
                "selected": selected_per_set[s.name],
                "labelled": bool(s.labels),
            }
            for s in context.sets
        ],
        "skipped_sets": [
            {"name": s.name, "path": str(s.path), "reason": s.reason} for s in context.skipped
        ],
        "summary": {
            "candidates": overall.candidates,
            "met": overall.met,
            "not_met": overall.not_met,
            "by_kind": {k: t.to_json() for k, t in tally_by_kind(graded).items()},
            "by_output_type": {k: t.to_json() for k, t in tally_by_output_type(graded).items()},
        },
        "candidates": [candidate_record(item) for item in graded],
    }


def candidate_record(graded: Graded) -> dict[str, Any]:
    candidate, result = graded.candidate, graded.result
    first = result.first_difference() if result is not None else None
    return {
        "set": candidate.set_name,
        "line": candidate.line,
        "task_id": candidate.task_id,
        "against": candidate.against,
        "kind": candidate.kind,
        "label": candidate.label,
        "labels": list(graded.labels),
        "expect": {
            "outcome": candidate.expect.outcome,
            "reward": candidate.expect.reward,
            "category": candidate.expect.category,
        },
        "observed": None
        if result is None
        else {"outcome": result.outcome, "reward": result.reward, "category": str(result.category)},
        "met": graded.met,
        "reason": result.reason if result is not None else "",
        "first_difference": first.model_dump(mode="json") if first is not None else None,
        "error": graded.error,
        "seconds": round(graded.seconds, 4),
        "response": candidate.response,
        "result": result.model_dump(mode="json") if result is not None else None,
    }


def write_json(report: dict[str, Any], path: Path) -> None:
    write_private_text(path, json.dumps(report, indent=2, ensure_ascii=False) + "\n")
