"""The report document and its Markdown, HTML and SVG renderings."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from critpt_grader.acceptance.sets import Expected, load_set
from critpt_grader.acceptance.summary import UNLABELLED
from critpt_grader.reports.acceptance.document import RunContext, build_report
from critpt_grader.reports.acceptance.html import render_html
from critpt_grader.reports.acceptance.markdown import render_markdown
from critpt_grader.reports.charts import BarRow, stacked_bar_chart, tick_step
from critpt_grader.result import GradeResult
from critpt_grader.verdict import Category
from tests.support.acceptance_fakes import MINI_SET, fake_loader, graded, mismatch

ZERO = Expected("scored", 0.0, "candidate_mismatch")


def _report(items, sets=None, skipped=()):
    sets = sets or [load_set(MINI_SET, load_tasks=fake_loader)]
    context = RunContext(sets, list(skipped), None, None, datetime(2026, 11, 30, tzinfo=UTC), 1.5)
    for item in items:
        object.__setattr__(item.candidate, "set_name", sets[0].name)
    return build_report(context, items)


def _mixed():
    return [
        graded("reference", labels=("float",), line=1),
        graded("canary", mismatch(), expect=ZERO, labels=("float", "promise"), line=2),
        # wrong: the canary passed
        graded("canary", expect=ZERO, labels=("int",), line=3, label="sign | flip"),
        graded("fault", error="RuntimeError: boom", expect=ZERO, line=4),
        graded(
            "equivalent",
            GradeResult.of(Category.COMPARATOR_UNCERTAIN, reason="case 1: undecided"),
            labels=("set_expr",),
            line=5,
        ),
    ]


def test_report_counts_per_kind_and_output_type():
    report = _report(_mixed())
    summary = report["summary"]
    assert (summary["candidates"], summary["met"], summary["not_met"]) == (5, 2, 3)
    assert report["passed"] is False
    canary = summary["by_kind"]["canary"]
    assert (canary["candidates"], canary["met"], canary["not_met"]) == (2, 1, 1)
    assert canary["expected"] == {"scored 0": 2}
    assert canary["observed"] == {"scored 1": 1, "scored 0": 1}
    assert list(summary["by_kind"]) == ["reference", "equivalent", "canary", "fault"]
    assert summary["by_kind"]["fault"]["observed"] == {"grader error": 1}
    by_type = summary["by_output_type"]
    assert by_type["float"]["candidates"] == 2  # a candidate counts under each of its labels
    assert by_type[UNLABELLED]["candidates"] == 1
    assert list(by_type)[-1] == UNLABELLED


def test_report_is_json_and_keeps_the_full_result():
    report = json.loads(json.dumps(_report(_mixed())))
    record = report["candidates"][1]
    assert record["met"] is True
    assert record["observed"] == {
        "outcome": "scored",
        "reward": 0.0,
        "category": "candidate_mismatch",
    }
    assert record["first_difference"]["path"] == "/0"
    assert record["result"]["cases"][0]["leaves"][0]["observed"] == "3.0"
    assert report["candidates"][3]["result"] is None
    assert report["candidates"][3]["error"] == "RuntimeError: boom"


def test_no_labels_means_no_output_type_summary():
    report = _report([graded("reference")])
    assert report["summary"]["by_output_type"] == {}
    assert report["passed"] is True
    assert "output types are unknown" in render_markdown(report)


def test_markdown_lists_each_disagreement_with_its_first_difference():
    text = render_markdown(_report(_mixed()))
    assert "**FAILED**: 2 of 5 expectations met, 3 not met" in text
    disagreements = text.split("## Disagreements", 1)[1]
    assert "#3 canary (sign \\| flip)" in disagreements  # a pipe must not split the cell
    assert "scored 0 candidate_mismatch | scored 1 passed" in disagreements
    assert "RuntimeError: boom" in disagreements
    assert "case 1: undecided" in disagreements
    assert "#1 reference" not in disagreements
    rows = [line for line in disagreements.splitlines() if line.startswith("| ")]
    assert all(row.count(" | ") == 4 for row in rows[1:])


def test_html_is_self_contained_and_escapes_text():
    items = _mixed()
    items[2] = graded("canary", expect=ZERO, line=3, label="<script>alert(1)</script>")
    page = render_html(_report(items))
    assert page.startswith("<!DOCTYPE html>")
    assert "<script" not in page
    assert "&lt;script&gt;" in page
    assert not re.search(r"""(src|href)\s*=|url\(|@import|http""", page, re.IGNORECASE)
    assert page.count("<svg") == 2  # per kind and per output type
    assert "Disagreements (3)" in page


def test_chart_segments_are_proportional_to_counts():
    svg = stacked_bar_chart("t", [BarRow("canary", {"scored 0": 30, "scored 1": 10}, 10)])
    bars = re.findall(r'<rect x="[\d.]+" y="\d+" width="([\d.]+)" height="18"', svg)
    widths = [float(w) for w in bars]
    assert len(widths) == 2  # the legend's swatches are smaller and not counted
    assert abs(widths[1] / widths[0] - 3.0) < 0.01  # ordered: scored 1, then scored 0
    assert "10 not met" in svg


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=0, max_value=10**6))
def test_tick_step_gives_a_handful_of_round_gridlines(largest):
    step = tick_step(largest)
    digits = str(step).rstrip("0")
    assert digits in {"1", "2", "5"}
    assert -(-largest // step) <= 10
