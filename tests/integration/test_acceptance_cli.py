"""``critpt-grader acceptance`` end to end: exit codes, the three reports, the real grader."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from critpt_grader.cli import main
from critpt_grader.commands.acceptance import acceptance
from critpt_grader.result import GradeResult
from critpt_grader.settings import Settings
from critpt_grader.verdict import Category
from tests.support.acceptance_fakes import MINI_SET, ScriptedGrader
from tests.support.paths import CRITPT_PUBLIC, REPO

WRONG_EXPECTATION_LINE = 3  # the mini set's deliberately wrong row: "n + 2" expected to pass


def _by_kind(task, response) -> GradeResult:
    """Scripted verdicts for the mini set that meet every expectation but the wrong one."""
    text = response if isinstance(response, str) else json.dumps(response)
    if "```" not in text:
        return GradeResult.of(Category.CANDIDATE_SOURCE_MISSING)
    for marker, category in [
        ("def kinetic_energy(m, v)\n", Category.CANDIDATE_SOURCE_ERROR),
        ("RuntimeError", Category.CANDIDATE_EXCEPTION),
        ("float(n)", Category.CANDIDATE_MISMATCH),
        ("n + 2", Category.CANDIDATE_MISMATCH),
        ("float('inf')", Category.CANDIDATE_MISMATCH),
    ]:
        if marker in text:
            return GradeResult.of(category)
    vis_viva = "return m * v**2" in text
    if vis_viva != task.problem_id.endswith("vis-viva") and "kinetic" in task.problem_id:
        return GradeResult.of(Category.CANDIDATE_MISMATCH)
    return GradeResult.of(Category.PASSED)


def test_scripted_run_writes_reports_and_exits_1_on_the_wrong_expectation(tmp_path, capsys):
    code = acceptance([MINI_SET], out=tmp_path, grader_factory=lambda: ScriptedGrader(_by_kind))
    assert code == 1
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["summary"]["not_met"] == 1
    (wrong,) = [r for r in report["candidates"] if not r["met"]]
    assert wrong["line"] == WRONG_EXPECTATION_LINE
    out = capsys.readouterr().out
    assert "Agreement per kind" in out and "Disagreements (1)" in out
    assert "#3 equivalent" in out


def test_all_met_exits_0(tmp_path):
    grader = ScriptedGrader(_by_kind)
    code = acceptance(
        [MINI_SET], out=tmp_path, kinds=["canary", "fault"], grader_factory=lambda: grader
    )
    assert code == 0
    assert grader.closed
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["passed"] and report["filters"]["kinds"] == ["canary", "fault"]
    assert {r["kind"] for r in report["candidates"]} == {"canary", "fault"}


def test_task_filter_selects_candidates_against_the_task(tmp_path):
    grader = ScriptedGrader(_by_kind)
    acceptance([MINI_SET], out=tmp_path, task_ids=["mini-inverse"], grader_factory=lambda: grader)
    assert {task_id for task_id, _ in grader.calls} == {"mini-inverse"}
    assert len(grader.calls) == 3


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--kinds", "golden"], "unknown kind golden"),
        (["--problem-ids", "nope"], "no task nope"),
        (["--jobs", "0"], "at least 1"),
    ],
)
def test_unusable_options_exit_2_with_one_line(tmp_path, capsys, argv, message):
    code = main(["acceptance", str(MINI_SET), "--out", str(tmp_path), *argv])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err
    assert not (tmp_path / "report.json").exists()


def test_a_missing_set_exits_2(tmp_path, capsys):
    assert main(["acceptance", str(tmp_path / "absent"), "--out", str(tmp_path)]) == 2
    assert "not a folder" in capsys.readouterr().err


def test_only_skipped_sets_exit_2(tmp_path, capsys):
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    (folder / "set.json").write_text(json.dumps({"tasks_from": "missing.jsonl"}))
    (folder / "candidates.jsonl").write_text("")
    assert main(["acceptance", str(folder), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "skipped set elsewhere" in err and "every set was skipped" in err


def test_a_skipped_set_is_listed_in_the_reports(tmp_path):
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    (folder / "set.json").write_text(json.dumps({"tasks_from": "missing.jsonl"}))
    code = acceptance(
        [MINI_SET, folder],
        out=tmp_path / "out",
        kinds=["canary"],
        grader_factory=lambda: ScriptedGrader(_by_kind),
    )
    assert code == 0
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert [s["name"] for s in report["skipped_sets"]] == ["elsewhere"]
    assert "skipped" in (tmp_path / "out" / "report.md").read_text()


@pytest.mark.parametrize(
    "backend",
    [
        "in-process",
        pytest.param(
            "local",
            marks=[
                pytest.mark.sandbox,
                pytest.mark.slow,
                pytest.mark.skipif(not shutil.which("bwrap"), reason="bubblewrap not installed"),
            ],
        ),
    ],
)
def test_real_grader_on_the_mini_set(tmp_path, backend):
    """The real pipeline grades every mini candidate as expected, except the deliberately
    wrong row, which must show up as the only disagreement in all three reports."""
    settings = Settings(backend=backend, case_seconds=10, wall_seconds=60)
    code = acceptance([MINI_SET], out=tmp_path, jobs=2, settings=settings)
    report = json.loads((tmp_path / "report.json").read_text())
    not_met = [r for r in report["candidates"] if not r["met"]]
    assert [(r["line"], r["observed"]["category"]) for r in not_met] == [
        (WRONG_EXPECTATION_LINE, "candidate_mismatch")
    ], json.dumps(not_met, indent=1)[:3000]
    assert code == 1

    summary = report["summary"]
    assert (summary["candidates"], summary["met"], summary["not_met"]) == (15, 14, 1)
    kinds = {k: (t["candidates"], t["not_met"]) for k, t in summary["by_kind"].items()}
    assert kinds == {
        "reference": (4, 0),
        "equivalent": (3, 1),
        "alternate": (2, 0),
        "canary": (3, 0),
        "fault": (3, 0),
    }
    assert summary["by_output_type"]["float"]["candidates"] == 10
    assert summary["by_output_type"]["exception"]["candidates"] == 3
    assert all(r["result"]["problem_id"] == r["against"] for r in report["candidates"])

    markdown = (tmp_path / "report.md").read_text()
    disagreements = markdown.split("## Disagreements", 1)[1]
    assert "| mini-add-one | #3 equivalent (deliberately wrong expectation) |" in disagreements
    assert "candidate_mismatch" in disagreements
    assert "expected 18446744073709551617, observed 18446744073709551618" in disagreements

    page = (tmp_path / "report.html").read_text()
    assert not re.search(r"""(src|href)\s*=|url\(|@import|http""", page, re.IGNORECASE)
    assert "<script" not in page and page.count("<svg") == 2
    assert "deliberately wrong expectation" in page


def test_default_set_and_out_are_relative_to_the_cwd(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["acceptance"]) == 2
    assert "fixtures/public" in capsys.readouterr().err
    assert not Path("reports").exists()


CRITPT_EXAMPLE_SET = REPO / "acceptance" / "critpt-example"


def test_the_critpt_example_set_reads_shared_data_and_meets_its_expectations(tmp_path):
    if not CRITPT_PUBLIC.is_dir():
        pytest.skip(f"CritPt public data not present at {CRITPT_PUBLIC}")
    if not CRITPT_EXAMPLE_SET.is_dir():
        pytest.skip("the critpt-example acceptance set is not in this checkout")
    settings = Settings(backend="in-process", case_seconds=10, wall_seconds=60)
    code = acceptance([CRITPT_EXAMPLE_SET], out=tmp_path, settings=settings)
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["skipped_sets"] == []
    assert report["summary"]["candidates"] > 0
    assert code == 0, [r["reason"] for r in report["candidates"] if not r["met"]]
