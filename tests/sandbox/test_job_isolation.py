"""Job isolation in warm sandboxes (issue 16): no job can read what an earlier job computed,
a job cannot end the sandbox's own processes, and a hostile value always gets a verdict.

Every attack here is a real run: real warm bubblewrap sandboxes, the real ``critpt-grader
batch`` and a real ``serve`` on loopback.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import httpx
import pytest

from critpt_grader import codec, grade
from critpt_grader.sandbox.base import Job, Limits
from tests.support.isolation import BWRAP_AS_SANDBOX_USER, run_all, value
from tests.support.paths import REPO, SUPPORT, runtime_folders_in_tmp
from tests.support.server_harness import RunningServer, fenced

pytestmark = BWRAP_AS_SANDBOX_USER

__all__ = ["pytestmark"]  # the sandbox marker and skip rule of the isolation tests

# A run wall clock far above what these jobs need, so that a busy machine never reaches it:
# the tests are about isolation, not time.
LIMITS = Limits(wall_seconds=300, case_seconds=10)
THIEF = (SUPPORT / "attacks" / "heap_thief.py").read_text()
in_one_warm_sandbox = run_all  # one LocalBackend, one sandbox at a time, warm


def job(source: str) -> Job:
    call = {"args": [], "kwargs": {}}
    return Job(source=textwrap.dedent(source), entrypoint="f", cases=(call,), limits=LIMITS)


# Which sandbox serves a job: its user namespace, the same for every job of one sandbox
# (each job has PID, mount, IPC and network namespaces of its own: runner/world.py).
WHO = """
    def who():
        return [os.readlink("/proc/self/ns/user")]
"""

SECRET_KEEPER = (
    """
    import os
    def f():
        # Made at run time: the text is in no source and no job input.
        return ["".join(map(chr, (83, 69, 67, 82, 69, 84, 45))) + str(31337 * 3), *who()]
"""
    + WHO
)

# Reads every readable private mapping of its own process, as the heap thief does, and
# reports each "SECRET-nnnnn" it finds. Its own marker, made at run time, shows the scan works.
SECRET_SCANNER = (
    """
    import ctypes, os, re
    def f():
        mine = "".join(map(chr, (83, 69, 67, 82, 69, 84, 45))) + str(11111 * 2)
        pattern = re.compile(b"SEC" + b"RET-([0-9]{5})")
        found = set()
        with open("/proc/self/maps") as maps:
            for line in maps:
                fields = line.split()
                start, end = (int(part, 16) for part in fields[0].split("-"))
                if fields[1].startswith("r") and (len(fields) < 6 or fields[5] == "[heap]"):
                    memory = ctypes.string_at(start, end - start)
                    found.update(m.decode() for m in pattern.findall(memory))
        assert mine
        return [sorted(found), *who()]
"""
    + WHO
)


def test_a_job_cannot_read_an_earlier_jobs_values_from_its_memory():
    keeper, scanner = in_one_warm_sandbox(job(SECRET_KEEPER), job(SECRET_SCANNER))
    secret, *keeper_seat = value(keeper)
    found, *scanner_seat = value(scanner)
    assert secret == "SECRET-94011"
    assert keeper_seat == scanner_seat  # the same sandbox, the same zygote
    assert "22222" in found  # the scan finds what is in its own memory
    assert "94011" not in found, "a job read an earlier job's result"


def test_a_job_cannot_read_an_earlier_jobs_source_or_arguments():
    keeper = Job(
        source="import os\ndef f(token):\n    return [token, *who()]\n" + textwrap.dedent(WHO),
        entrypoint="f",
        cases=({"args": [codec.encode("SECRET-" + "5" * 5)], "kwargs": {}},),
        limits=LIMITS,
    )
    first, scanner = in_one_warm_sandbox(keeper, job(SECRET_SCANNER))
    assert value(first)[0] == "SECRET-55555"
    assert "55555" not in value(scanner)[0], "a job read an earlier job's arguments"


def test_a_candidate_cannot_read_a_reference_run_before_it():
    reference = job(SECRET_KEEPER)
    reference = Job(
        source=reference.source,
        entrypoint="f",
        cases=reference.cases,
        limits=LIMITS,
        role="reference",
    )
    keeper, scanner = in_one_warm_sandbox(reference, job(SECRET_SCANNER))
    assert value(keeper)[0] == "SECRET-94011"
    assert "94011" not in value(scanner)[0], "a candidate read a reference's result"


def thief_row(task: dict) -> dict:
    entry = task["task_data"]["entrypoint"]
    cases = len(task["task_data"]["test_cases"])
    source = f"{THIEF}\nCASES = {cases}\n{entry} = steal\n"
    return {**task, "response": fenced(source)}


def add_one_rows(example_rows_path: Path) -> tuple[dict, dict]:
    task = json.loads(example_rows_path.read_text().splitlines()[0])
    honest = {**task, "response": fenced("def add_one(n):\n    return n + 1")}
    return honest, thief_row(task)


def test_a_thief_after_an_honest_row_in_one_batch_scores_0(example_rows_path, tmp_path):
    honest, thief = add_one_rows(example_rows_path)
    rows = tmp_path / "in.jsonl"
    rows.write_text("".join(json.dumps(row) + "\n" for row in (honest, thief, thief)))
    out = tmp_path / "out.jsonl"
    command = [sys.executable, "-m", "critpt_grader.cli", "batch", str(rows), "--out", str(out)]
    env = {"CRITPT_GRADER_MAX_CONCURRENT_SANDBOXES": "1", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [*command, "--jobs", "1"], cwd=REPO, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    results = {r["row"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert results[0]["category"] == "passed"
    for index in (1, 2):
        assert results[index]["reward"] == 0.0, results[index]["critpt_grader"]["reason"]
        assert results[index]["category"] == "candidate_mismatch"


def test_thieves_after_honest_rows_through_verify_score_0(example_rows_path):
    honest, thief = add_one_rows(example_rows_path)

    async def post_all(url: str, body: dict, count: int) -> list[dict]:
        async with httpx.AsyncClient(base_url=url, timeout=300) as client:
            replies = await asyncio.gather(
                *(client.post("/verify", json=body) for _ in range(count))
            )
        assert all(reply.status_code == 200 for reply in replies), replies[0].text
        return [reply.json() for reply in replies]

    with RunningServer("--backend", "local") as server:
        honest_outs = asyncio.run(post_all(server.url, honest, 6))
        thief_outs = asyncio.run(post_all(server.url, thief, 6))
    why = [(out["category"], out["critpt_grader"]["reason"]) for out in honest_outs]
    assert [out["category"] for out in honest_outs] == ["passed"] * 6, why
    assert [out["reward"] for out in thief_outs] == [0.0] * 6
    assert {out["category"] for out in thief_outs} == {"candidate_mismatch"}


# --- the sandbox's own processes -------------------------------------------------------

# Every pid the job might guess but its own and 0 (its parent, the zygote, is outside its
# PID namespace and shows as 0: kill(0) would reach its own process group).
SEND_SIGNAL = (
    """
    import os, signal
    def f():
        for pid in set(range(1, 400)) - {os.getpid()}:
            try:
                os.kill(pid, {number})
            except OSError:
                pass
        return who()
"""
    + WHO
)


def test_pid_1_and_the_zygote_ignore_every_signal_a_job_can_send():
    """In its own world a job sees neither the supervisor nor the zygote; its own PID 1, the
    world's init, ignores whatever it is sent from inside."""
    import signal

    numbers = [int(sig) for sig in sorted(signal.valid_signals()) if sig != signal.SIGCHLD]
    outcomes = in_one_warm_sandbox(
        *(job(SEND_SIGNAL.replace("{number}", str(n))) for n in numbers), job(SECRET_KEEPER)
    )
    seats = [value(outcome) for outcome in outcomes[:-1]]
    last = value(outcomes[-1])[1:]
    for number, seat in zip(numbers, seats, strict=True):
        assert seat == last, f"signal {number} ended PID 1 or the zygote"


def test_a_job_cannot_see_the_runners_processes():
    source = textwrap.dedent(
        """
        import os
        def f():
            return [os.getpid(), os.getppid(), sorted(os.listdir("/proc")),
                    open("/proc/1/cmdline").read().split("\\0")[0]]
        """
    )
    first, second = in_one_warm_sandbox(job(source), job(source))
    assert (
        value(first)
        == value(second)
        == [2, 0, ["1", "2", "self", "thread-self"], "critpt-job-init"]
    )


def test_a_job_that_stops_or_kills_every_process_it_sees_leaves_the_sandbox_serving():
    stop_and_kill = (
        "import os, signal\ndef f():\n"
        "    for sig in (signal.SIGSTOP, signal.SIGKILL):\n"
        "        for pid in set(range(1, 400)) - {os.getpid()}:\n"
        "            try:\n                os.kill(pid, sig)\n"
        "            except OSError:\n                pass\n"
        "    return who()\n"
    )
    attacker, after = in_one_warm_sandbox(
        job(stop_and_kill + textwrap.dedent(WHO)), job(SECRET_KEEPER)
    )
    assert value(after)[0] == "SECRET-94011"
    assert value(attacker) == value(after)[1:]  # the same sandbox served the next job


def test_cases_after_a_timed_out_case_still_run_in_a_fresh_world():
    source = textwrap.dedent(
        """
        import os, signal, time
        def f(n):
            if n == 0:
                open("/tmp/case-0", "w").close()  # the next process's world is a fresh one
                for pid in set(range(1, 400)) - {os.getpid()}:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
                time.sleep(60)  # the case times out; the next needs a process the zygote starts
            return [n, sorted(os.listdir("/tmp"))]
        """
    )
    cases = tuple({"args": [codec.encode(n)], "kwargs": {}} for n in (0, 1))
    limits = Limits(wall_seconds=300, case_seconds=2)
    (outcome,) = in_one_warm_sandbox(Job(source=source, entrypoint="f", cases=cases, limits=limits))
    assert [case.kind for case in outcome.cases] == ["timeout", "value"]
    # Empty but for the folder a checkout under the host's /tmp is bound at (none in CI).
    runtime = sorted(Path(top).name for top in runtime_folders_in_tmp())
    assert codec.decode(outcome.cases[1].value) == [1, runtime]


# --- hostile values --------------------------------------------------------------------

# Writes its own case report whose value is a list nested DEPTH deep (2 * DEPTH + 2 brackets
# with the envelope), built as text: no recursion on the way out.
DEEP_REPORT = """
import os, struct

def _report_fd():
    for name in os.listdir("/proc/self/fd"):
        try:
            if int(name) > 2 and os.readlink(f"/proc/self/fd/{name}").startswith("pipe:"):
                return int(name)
        except OSError:
            continue

def add_one(n):
    depth = DEPTH
    value = '["list",[' * depth + '["int","1"]' + ']]' * depth
    body = (
        '{"t":"case","i":0,"outcome":{"kind":"value","value":'
        '{"format":"critpt-value-v1","value":' + value + '}},"symbols":{}}'
    ).encode()
    os.write(_report_fd(), struct.pack(">I", len(body)) + body)
    os._exit(0)
"""


# 53: past the wire's limit inside a report that is not (the value check); 350 and 480: the
# 700 and 960 brackets that once crashed the host; 20_000: past the parser's own recursion.
@pytest.mark.parametrize("depth", [53, 350, 480, 20_000])
def test_a_report_nested_too_deep_is_invalid_output_scored_0(example_rows_path, depth):
    task = json.loads(example_rows_path.read_text().splitlines()[0])
    source = DEEP_REPORT.replace("DEPTH", str(depth))
    result = grade(task, fenced(source))
    assert (result.outcome, result.reward) == ("scored", 0.0)
    assert result.category == "candidate_invalid_output", result.reason


def test_a_deep_report_in_a_batch_is_a_scored_0_never_masked(example_rows_path, tmp_path):
    task = json.loads(example_rows_path.read_text().splitlines()[0])
    rows = tmp_path / "in.jsonl"
    deep = {**task, "response": fenced(DEEP_REPORT.replace("DEPTH", "480"))}
    rows.write_text(json.dumps(deep) + "\n")
    out = tmp_path / "out.jsonl"
    command = [sys.executable, "-m", "critpt_grader.cli", "batch", str(rows), "--out", str(out)]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    (result,) = map(json.loads, out.read_text().splitlines())
    assert result["category"] == "candidate_invalid_output"
    assert (result["reward"], result["mask_sample"]) == (0.0, False)


def test_a_verify_body_nested_200000_deep_is_400_request_invalid():
    body = "[" * 200_000 + "]" * 200_000
    with RunningServer("--backend", "in-process") as server:
        for path in ("/verify", "/aggregate_metrics", "/seed_session"):
            reply = httpx.post(
                server.url + path,
                content=body,
                headers={"content-type": "application/json"},
                timeout=60,
            )
            assert reply.status_code == 400, (path, reply.text)
            assert reply.json()["category"] == "request_invalid", path
        # A deep body that is an object: the same.
        deep_row = '{"task_data":' + "[" * 200_000 + "]" * 200_000 + "}"
        reply = httpx.post(server.url + "/verify", content=deep_row, timeout=60)
        assert (reply.status_code, reply.json()["category"]) == (400, "request_invalid")


def test_hostile_verify_rows_through_a_local_server_get_a_verdict(example_rows_path):
    task = json.loads(example_rows_path.read_text().splitlines()[0])
    deep = {**task, "response": fenced(DEEP_REPORT.replace("DEPTH", "480"))}
    with RunningServer("--backend", "local") as server:
        reply = httpx.post(server.url + "/verify", json=deep, timeout=300)
    assert reply.status_code == 200, reply.text
    out = reply.json()
    assert (out["reward"], out["category"], out["mask_sample"]) == (
        0.0,
        "candidate_invalid_output",
        False,
    )
