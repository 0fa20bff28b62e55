"""The acceptance report's cell texts, shared by the console, Markdown and HTML views.

What it assumes: tallies and candidate records shaped as in
:mod:`critpt_grader.reports.acceptance.document`.

What it guarantees: each view only decides how to draw a cell; what a cell says is decided
once, here, as plain text (never markup), and a free-form text (a reason, an error) is one
line of at most 160 characters.
"""

from __future__ import annotations

from typing import Any

from critpt_grader.verdict import GRADER_ERROR

Row = list[str]

TALLY_HEADERS = ["candidates", "met", "not met", "expected", "observed"]
DISAGREEMENT_HEADERS = ["task", "candidate", "expected", "observed", "first difference / reason"]
_SHORTEN_AT = 160


def tally_rows(tallies: dict[str, dict[str, Any]]) -> list[Row]:
    return [
        [
            name,
            str(t["candidates"]),
            str(t["met"]),
            str(t["not_met"]),
            distribution_text(t["expected"]),
            distribution_text(t["observed"]),
        ]
        for name, t in tallies.items()
    ]


def disagreement_rows(report: dict[str, Any]) -> list[Row]:
    many_sets = len(report["sets"]) > 1
    return [
        [
            task_text(record),
            candidate_text(record, with_set=many_sets),
            verdict_text(record["expect"]),
            verdict_text(record["observed"]) if record["observed"] else GRADER_ERROR,
            difference_text(record),
        ]
        for record in report["candidates"]
        if not record["met"]
    ]


def distribution_text(counts: dict[str, int]) -> str:
    return ", ".join(f"{key} ×{n}" for key, n in counts.items())


def task_text(record: dict[str, Any]) -> str:
    if record["against"] == record["task_id"]:
        return record["task_id"]
    return f"{record['task_id']} → {record['against']}"


def candidate_text(record: dict[str, Any], *, with_set: bool = False) -> str:
    text = f"#{record['line']} {record['kind']}"
    if record["label"]:
        text += f" ({record['label']})"
    return f"{record['set']} {text}" if with_set else text


def verdict_text(verdict: dict[str, Any]) -> str:
    text = f"{verdict['outcome']} {verdict['reward']:g}"
    return f"{text} {verdict['category']}" if verdict.get("category") else text


def difference_text(record: dict[str, Any]) -> str:
    """The first differing leaf when there is one, else the result's reason or the error."""
    if record["error"]:
        return shorten(record["error"])
    leaf = record["first_difference"]
    if leaf is None:
        return shorten(record["reason"]) or "—"
    where = leaf["path"] or "(root)"
    parts = [f"{where}: expected {leaf['expected']}, observed {leaf['observed']}"]
    if leaf["reason"]:
        parts.append(f"({leaf['reason']})")
    return shorten(" ".join(parts))


def shorten(text: str, limit: int = _SHORTEN_AT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
