"""The batch results report in Markdown (for pull requests, CI summaries and notebooks)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from critpt_grader.acceptance.report_md import _table
from critpt_grader.report import text


def render_markdown(summary: dict[str, Any]) -> str:
    lines = [
        "# Batch results",
        "",
        f"**{summary['name']}** — accuracy {text.accuracy_text(summary)}.",
        "",
        text.counts_text(summary) + ".",
        "",
    ]
    lines += ["## pass@k / majority@k", ""]
    rows = text.pass_majority_rows(summary["pass_majority"])
    if rows:
        lines += [
            text.PASS_MAJORITY_NOTE,
            "",
        ]
        lines += _table(text.PASS_MAJORITY_HEADERS, rows)
    else:
        lines += ["No problem has more than one scored rollout.", ""]
    lines += ["## Verdicts by category", ""]
    lines += _table(text.CATEGORY_HEADERS, text.category_rows(summary["categories"]))
    lines += ["## Why rows were not scored", ""]
    reasons = text.reason_rows(summary["reasons"])
    lines += _table(text.REASON_HEADERS, reasons) if reasons else ["Every row was scored.", ""]
    lines += ["## Per problem", ""]
    lines += _table(text.PROBLEM_HEADERS, text.problem_rows(summary["problems"]))
    lines += ["## Slowest rows", ""]
    if summary["slowest"] is None:
        lines += [text.NO_TIMING, ""]
    else:
        lines += _table(text.SLOWEST_HEADERS, text.slowest_rows(summary["slowest"]))
    if "diff" in summary:
        lines += _diff(summary)
    return "\n".join(lines)


def write_markdown(summary: dict[str, Any], path: Path) -> None:
    path.write_text(render_markdown(summary), encoding="utf-8")


def _diff(summary: dict[str, Any]) -> list[str]:
    a, b = summary["name"], summary["other"]["name"]
    lines = [f"## {a} vs {b}", ""]
    lines += _table(["", a, b], text.side_by_side_rows(summary))
    lines += [text.diff_text(summary), ""]
    d = summary["diff"]
    if d["transitions"]:
        lines += _table(
            ["transition", "rows"], [[t["transition"], str(t["rows"])] for t in d["transitions"]]
        )
        lines += ["### Rows that changed verdict", ""]
        lines += _table(text.CHANGED_HEADERS, text.changed_rows(d["changed"]))
    return lines
