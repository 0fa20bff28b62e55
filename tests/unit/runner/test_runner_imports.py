"""The runner imports nothing of the grading side, at run time too.

``pyproject.toml``'s import-linter contract ("The in-sandbox runner imports nothing of the
grading side", run by tests/unit/test_layers.py) reads the import statements. This test
imports every runner module in a fresh interpreter, warms it up as a sandbox does (SciPy
preloaded, the grammar's parser and the printer built), and checks ``sys.modules`` against
the contract's own list: a package's ``__init__`` or an import by name would show here.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib

from tests.support.paths import REPO

CONTRACT = "The in-sandbox runner imports nothing of the grading side"

LOAD = """
import importlib, json, pkgutil, sys
import critpt_grader.runner as runner
for module in pkgutil.iter_modules(runner.__path__):
    if module.name != "__main__":
        importlib.import_module("critpt_grader.runner." + module.name)
from critpt_grader.runner.job import warm_up
warm_up(scipy=True)
print(json.dumps(sorted(name for name in sys.modules if name.startswith("critpt_grader"))))
"""


def forbidden() -> list[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    contracts = project["tool"]["importlinter"]["contracts"]
    (contract,) = [c for c in contracts if c["name"] == CONTRACT]
    return contract["forbidden_modules"]


def test_the_contract_forbids_the_grading_side():
    names = set(forbidden())
    for package in ("compare", "judge", "policy", "statement", "tasks", "pipeline", "sandbox"):
        assert f"critpt_grader.{package}" in names
    assert "critpt_grader.symbolic.prove" in names  # the runner parses and prints, never decides


def test_a_warmed_runner_has_loaded_nothing_forbidden():
    done = subprocess.run(
        [sys.executable, "-c", LOAD],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert "critpt_grader.runner.program" in loaded
    bad = [m for m in loaded for f in forbidden() if m == f or m.startswith(f + ".")]
    assert not bad, bad
