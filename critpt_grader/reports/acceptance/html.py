"""The acceptance report as one self-contained HTML page.

What it assumes: ``report`` is the document of :mod:`critpt_grader.reports.acceptance.document`.

What it guarantees: a page drawn by :func:`critpt_grader.reports.page.page`, with inline CSS
and inline SVG only (no script, no font, image or stylesheet from anywhere), so the file reads
the same offline, attached to a CI run, or years later. Every piece of text from the report
is escaped; candidate responses are never embedded as markup.
"""

from __future__ import annotations

from datetime import UTC, datetime
from html import escape
from pathlib import Path
from typing import Any

from critpt_grader.private_files import write_private_text
from critpt_grader.reports.acceptance.text import (
    DISAGREEMENT_HEADERS,
    TALLY_HEADERS,
    candidate_text,
    difference_text,
    tally_rows,
)
from critpt_grader.reports.charts import BarRow, stacked_bar_chart
from critpt_grader.reports.page import page
from critpt_grader.reports.tables import html_table
from critpt_grader.verdict import GRADER_ERROR

_NUMERIC = frozenset({"candidates", "met", "not met", "time"})


def render_html(report: dict[str, Any]) -> str:
    summary = report["summary"]
    body = [
        _header(report),
        _cards(report),
        _sets(report),
        _charts(summary),
        _tally_section("Agreement per kind", "kind", summary["by_kind"]),
        _tally_section("Agreement per output type", "output type", summary["by_output_type"]),
        _disagreements(report),
        _all_candidates(report),
    ]
    return page(f"Acceptance report · {_status(report)}", body)


def write_html(report: dict[str, Any], path: Path) -> None:
    write_private_text(path, render_html(report))


def _status(report: dict[str, Any]) -> str:
    return "PASSED" if report["passed"] else "FAILED"


def _header(report: dict[str, Any]) -> str:
    css = "ok" if report["passed"] else "bad"
    return (
        f'<header><h1>Acceptance report</h1><span class="pill {css}">{_status(report)}</span>'
        f'</header><p class="meta">Generated {escape(_readable_time(report["generated_at"]))} · '
        f"graded in {report['duration_seconds']:.1f} s</p>"
    )


def _readable_time(iso: str) -> str:
    try:
        moment = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _cards(report: dict[str, Any]) -> str:
    summary = report["summary"]
    cards = [
        ("", summary["candidates"], "candidates"),
        ("ok", summary["met"], "expectations met"),
        ("bad" if summary["not_met"] else "ok", summary["not_met"], "not met"),
        ("", sum(s["tasks"] for s in report["sets"]), "tasks"),
    ]
    inner = "".join(
        f'<div class="card {css}"><div class="n">{n}</div>'
        f'<div class="l">{escape(label)}</div></div>'
        for css, n, label in cards
    )
    return f'<div class="cards">{inner}</div>'


def _sets(report: dict[str, Any]) -> str:
    items = []
    for s in report["sets"]:
        about = f" — {escape(s['description'])}" if s["description"] else ""
        items.append(
            f"<li><b>{escape(s['name'])}</b>: {s['tasks']} tasks, {s['selected']} of "
            f"{s['candidates']} candidates graded{about}</li>"
        )
    for s in report["skipped_sets"]:
        items.append(
            f'<li class="skipped"><b>{escape(s["name"])}</b> skipped: {escape(s["reason"])}</li>'
        )
    filters = report["filters"]
    if filters["kinds"] is not None or filters["tasks"] is not None:
        kinds = ", ".join(filters["kinds"] or ["all"])
        tasks = ", ".join(filters["tasks"] or ["all"])
        items.append(f"<li>filters: kinds {escape(kinds)}; tasks {escape(tasks)}</li>")
    return f'<section><h2>Sets</h2><ul class="sets">{"".join(items)}</ul></section>'


def _charts(summary: dict[str, Any]) -> str:
    charts = [
        _chart_block("Observed verdicts per kind", summary["by_kind"]),
    ]
    if summary["by_output_type"]:
        charts.append(_chart_block("Observed verdicts per output type", summary["by_output_type"]))
    return f'<section class="charts">{"".join(charts)}</section>'


def _chart_block(title: str, tallies: dict[str, dict[str, Any]]) -> str:
    rows = [BarRow(name, t["observed"], t["not_met"]) for name, t in tallies.items()]
    return f"<div><h2>{escape(title)}</h2>{stacked_bar_chart(title, rows)}</div>"


def _tally_section(title: str, first: str, tallies: dict[str, dict[str, Any]]) -> str:
    if not tallies:
        return (
            f"<section><h2>{escape(title)}</h2><p class='empty'>No set carries a labels.json; "
            "output types are unknown.</p></section>"
        )
    body = []
    for name, count, met, not_met, expected, observed in tally_rows(tallies):
        bad = " bad" if not_met != "0" else ""
        body.append(
            f"<tr><td>{escape(name)}</td><td class='num'>{count}</td><td class='num'>{met}</td>"
            f"<td class='num{bad}'>{not_met}</td><td>{escape(expected)}</td>"
            f"<td>{escape(observed)}</td></tr>"
        )
    table = html_table([first, *TALLY_HEADERS], body, _NUMERIC)
    return f"<section><h2>{escape(title)}</h2>{table}</section>"


def _disagreements(report: dict[str, Any]) -> str:
    records = [r for r in report["candidates"] if not r["met"]]
    title = f"Disagreements ({len(records)})"
    if not records:
        return (
            f"<section><h2>{title}</h2><p class='empty'>None: every expectation met.</p></section>"
        )
    many_sets = len(report["sets"]) > 1
    body = [
        f"<tr><td class='code id'>{_task_cell(r)}</td>"
        f"<td>{escape(candidate_text(r, with_set=many_sets))}</td>"
        f"<td>{_verdict_cell(r['expect'])}</td><td class='bad'>{_observed_cell(r)}</td>"
        f"<td class='code'>{escape(difference_text(r))}</td></tr>"
        for r in records
    ]
    table = html_table(DISAGREEMENT_HEADERS, body, _NUMERIC)
    return f"<section><h2>{title}</h2>{table}</section>"


def _all_candidates(report: dict[str, Any]) -> str:
    many_sets = len(report["sets"]) > 1
    body = []
    for record in report["candidates"]:
        mark = (
            '<span class="mark ok">✓</span>' if record["met"] else '<span class="mark bad">✗</span>'
        )
        body.append(
            f"<tr><td>{mark}</td><td class='code id'>{_task_cell(record)}</td>"
            f"<td>{escape(candidate_text(record, with_set=many_sets))}</td>"
            f"<td>{_verdict_cell(record['expect'], compact=True)}</td>"
            f"<td>{_observed_cell(record, compact=True)}</td>"
            f"<td class='num'>{record['seconds']:.2f} s</td></tr>"
        )
    headers = ["", "task", "candidate", "expected", "observed", "time"]
    return (
        f"<section><details><summary>All candidates ({len(body)})</summary>"
        f"{html_table(headers, body, _NUMERIC)}</details></section>"
    )


def _task_cell(record: dict[str, Any]) -> str:
    cell = escape(record["task_id"])
    if record["against"] != record["task_id"]:
        cell += f"<br><span class='sub'>against {escape(record['against'])}</span>"
    return cell


def _verdict_cell(verdict: dict[str, Any], *, compact: bool = False) -> str:
    cell = f"<b>{escape(verdict['outcome'])} {verdict['reward']:g}</b>"
    if verdict.get("category"):
        cell += " " if compact else "<br>"
        cell += f"<span class='sub'>{escape(verdict['category'])}</span>"
    return cell


def _observed_cell(record: dict[str, Any], *, compact: bool = False) -> str:
    if record["observed"] is None:
        return f"<b>{GRADER_ERROR}</b>"
    return _verdict_cell(record["observed"], compact=compact)
