"""The acceptance report in Markdown: the console's tables, for pull requests and CI summaries.

What it assumes: ``report`` is the document of :mod:`critpt_grader.reports.acceptance.document`.

What it guarantees: the same tables and wording as the console and the HTML page (the cells
come from :mod:`.text`), drawn by :func:`critpt_grader.reports.tables.markdown_table`, so no
text from the report can break a table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from critpt_grader.private_files import write_private_text
from critpt_grader.reports.acceptance.text import (
    DISAGREEMENT_HEADERS,
    TALLY_HEADERS,
    disagreement_rows,
    tally_rows,
)
from critpt_grader.reports.tables import markdown_table


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
    lines += markdown_table(["kind", *TALLY_HEADERS], tally_rows(summary["by_kind"]))
    lines += ["## Agreement per output type", ""]
    if summary["by_output_type"]:
        lines += markdown_table(
            ["output type", *TALLY_HEADERS], tally_rows(summary["by_output_type"])
        )
    else:
        lines += ["No set carries a `labels.json`; output types are unknown.", ""]
    lines += ["## Disagreements", ""]
    rows = disagreement_rows(report)
    lines += (
        markdown_table(DISAGREEMENT_HEADERS, rows) if rows else ["None: every expectation met.", ""]
    )
    return "\n".join(lines)


def write_markdown(report: dict[str, Any], path: Path) -> None:
    write_private_text(path, render_markdown(report))


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
