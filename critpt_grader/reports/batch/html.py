"""The batch results report as one self-contained HTML page, in the acceptance report's style.

What it assumes: ``summary`` is the dict of :func:`critpt_grader.reports.batch.summary.summarize`.

What it guarantees: a page drawn by :func:`critpt_grader.reports.page.page` with the shared
tables and charts, inline CSS and inline SVG only (no script, no external resource), every
text from the OUT rows escaped; at most :data:`PROBLEMS_CHARTED` problems are charted (the
ones with most rollouts), while the per-problem table lists them all.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from critpt_grader.private_files import write_private_text
from critpt_grader.reports.batch import text
from critpt_grader.reports.charts import BarRow, stacked_bar_chart
from critpt_grader.reports.page import page
from critpt_grader.reports.tables import html_rows, html_table

PROBLEMS_CHARTED = 60  # more problems than this: the chart shows the ones with most rollouts

_NUMERIC = frozenset(
    {
        "rollouts",
        "scored",
        "scored 1",
        "unscorable",
        "failure",
        "rejected",
        "mean reward",
        "pass@k",
        "majority@k",
        "rows",
        "share",
        "seconds",
        "row",
        "pass@1[avg-of-k]",
        "k",
    }
)


def render_html(summary: dict[str, Any]) -> str:
    body = [
        _header(summary),
        _cards(summary),
        _charts(summary),
        _pass_majority(summary),
        _section(
            "Verdicts by category", text.CATEGORY_HEADERS, text.category_rows(summary["categories"])
        ),
        _reasons(summary),
        _problems(summary),
        _slowest(summary),
    ]
    if "diff" in summary:
        body.append(_diff(summary))
    return page(f"Batch results · {escape(summary['name'])}", body)


def write_html(summary: dict[str, Any], path: Path) -> None:
    write_private_text(path, render_html(summary))


def _header(summary: dict[str, Any]) -> str:
    return (
        f"<header><h1>Batch results</h1></header><p class='meta'>{escape(summary['name'])} · "
        f"{escape(text.counts_text(summary))}</p>"
    )


def _cards(summary: dict[str, Any]) -> str:
    low_high = summary["accuracy_ci95"]
    # Wilson over rows; /aggregate_metrics' accuracy/ci95_clustered is by problem.
    ci = (
        f"95% CI (Wilson) {text.percent(low_high[0])}–{text.percent(low_high[1])}"
        if low_high
        else ""
    )
    cards = [
        ("ok", text.percent(summary["accuracy"]), f"accuracy · {ci}" if ci else "accuracy"),
        ("", summary["scored"], f"scored of {summary['rows']} rows"),
        ("bad" if summary["unscorable"] else "", summary["unscorable"], "unscorable"),
        (
            "bad" if summary["failure"] + summary["rejected"] else "",
            summary["failure"] + summary["rejected"],
            "failure or rejected",
        ),
    ]
    inner = "".join(
        f'<div class="card {css}"><div class="n">{escape(str(n))}</div>'
        f'<div class="l">{escape(label)}</div></div>'
        for css, n, label in cards
    )
    return f'<div class="cards">{inner}</div>'


def _charts(summary: dict[str, Any]) -> str:
    files = [_file_bar(summary)]
    if "other" in summary:
        files.append(_file_bar(summary["other"]))
    blocks = [_chart("Verdicts overall", files)]
    problems = sorted(summary["problems"], key=lambda p: (-p["rollouts"], p["problem_id"]))
    shown = sorted(problems[:PROBLEMS_CHARTED], key=lambda p: p["problem_id"])
    rows = [BarRow(_clip(p["problem_id"]), p["verdicts"], 0, _problem_note(p)) for p in shown]
    title = "Verdicts per problem"
    if len(problems) > PROBLEMS_CHARTED:
        title += f" (the {PROBLEMS_CHARTED} with most rollouts of {len(problems)})"
    blocks.append(_chart(title, rows))
    return f'<section class="charts">{"".join(blocks)}</section>'


def _file_bar(totals: dict[str, Any]) -> BarRow:
    scored, passed = totals["scored"], totals["scored_1"]
    note = f"{passed}/{scored} passed" if scored else "none scored"
    return BarRow(totals["name"], totals["verdicts"], 0, note)


def _clip(label: str, limit: int = 25) -> str:
    """Short enough for the chart's label column (its own clip, at 28, can overflow it)."""
    return label if len(label) <= limit else label[: limit - 1] + "…"


def _problem_note(problem: dict[str, Any]) -> str:
    passed = problem["scored_1"]
    return f"{passed}/{problem['scored']} passed" if problem["scored"] else "none scored"


def _chart(title: str, rows: list[BarRow]) -> str:
    return f"<div><h2>{escape(title)}</h2>{stacked_bar_chart(title, rows)}</div>"


def _pass_majority(summary: dict[str, Any]) -> str:
    rows = text.pass_majority_rows(summary["pass_majority"])
    if not rows:
        return _empty(
            "pass@k / majority@k", "Some problem has a single scored rollout: k stops at 1."
        )
    note = f"<p class='meta'>{escape(text.PASS_MAJORITY_NOTE.replace('`', ''))}</p>"
    return _section("pass@k / majority@k", text.PASS_MAJORITY_HEADERS, rows, note)


def _reasons(summary: dict[str, Any]) -> str:
    rows = text.reason_rows(summary["reasons"])
    if not rows:
        return _empty("Why rows were not scored", "Every row was scored.")
    return _section("Why rows were not scored", text.REASON_HEADERS, rows)


def _problems(summary: dict[str, Any]) -> str:
    rows = text.problem_rows(summary["problems"])
    return _section(f"Per problem ({len(rows)})", text.PROBLEM_HEADERS, rows)


def _slowest(summary: dict[str, Any]) -> str:
    if summary["slowest"] is None:
        return _empty("Slowest rows", text.NO_TIMING.replace("`", ""))
    slowest = _section("Slowest rows", text.SLOWEST_HEADERS, text.slowest_rows(summary["slowest"]))
    if not summary.get("phases"):
        return slowest
    phases = text.phase_rows(summary["phases"])
    return slowest + _section("Where the time went, per phase", text.PHASE_HEADERS, phases)


def _diff(summary: dict[str, Any]) -> str:
    a, b = summary["name"], summary["other"]["name"]
    d = summary["diff"]
    parts = [
        f"<h2>{escape(a)} vs {escape(b)}</h2>",
        html_table(
            ["", a, b],
            html_rows(text.side_by_side_rows(summary), ["", a, b], frozenset({a, b})),
            frozenset({a, b}),
        ),
        f"<p class='meta' style='margin-top:12px'>{escape(text.diff_text(summary))}</p>",
    ]
    if d["transitions"]:
        transitions = [[t["transition"], str(t["rows"])] for t in d["transitions"]]
        headers = ["transition", "rows"]
        parts.append(html_table(headers, html_rows(transitions, headers, _NUMERIC), _NUMERIC))
        parts.append("<h2 style='margin-top:18px'>Rows that changed verdict</h2>")
        parts.append(
            html_table(
                text.CHANGED_HEADERS,
                html_rows(text.changed_rows(d["changed"]), text.CHANGED_HEADERS, _NUMERIC),
                _NUMERIC,
            )
        )
    only = text.only_rows(summary)
    if only:
        parts.append("<h2 style='margin-top:18px'>Rows in one file only</h2>")
        parts.append(
            html_table(text.ONLY_HEADERS, html_rows(only, text.ONLY_HEADERS, _NUMERIC), _NUMERIC)
        )
    return f"<section>{''.join(parts)}</section>"


def _section(title: str, headers: list[str], rows: list[list[str]], note: str = "") -> str:
    return (
        f"<section><h2>{escape(title)}</h2>{note}"
        f"{html_table(headers, html_rows(rows, headers, _NUMERIC), _NUMERIC)}</section>"
    )


def _empty(title: str, message: str) -> str:
    return f"<section><h2>{escape(title)}</h2><p class='empty'>{escape(message)}</p></section>"
