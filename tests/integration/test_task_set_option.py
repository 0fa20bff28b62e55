"""A task set is named one way on every command: ``--tasks TASKSET ...`` from one helper, with
the older spellings (``--task``, positional sets) still parsing."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from critpt_grader.cli import build_parser, main
from critpt_grader.commands.common import TASKS_HELP, TASKS_METAVAR, task_paths

TAKE_TASK_SETS = ("audit", "batch", "explain", "export-harbor", "grade", "reverify", "serve")


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


@pytest.mark.parametrize("name", TAKE_TASK_SETS)
def test_every_command_names_task_sets_with_the_same_option(name):
    (tasks,) = [a for a in _subparsers()[name]._actions if "--tasks" in a.option_strings]
    assert tasks.option_strings == ["--tasks", "--task"]
    assert tasks.metavar == TASKS_METAVAR and tasks.help.startswith(TASKS_HELP)
    assert tasks.nargs == "+" and tasks.type is Path


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["grade", "--task", "a.json", "--response", "r.txt"], ["a.json"]),
        (["grade", "--tasks", "a.json", "b/", "--response", "r.txt"], ["a.json", "b"]),
        (["explain", "--task", "a.json"], ["a.json"]),
        (["audit", "one.jsonl", "two/"], ["one.jsonl", "two"]),  # as before
        (["audit", "--tasks", "one.jsonl", "--tasks", "two/"], ["one.jsonl", "two"]),
        (["export-harbor", "sets/", "--out", "o"], ["sets"]),
        (["batch", "in.jsonl", "--out", "o.jsonl", "--tasks", "t.jsonl"], ["t.jsonl"]),
        (["serve", "--tasks", "t.jsonl"], ["t.jsonl"]),
    ],
)
def test_old_and_new_spellings_give_the_same_paths(argv, expected):
    args = build_parser().parse_args(argv)
    assert task_paths(args) == [Path(p) for p in expected]


def test_no_task_set_means_the_default_or_a_plain_refusal(capsys):
    assert task_paths(build_parser().parse_args(["serve"])) == []
    assert task_paths(build_parser().parse_args(["reverify", "j/"])) is None  # the journal's
    assert main(["explain"]) == 2
    assert "--tasks TASKSET" in capsys.readouterr().err
