"""The batch results report in Markdown (for pull requests, CI summaries and notebooks).

What it assumes: ``summary`` is the dict of :func:`critpt_grader.reports.batch.summary.summarize`.

What it guarantees: the HTML page's tables and wording without its cards and charts (the
cells come from :mod:`.text`), drawn by :func:`critpt_grader.reports.tables.markdown_table`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from critpt_grader.private_files import write_private_text
from critpt_grader.reports.batch import text
from critpt_grader.reports.tables import markdown_table


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
        lines += markdown_table(text.PASS_MAJORITY_HEADERS, rows)
    else:
        lines += ["Some problem has a single scored rollout: k stops at 1.", ""]
    lines += ["## Verdicts by category", ""]
    lines += markdown_table(text.CATEGORY_HEADERS, text.category_rows(summary["categories"]))
    lines += ["## Why rows were not scored", ""]
    reasons = text.reason_rows(summary["reasons"])
    lines += (
        markdown_table(text.REASON_HEADERS, reasons) if reasons else ["Every row was scored.", ""]
    )
    lines += ["## Per problem", ""]
    lines += markdown_table(text.PROBLEM_HEADERS, text.problem_rows(summary["problems"]))
    lines += ["## Slowest rows", ""]
    if summary["slowest"] is None:
        lines += [text.NO_TIMING, ""]
    else:
        lines += markdown_table(text.SLOWEST_HEADERS, text.slowest_rows(summary["slowest"]))
    if summary.get("phases"):
        lines += ["## Where the time went, per phase", ""]
        lines += markdown_table(text.PHASE_HEADERS, text.phase_rows(summary["phases"]))
    if "diff" in summary:
        lines += _diff(summary)
    return "\n".join(lines)


def write_markdown(summary: dict[str, Any], path: Path) -> None:
    write_private_text(path, render_markdown(summary))


def _diff(summary: dict[str, Any]) -> list[str]:
    a, b = summary["name"], summary["other"]["name"]
    lines = [f"## {a} vs {b}", ""]
    lines += markdown_table(["", a, b], text.side_by_side_rows(summary))
    lines += [text.diff_text(summary), ""]
    d = summary["diff"]
    if d["transitions"]:
        lines += markdown_table(
            ["transition", "rows"], [[t["transition"], str(t["rows"])] for t in d["transitions"]]
        )
        lines += ["### Rows that changed verdict", ""]
        lines += markdown_table(text.CHANGED_HEADERS, text.changed_rows(d["changed"]))
    only = text.only_rows(summary)
    if only:
        lines += ["### Rows in one file only", ""]
        lines += markdown_table(text.ONLY_HEADERS, only)
    return lines
