"""``explain --json`` prints one JSON object, as every other command does: the explanations
under ``tasks`` and their ``totals``."""

from __future__ import annotations

import json

from critpt_grader.cli import main
from tests.support.paths import PUBLIC_TASKS

PUBLIC = PUBLIC_TASKS


def test_explain_json_is_one_object_with_the_tasks_and_totals(capsys):
    assert main(["explain", "--task", str(PUBLIC), "--json"]) == 0
    printed = capsys.readouterr().out
    assert printed.count("\n") == 1  # one line: one object
    document = json.loads(printed)
    assert isinstance(document, dict)
    tasks = document["tasks"]
    assert document["totals"]["tasks"] == len(tasks) > 1
    assert document["totals"]["outputs"] == sum(len(t["outputs"]) for t in tasks)


def test_explain_json_of_one_task_is_an_object_too(capsys):
    args = ["explain", "--task", str(PUBLIC), "--problem-id", "pub-compton-decoy-precision"]
    assert main([*args, "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert [t["task_id"] for t in document["tasks"]] == ["pub-compton-decoy-precision"]
    assert document["totals"]["unbound"] == 4
