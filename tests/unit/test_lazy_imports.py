"""The grader process loads SymPy only when a value needs it: comparisons run in workers."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.support.paths import REPO as ROOT


def _loaded_after(code: str) -> dict[str, bool]:
    probe = (
        f"{code}\nimport json, sys\n"
        "print(json.dumps({m: m in sys.modules for m in ('sympy', 'mpmath', 'scipy', 'pint')}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_pipeline_and_the_cli_import_without_sympy():
    code = "import critpt_grader.pipeline, critpt_grader.cli\ncritpt_grader.cli.build_parser()"
    loaded = _loaded_after(code)
    assert not any(loaded.values()), loaded


def test_the_symbolic_package_still_offers_parse_and_decide():
    code = (
        "from critpt_grader.symbolic import parse, decide\n"
        "assert decide(parse('(x+2)**2'), parse('x**2+4*x+4')).status == 'equal'"
    )
    assert _loaded_after(code)["sympy"]


def test_a_cli_subcommand_imports_only_its_own_module():
    code = (
        "import sys\nfrom critpt_grader import cli\n"
        "try:\n    cli.main(['grade', '--help'])\nexcept SystemExit:\n    pass\n"
        "assert 'critpt_grader.commands.grade' in sys.modules\n"
        "assert 'critpt_grader.commands.serve' not in sys.modules\n"
        "assert 'critpt_grader.commands.acceptance' not in sys.modules"
    )
    _loaded_after(code)
