"""``report.html``: the audit as one self-contained page in the reports' style.

What it guarantees: a page drawn by :func:`critpt_grader.reports.page.page`, no script and
nothing fetched, every text escaped (a diff or a value is shown, never interpreted).
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from critpt_grader.audit.findings import AuditReport, TaskAudit
from critpt_grader.private_files import write_private_text
from critpt_grader.reports.audit import text
from critpt_grader.reports.page import page
from critpt_grader.reports.tables import html_rows, html_table


def render_html(report: AuditReport) -> str:
    totals = report.totals()
    status = "bad" if totals["weak"] or totals["preflight_failed"] else "ok"
    label = f"{totals['weak']} WEAK" if totals["weak"] else "NO SURVIVOR"
    sections = [
        f"<header><h1>Task audit</h1><span class='pill {status}'>{escape(label)}</span>"
        f"</header><p class='meta'>{escape(text.summary_line(report))}"
        + (f" · {escape(report.containment)}" if report.containment else "")
        + "</p>",
        _cards(totals),
        "<section><h2>Tasks</h2>"
        + html_table(
            text.TASK_HEADERS,
            html_rows(text.task_rows(report), text.TASK_HEADERS, text.NUMERIC),
            text.NUMERIC,
        )
        + "</section>",
    ]
    sections += [
        _task(task) for task in report.tasks if task.survivors or text.other_findings(task)
    ]
    return page("Task audit", sections)


def write_html(report: AuditReport, path: Path) -> None:
    write_private_text(path, render_html(report))


def _cards(totals: dict) -> str:
    cards = [
        ("bad" if totals["weak"] else "ok", totals["weak"], f"weak of {totals['tasks']} tasks"),
        ("", totals["mutants"], "mutants"),
        ("ok", totals["killed"], "killed"),
        ("bad" if totals["survivors"] else "", totals["survivors"], "survived"),
    ]
    return (
        "<div class='cards'>"
        + "".join(
            f"<div class='card {css}'><div class='n'>{n}</div><div class='l'>{escape(label)}"
            "</div></div>"
            for css, n, label in cards
        )
        + "</div>"
    )


def _task(task: TaskAudit) -> str:
    parts = [
        f"<section><h2>{escape(task.problem_id)} <span class='sub'>"
        f"{escape(text.verdict(task))}</span></h2>"
    ]
    for survivor in task.survivors:
        parts.append(
            f"<h3>{escape(text.survivor_title(survivor))}</h3><p>{escape(survivor.advice)}</p>"
            f"<pre class='code'>{escape(survivor.diff)}</pre>"
            + html_table(
                text.EVIDENCE_HEADERS,
                html_rows(text.evidence_rows(survivor), text.EVIDENCE_HEADERS, ()),
                (),
            )
        )
    findings = text.other_findings(task) + text.tolerance_lines(task)
    if findings:
        parts.append(
            "<ul class='sets'>" + "".join(f"<li>{escape(f)}</li>" for f in findings) + "</ul>"
        )
    return "".join(parts) + "</section>"
