"""The README's set-up commands stay true: CI runs both of them verbatim, under Debian's own
python3, from the project venv that ``.ci/install`` makes."""

from __future__ import annotations

import subprocess

from tests.support.paths import REPO

SYSTEM_PATH = "export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def _readme_commands() -> list[str]:
    lines = (REPO / "README.md").read_text().splitlines()
    return [line for line in lines if line.startswith("bash .ci/install")]


def test_the_readme_has_the_main_job_and_the_test_command_from_the_project_venv():
    commands = _readme_commands()
    assert len(commands) == 2, commands
    main_job, tests = commands
    assert main_job.startswith("bash .ci/install && ") and "--test" not in main_job
    assert ".venv/bin/critpt-grader acceptance fixtures/public" in main_job
    assert tests == "bash .ci/install --test && .venv/bin/python -m pytest -q"


def test_ci_runs_both_readme_commands_verbatim_under_the_system_python():
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    for command in _readme_commands():
        assert command in ci, command
    # No pyenv shims: the README's commands must work under Debian's externally managed python3.
    assert SYSTEM_PATH in ci
    first_install = next(i for i, line in enumerate(ci) if "bash .ci/install" in line)
    assert ci.index(SYSTEM_PATH) < first_install
    assert not any(line.startswith(("python3 ", "pip ", "ruff ")) for line in ci), "venv tools only"


def test_the_install_script_is_valid_bash_and_never_swallows_a_failure():
    script = REPO / ".ci" / "install"
    subprocess.run(["bash", "-n", str(script)], check=True)
    text = script.read_text()
    assert "set -euo pipefail" in text
    assert "|| true" not in text


def test_cli_help_lists_existing_subcommands(capsys):
    from critpt_grader.cli import SUBCOMMANDS, build_parser

    help_text = build_parser().format_help()
    for name in ("grade", "compare", "acceptance"):
        assert name in SUBCOMMANDS and name in help_text


def test_the_setup_section_ends_with_the_doctor():
    text = (REPO / "README.md").read_text()
    setup = text[text.index("## Set-up") : text.index("\n## ", text.index("## Set-up") + 1)]
    assert setup.rstrip().endswith("```")
    assert ".venv/bin/critpt-grader doctor" in setup.rstrip().splitlines()[-2]
