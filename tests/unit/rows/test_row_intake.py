"""One row path: the intake takes a row once (parse, contract, task, extraction, key) for
/verify, batch and NeMo Gym; the grader takes the extraction it is given."""

from __future__ import annotations

import asyncio
import json

import pytest

import critpt_grader.extract as extract_module
import critpt_grader.pipeline as pipeline_module
import critpt_grader.rows.intake as intake_module
from critpt_grader.batch import grade_many
from critpt_grader.batch.fingerprint import input_hash
from critpt_grader.rows.intake import parse_row, prepare_row
from critpt_grader.rows.rejected import RowRejected
from critpt_grader.rows.tasksets import TaskSets
from critpt_grader.server.service import VerifyService
from critpt_grader.settings import Settings
from tests.support.grading import HALF
from tests.support.server_harness import fenced

SETTINGS = Settings(backend="in-process", compare_in_process=True)
RIGHT = {**HALF, "response": fenced("def half(n):\n    return n / 2")}
INCOMPLETE = {**HALF, "response": {"status": "incomplete", "output": []}}


@pytest.fixture
def extractions(monkeypatch):
    """Counts every extraction, wherever it is called from."""
    calls = []
    real = extract_module.extract

    def counting(*args, **kwargs):
        calls.append(args[0] if args else kwargs.get("response"))
        return real(*args, **kwargs)

    monkeypatch.setattr(intake_module, "extract", counting)
    monkeypatch.setattr(pipeline_module, "extract", counting)
    return calls


def test_bytes_text_and_a_dict_give_the_same_prepared_row():
    sets = TaskSets()
    text = json.dumps(RIGHT)
    rows = [prepare_row(item, sets, SETTINGS) for item in (text.encode(), text + "\n", dict(RIGHT))]
    first = rows[0]
    assert all(
        (r.request_hash, r.request_key, r.extraction, r.task)
        == (first.request_hash, first.request_key, first.extraction, first.task)
        for r in rows
    )
    assert rows[0].request_key == "sha256:" + rows[0].request_hash
    assert rows[0].extraction.status == "code"
    # A batch OUT row's input_hash is the intake's content hash of the same line.
    assert input_hash(text.encode() + b"\n") == rows[0].request_hash


def test_the_intake_refuses_in_one_voice():
    with pytest.raises(RowRejected) as not_json:
        parse_row(b"{not json")
    assert (not_json.value.status, not_json.value.body.category) == (400, "request_invalid")
    with pytest.raises(RowRejected) as deep:
        parse_row(b"[" * 1000 + b"]" * 1000)
    assert deep.value.status == 400
    with pytest.raises(RowRejected) as no_response:
        prepare_row({"problem_id": "x"}, TaskSets(), SETTINGS)
    assert no_response.value.body.field == "response"
    with pytest.raises(RowRejected) as bad_key:
        prepare_row(RIGHT, TaskSets(), SETTINGS, key="has space")
    assert bad_key.value.body.field == "Idempotency-Key"


def test_verify_extracts_each_row_once_and_sends_back_no_private_key(extractions):
    async def go():
        service = VerifyService(SETTINGS)
        await service.start()
        try:
            out = await service.verify(service.prepare(json.dumps(RIGHT).encode()))
            incomplete = await service.verify(service.prepare(INCOMPLETE))
        finally:
            await service.aclose()
        return out, incomplete

    out, incomplete = asyncio.run(go())
    assert len(extractions) == 2  # one per row: the grader took the intake's extraction
    assert out["category"] == "passed" and out["reward"] == 1.0
    assert incomplete["category"] == "response_incomplete"
    assert not [key for key in (*out, *incomplete) if key.startswith("_verdict")]


def test_a_waiter_on_the_same_key_gets_the_same_verdict_without_grading_again(extractions):
    async def go():
        service = VerifyService(SETTINGS)
        await service.start()
        try:
            first, second = (service.prepare(RIGHT, "same-key") for _ in range(2))
            return await asyncio.gather(service.verify(first), service.verify(second))
        finally:
            await service.aclose()

    a, b = asyncio.run(go())
    assert a == b and a["category"] == "passed"
    assert a["critpt_grader"]["request_key"] == "same-key"


def test_batch_extracts_each_row_once(extractions):
    lines = [json.dumps(RIGHT).encode(), json.dumps(INCOMPLETE).encode()]

    async def go():
        return [out async for out in grade_many(lines, settings=SETTINGS)]

    outs = sorted(asyncio.run(go()), key=lambda out: out["row"])
    assert [out["category"] for out in outs] == ["passed", "response_incomplete"]
    assert len(extractions) == 2
    assert [out["input_hash"] for out in outs] == [input_hash(line) for line in lines]


def test_total_is_the_graders_span_on_the_server_and_in_batch():
    """One meaning of ``total``: the grader's span of the row; a server's slot wait is
    ``queue``, beside it, never inside it."""

    async def served():
        service = VerifyService(SETTINGS)
        await service.start()
        try:
            return await service.verify(service.prepare(RIGHT))
        finally:
            await service.aclose()

    async def batched():
        (out,) = [out async for out in grade_many([RIGHT], settings=SETTINGS)]
        return out

    for out in (asyncio.run(served()), asyncio.run(batched())):
        timings = out["critpt_grader"]["timings"]
        assert out["critpt_grader"]["seconds"] == timings["total"]
        assert timings["total"] >= timings["run"] + timings.get("compare", 0.0) - 1e-6


def test_a_row_after_a_utf8_byte_order_mark_is_read():
    """An IN file saved with a byte-order mark starts its first line with one: the row is read,
    not rejected (text that is not UTF-8 still is)."""
    row = {"response": "x", "problem_id": "p"}
    assert parse_row(b"\xef\xbb\xbf" + json.dumps(row).encode()) == row
    assert parse_row("\ufeff" + json.dumps(row)) == row
    with pytest.raises(RowRejected):
        parse_row(json.dumps(row).encode("utf-16"))
