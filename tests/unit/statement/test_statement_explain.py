"""``critpt-grader explain``: runs on every public fixture task and every CritPt public
challenge, and says per output what binds and why."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from critpt_grader.cli import main
from critpt_grader.commands.explain import render
from critpt_grader.policy.explain import explain
from critpt_grader.tasks import load_tasks
from tests.support.paths import REPO

PUBLIC = REPO / "fixtures" / "public" / "tasks.jsonl"
CRITPT = REPO.parent / "shared" / "critpt-public" / "public_test_challenges"


def _challenges() -> list[Path]:
    if not CRITPT.exists():
        pytest.skip("CritPt public data is not available")
    return sorted(CRITPT.glob("*.json"), key=lambda p: int(re.findall(r"\d+", p.name)[-1]))


def test_explain_runs_on_every_public_fixture_task(capsys):
    assert main(["explain", "--task", str(PUBLIC), "--json"]) == 0
    explained = json.loads(capsys.readouterr().out)["tasks"]
    tasks = load_tasks(PUBLIC)
    assert [e["task_id"] for e in explained] == [t.problem_id for t in tasks]
    for item in explained:
        assert item["value_known"] and item["outputs"]
        for output in item["outputs"]:
            assert output["tolerance"], (item["task_id"], output["name"])


@pytest.mark.slow  # explains all 70 public challenges: ~15 s
def test_explain_runs_on_every_critpt_challenge(capsys):
    challenges = _challenges()
    assert len(challenges) == 70
    for path in challenges:
        assert main(["explain", "--task", str(path)]) == 0, path.name
        text = capsys.readouterr().out
        assert text.startswith(path.stem + "_main (critpt;"), path.name


def test_explain_says_what_binds_each_output_and_why():
    (task,) = [
        t for t in load_tasks(PUBLIC) if t.problem_id == "pub-optics-etalon-figures-per-output"
    ]
    result = explain(task)
    by_name = {o.name: o for o in result.outputs}
    assert by_name["fsr"].tolerance.startswith("rtol=1e-9 (promise: 'relative error below 1e-9'")
    assert by_name["finesse"].tolerance.startswith("atol=0.0005 (promise: '3 decimal places'")
    assert by_name["contrast"].clauses[0].meaning.startswith("half a unit in the 4th")
    assert by_name["F"].clauses == []
    assert by_name["F"].tolerance.startswith("rtol=5e-12 (default; no promise read for this output")


def test_explain_lists_the_decoys_as_bound_to_nothing():
    (task,) = [t for t in load_tasks(PUBLIC) if t.problem_id == "pub-compton-decoy-precision"]
    result = explain(task)
    assert [c.phrase for c in result.unbound] == [
        "to within 0.1%",
        "three decimal places",
        "to within 0.5%",
        "9 significant figures",
    ]
    assert all(c.reason.startswith("sets nothing") for c in result.unbound)
    assert result.outputs[0].tolerance.startswith("rtol=1e-9 (promise")


def test_explain_one_task_of_a_file(capsys):
    args = ["explain", "--task", str(PUBLIC), "--problem-id", "pub-qm-two-level-decoy-conventions"]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "bound to nothing" in text and "'enumerated' says how work is done" in text
    assert main(["explain", "--task", str(PUBLIC), "--problem-id", "no-such-task"]) == 2


MANUAL_EXAMPLES = (31, 44, 61)
EXPLAIN_PAGE = REPO / "docs" / "author" / "explain.md"


@pytest.mark.parametrize("number", MANUAL_EXAMPLES)
def test_the_manual_quotes_explain_as_it_prints(number):
    _challenges()
    (task,) = load_tasks(CRITPT / f"Challenge_{number}.json")
    printed = render(explain(task))
    page = EXPLAIN_PAGE.read_text()
    stale = f"{EXPLAIN_PAGE.name}: the example for Challenge_{number} is stale"
    assert f"\n{printed}\n" in page, stale
