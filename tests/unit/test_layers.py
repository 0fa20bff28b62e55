"""The layering holds: one layer per folder, no circles, no private names across packages.

The contracts live in ``pyproject.toml`` (``[tool.importlinter]``) and are checked by
import-linter, which reads every import, function-local ones included. Private *names*
(``from critpt_grader.x import _helper``) are a thing import-linter does not see, so they
are checked here from the syntax tree.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import REPO

PACKAGE = REPO / "critpt_grader"


def lint_imports() -> str | None:
    beside = Path(sys.executable).with_name("lint-imports")
    return str(beside) if beside.exists() else shutil.which("lint-imports")


def test_the_import_contracts_are_kept():
    command = lint_imports()
    if command is None:
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    done = subprocess.run(
        [command, "--no-cache"],
        cwd=PACKAGE.parent,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def package_of(module: str) -> str:
    """``critpt_grader.judge.row`` → ``critpt_grader.judge``; a top module is its own."""
    parts = module.split(".")
    return ".".join(parts[:2])


def private_imports(source: str, module: str) -> list[str]:
    """``from critpt_grader.<other package> import _name`` lines in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
            continue
        if not node.module.startswith("critpt_grader."):
            continue
        if package_of(node.module) == package_of(module):
            continue
        for alias in node.names:
            if alias.name.startswith("_") and not alias.name.startswith("__"):
                found.append(f"{module}:{node.lineno} imports {node.module}.{alias.name}")
    return found


def module_name(path: Path) -> str:
    relative = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def test_no_private_name_is_imported_from_another_package():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        found += private_imports(path.read_text(), module_name(path))
    assert found == []


def test_the_private_name_check_sees_a_crossing_and_allows_one_inside_a_package():
    crossing = "def f():\n    from critpt_grader.pipeline import _secret\n"
    inside = "from critpt_grader.judge.case import _helper\n"
    assert private_imports(crossing, "critpt_grader.judge.row") == [
        "critpt_grader.judge.row:2 imports critpt_grader.pipeline._secret"
    ]
    assert private_imports(inside, "critpt_grader.judge.row") == []
