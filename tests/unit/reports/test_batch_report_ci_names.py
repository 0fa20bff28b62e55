"""Each 95% interval says which it is: the batch report's card is Wilson's over rows,
``/aggregate_metrics``'s is clustered by problem (the old bare keys stay for old readers)."""

from __future__ import annotations

import pytest

from critpt_grader.reports.batch.html import render_html
from critpt_grader.reports.batch.summary import summarize, wilson
from critpt_grader.reports.batch.text import side_by_side_rows
from critpt_grader.rows.metrics import aggregate, clustered_interval
from tests.support.batch_out import synthetic_out

PROBLEMS = ["p0", "p1", "p2", "p3"]


def test_the_html_card_names_its_interval_wilson():
    summary = summarize(synthetic_out(PROBLEMS))
    page = render_html(summary)
    assert "95% CI (Wilson)" in page
    assert summary["accuracy_ci95_wilson"] == summary["accuracy_ci95"]
    assert summary["accuracy_ci95_wilson"] == pytest.approx(list(wilson(6, 14)))


def test_the_comparison_table_names_its_interval_wilson():
    summary = summarize(synthetic_out(PROBLEMS), synthetic_out(PROBLEMS, flip=3))
    labels = [row[0] for row in side_by_side_rows(summary)]
    assert "accuracy (95% Wilson CI)" in labels


def test_aggregate_metrics_names_its_interval_clustered_and_keeps_the_old_keys():
    groups = [[1.0, 0.0, 1.0], [0.0, 0.0, 1.0], [1.0, 1.0, 1.0]]
    rows = [
        {"problem_id": f"p{p}", "reward": r, "category": "passed" if r else "candidate_mismatch"}
        for p, rewards in enumerate(groups)
        for r in rewards
    ]
    agent = aggregate(rows)["agent_metrics"]
    low, high = clustered_interval(groups)
    assert agent["accuracy/ci95_clustered_low"] == pytest.approx(100 * low)
    assert agent["accuracy/ci95_clustered_high"] == pytest.approx(100 * high)
    assert agent["accuracy/ci95_low"] == agent["accuracy/ci95_clustered_low"]
    assert agent["accuracy/ci95_high"] == agent["accuracy/ci95_clustered_high"]
