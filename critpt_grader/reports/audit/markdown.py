"""``report.md``: the audit as GitHub-flavoured Markdown (tables via :mod:`..tables`)."""

from __future__ import annotations

from pathlib import Path

from critpt_grader.audit.findings import AuditReport
from critpt_grader.private_files import write_private_text
from critpt_grader.reports.audit import text
from critpt_grader.reports.tables import markdown_table


def render_markdown(report: AuditReport) -> str:
    lines = ["# Task audit", "", text.summary_line(report), ""]
    if report.containment:
        lines += [f"Containment: `{report.containment}`", ""]
    lines += markdown_table(text.TASK_HEADERS, text.task_rows(report))
    for task in report.tasks:
        findings = text.other_findings(task)
        if not task.survivors and not findings:
            continue
        lines += [f"## {task.problem_id} — {text.verdict(task)}", ""]
        for survivor in task.survivors:
            lines += [f"### {text.survivor_title(survivor)}", "", survivor.advice, ""]
            lines += ["```diff", survivor.diff.rstrip("\n"), "```", ""]
            lines += markdown_table(text.EVIDENCE_HEADERS, text.evidence_rows(survivor))
        lines += [f"- {line}" for line in findings]
        lines += [f"- {line}" for line in text.tolerance_lines(task)]
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def write_markdown(report: AuditReport, path: Path) -> None:
    write_private_text(path, render_markdown(report))
