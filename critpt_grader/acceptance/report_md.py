"""The acceptance report in Markdown: the console's tables, for pull requests and CI summaries."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from critpt_grader.acceptance.tables import (
    DISAGREEMENT_HEADERS,
    TALLY_HEADERS,
    disagreement_rows,
    tally_rows,
)


def render_markdown(report: dict[str, Any]) -> str:
    summary = report["summary"]
    status = "PASSED" if report["passed"] else "FAILED"
    lines = [
        "# Acceptance report",
        "",
        f"**{status}**: {summary['met']} of {summary['candidates']} expectations met, "
        f"{summary['not_met']} not met. Generated {report['generated_at']} "
        f"in {report['duration_seconds']:.1f} s.",
        "",
    ]
    lines += _sets_section(report)
    lines += ["## Agreement per kind", ""]
    lines += _table(["kind", *TALLY_HEADERS], tally_rows(summary["by_kind"]))
    lines += ["## Agreement per output type", ""]
    if summary["by_output_type"]:
        lines += _table(["output type", *TALLY_HEADERS], tally_rows(summary["by_output_type"]))
    else:
        lines += ["No set carries a `labels.json`; output types are unknown.", ""]
    lines += ["## Disagreements", ""]
    rows = disagreement_rows(report)
    lines += _table(DISAGREEMENT_HEADERS, rows) if rows else ["None: every expectation met.", ""]
    return "\n".join(lines)


def write_markdown(report: dict[str, Any], path: Path) -> None:
    path.write_text(render_markdown(report), encoding="utf-8")


def _sets_section(report: dict[str, Any]) -> list[str]:
    lines = ["## Sets", ""]
    for s in report["sets"]:
        about = f": {s['description']}" if s["description"] else ""
        lines.append(
            f"- `{s['name']}` ({s['tasks']} tasks, {s['selected']} of {s['candidates']} "
            f"candidates graded){about}"
        )
    for s in report["skipped_sets"]:
        lines.append(f"- `{s['name']}` skipped: {s['reason']}")
    filters = report["filters"]
    if filters["kinds"] is not None or filters["tasks"] is not None:
        lines.append(
            f"- filters: kinds {filters['kinds'] or 'all'}, tasks {filters['tasks'] or 'all'}"
        )
    return [*lines, ""]


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return [*lines, ""]


def _cell(text: str) -> str:
    # A pipe would end the cell and a newline the row; backticks keep leaf values readable.
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
