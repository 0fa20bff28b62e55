"""``critpt-grader audit`` end to end on the real local sandbox, over a task set of weak and
well-posed tasks of our own (tests/support/audit_tasks.py): what it flags, what it spares, and the
shape of what it prints and writes."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from critpt_grader.cli import main
from tests.support import audit_tasks

pytestmark = pytest.mark.sandbox


@pytest.fixture(scope="module")
def audited(tmp_path_factory) -> tuple[dict, Path]:
    folder = tmp_path_factory.mktemp("audit")
    audit_tasks.write(folder)
    out = folder / "out"
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        code = main(
            [
                "audit",
                str(folder),
                "--out",
                str(out),
                "--json",
                "--case-seconds",
                "1",
                "--jobs",
                "2",
            ]
        )
    assert code == 0
    return json.loads(stdout.getvalue()), out


def task(document: dict, problem_id: str) -> dict:
    return next(t for t in document["tasks"] if t["problem_id"] == problem_id)


def survivor(found: dict, description: str) -> dict:
    return next(s for s in found["survivors"] if s["description"] == description)


def test_the_weak_tasks_are_flagged_and_the_well_posed_spared(audited):
    document, _ = audited
    weak = {t["problem_id"] for t in document["tasks"] if t["weak"]}
    assert weak == {"weak-one-point", "weak-symmetric", "weak-loose-tolerance", "looser-promise"}
    for problem_id in ("well-posed", "signed-vector", "loop-countdown"):
        found = task(document, problem_id)
        assert found["survivors"] == [] and found["mutants"] > 5
        assert found["killed"] + found["equivalent"] == found["mutants"]


def test_cases_at_one_point_are_told_apart_by_a_probe_input(audited):
    found = task(audited[0], "weak-one-point")
    tan = survivor(found, "sin → tan")
    assert tan["passed_by"] == "inputs" and tan["operator"] == "swap-function"
    assert tan["tells_apart"]["inputs"] == "(0.1371)"
    assert [c["how"] for c in tan["cases"]] == ["identical"]
    assert "-    return 3.0 * math.sin(x)" in tan["diff"]
    assert "+    return 3.0 * math.tan(x)" in tan["diff"]
    assert "add a case at (0.1371)" in tan["advice"]


def test_symmetric_inputs_hide_swapped_arguments(audited):
    found = task(audited[0], "weak-symmetric")
    swapped = survivor(found, "arguments 'a' and 'b' swapped")
    assert swapped["passed_by"] == "inputs"
    assert found["distinct_inputs"] == 2 and found["probes"] >= 2


def test_a_loose_tolerance_is_named_with_the_width_that_would_catch_the_mutant(audited):
    found = task(audited[0], "weak-loose-tolerance")
    scaled = survivor(found, "1.5 → 1.575 (×1.05)")
    assert scaled["passed_by"] == "tolerance" and scaled["tells_apart"] is None
    tighter = scaled["tighter_tolerance"]
    assert tighter["allowed"] == "rtol=0.1 (task)" and tighter["relative"] == "0.0521739"
    assert "rtol below 0.0521739" in scaled["advice"]
    assert all(c["how"].startswith("within rtol=0.1") for c in scaled["cases"])


def test_a_freedom_the_statement_grants_is_no_survivor(audited):
    found = task(audited[0], "signed-vector")
    assert found["equivalent"] >= 1  # the negated vector: "up to an overall sign"
    assert found["promises"][0]["conventions"] == ["sign ('up to an overall sign')"]


def test_unreached_branches_and_looser_promises_are_listed(audited):
    document, _ = audited
    well = task(document, "well-posed")
    assert well["branches"] == 1
    assert well["unreached_branches"] == [{"line": 6, "what": "the body of the if at line 5"}]
    looser = task(document, "looser-promise")["looser_promises"]
    assert len(looser) == 1 and looser[0]["stored"] == "rtol=1e-9 (task)"


def test_a_task_whose_reference_fails_its_preflight_is_not_mutated(audited):
    found = task(audited[0], "broken-expectation")
    assert found["preflight"] == "reference_mismatch" and not found["weak"]
    assert found["mutants"] == 0 and "differs by 1" in found["preflight_reason"]


def test_the_json_object_and_the_reports(audited):
    document, out = audited
    totals = document["totals"]
    assert totals["tasks"] == 8 and totals["weak"] == 4 and totals["preflight_failed"] == 1
    assert totals["mutants"] == totals["equivalent"] + totals["killed"] + totals["survivors"]
    assert document["containment"].startswith("bwrap")
    for key in ("problem_id", "weak", "mutants", "equivalent", "survivors", "mutation_score"):
        assert key in document["tasks"][0]
    assert json.loads((out / "report.json").read_text())["totals"] == totals
    # A task's run_seconds count its own runs only: over all tasks they fit in 2 slots' wall.
    run_seconds = [t["run_seconds"] for t in document["tasks"]]
    assert all(s > 0 for s in run_seconds) and sum(run_seconds) <= 2 * document["seconds"]
    markdown = (out / "report.md").read_text()
    assert "# Task audit" in markdown and "```diff" in markdown and "weak-symmetric" in markdown
    html = (out / "report.html").read_text()
    assert "<script" not in html and "sin → tan" in html and "&lt;" not in html[:200]


def test_the_terminal_table_and_unusable_input(tmp_path, capsys):
    audit_tasks.write(tmp_path)
    rows = (tmp_path / "tasks.jsonl").read_text().splitlines()
    (tmp_path / "tasks.jsonl").write_text(rows[0] + "\n")  # weak-one-point alone
    assert main(["audit", str(tmp_path), "--out", str(tmp_path / "out"), "--max-mutants", "3"]) == 0
    printed = capsys.readouterr().out
    assert "Task audit" in printed and "weak-one-point" in printed and "weak" in printed
    assert main(["audit", str(tmp_path / "missing.jsonl")]) == 2
    assert "no such task file" in capsys.readouterr().err


def test_a_reference_that_is_not_deterministic_is_noted(tmp_path):
    import asyncio

    from critpt_grader.audit import audit
    from critpt_grader.settings import Settings
    from critpt_grader.tasks import load_row

    row = audit_tasks._row(
        "jittery",
        "import random\n\ndef f(x):\n    return x * (1 + 1e-9 * random.random())\n",
        "f",
        [(2.0,), (3.0,)],
        lambda x: x,
        rtol="1e-6",
    )
    report = asyncio.run(audit([load_row(row)], Settings(case_seconds=5), None))
    (found,) = report.tasks
    assert found.preflight == "passed"
    assert any("not deterministic" in note and "case 0, 1" in note for note in found.notes)
    assert found.probes == 0  # every probe gave two answers: none is kept
