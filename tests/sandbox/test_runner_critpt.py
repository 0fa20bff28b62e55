"""The runner on real CritPt challenges (read from the shared public data, never copied)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sympy as sp

from critpt_grader import codec
from critpt_grader.sandbox.base import Job, Limits
from critpt_grader.sandbox.inprocess import InProcessBackend
from critpt_grader.symbolic.parse import parse
from critpt_grader.tasks.critpt import load_challenge
from tests.support.paths import CRITPT_PUBLIC


def challenges(folder: str) -> list[Path]:
    if not CRITPT_PUBLIC.exists():
        pytest.skip(f"CritPt public data absent ({CRITPT_PUBLIC})")
    return sorted((CRITPT_PUBLIC / folder).glob("*.json"))


def critpt_job(task, source: str) -> Job:
    return Job(
        source=source,
        entrypoint=task.entrypoint,
        cases=tuple({"names": list(case.names)} for case in task.cases),
        setup_source=task.setup_source,
        limits=Limits(case_seconds=20),
        entrypoint_fallback=True,
    )


def test_every_public_template_loads_and_builds_its_inputs():
    """The setup of each public challenge builds the named inputs (symbols, units, kets),
    and the unfilled template reaches its call: ``...`` is not a gradable value."""
    ran = 0  # 67 of the 70 public templates define every input
    for path in challenges("public_test_challenges"):
        for task in load_challenge(json.loads(path.read_text())):
            if task.unresolved_inputs:  # numeric inputs the template leaves to the test cases
                continue
            ran += 1
            outcome = InProcessBackend().run_sync(critpt_job(task, task.code_template))
            assert outcome.status == "ok", (task.problem_id, outcome.detail)
            assert {case.kind for case in outcome.cases} <= {"encode_error", "exception"}
    assert ran >= 60


@pytest.mark.sandbox
def test_example_answer_runs_in_the_sandbox_under_its_own_function_name():
    import asyncio

    from critpt_grader.sandbox.local import LocalBackend

    path = CRITPT_PUBLIC / "example_challenges" / "quantum_error_correction_main.json"
    if not path.exists():
        pytest.skip(f"CritPt example absent ({path})")
    problem = json.loads(path.read_text())["problems"][0]
    task = load_challenge(json.loads(path.read_text()))[0]
    # The published answer names its function real_answer: the fallback finds it.
    job = critpt_job(task, problem["answer_code"])

    async def go():
        async with LocalBackend() as backend:
            return await backend.run(job)

    outcome = asyncio.run(go())
    assert outcome.status == "ok", outcome.detail
    returned = parse(codec.decode(outcome.cases[0].value).text, outcome.symbols)
    gold: dict = {"sp": sp, "p": sp.Symbol("p")}
    exec(problem["answer_only_code"], gold)  # trusted shared data: the published gold line
    assert sp.cancel(returned - gold["F_logical"]) == 0
