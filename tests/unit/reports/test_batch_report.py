"""``critpt-grader report``: the summary of synthetic OUT rows (accuracy and its Wilson
interval, pass@k / majority@k, categories, the diff of two files) and both files written."""

from __future__ import annotations

import json
import math

import pytest

from critpt_grader.cli import main
from critpt_grader.reports.batch.html import render_html
from critpt_grader.reports.batch.markdown import render_markdown
from critpt_grader.reports.batch.summary import read_out, summarize, wilson
from critpt_grader.rows.metrics import aggregate
from tests.support.batch_out import PUBLIC_TASKS, out_row, public_problems, synthetic_out


def test_wilson_interval_matches_the_formula_and_stays_in_0_1():
    low, high = wilson(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-4) and high == pytest.approx(0.9433, abs=1e-4)
    assert wilson(0, 5)[0] == 0.0 and wilson(5, 5)[1] == pytest.approx(1.0)
    assert wilson(0, 0) is None


def test_accuracy_is_over_scored_rows_only_with_its_interval():
    rows = synthetic_out(["p0", "p1", "p2", "p3"])
    s = summarize(rows)
    # p0: 3/4, p1: 1/3 scored (1 uncertain), p2: 2/3 scored (1 unavailable), p3: 0/4
    assert (s["rows"], s["scored"], s["scored_1"], s["scored_0"]) == (17, 14, 6, 8)
    assert (s["unscorable"], s["failure"], s["rejected"]) == (1, 1, 1)
    assert s["accuracy"] == pytest.approx(6 / 14)
    assert s["accuracy_ci95"] == pytest.approx(list(wilson(6, 14)))
    assert s["max_rollouts"] == 4


def test_pass_and_majority_at_k_reuse_the_aggregate_metrics_numbers():
    rows = synthetic_out(["p0", "p1", "p2", "p3"])
    s = summarize(rows)
    agent = aggregate([r for r in rows if not r.get("rejected")])["agent_metrics"]
    # k stops at 3: p1 and p2 have three scored rollouts; every k counts all four problems
    assert s["pass_majority"]["metrics"]["pass@3/accuracy"] == agent["pass@3/accuracy"]
    assert s["pass_majority"]["metrics"]["majority@3/accuracy"] == agent["majority@3/accuracy"]
    assert "pass@4/accuracy" not in agent and agent["problems@3"] == 4
    assert s["pass_majority"]["key"]["problems@3"] == 4
    per = {p["problem_id"]: p for p in s["problems"]}
    assert per["p0"]["k"] == 4 and per["p0"]["pass_at_k"] == 100.0
    assert per["p0"]["majority_at_k"] == 100.0  # 3 of 4 passed
    assert per["p3"]["pass_at_k"] == 0.0 and per["p3"]["mean_reward"] == 0.0
    # p1: scored [0, 0, 1]: pass@3 = 1, the majority is 0
    assert per["p1"]["scored"] == 3 and per["p1"]["unscorable"] == 1
    assert (per["p1"]["pass_at_k"], per["p1"]["majority_at_k"]) == (100.0, 0.0)
    assert per["nope"]["rejected"] == 1 and per["nope"]["scored"] == 0


def test_a_single_rollout_per_problem_has_no_pass_at_k():
    rows = [out_row(i, f"p{i}", "passed") for i in range(3)]
    s = summarize(rows)
    assert s["pass_majority"] == {}
    assert "Some problem has a single scored rollout: k stops at 1." in render_markdown(s)


def test_categories_and_reasons_say_how_many_failed_and_why():
    s = summarize(synthetic_out(["p0", "p1", "p2", "p3"]))
    by = {c["category"]: c for c in s["categories"]}
    assert by["passed"]["rows"] == 6 and by["candidate_mismatch"]["rows"] == 6
    assert by["comparator_uncertain"]["outcome"] == "unscorable"
    assert by["provider_unavailable"]["outcome"] == "failure"
    assert by["unknown_problem_id"]["outcome"] == "rejected"
    assert [c["outcome"] for c in s["categories"]][:1] == ["scored"]
    reasons = {r["category"]: r for r in s["reasons"]}
    assert set(reasons) == {"comparator_uncertain", "provider_unavailable", "unknown_problem_id"}
    assert "no task set holds" in reasons["unknown_problem_id"]["reason"]


def test_slowest_rows_or_a_note_that_there_is_no_timing():
    s = summarize(synthetic_out(["p0", "p1"]))
    seconds = [r["seconds"] for r in s["slowest"]]
    assert seconds == sorted(seconds, reverse=True) and len(seconds) <= 10
    assert math.isclose(seconds[0], 0.1 + 6 * 0.3)
    untimed = summarize(synthetic_out(["p0"], timing=False))
    assert untimed["slowest"] is None
    assert "carry no timing" in render_markdown(untimed)
    assert "carry no timing" in render_html(untimed)


def test_diff_matches_rows_by_index_and_problem_and_names_the_changes():
    problems = ["p0", "p1", "p2", "p3"]
    a, b = synthetic_out(problems), synthetic_out(problems, flip=5)
    b = [*b[:-1], out_row(99, "extra", "passed")]  # one row only in B, the rejected only in A
    d = summarize(a, b, names=("model-a", "model-b"))["diff"]
    assert (d["matched"], d["only_first"], d["only_second"]) == (16, 1, 1)
    # rows 0, 5, 10, 15 flip: 0 passed→mismatch, 5 mismatch→passed, 10 passed→mismatch,
    # 15 mismatch→passed
    assert [c["row"] for c in d["changed"]] == [0, 5, 10, 15]
    assert (d["gained"], d["lost"], d["other_changes"]) == (2, 2, 0)
    assert d["changed"][0]["before"] == "passed (1)"
    assert d["changed"][0]["after"] == "candidate_mismatch (0)"
    assert d["unchanged"] == 12


def test_a_row_index_reused_by_another_problem_is_not_matched():
    a = [out_row(0, "p0", "passed")]
    b = [out_row(0, "p1", "candidate_mismatch")]
    d = summarize(a, b)["diff"]
    assert (d["matched"], d["only_first"], d["only_second"]) == (0, 1, 1)


def test_html_escapes_row_text_and_loads_nothing(tmp_path):
    rows = [out_row(0, "<script>alert(1)</script>", "passed")]
    page = render_html(summarize(rows, rows))
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "http://" not in page and "https://" not in page and "src=" not in page


def test_read_out_skips_a_torn_last_line(tmp_path):
    path = tmp_path / "out.jsonl"
    rows = synthetic_out(["p0"])
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + '{"row": 9, "rew')
    read, skipped = read_out(path)
    assert len(read) == len(rows) and skipped == 1


def test_the_command_writes_both_files_for_a_public_batch_with_rollouts(tmp_path, capsys):
    problems = public_problems(24)
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text("".join(json.dumps(r) + "\n" for r in synthetic_out(problems)))
    second.write_text("".join(json.dumps(r) + "\n" for r in synthetic_out(problems, flip=7)))
    out = tmp_path / "report"
    assert main(["report", str(first), str(second), "--out", str(out)]) == 0
    line = capsys.readouterr().out
    assert "report: 97 rows, 84 scored" in line and "gained" in line
    markdown = (out / "report.md").read_text()
    for heading in (
        "## pass@k / majority@k",
        "## Verdicts by category",
        "## Why rows were not scored",
        "## Per problem",
        "## Slowest rows",
        "## a.jsonl vs b.jsonl",
        "### Rows that changed verdict",
    ):
        assert heading in markdown
    assert problems[0] in markdown and "95% Wilson CI" in markdown
    assert "97 rows over 25 problems: 36 passed, 48 scored 0" in markdown
    page = (out / "report.html").read_text()
    assert page.count("<svg") == 2 and page.count("<table>") >= 7


def test_the_command_refuses_missing_or_too_many_files(tmp_path, capsys):
    assert main(["report", str(tmp_path / "none.jsonl"), "--out", str(tmp_path)]) == 2
    assert "no such file" in capsys.readouterr().err
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert main(["report", str(empty), "--out", str(tmp_path)]) == 2
    assert "no OUT rows" in capsys.readouterr().err
    assert main(["report", str(empty)] * 3) == 2


def test_a_real_batch_of_public_rows_with_several_rollouts_reports(tmp_path, capsys):
    from critpt_grader.commands.batch import batch
    from critpt_grader.settings import Settings

    candidates = PUBLIC_TASKS.with_name("candidates.jsonl")
    problems = set(public_problems(6))
    lines = []
    with candidates.open() as file:
        for line in file:
            candidate = json.loads(line)
            slow = candidate["expect"].get("category") in ("candidate_timeout", "candidate_memory")
            if candidate["against"] in problems and not slow:
                body = {"problem_id": candidate["against"], "response": candidate["response"]}
                lines.append(json.dumps(body) + "\n")
    source, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    source.write_text("".join(lines))
    fast = Settings(backend="in-process", compare_in_process=True, case_seconds=5)
    assert batch(source, out, tasks=[str(PUBLIC_TASKS)], settings=fast, progress=False) == 0
    assert main(["report", str(out), "--out", str(tmp_path / "report")]) == 0
    summary = summarize(read_out(out)[0])
    assert summary["rows"] == len(lines) and summary["max_rollouts"] > 1
    graded = [r for r in read_out(out)[0] if not r.get("rejected")]
    family = aggregate(graded)["agent_metrics"]
    assert bool(summary["pass_majority"]) == ("pass@2/accuracy" in family)
    assert summary["slowest"]
    # Where each row's time went: every graded row ran and was compared.
    phases = {p["phase"]: p for p in summary["phases"]}
    assert {"run", "compare", "total"} <= set(phases)
    assert phases["total"]["median"] >= phases["compare"]["median"]
    assert "Where the time went, per phase" in (tmp_path / "report" / "report.md").read_text()
    assert (tmp_path / "report" / "report.md").read_text().count("| pub-") >= len(problems)
    assert "<svg" in (tmp_path / "report" / "report.html").read_text()
