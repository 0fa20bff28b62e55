"""The README's set-up commands stay true: CI runs the README's test command verbatim."""

from __future__ import annotations

from tests.conftest import REPO


def _fenced_commands(text: str) -> list[str]:
    lines = text.splitlines()
    return [line for line in lines if line.startswith("bash .ci/install")]


def test_ci_runs_the_readme_test_command_verbatim():
    readme = (REPO / "README.md").read_text()
    ci = (REPO / ".ci" / "run").read_text()
    commands = _fenced_commands(readme)
    assert len(commands) == 2, commands
    main_job, tests = commands
    assert "--test" in tests and "pytest" in tests
    assert "critpt-grader acceptance fixtures/public" in main_job
    assert tests in ci.splitlines()


def test_cli_help_lists_existing_subcommands(capsys):
    from critpt_grader.cli import SUBCOMMANDS, build_parser

    help_text = build_parser().format_help()
    for name in ("grade", "compare", "acceptance"):
        assert name in SUBCOMMANDS and name in help_text
