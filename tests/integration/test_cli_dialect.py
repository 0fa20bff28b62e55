"""One CLI dialect: every subcommand speaks the same flags with the same meaning.

``--json`` on every command that produces a result, the shared sandbox flags on every command
that grades, ``--tasks`` always task-set paths, ``--jobs`` always "rows graded at once", help
texts that print as written, ``doctor`` readable through a pipe, and ``batch`` failing when it
graded nothing.
"""

from __future__ import annotations

import argparse
import json
from types import SimpleNamespace

import pytest

from critpt_grader.cli import build_parser, main
from critpt_grader.commands.acceptance import acceptance
from critpt_grader.commands.common import JOBS_HELP
from tests.support.acceptance_fakes import MINI_SET, ScriptedGrader

# Everything but the long-running server prints a result.
RESULT_COMMANDS = (
    "grade",
    "compare",
    "acceptance",
    "batch",
    "report",
    "reverify",
    "doctor",
    "sandboxes",
    "explain",
    "export-harbor",
    "audit",
)
GRADING_COMMANDS = ("grade", "batch", "acceptance", "serve", "reverify", "audit")
SANDBOX_FLAGS = (
    "--backend",
    "--case-seconds",
    "--wall-seconds",
    "--memory-mb",
    "--require-strong-containment",
)


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


SUBPARSERS = _subparsers()


def _options(name: str) -> dict[str, argparse.Action]:
    return {
        option: action for action in SUBPARSERS[name]._actions for option in action.option_strings
    }


def test_every_result_command_exists_and_has_json():
    assert set(RESULT_COMMANDS) | {"serve"} == set(SUBPARSERS)
    missing = [name for name in RESULT_COMMANDS if "--json" not in _options(name)]
    assert not missing, f"no --json on: {missing}"


@pytest.mark.parametrize("name", GRADING_COMMANDS)
def test_every_grading_command_has_the_shared_sandbox_flags(name):
    options = _options(name)
    assert [flag for flag in SANDBOX_FLAGS if flag not in options] == []
    # one helper: the same help text everywhere
    assert options["--backend"].help == _options("grade")["--backend"].help


@pytest.mark.parametrize("name", sorted(SUBPARSERS))
def test_tasks_always_means_task_set_paths(name):
    tasks = _options(name).get("--tasks")
    if tasks is None:
        return
    assert tasks.metavar == "TASKSET", name
    assert "task set" in tasks.help or "task-set" in tasks.help, (name, tasks.help)


@pytest.mark.parametrize("name", sorted(SUBPARSERS))
def test_jobs_always_means_rows_graded_at_once(name):
    jobs = _options(name).get("--jobs")
    if jobs is None:
        return
    assert "graded at once" in jobs.help, (name, jobs.help)
    assert "sandboxes at once" not in jobs.help, (name, jobs.help)


def test_acceptance_takes_task_ids_with_problem_ids():
    options = _options("acceptance")
    assert "--problem-ids" in options and "--tasks" not in options
    assert JOBS_HELP in options["--jobs"].help


@pytest.mark.parametrize("name", sorted(SUBPARSERS))
def test_no_help_text_shows_a_doubled_percent(name, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([name, "--help"])
    assert exit_info.value.code == 0
    shown = capsys.readouterr().out
    assert "%%" not in shown
    assert "%%" not in build_parser().format_help()


def test_report_help_shows_95_percent(capsys):
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    assert "95% interval" in " ".join(capsys.readouterr().out.split())


# --- the flags reach the settings ----------------------------------------------------------


@pytest.mark.parametrize("name", ["batch", "acceptance"])
def test_sandbox_flags_become_settings(name, monkeypatch, tmp_path):
    module = __import__(f"critpt_grader.commands.{name}", fromlist=[name])
    seen = {}
    monkeypatch.setattr(module, name, lambda *args, **kwargs: seen.update(kwargs) or 0)
    flags = ["--backend", "in-process", "--case-seconds", "3", "--memory-mb", "700", "--json"]
    argv = [str(tmp_path / "in.jsonl"), "--out", str(tmp_path / "out")] if name == "batch" else []
    assert main([name, *argv, *flags]) == 0
    settings = seen["settings"]
    assert (settings.backend, settings.case_seconds, settings.memory_mb) == ("in-process", 3, 700)
    assert seen["as_json"] is True


# --- doctor through a pipe -----------------------------------------------------------------


def test_doctor_piped_prints_plain_lines(monkeypatch, capsys):
    from critpt_grader.sandbox import doctor as sandbox_doctor
    from tests.support.doctor_facts import GOOD, HOST

    report = sandbox_doctor.assess(HOST, GOOD)
    examination = SimpleNamespace(report=report, host=HOST, failure="", probe=GOOD)
    monkeypatch.setattr(sandbox_doctor, "examine", lambda settings: examination)
    code = main(["doctor"])  # capsys: stdout is not a terminal
    out = capsys.readouterr().out
    assert code == (0 if report.strong else 1)
    assert "\x1b[" not in out
    assert not set(out) & set("┏┃━│─┡┩└┘┌┐╇"), "box drawing in piped output"
    assert "kernel settings *: held; seen:" in out
    assert "strong containment: yes" in out.splitlines()[-1]


# --- --json outputs ------------------------------------------------------------------------


def _rejected_in(tmp_path):
    source = tmp_path / "in.jsonl"
    rows = [{"problem_id": f"no-such-problem-{i}", "response": "x = 1"} for i in range(3)]
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return source


def test_batch_exits_1_when_every_row_is_rejected(tmp_path, capsys):
    source, out = _rejected_in(tmp_path), tmp_path / "out.jsonl"
    code = main(["batch", str(source), "--out", str(out), "--quiet", "--backend", "in-process"])
    assert code == 1
    captured = capsys.readouterr()
    assert "every row this run answered was rejected" in captured.err
    assert "3 unknown_problem_id" in captured.err
    assert "3 rejected" in captured.out  # the human summary line is unchanged
    assert len(out.read_text().splitlines()) == 3


def test_batch_json_is_one_object(tmp_path, capsys):
    source, out = _rejected_in(tmp_path), tmp_path / "out.jsonl"
    argv = ["batch", str(source), "--out", str(out), "--json", "--backend", "in-process"]
    assert main(argv) == 1
    (line,) = capsys.readouterr().out.splitlines()
    document = json.loads(line)
    assert document["rows"] == 3 and document["counts"]["rejected"] == 3
    assert document["counts"]["scored_1"] == 0
    assert document["rejected"] == {"unknown_problem_id": 3}
    assert document["out"] == str(out) and document["all_rejected"] is True


def test_report_json_is_one_object(tmp_path, capsys):
    from tests.support.batch_out import synthetic_out

    source = tmp_path / "out.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in synthetic_out(["p0", "p1"])))
    assert main(["report", str(source), "--out", str(tmp_path / "r"), "--json"]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    document = json.loads(line)
    assert document["rows"] == 9 and document["scored"] >= 1
    assert document["files"] == [
        str(tmp_path / "r" / "report.md"),
        str(tmp_path / "r" / "report.html"),
    ]
    assert (tmp_path / "r" / "report.html").is_file()


def test_acceptance_json_is_one_object(tmp_path, capsys):
    code = acceptance(
        [MINI_SET], out=tmp_path, grader_factory=lambda: ScriptedGrader(), as_json=True
    )
    (line,) = capsys.readouterr().out.splitlines()
    document = json.loads(line)
    assert code == (0 if document["passed"] else 1)
    assert document["met"] + document["not_met"] == document["candidates"] > 0
    assert document["reports"]["json"] == str(tmp_path / "report.json")
    assert (tmp_path / "report.json").is_file()
