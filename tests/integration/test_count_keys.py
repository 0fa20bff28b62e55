"""What a row came to is spelt one way: the labels and verdict_key of critpt_grader.verdict,
and one set of count keys for batch --json, the batch report and /aggregate_metrics."""

from __future__ import annotations

import json

from critpt_grader.acceptance import summary as acceptance_summary
from critpt_grader.batch.rows import grader_error
from critpt_grader.cli import main
from critpt_grader.reports import charts
from critpt_grader.reports.batch.summary import read_out, summarize
from critpt_grader.rows.metrics import COUNT_KEYS, aggregate, row_count_key
from critpt_grader.verdict import (
    GRADER_ERROR,
    GRADER_ERROR_CATEGORY,
    VERDICT_LABELS,
    count_key,
    verdict_key,
)
from tests.support.grading import HALF

ROWS = [
    {"row": 0, "problem_id": "p", "category": "passed", "reward": 1.0},
    {"row": 1, "problem_id": "p", "category": "candidate_mismatch", "reward": 0.0},
    {"row": 2, "problem_id": "p", "category": "comparator_uncertain", "reward": 0.0},
    {"row": 3, "problem_id": "p", "category": "provider_unavailable", "reward": 0.0},
    grader_error(4, None, "boom"),
]


def test_one_verdict_key_and_one_grader_error_spelling():
    assert [verdict_key("scored", 1.0), verdict_key("scored", 0.0)] == ["scored 1", "scored 0"]
    assert verdict_key("failure", 0.0) == "failure"
    assert GRADER_ERROR in VERDICT_LABELS and count_key(GRADER_ERROR) == GRADER_ERROR_CATEGORY
    assert acceptance_summary.verdict_key is verdict_key
    assert [s.key for s in charts.SEGMENTS] == list(VERDICT_LABELS)
    assert ROWS[4]["category"] == GRADER_ERROR_CATEGORY == "grader_error"


def test_the_report_counts_by_the_same_keys_as_batch_json(tmp_path, capsys):
    source, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    right = {**HALF, "response": "```python\ndef half(n):\n    return n / 2\n```"}
    wrong = {**HALF, "response": "```python\ndef half(n):\n    return n\n```"}
    lines = [right, wrong, {"problem_id": "nope", "response": "x"}]
    source.write_text("".join(json.dumps(row) + "\n" for row in lines))
    argv = ["batch", str(source), "--out", str(out), "--json", "--backend", "in-process"]
    assert main(argv) == 0
    counts = json.loads(capsys.readouterr().out)["counts"]
    assert tuple(counts) == COUNT_KEYS
    assert counts == {"scored_1": 1, "scored_0": 1, "unscorable": 0, "failure": 0, "rejected": 1}
    report = summarize(read_out(out)[0])
    assert {key: report[key] for key in COUNT_KEYS} == counts


def test_every_row_counts_under_one_key():
    keys = [row_count_key(row) for row in ROWS]
    assert keys == ["scored_1", "scored_0", "unscorable", "failure", "rejected"]
    totals = summarize(ROWS)
    assert {key: totals[key] for key in COUNT_KEYS} == dict.fromkeys(COUNT_KEYS, 1)
    agent = aggregate(ROWS[:4])["agent_metrics"]
    assert (agent["scored"], agent["unscorable"], agent["failure"]) == (2, 1, 1)
