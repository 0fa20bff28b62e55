"""The manual stays true to the code: the names it gives exist where it says, the generated
pages equal what the code gives, and the site builds with ``mkdocs build --strict``."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import os
import re
import runpy
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest

from tests.support.paths import REPO

DOCS = REPO / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
GEN = runpy.run_path(str(REPO / "scripts" / "gen_docs.py"), run_name="gen_docs")

# A dotted name that starts a word: not a path (critpt_grader/x.py) nor a suffix (a.critpt_grader.b)
DOTTED = re.compile(r"(?<![\w/.\-])critpt_grader(?:\.[A-Za-z_]\w*)+")
# Not Python names: the entry-point group of sandbox backends, and the keys of the
# ``critpt_grader`` object a /verify row carries (``critpt_grader.seconds`` in an OUT row).
ENTRY_POINT_GROUPS = {"critpt_grader.backends"}
ROW_KEYS = {"row_id", "reason", "preflight", "containment", "seconds", "timings", "request_key"}


def _docstring_names() -> list[tuple[str, str]]:
    found = []
    for path in sorted((REPO / "critpt_grader").rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                text = ast.get_docstring(node, clean=False) or ""
                where = f"{path.relative_to(REPO)}:{getattr(node, 'lineno', 1)}"
                found += [(where, name) for name in DOTTED.findall(text)]
    return found


def _page_names() -> list[tuple[str, str]]:
    found = []
    for page in [*PAGES, REPO / "README.md"]:
        for number, line in enumerate(page.read_text().splitlines(), 1):
            where = f"{page.relative_to(REPO)}:{number}"
            found += [(where, name) for name in DOTTED.findall(line)]
    return found


def _defined_at_top(module: types.ModuleType, name: str) -> bool:
    """The module's own source binds ``name`` (an assignment, def or class), not an import."""
    tree = ast.parse(inspect.getsource(module))
    for node in tree.body:
        targets: list[ast.expr] = []
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if node.name == name:
                return True
        elif isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return True
    return False


def _owned_here(module: types.ModuleType, name: str, obj: object) -> bool:
    if name in getattr(module, "__all__", ()):
        return True  # a package's declared public name (critpt_grader.grade)
    if inspect.isclass(obj) or inspect.isfunction(obj):
        return obj.__module__ == module.__name__
    return _defined_at_top(module, name)


def problem(dotted: str) -> str | None:
    """Why ``dotted`` does not name what it says, or None when it does."""
    dotted = dotted.rstrip(".")
    if dotted in ENTRY_POINT_GROUPS or dotted.split(".")[1] in ROW_KEYS:
        return None
    parts = dotted.split(".")
    # The longest prefix that is a module of this package.
    for cut in range(len(parts), 0, -1):
        name = ".".join(parts[:cut])
        try:
            spec = importlib.util.find_spec(name)
        except ModuleNotFoundError:
            spec = None
        if spec is not None:
            break
    else:  # pragma: no cover - critpt_grader itself always imports
        return "no such module"
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and not exc.name.startswith("critpt_grader"):
            return None  # the module exists and needs an optional extra (nemo_gym)
        raise
    obj: object = module
    for depth, attr in enumerate(parts[cut:]):
        fields = getattr(obj, "model_fields", None)
        if isinstance(fields, dict) and attr in fields:
            return None  # a pydantic field (Settings.case_seconds)
        if not hasattr(obj, attr):
            return f"{'.'.join(parts[: cut + depth])} has no {attr!r}"
        value = getattr(obj, attr)
        if depth == 0 and not _owned_here(module, attr, value):
            owner = getattr(value, "__module__", "another module")
            return f"{attr} is defined in {owner}, not in {module.__name__}"
        obj = value
    return None


def test_every_dotted_name_in_a_docstring_exists_where_it_says():
    wrong = [
        f"{where}: {name}: {why}" for where, name in _docstring_names() if (why := problem(name))
    ]
    assert not wrong, "\n".join(wrong)


def test_every_dotted_name_in_the_manual_exists_where_it_says():
    names = _page_names()
    assert names, "the manual names no critpt_grader object"
    wrong = [f"{where}: {name}: {why}" for where, name in names if (why := problem(name))]
    assert not wrong, "\n".join(wrong)


def test_the_name_check_catches_a_stale_name_and_a_wrong_owner():
    assert problem("critpt_grader.server.models.ErrorBody") is not None
    assert "defined in critpt_grader.limits" in problem("critpt_grader.sandbox.base.Limits")
    assert problem("critpt_grader.rows.rejected.ErrorBody") is None
    assert problem("critpt_grader.grade_many") is None  # the package's __all__
    assert problem("critpt_grader.settings.Settings.case_seconds") is None


def test_the_generated_pages_equal_what_the_code_gives():
    for name, page in GEN["PAGES"].items():
        text = page.read_text()
        assert f"<!-- generated: {name} -->" in text, page
        assert GEN["render"](text) == text, (
            f"{page.relative_to(REPO)} is stale: run python scripts/gen_docs.py"
        )


def test_the_cli_page_lists_exactly_the_subcommands():
    listed = re.findall(
        r"^## critpt-grader (\S+)$", (DOCS / "operate" / "cli.md").read_text(), re.M
    )
    assert listed == list(GEN["subcommands"]())
    from critpt_grader.cli import SUBCOMMANDS

    assert sorted(listed) == sorted(name.replace("_", "-") for name in SUBCOMMANDS)


def test_the_settings_page_lists_every_setting():
    from critpt_grader.sandbox.daytona import DaytonaSettings
    from critpt_grader.settings import LocalSettings, Settings

    text = (DOCS / "operate" / "settings.md").read_text()
    for model in (Settings, LocalSettings, DaytonaSettings):
        prefix = model.model_config["env_prefix"]
        for name, field in model.model_fields.items():
            if name == "local":
                continue
            assert f"`{prefix}{name.upper()}`" in text, name
            assert field.description, f"{model.__name__}.{name} has no description"


def test_the_install_page_gives_the_readme_set_up_commands():
    def commands(path: Path) -> list[str]:
        lines = path.read_text().splitlines()
        return [line for line in lines if line.startswith("bash .ci/install")]

    assert commands(DOCS / "operate" / "install.md") == commands(REPO / "README.md")


def test_every_page_is_in_the_nav():
    config = (REPO / "mkdocs.yml").read_text()
    for page in PAGES:
        assert str(page.relative_to(DOCS)) in config, f"{page} is not in mkdocs.yml's nav"


def test_mkdocs_build_strict_passes(tmp_path: Path):
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is not installed (pip install -e '.[docs]'; .ci/install --test does)")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "operate" / "cli" / "index.html").is_file()
    shutil.rmtree(tmp_path / "site")
