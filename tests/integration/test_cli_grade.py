"""``critpt-grader grade``: a verdict is exit 0 with JSON; unusable input is one line, exit 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from critpt_grader.cli import main
from tests.support.paths import REPO

PUBLIC_TASKS = REPO / "fixtures" / "public" / "tasks.jsonl"
ROW = {
    "task_data": {
        "schema_version": 1,
        "problem_id": "cli-double",
        "entrypoint": "double",
        "reference_source": "def double(n):\n    return 2 * n\n",
        "test_cases": [
            {
                "args": [{"format": "critpt-value-v1", "value": ["int", "21"]}],
                "expected": {
                    "kind": "value",
                    "value": {"format": "critpt-value-v1", "value": ["int", "42"]},
                },
            }
        ],
    }
}


@pytest.fixture
def task_file(tmp_path):
    path = tmp_path / "task.json"
    path.write_text(json.dumps(ROW))
    return path


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def grade_json(capsys, task, response, *extra: str) -> dict:
    """Run ``critpt-grader grade --json`` in-process; a verdict must exit 0."""
    argv = ["grade", "--task", str(task), "--response", str(response), "--json", *extra]
    assert main([*argv, "--backend", "in-process"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("code, reward", [("return n + n", 1.0), ("return n * 3", 0.0)])
def test_verdicts_print_json_and_exit_zero(tmp_path, task_file, capsys, code, reward):
    response = write(tmp_path, "answer.md", f"```python\ndef double(n):\n    {code}\n```")
    result = grade_json(capsys, task_file, response)
    assert {"outcome", "reward", "category", "failure_kind", "terminal"} <= set(result)
    assert result["reward"] == reward and result["outcome"] == "scored"


def test_responses_api_json_is_read_and_incomplete_is_a_failure(tmp_path, task_file, capsys):
    response = write(tmp_path, "r.json", json.dumps({"status": "incomplete", "output": []}))
    result = grade_json(capsys, task_file, response)
    assert result["outcome"] == "failure"
    assert result["failure_kind"] == "critpt_grader:response_incomplete"


def test_problem_id_picks_one_task_of_a_jsonl(tmp_path, capsys):
    response = write(tmp_path, "a.txt", "no code here, just words")
    result = grade_json(capsys, PUBLIC_TASKS, response, "--problem-id", "pub-at-hund-ground-term")
    assert result["category"] == "candidate_source_missing"


@pytest.mark.parametrize(
    "task_text, fragment",
    [
        ("not json", "not valid JSON"),
        ('{"task_data": {"schema_version": 1, "problem_id": "x", "colour": 1}}', "'colour'"),
        ('{"a": 1, "a": 2}', "duplicate key"),
    ],
)
def test_bad_task_is_one_line_and_exit_two(tmp_path, capsys, task_text, fragment):
    task = write(tmp_path, "task.json", task_text)
    response = write(tmp_path, "a.txt", "x")
    assert main(["grade", "--task", str(task), "--response", str(response)]) == 2
    err = capsys.readouterr().err
    assert fragment in err and len(err.strip().splitlines()) == 1


def test_several_tasks_without_problem_id_and_unknown_id_exit_two(tmp_path, capsys):
    response = write(tmp_path, "a.txt", "x")
    assert main(["grade", "--task", str(PUBLIC_TASKS), "--response", str(response)]) == 2
    assert "--problem-id" in capsys.readouterr().err
    assert (
        main(
            [
                "grade",
                "--task",
                str(PUBLIC_TASKS),
                "--problem-id",
                "nope",
                "--response",
                str(response),
            ]
        )
        == 2
    )
    assert "nope" in capsys.readouterr().err


def test_missing_files_exit_two_without_traceback(tmp_path):
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "critpt_grader.cli",
            "grade",
            "--task",
            str(tmp_path / "missing.json"),
            "--response",
            str(tmp_path / "missing.txt"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert completed.returncode == 2
    assert "Traceback" not in completed.stderr
    assert len(completed.stderr.strip().splitlines()) == 1


@pytest.mark.sandbox
def test_grades_through_the_local_sandbox_by_default(tmp_path, task_file):
    response = write(tmp_path, "answer.md", "```python\ndef double(n):\n    return 2*n\n```")
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "critpt_grader.cli",
            "grade",
            "--task",
            str(task_file),
            "--response",
            str(response),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    result = json.loads(completed.stdout)
    assert result["reward"] == 1.0 and result["containment"].startswith("bwrap")


def test_an_out_of_range_setting_is_one_line(tmp_path, task_file, capsys):
    response = write(tmp_path, "a.txt", "x")
    assert (
        main(["grade", "--task", str(task_file), "--response", str(response), "--memory-mb", "10"])
        == 2
    )
    err = capsys.readouterr().err
    assert "memory_mb" in err and len(err.strip().splitlines()) == 1
