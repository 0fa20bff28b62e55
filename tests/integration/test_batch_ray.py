"""Batch grading on Ray (issue 12, item 3): a local ``ray.init(num_cpus=2)`` gives the local
batch's verdicts, and a worker killed mid-batch still leaves every row exactly one verdict."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import textwrap
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

pytestmark = pytest.mark.slow  # a local Ray cluster: seconds to start, seconds per test

from critpt_grader import grade_many  # noqa: E402
from critpt_grader.batch.ray_pool import RayEngine  # noqa: E402
from critpt_grader.batch.rows import prepare  # noqa: E402
from critpt_grader.rows.tasksets import TaskSets  # noqa: E402
from critpt_grader.sandbox.containment import bwrap_works  # noqa: E402
from critpt_grader.settings import Settings  # noqa: E402
from tests.support.paths import PUBLIC_FIXTURES  # noqa: E402

PUBLIC = PUBLIC_FIXTURES
FAST = Settings(backend="in-process", compare_in_process=True)


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, logging_level="warning")
    try:
        yield ray
    finally:
        ray.shutdown()


def public_rows(count: int) -> list[dict]:
    """``count`` public candidates, spread over the tasks, skipping slow kinds."""
    rows = []
    with (PUBLIC / "candidates.jsonl").open() as file:
        for line in file:
            candidate = json.loads(line)
            if "while True" in candidate["response"] or "sleep" in candidate["response"]:
                continue
            rows.append({"problem_id": candidate["against"], "response": candidate["response"]})
    step = max(len(rows) // count, 1)
    return rows[::step][:count]


async def collect(rows, **kw) -> dict[int, str]:
    out = {}
    async for result in grade_many(rows, tasks=[PUBLIC / "tasks.jsonl"], **kw):
        assert result["row"] not in out, "a row was answered twice"
        out[result["row"]] = result["category"]
    return out


@pytest.mark.sandbox
@pytest.mark.skipif(
    shutil.which("bwrap") is None or not bwrap_works(), reason="bubblewrap cannot run here"
)
def test_ray_gives_the_local_batch_verdicts_on_public_rows(local_ray):
    rows = public_rows(16)
    local = asyncio.run(collect(rows, jobs=2))
    on_ray = asyncio.run(collect(rows, ray=True, jobs=2))
    assert sorted(local) == list(range(len(rows)))
    assert on_ray == local
    assert len(set(local.values())) > 1  # the subset holds more than one verdict


def sleepy_row(i: int, body: str | None = None) -> dict:
    if body is None:
        body = "import time; time.sleep(0.4); return n / 2" if i % 4 else "return n / 3"
    return {
        "task_data": {
            "schema_version": 1,
            "problem_id": f"half-{i % 3}",
            "reference_source": "def half(n):\n    return n / 2\n",
            "entrypoint": "half",
            "test_cases": [
                {
                    "args": [{"format": "critpt-value-v1", "value": ["int", "3"]}],
                    "expected": {
                        "kind": "value",
                        "value": {"format": "critpt-value-v1", "value": ["float", (1.5).hex()]},
                    },
                }
            ],
        },
        "response": f"```python\ndef half(n):\n{textwrap.indent(body, '    ')}\n```\n",
    }


def gated_row(i: int, folder: Path) -> dict:
    """A row whose candidate (run in the worker's own process: in-process backend) leaves
    ``<worker pid>-<i>`` in ``folder`` when it starts, then waits for ``folder/gate``."""
    if i % 4 == 0:
        return sleepy_row(i, "return n / 3")
    body = (
        "import os, time\n"
        f"open(os.path.join({str(folder)!r}, f'{{os.getpid()}}-{i}'), 'a').close()\n"
        "deadline = time.monotonic() + 60\n"
        f"while not os.path.exists({str(folder / 'gate')!r}) and time.monotonic() < deadline:\n"
        "    time.sleep(0.01)\n"
        "return n / 2"
    )
    return sleepy_row(i, body)


def test_a_worker_killed_mid_batch_loses_no_row_and_scores_none_twice(local_ray, tmp_path):
    count = 12
    sets = TaskSets()

    async def go():
        engine = RayEngine(None, FAST, workers=2)
        try:
            pids = await engine.pids()
            assert len(set(pids)) == 2
            running = [
                asyncio.ensure_future(engine.grade(prepare(i, gated_row(i, tmp_path), sets)))
                for i in range(count)
            ]
            # A row is in flight on the first worker: its candidate started there and waits.
            deadline = asyncio.get_running_loop().time() + 120
            while not list(tmp_path.glob(f"{pids[0]}-*")):
                assert asyncio.get_running_loop().time() < deadline, "no row reached worker 0"
                await asyncio.sleep(0.02)
            os.kill(pids[0], signal.SIGKILL)
            (tmp_path / "gate").touch()
            results = await asyncio.gather(*running)
            return results, engine.retried
        finally:
            await engine.aclose()

    results, retried = asyncio.run(go())
    assert sorted(r["row"] for r in results) == list(range(count))  # each row exactly once
    for r in results:
        assert r["category"] == ("candidate_mismatch" if r["row"] % 4 == 0 else "passed"), r
    assert retried >= 1  # the killed worker's row(s) went elsewhere


def test_the_batch_command_on_ray_answers_every_row_once_and_resumes(local_ray, tmp_path):
    from critpt_grader.commands.batch import batch

    source, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    rows = [sleepy_row(i) for i in range(8)]
    rows[3] = {"response": "no task"}  # a malformed row is answered too
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    from critpt_grader.batch.fingerprint import in_fingerprint, input_hash

    done_before = {  # an earlier run of this IN answered row 0
        "row": 0,
        "category": "passed",
        "input_hash": input_hash(json.dumps(rows[0])),
        "in_fingerprint": in_fingerprint(source),
    }
    out.write_text(json.dumps(done_before) + "\n")
    assert batch(source, out, ray=True, jobs=2, settings=FAST, progress=False) == 0
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["row"] for r in written) == list(range(8))
    by_row = {r["row"]: r["category"] for r in written}
    assert by_row[3] == "request_invalid"
    assert by_row[4] == "candidate_mismatch" and by_row[5] == "passed"
