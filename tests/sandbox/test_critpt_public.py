"""CritPt's 70 public challenges through the real sandbox: each imports (entry point, inputs
from the template's module-level names, declared output types) and a candidate filling the
template with values of the declared types runs and encodes."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from critpt_grader import codec
from critpt_grader.sandbox.base import Job
from critpt_grader.sandbox.local import LocalBackend
from critpt_grader.settings import Settings
from critpt_grader.tasks import declared_outputs, load_tasks
from tests.support.critpt_fill import filled_candidate, input_values

pytestmark = pytest.mark.sandbox


def public_tasks(critpt_public):
    paths = sorted((critpt_public / "public_test_challenges").glob("*.json"))
    assert len(paths) == 70
    return [task for path in paths for task in load_tasks(path)]


def test_every_public_challenge_declares_entry_inputs_and_outputs(critpt_public):
    tasks = public_tasks(critpt_public)
    assert len(tasks) == 70
    for task in tasks:
        assert task.entrypoint == "answer" and task.cases[0].names is not None
        outputs = declared_outputs(task.output_doc)
        assert outputs, task.problem_id
    unresolved = {t.problem_id: t.unresolved_inputs for t in tasks if t.unresolved_inputs}
    # Plain numeric inputs the templates leave to CritPt's hidden test cases:
    assert set(unresolved) == {"Challenge_20_main", "Challenge_45_main", "Challenge_62_main"}


def test_filled_templates_run_in_the_sandbox_and_encode(critpt_public):
    tasks = public_tasks(critpt_public)
    settings = Settings(case_seconds=20, wall_seconds=60)

    async def run_all():
        async with LocalBackend(settings) as backend:
            jobs = [
                Job(
                    source=filled_candidate(task),
                    entrypoint=task.entrypoint,
                    cases=({"names": list(task.cases[0].names)},),
                    setup_source=(task.setup_source or "") + input_values(task),
                    limits=settings.limits(),
                )
                for task in tasks
            ]
            return await asyncio.gather(*(backend.run(job) for job in jobs))

    outcomes = asyncio.run(run_all())
    for task, outcome in zip(tasks, outcomes, strict=True):
        assert outcome.status == "ok", (task.problem_id, outcome.detail, outcome.stderr[-500:])
        (case,) = outcome.cases
        assert case.kind == "value", (task.problem_id, case)
        value = codec.decode(case.value)
        outputs = declared_outputs(task.output_doc)
        if len(outputs) > 1:
            assert isinstance(value, tuple) and len(value) == len(outputs), task.problem_id
        assert outcome.containment.startswith("bwrap")


def test_unresolved_inputs_make_a_critpt_task_unscorable(critpt_public):
    from critpt_grader import grade

    task = next(t for t in public_tasks(critpt_public) if t.problem_id == "Challenge_62_main")
    result = grade(task, "```python\ndef answer(phi, k, k_value):\n    return 1\n```")
    assert (result.outcome, result.category) == ("unscorable", "task_invalid")
    assert "k_value" in result.reason


def test_public_challenges_without_gold_are_unscorable_not_scored(critpt_public):
    """The public answer_code is the unfilled template: its ``...`` is no expectation."""
    from critpt_grader import grade

    task = next(t for t in public_tasks(critpt_public) if t.problem_id == "Challenge_3_main")
    task = dataclasses.replace(task)
    result = grade(
        task,
        "```python\ndef answer(m, eta, r0):\n    return m\n```",
        settings=Settings(case_seconds=20),
    )
    assert result.outcome == "unscorable" and result.category == "reference_error"
