"""Batch grading (issue 12, item 2): ``grade_many`` and ``critpt-grader batch``: every IN row
gets exactly one OUT row (malformed ones too), streamed, resumable after Ctrl-C or kill -9."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from critpt_grader import grade_many
from critpt_grader.batch.outfile import done_rows
from critpt_grader.commands.batch import batch
from critpt_grader.settings import Settings

FAST = Settings(backend="in-process", compare_in_process=True)
FAST_ENV = {"CRITPT_GRADER_BACKEND": "in-process", "CRITPT_GRADER_COMPARE_IN_PROCESS": "1"}


def envelope(node):
    return {"format": "critpt-value-v1", "value": node}


def half_task(problem_id: str = "half") -> dict:
    return {
        "schema_version": 1,
        "problem_id": problem_id,
        "reference_source": "def half(n):\n    return n / 2\n",
        "entrypoint": "half",
        "test_cases": [
            {
                "args": [envelope(["int", "3"])],
                "expected": {"kind": "value", "value": envelope(["float", (1.5).hex()])},
            }
        ],
    }


def answer(body: str) -> str:
    return f"```python\ndef half(n):\n    {body}\n```\n"


RIGHT, WRONG = answer("return n / 2"), answer("return n / 3")


def row(response, **extra) -> dict:
    return {
        "responses_create_params": {"input": []},
        "task_data": half_task(),
        "response": response,
        **extra,
    }


def collect(rows, **kw) -> list[dict]:
    async def go():
        return [out async for out in grade_many(rows, settings=FAST, **kw)]

    return asyncio.run(go())


def test_every_row_gets_one_verify_response_with_its_index():
    rows = [row(RIGHT, tag=i) if i % 2 == 0 else row(WRONG, tag=i) for i in range(10)]
    outs = collect(rows, jobs=3)
    assert sorted(out["row"] for out in outs) == list(range(10))
    for out in outs:
        i = out["row"]
        assert out["tag"] == i  # the body is echoed, as /verify does
        assert out["category"] == ("passed" if i % 2 == 0 else "candidate_mismatch")
        assert out["reward"] == (1.0 if i % 2 == 0 else 0.0)
        assert out["outcome"] == "scored" and out["critpt_grader"]["reason"] is not None


def test_malformed_rows_become_out_rows_with_a_category_never_a_crash():
    bad_task = {"task_data": {**half_task(), "extra_field": 1}, "response": RIGHT}
    rows = [
        "not json",
        "[1, 2]",
        json.dumps({"task_data": half_task()}),  # no response
        json.dumps({"problem_id": "nowhere", "response": RIGHT}),
        json.dumps({"response": RIGHT}),  # no task at all
        json.dumps(bad_task),
        json.dumps(row(RIGHT)),
        json.dumps({"task_data": half_task(), "response": 7}),
    ]
    outs = {out["row"]: out for out in collect(rows)}
    assert sorted(outs) == list(range(len(rows)))
    categories = [outs[i]["category"] for i in range(len(rows))]
    assert categories == [
        "request_invalid",
        "request_invalid",
        "request_invalid",
        "unknown_problem_id",
        "request_invalid",
        "task_invalid",
        "passed",
        "request_invalid",
    ]
    for i in (0, 1, 2, 3, 4, 5, 7):
        assert outs[i]["rejected"] is True and outs[i]["reward"] is None
        assert outs[i]["mask_sample"] is True and outs[i]["detail"]
    assert outs[2]["field"] == "response"
    assert "extra_field" in outs[5]["detail"]


def test_problem_id_rows_use_the_task_sets(tmp_path):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(
        json.dumps({"responses_create_params": {"input": []}, "task_data": half_task("h1")}) + "\n"
    )
    outs = collect([{"problem_id": "h1", "response": RIGHT}], tasks=[tasks])
    assert outs[0]["category"] == "passed" and outs[0]["problem_id"] == "h1"


def test_rows_are_read_only_as_slots_free_up():
    """Streaming: the input is pulled lazily, never more than the window ahead."""
    pulled = []

    def rows():
        for i in range(40):
            pulled.append(i)
            yield row(RIGHT)

    async def go():
        seen = 0
        async for _ in grade_many(rows(), settings=FAST, jobs=2):
            seen += 1
            assert len(pulled) <= seen + 2 * 2 + 1
        return seen

    assert asyncio.run(go()) == 40


def write_in(path: Path, count: int, sleep: float = 0.0) -> None:
    body = f"import time; time.sleep({sleep}); return n / 2" if sleep else "return n / 2"
    with path.open("w") as file:
        for i in range(count):
            response = answer(body) if i % 3 else WRONG
            file.write(json.dumps(row(response, tag=i)) + "\n")


def read_out(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_batch_resumes_skipping_written_rows_and_cutting_a_torn_line(tmp_path, capsys):
    source, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    write_in(source, 9)
    assert batch(source, out, settings=FAST, progress=False) == 0
    full = {r["row"]: r["category"] for r in read_out(out)}
    assert sorted(full) == list(range(9))
    summary = capsys.readouterr().out
    assert "batch: 9 rows" in summary and "6 passed, 3 scored 0" in summary

    # Keep three rows, then half a line, as a kill in the middle of a write leaves it.
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:3]) + lines[3][: len(lines[3]) // 2])
    kept = {json.loads(line)["row"] for line in lines[:3]}
    assert done_rows(out) == kept
    assert out.read_text().endswith("\n")  # the torn line is gone
    assert batch(source, out, settings=FAST, progress=False) == 0
    again = read_out(out)
    assert sorted(r["row"] for r in again) == list(range(9))  # each row exactly once
    assert {r["row"]: r["category"] for r in again} == full
    assert "batch: 6 rows" in capsys.readouterr().out


@pytest.mark.slow  # two batch processes of 30 slow rows: ~5 s
def test_kill_9_of_a_batch_process_loses_nothing_written(tmp_path):
    source, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    write_in(source, 30, sleep=0.15)
    command = [sys.executable, "-m", "critpt_grader.cli", "batch", str(source), "--out", str(out)]
    command += ["--jobs", "1", "--quiet"]
    env = {**os.environ, **FAST_ENV}
    process = subprocess.Popen(command, env=env, start_new_session=True, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not (out.exists() and out.read_text().count("\n") >= 4):
            assert process.poll() is None, "the batch ended before it was killed"
            assert time.monotonic() < deadline, "no 4 rows written within 60 s"
            time.sleep(0.05)
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
    before = done_rows(out)
    assert 4 <= len(before) < 30
    finished = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert finished.returncode == 0, finished.stderr
    assert f"{len(before)} already in" in finished.stdout
    rows = read_out(out)
    assert sorted(r["row"] for r in rows) == list(range(30))
    for r in rows:
        assert r["category"] == ("candidate_mismatch" if r["row"] % 3 == 0 else "passed")


def test_ctrl_c_stops_the_batch_and_keeps_what_was_written(tmp_path):
    source, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    # 300 rows of 0.15 s each: however late a busy machine delivers Ctrl-C, rows are left.
    write_in(source, 300, sleep=0.15)
    command = [sys.executable, "-m", "critpt_grader.cli", "batch", str(source), "--out", str(out)]
    command += ["--jobs", "1", "--quiet"]
    env = {**os.environ, **FAST_ENV}
    process = subprocess.Popen(
        command, env=env, start_new_session=True, stdout=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 60
        while not (out.exists() and out.read_text().count("\n") >= 3):
            assert process.poll() is None, "the batch ended before Ctrl-C"
            assert time.monotonic() < deadline, "no 3 rows written within 60 s"
            time.sleep(0.05)
    except AssertionError:
        process.kill()
        process.communicate()
        raise
    process.send_signal(signal.SIGINT)
    stdout, _ = process.communicate(timeout=30)
    assert process.returncode == 130
    assert "interrupted" in stdout
    written = read_out(out)  # every line whole
    assert len({r["row"] for r in written}) == len(written) >= 3
    assert len(written) < 300, "the batch finished before Ctrl-C reached it"


@pytest.mark.parametrize("jobs", [0, -1])
def test_jobs_below_one_is_refused(tmp_path, jobs):
    from critpt_grader.errors import InputError

    source = tmp_path / "in.jsonl"
    write_in(source, 1)
    with pytest.raises(InputError):
        batch(source, tmp_path / "out.jsonl", jobs=jobs, settings=FAST, progress=False)


def test_a_line_nested_200000_deep_is_a_request_invalid_out_row_never_a_crash():
    lines = ["[" * 200_000 + "]" * 200_000, '{"response": ' + "[" * 5000 + "]" * 5000 + "}"]
    outs = collect([*lines, row(RIGHT)])
    by_row = {out["row"]: out for out in outs}
    for index in (0, 1):
        assert by_row[index]["category"] == "request_invalid", by_row[index]
        assert by_row[index]["mask_sample"] is True and by_row[index]["reward"] is None
    assert by_row[2]["category"] == "passed"
