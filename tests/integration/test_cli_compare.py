"""``critpt-grader compare``: verdict output, JSON shape, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

from critpt_grader.cli import main
from critpt_grader.codec import dumps
from tests.support.paths import REPO

ONE = dumps(1.0)
ROOT = REPO


def test_json_verdict(capsys):
    assert main(["compare", "--expected", ONE, "--candidate", dumps(1.0), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "equal"
    (leaf,) = out["leaves"]
    assert leaf["path"] == "" and leaf["kind"] == "float"
    assert leaf["tolerance"]["source"] == "default"


def test_mismatch_still_exits_zero(capsys):
    assert main(["compare", "--expected", ONE, "--candidate", dumps(1.5), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "mismatch"


def test_problem_and_tolerance_flags(capsys):
    args = ["compare", "--expected", ONE, "--candidate", dumps(1.0000005), "--json"]
    assert main([*args, "--rtol", "1e-9"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "mismatch"
    problem = "Report the energy with relative error below 1e-6."
    assert main([*args, "--rtol", "1e-9", "--problem", problem]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "equal"
    assert out["leaves"][0]["tolerance"]["source"] == "promise"


def test_wire_from_file(tmp_path, capsys):
    path = tmp_path / "candidate.json"
    path.write_text(dumps([1, "Yes"]))
    assert (
        main(["compare", "--expected", dumps([1, "No"]), "--candidate", f"@{path}", "--json"]) == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "mismatch"
    assert [leaf["path"] for leaf in out["leaves"]] == ["/0", "/1"]


def test_human_table(capsys):
    assert main(["compare", "--expected", dumps([1, "[x]"]), "--candidate", dumps([1, "y"])]) == 0
    out = capsys.readouterr().out
    assert "mismatch" in out and "/1" in out and "[x]" in out


def test_unusable_input_exits_2(tmp_path, capsys):
    assert main(["compare", "--expected", "{not json", "--candidate", ONE]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--expected" in err
    bad_envelope = json.dumps({"format": "critpt-value-v1", "value": ["int", 1]})
    assert main(["compare", "--expected", ONE, "--candidate", bad_envelope]) == 2
    assert main(["compare", "--expected", ONE, "--candidate", f"@{tmp_path / 'missing'}"]) == 2
    assert main(["compare", "--expected", ONE, "--candidate", ONE, "--rtol", "-1"]) == 2


def test_subprocess_round_trip():
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "critpt_grader.cli",
            "compare",
            "--expected",
            dumps({"E": 1.0}),
            "--candidate",
            dumps({"E": 1.0}),
            "--json",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["status"] == "equal"
