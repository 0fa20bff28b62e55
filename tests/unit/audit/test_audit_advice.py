"""What the audit tells an author: the tolerance in force by its real source and kind, advice
aimed at what rules (a statement's promise is edited in the statement), numbers without float
noise, and sandbox start-up kept out of the tasks' ``run_seconds``."""

from __future__ import annotations

import asyncio

from critpt_grader import codec
from critpt_grader.audit import AuditOptions, audit, checks, oracle
from critpt_grader.audit import run as audit_run
from critpt_grader.audit.findings import AuditReport, TaskAudit
from critpt_grader.audit.mutate import mutants
from critpt_grader.reports.audit.markdown import render_markdown
from critpt_grader.sandbox.base import CaseOutcome
from critpt_grader.sandbox.inprocess import InProcessBackend
from critpt_grader.settings import Settings
from critpt_grader.tasks import load_row


def task(problem: str, values=(2.0, 3.0), **tolerance):
    return load_row(
        {
            "task_data": {
                "schema_version": 1,
                "problem_id": "p",
                "problem": problem,
                "reference_source": "def f(x):\n    return 1.0 * x\n",
                "entrypoint": "f",
                "test_cases": [
                    {
                        "args": [codec.encode(v)],
                        "expected": {"kind": "value", "value": codec.encode(v)},
                    }
                    for v in values
                ],
                **tolerance,
            }
        }
    )


def value(python_value) -> CaseOutcome:
    return CaseOutcome("value", value=codec.encode(python_value))


def advice_for(the_task, reference: float, mutant: float):
    """The tighter tolerance and the advice for a mutant passing at case 0."""
    ref, out = value(reference), value(mutant)
    judged = oracle.judge(0, ref, out, oracle.task_policy(the_task, 0, {}))
    assert judged.equal  # it passes under the task's rules
    tighter = audit_run._tighter([0], {0: judged}, [ref], [out], 1)
    return tighter, audit_run._advice(None, tighter)


def test_a_promise_that_rules_is_edited_in_the_statement_not_by_a_stored_tolerance():
    promised = task("Implement f(x). Report f with relative error below 1e-2.", rtol="1e-9")
    tighter, advice = advice_for(promised, 2.0, 2.002)
    assert tighter.source == "promise" and tighter.in_force == "rtol"
    assert advice.startswith("the statement's promise admits it (case 0; now rtol=0.01 (promise")
    assert "promise rtol below 0.001 in the statement" in advice
    assert "a tolerance of" not in advice


def test_the_width_named_is_the_one_in_force_atol_where_atol_rules():
    stored = task("Implement f(x).", atol="0.01")
    tighter, advice = advice_for(stored, 2.0, 2.002)
    assert (tighter.source, tighter.in_force) == ("task", "atol")
    assert advice == (
        "a tolerance of atol below 0.002 would reject it (case 0; now rtol=5e-12, atol=0.01 (task))"
    )
    places = task("Implement f(x). Give f to 3 decimal places.")
    tighter, advice = advice_for(places, 2.0, 2.0004)
    assert (tighter.source, tighter.in_force) == ("promise", "atol")
    assert "promise atol below 0.0004 in the statement" in advice
    # An rtol in force is still named as one.
    tighter, advice = advice_for(task("Implement f(x).", rtol="0.1"), 2.0, 2.002)
    assert tighter.in_force == "rtol" and "rtol below 0.001 would reject it" in advice


def _markdown_lines(the_task) -> list[str]:
    found = TaskAudit("p", "task_data", promises=checks.promises(the_task), notes=["shown"])
    return render_markdown(AuditReport([found])).splitlines()


def test_each_tolerance_is_labelled_by_its_source():
    stored = _markdown_lines(task("Implement f(x).", rtol="0.1"))
    assert [line for line in stored if "rtol=0.1" in line] == [
        "- task tolerance: (the answer): rtol=0.1 (task), first case (expected 2)"
    ]
    assert not any(line.startswith("- promise") for line in stored)
    promised = _markdown_lines(task("Implement f(x). Report f with relative error below 1e-3."))
    assert any(
        line.startswith("- statement promise: (the answer): rtol=0.001") for line in promised
    )
    default = _markdown_lines(task("Implement f(x)."))
    assert any(line.startswith("- default: (the answer): rtol=5e-12 (default") for line in default)


def test_numbers_are_shown_without_float_noise():
    scaled = {m.description for m in mutants("def f(x):\n    return 1.5 * x + 3\n")}
    assert {"1.5 → 1.575 (×1.05)", "1.5 → 1.5015 (×(1+1e-3))", "3 → 3.15 (×1.05)"} <= scaled
    assert oracle.shown(value(10.995999999999999)) == "10.996"
    assert oracle.shown(value([0.1 + 0.2, complex(0.1 + 0.2, 1.0)])) == "[0.3, (0.3+1j)]"
    assert oracle.inputs_text({"args": [codec.encode(1.1 * 3)], "kwargs": {}}) == "(3.3)"
    # Display only: a difference the strict oracle sees still shows.
    assert oracle.shown(value(1.0 + 1e-11)) != oracle.shown(value(1.0))


class SlowStart(InProcessBackend):
    """Each role's first run waits, as a sandbox's start does."""

    def __init__(self, settings=None) -> None:
        super().__init__(settings)
        self.started: set[str] = set()

    async def run(self, job):
        if job.role not in self.started:
            self.started.add(job.role)
            await asyncio.sleep(0.6)
        return await super().run(job)


def test_sandbox_start_up_is_reported_apart_from_the_first_tasks_run_seconds():
    tasks = [task("Implement f(x).", values=(2.0, 3.0, 5.0))]
    report = asyncio.run(
        audit(tasks, Settings(), AuditOptions(max_mutants=2, probes=0, jobs=1), backend=SlowStart())
    )
    (found,) = report.tasks
    assert found.preflight == "passed" and found.mutants == 2
    assert report.startup_seconds >= 1.2  # both roles started before any task
    assert found.run_seconds < 0.6
    assert report.to_dict()["startup_seconds"] == round(report.startup_seconds, 3)
