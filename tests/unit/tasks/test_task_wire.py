"""A task's wire form (its cases as a sandbox job carries them, and their JSON text) and its
preflight key are built once per task, not once per row; the job's bytes are the same."""

from __future__ import annotations

import asyncio
import json

import critpt_grader.pipeline as pipeline_module
from critpt_grader.pipeline import Grader, task_wire
from critpt_grader.runner import protocol
from critpt_grader.sandbox.base import Job
from critpt_grader.settings import Settings
from critpt_grader.tasks import load_task
from tests.support.grading import HALF
from tests.support.server_harness import fenced

SETTINGS = Settings(backend="in-process", compare_in_process=True)
RESPONSES = [fenced("def half(n):\n    return n / 2"), fenced("def half(n):\n    return n")] * 3


def _counting(monkeypatch, name):
    calls = []
    real = getattr(pipeline_module, name)

    def counted(task):
        calls.append(task.problem_id)
        return real(task)

    monkeypatch.setattr(pipeline_module, name, counted)
    return calls


def test_rows_of_one_task_share_its_wire_form_and_preflight_key(monkeypatch):
    wires = _counting(monkeypatch, "task_wire")
    keys = _counting(monkeypatch, "_preflight_key")
    task = load_task(HALF)

    async def go():
        async with Grader(SETTINGS) as grader:
            return [await grader.grade(task, response) for response in RESPONSES]

    results = asyncio.run(go())
    assert [r.category.value for r in results] == ["passed", "candidate_mismatch"] * 3
    assert wires == ["test-half"] and keys == ["test-half"]


def test_the_kept_wire_form_changes_neither_equality_nor_the_jobs_bytes():
    task, same = load_task(HALF), load_task(HALF)
    cases, cases_json = task.derived("wire", task_wire)
    assert task == same  # the kept forms are not part of the task's identity
    job = Job(source="def half(n): return n", entrypoint="half", cases=cases)
    spliced = Job(source=job.source, entrypoint="half", cases=cases, cases_json=cases_json)
    assert spliced == job
    plain = protocol.encode_job_input(job.to_json(), "n0nce")
    fast = spliced.encoded("n0nce")
    assert _frame(fast) == _frame(plain)


def _frame(data: bytes) -> dict:
    header, _, rest = data.partition(b"\n")
    body = rest[: int(header)]
    assert rest[int(header) :] == b"n0nce\n"
    return json.loads(body)
