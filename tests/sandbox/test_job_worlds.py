"""No channel between jobs (issue 29): every job starts in a world no earlier job touched.

The counter audit. Each counter a job can move and a later job can read is in
``tests/support/attacks/note_passing.py``: pids (its own, a child's, ``/proc/loadavg``'s last pid,
``ns_last_pid``), the forks ``/proc/stat`` counts, inode numbers in every writable place
(``/tmp``, ``/dev/shm``, ``$HOME``, the working folder), SysV shared memory, semaphore and
message queue ids, the loopback's packet count and its TIME_WAIT sockets, a pidfd's inode
number; beside them what a job sees of its file descriptors, processes, scratch folders,
mounts, unix sockets and SysV objects, and whether it holds a capability or may make a
namespace (the kernel's mount and namespace ids are only a job's to move if it may). For
each, a sender moves the counter to a note and a receiver reads it first thing, through
real warm sandboxes: one ``LocalBackend`` (the host checks that one sandbox served every
job), ``critpt-grader batch --jobs 1`` and ``/verify`` on a real ``serve``.

Before every job had a world of its own (commit 206a24c) every receiver here read its
sender's note: after a sender aimed at 17 the next job's pid was 82 (17 + 64 + its own
probe), its /tmp inode 148, its SysV ids 18, its loopback 145 packets and 17 TIME_WAIT
sockets; each attack row below scored 1 right after its sender.

The pidfd's inode number counts every process the host starts, which no namespace
separates: the job's seccomp filter refuses pidfds. Out of scope (docs/decide/containment.md,
"Out of scope"), and kept here as expected failures that measure them: the other counters
the kernel keeps for the whole host — inode numbers of memfds and shared memory, of pipes and
sockets — and timing or load.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from critpt_grader import codec
from critpt_grader.sandbox.base import Job, Limits, RunOutcome
from critpt_grader.sandbox.local import LocalBackend
from critpt_grader.settings import Settings
from tests.support.isolation import BWRAP_AS_SANDBOX_USER, value
from tests.support.paths import REPO, SUPPORT
from tests.support.server_harness import RunningServer, fenced

pytestmark = BWRAP_AS_SANDBOX_USER

__all__ = ["pytestmark"]  # the sandbox marker and skip rule of the isolation tests

NOTES = (17, 42)
TARGET = 37  # what an attack's receiver looks for: no fresh world reads 37 anywhere
# A wall clock far above what these jobs need (a sender forks up to 63 times), so that a
# busy machine never reaches it: the tests are about isolation, not time.
LIMITS = Limits(wall_seconds=300, case_seconds=120)
ATTACK = (SUPPORT / "attacks" / "note_passing.py").read_text()
spec: dict = {}
exec(compile(ATTACK, "note_passing.py", "exec"), spec)  # definitions only: nothing is called
COUNTERS: list[str] = list(spec["COUNTERS"])
EXTRAS: list[str] = list(spec["EXTRAS"])
# The counters a sender can see move in its own world: the proof that it really moved them.
MOVABLE = [
    "pid of a child",
    "inode in /tmp",
    "inode in /dev/shm",
    "SysV shared memory id",
    "SysV semaphore id",
    "SysV message queue id",
    "TIME_WAIT sockets",
    "loopback packets received",
]
# The attacks: each a sender row and a receiver row. $HOME and the working folder are /tmp.
ATTACKS = [name for name in COUNTERS if name not in ("pid of a child", "inode in $HOME")]


def job(body: str, *args: object) -> Job:
    call = {"args": [codec.encode(a) for a in args], "kwargs": {}}
    return Job(source=ATTACK + "\n" + body, entrypoint="f", cases=(call,), limits=LIMITS)


RECEIVER = job("def f():\n    return [identity(), observe()]\n")


def sender(note: int) -> Job:
    return job("def f(note):\n    return [identity(), send(note)]\n", note)


@pytest.fixture(scope="module")
def sequence() -> list[list]:
    """Receiver, sender of 17, receiver, sender of 42, receiver: one warm sandbox, which
    the host confirms served all five."""

    async def go() -> tuple[list[RunOutcome], list[int]]:
        async with LocalBackend(Settings(max_concurrent_sandboxes=1)) as backend:
            outcomes = [
                await backend.run(each)
                for each in (RECEIVER, sender(NOTES[0]), RECEIVER, sender(NOTES[1]), RECEIVER)
            ]
            served = [sandbox.jobs for sandbox in backend._idle["candidate"]]
            return outcomes, served

    outcomes, served = asyncio.run(go())
    assert served == [5], f"one warm sandbox should have served every job: {served}"
    return [value(outcome) for outcome in outcomes]


def test_every_job_ran_in_the_same_sandbox(sequence):
    assert len({identity for identity, _ in sequence}) == 1


@pytest.mark.parametrize("name", COUNTERS + EXTRAS)
def test_no_earlier_job_moves_what_a_job_reads(sequence, name):
    receivers = [seen[name] for _, seen in sequence[::2]]
    assert receivers == [receivers[0]] * 3, f"{name}: a receiver read its sender's note"


@pytest.mark.parametrize("name", MOVABLE)
def test_a_sender_moves_the_counter_in_its_own_world(sequence, name):
    """The senders' notes were there to be read, in their own worlds: the receivers above
    read nothing because nothing of those worlds reached them."""
    for note, (_, seen) in zip(NOTES, sequence[1::2], strict=True):
        assert seen[name] % spec["MODULUS"] == note, (name, seen[name])


def test_a_job_can_make_neither_mounts_nor_namespaces(sequence):
    """No capability (no mount, no hostname) and no namespace of its own: the kernel's mount
    and namespace ids are not a job's to move."""
    for _, seen in sequence:
        assert int(seen["capabilities"], 16) == 0
        assert "allowed" not in seen["new namespaces"], seen["new namespaces"]


# --- the attack as a policy would run it: sender then receiver, batch and /verify -----------


def attack_rows(example_rows_path: Path) -> list[dict]:
    """For each counter: a correct answer that aims the counter at TARGET, then an answer
    that is correct only when it finds TARGET there, and else wrong by one plus a small
    number naming its sandbox (which the mismatch's reason shows)."""
    task = json.loads(example_rows_path.read_text().splitlines()[0])  # add_one(n)
    rows = []
    for counter in ATTACKS:
        send = f"def add_one(n):\n    aim({counter!r}, {TARGET})\n    return n + 1\n"
        receive = (
            f"def add_one(n):\n    if receive({counter!r}, {TARGET}):\n        return n + 1\n"
            "    return n + 2 + witness()\n"
        )
        rows += [{**task, "response": fenced(ATTACK + "\n" + send)}]
        rows += [{**task, "response": fenced(ATTACK + "\n" + receive)}]
    return rows


def check_attacks(results: list[dict]) -> None:
    """Every sender passed, every receiver scored 0, all in one sandbox."""
    witnesses = set()
    for counter, sent, received in zip(ATTACKS, results[::2], results[1::2], strict=True):
        assert sent["reward"] == 1.0, (counter, sent["critpt_grader"]["reason"])
        reason = received["critpt_grader"]["reason"]
        assert received["reward"] == 0.0, f"{counter}: the receiver read its sender's note"
        difference = re.search(r"differs by ([0-9.e+]+)", reason)
        assert difference is not None, (counter, reason)
        witnesses.add(round(float(difference.group(1))) - 1)
    assert len(witnesses) == 1, f"the receivers ran in more than one sandbox: {witnesses}"


def test_no_note_passes_between_rows_of_one_batch(example_rows_path, tmp_path):
    rows = tmp_path / "in.jsonl"
    rows.write_text("".join(json.dumps(row) + "\n" for row in attack_rows(example_rows_path)))
    out = tmp_path / "out.jsonl"
    command = [sys.executable, "-m", "critpt_grader.cli", "batch", str(rows), "--out", str(out)]
    env = {"CRITPT_GRADER_MAX_CONCURRENT_SANDBOXES": "1", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [*command, "--jobs", "1"], cwd=REPO, env=env, capture_output=True, text=True, timeout=1200
    )
    assert done.returncode == 0, done.stderr[-2000:]
    results = sorted(map(json.loads, out.read_text().splitlines()), key=lambda r: r["row"])
    check_attacks(results)


def test_no_note_passes_between_verify_requests(example_rows_path):
    async def post_in_turn(url: str, rows: list[dict]) -> list[dict]:
        async with httpx.AsyncClient(base_url=url, timeout=600) as client:
            replies = [await client.post("/verify", json=row) for row in rows]
        assert all(reply.status_code == 200 for reply in replies), replies[0].text
        return [reply.json() for reply in replies]

    # The receiver's witness is in the measured difference, which only a full view shows.
    env = {"CRITPT_GRADER_MAX_CONCURRENT_SANDBOXES": "1", "CRITPT_GRADER_SERVER_REVEAL": "full"}
    with RunningServer("--backend", "local", env=env) as server:
        results = asyncio.run(post_in_turn(server.url, attack_rows(example_rows_path)))
    check_attacks(results)


@pytest.mark.xfail(
    reason="out of scope: memfd and pipe inode numbers come from host-wide counters that no "
    "namespace separates (docs/decide/containment.md); this measures them",
    strict=False,
)
@pytest.mark.parametrize("counter", list(spec["HOST_WIDE"]))
def test_host_wide_inode_counters_still_carry_a_note(counter):
    aim = f"def f(note):\n    aim({counter!r}, note)\n    return 0\n"
    read = f"def f():\n    return {{**COUNTERS, **HOST_WIDE}}[{counter!r}][0]() % MODULUS\n"

    async def go() -> list[int]:
        async with LocalBackend(Settings(max_concurrent_sandboxes=1)) as backend:
            seen = []
            for note in NOTES:
                value(await backend.run(job(aim, note)))
                seen.append(value(await backend.run(job(read))))
            return seen

    received = asyncio.run(go())
    assert all(abs(seen - note) > 1 for seen, note in zip(received, NOTES, strict=True)), received


def test_a_read_only_bind_under_tmp_is_there_again_in_every_world(tmp_path):
    """A runtime kept under /tmp (CI clones there) is bound back, read-only, into each job's
    fresh /tmp: the real command line with worlds, a folder of the host's /tmp in its view,
    and the world probe (one world made, a process settled in it, the bind mounted)."""
    import shutil as shell
    import subprocess as processes
    import tempfile

    from critpt_grader.sandbox.bwrap import (
        TMPFS_BYTES,
        bwrap_command,
        filesystem_view,
        sandbox_environment,
    )
    from critpt_grader.sandbox.identity import drop_prefix, sandbox_identity

    python = Settings().local.sandbox_python
    runtime = Path(tempfile.mkdtemp(prefix="critpt-runtime-", dir="/tmp"))
    try:
        runtime.chmod(0o755)
        (runtime / "kept.txt").write_text("kept")
        check = (
            "import os, sys\n"
            "from critpt_grader.runner import world\n"
            f"assert {str(runtime)!r} in world._mount_points()\n"
            "sys.exit(world.probe())\n"
        )
        env = sandbox_environment(python, home="/tmp")
        view = [*filesystem_view(python, host_root=False), str(runtime)]
        command = bwrap_command("bwrap", view, env, TMPFS_BYTES, worlds=True)
        prefix = drop_prefix(sandbox_identity(Settings().local.sandbox_user))
        done = processes.run(
            [*prefix, *command, python, "-s", "-B", "-c", check],
            capture_output=True,
            env=env,
            cwd="/",
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr.decode()[-2000:]
    finally:
        shell.rmtree(runtime, ignore_errors=True)


def test_only_the_zygote_keeps_capabilities_and_only_the_four_it_needs():
    """Read from the host: the supervisor (PID 1) dropped its capabilities once the zygote
    ran; the zygote holds CAP_SYS_ADMIN, CAP_SYS_CHROOT, CAP_NET_ADMIN and CAP_SETPCAP — in
    the sandbox's own user namespace — to make each world; bubblewrap holds none."""
    wanted = (1 << 21) | (1 << 18) | (1 << 12) | (1 << 8)

    async def go() -> dict[int, tuple[int, int]]:
        async with LocalBackend(Settings(max_concurrent_sandboxes=1)) as backend:
            value(await backend.run(job("def f():\n    return 1\n")))
            (sandbox,) = backend._idle["candidate"]
            assert sandbox.cgroup is not None
            found = {}
            for pid in sandbox.cgroup.pids():
                status = Path(f"/proc/{pid}/status").read_text().splitlines()
                fields = {line.split(":")[0]: line.split()[1:] for line in status}
                depth = len(fields["NSpid"])  # 1 bwrap, 2 the supervisor, 3 the zygote
                found[depth] = (int(fields["CapEff"][0], 16), int(fields["CapBnd"][0], 16))
            return found

    found = asyncio.run(go())
    assert found == {1: (0, 0), 2: (0, 0), 3: (wanted, wanted)}, found
