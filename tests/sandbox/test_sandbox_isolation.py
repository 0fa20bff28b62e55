"""Containment as a root grader gets it: never host root, nothing survives a job.

Kernel settings are probed by opening for write and closing at once: never a byte is
written (a write to /proc/sys or /proc/sysrq-trigger from a leaky sandbox would change or
reboot the machine).
"""

from __future__ import annotations

import asyncio
import os
import textwrap
from pathlib import Path

import pytest

from critpt_grader import codec
from critpt_grader.runner.warm import own_state
from critpt_grader.sandbox.base import Job, Limits, RunOutcome
from critpt_grader.sandbox.local import LocalBackend
from critpt_grader.settings import Settings
from tests.support.isolation import BWRAP_AS_SANDBOX_USER, IDENTITY, run_all, value

pytestmark = BWRAP_AS_SANDBOX_USER
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="the case of a root grader")

# A run wall clock only a stretched case could reach, even on a busy machine.
LIMITS = Limits(wall_seconds=300, case_seconds=5)
CALL = {"args": [], "kwargs": {}}


def job(source: str) -> Job:
    return Job(source=textwrap.dedent(source), entrypoint="f", cases=(CALL,), limits=LIMITS)


OPEN_FOR_WRITE = """
    import os
    def f():
        seen = {}
        for path in ("/proc/sys/kernel/core_pattern", "/proc/sys/kernel/pid_max",
                     "/proc/sys/vm/drop_caches", "/proc/sysrq-trigger"):
            try:
                os.close(os.open(path, os.O_WRONLY))  # open and close: never a byte written
                seen[path] = "opened"
            except OSError as exc:
                seen[path] = type(exc).__name__
        return seen
    """


@as_root
@pytest.mark.parametrize("warm", [False, True], ids=["fresh", "warm"])
def test_kernel_settings_cannot_be_opened_for_writing(warm):
    (outcome,) = run_all(job(OPEN_FOR_WRITE), warm=warm)
    assert "opened" not in value(outcome).values(), value(outcome)


CREATE_FILES = """
    import os
    def f():
        seen = {}
        for folder in ("/", "/etc", "/dev", "/usr", "/root", "/tmp", "/dev/shm"):
            path = os.path.join(folder, "critpt-isolation-probe")
            try:
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL))
                os.unlink(path)
                seen[folder] = "written"
            except OSError as exc:
                seen[folder] = type(exc).__name__
        return seen
    """


@pytest.mark.parametrize("warm", [False, True], ids=["fresh", "warm"])
def test_only_tmp_and_dev_shm_take_writes(warm):
    (outcome,) = run_all(job(CREATE_FILES), warm=warm)
    seen = value(outcome)
    assert seen.pop("/tmp") == "written" and seen.pop("/dev/shm") == "written"
    assert "written" not in seen.values(), seen


@as_root
def test_every_process_of_a_sandbox_is_the_unprivileged_user_on_the_host():
    """Read from the host, not from inside: the uid a namespace shows can be anything."""

    async def go() -> list[tuple[int, ...]]:
        async with LocalBackend(Settings(max_concurrent_sandboxes=1)) as backend:
            assert value(await backend.run(job("def f():\n    return 1\n"))) == 1
            (sandbox,) = backend._idle["candidate"]  # the warm sandbox, waiting for a job
            assert sandbox.cgroup is not None
            members = sandbox.cgroup.pids()
            assert members, "the sandbox has processes"
            return [_host_ids(pid) for pid in members]

    assert IDENTITY is not None and IDENTITY.uid != 0
    for ids in asyncio.run(go()):
        assert set(ids) == {IDENTITY.uid, IDENTITY.gid} or set(ids) == {IDENTITY.uid}, ids


def _host_ids(pid: int) -> tuple[int, ...]:
    """Real, effective, saved and filesystem uids and gids of ``pid`` as the host sees them."""
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    fields = {line.split(":")[0]: line.split()[1:] for line in status}
    return tuple(int(n) for n in fields["Uid"] + fields["Gid"])


# --- one warm sandbox, a poisoning job, then a correct answer -----------------------------

POISON = {
    "fills /dev": """
        def f():
            with open("/dev/critpt-fill", "wb") as sink:
                for _ in range(64):
                    sink.write(bytes(1 << 20))
            return 0
        """,
    "fills / and /etc": """
        def f():
            for path in ("/critpt-fill", "/etc/critpt-fill"):
                try:
                    with open(path, "wb") as sink:
                        sink.write(bytes(1 << 20))
                except OSError:
                    pass
            return 0
        """,
    "fills /tmp and /dev/shm": """
        def f():
            for folder in ("/tmp", "/dev/shm"):
                try:
                    with open(folder + "/critpt-fill", "wb") as sink:
                        while True:
                            sink.write(bytes(1 << 20))
                except OSError:
                    pass
            return 0
        """,
    "lowers PID 1's limits": """
        import resource
        def f():
            for which, value in ((resource.RLIMIT_AS, 64 << 20), (resource.RLIMIT_NOFILE, 16),
                                 (resource.RLIMIT_CPU, 1), (resource.RLIMIT_NPROC, 1)):
                try:
                    resource.prlimit(1, which, (value, value))
                except OSError:
                    pass
            return 0
        """,
    "renices and pins PID 1": """
        import os
        def f():
            for call in (lambda: os.setpriority(os.PRIO_PROCESS, 1, 19),
                         lambda: os.setpriority(os.PRIO_USER, 0, 19),
                         lambda: os.setpriority(os.PRIO_PGRP, 0, 19),
                         lambda: os.sched_setaffinity(1, {0})):
                try:
                    call()
                except OSError:
                    pass
            return 0
        """,
    "lowers its own limits and priority": """
        import os, resource
        def f():
            resource.setrlimit(resource.RLIMIT_NOFILE, (16, 16))
            resource.setrlimit(resource.RLIMIT_AS, (256 << 20, 256 << 20))
            os.nice(19)
            return 0
        """,
    "leaves a daemon": """
        import os, time
        def f():
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    while True:
                        with open("/tmp/critpt-daemon", "a") as log:
                            log.write("x")
                        time.sleep(0.05)
                os._exit(0)
            return 0
        """,
}

CORRECT = """
    import os, resource
    import numpy as np
    def f():
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        return {
            "value": float(np.linalg.norm([3.0, 4.0])),
            "tmp": sorted(name for name in os.listdir("/tmp") if name.startswith("critpt")),
            "shm": os.listdir("/dev/shm"),
            "nice": os.getpriority(os.PRIO_PROCESS, 0),
            "files": soft,
            "affinity": len(os.sched_getaffinity(0)),
            "processes": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
        }
    """


@pytest.mark.parametrize("poison", sorted(POISON))
def test_a_poisoning_job_changes_nothing_for_the_next_correct_answer(poison):
    clean, poisoned, *after = run_all(job(CORRECT), job(POISON[poison]), job(CORRECT), job(CORRECT))
    baseline = value(clean)
    assert baseline["value"] == 5.0 and baseline["tmp"] == [] and baseline["shm"] == []
    assert poisoned.status in {"ok", "timeout"}  # whatever it did, it was contained
    for outcome in after:
        seen = value(outcome)
        # The job's own pid differs from run to run; everything else is as in a clean sandbox.
        assert {**seen, "processes": None} == {**baseline, "processes": None}
        assert len(seen["processes"]) == len(baseline["processes"])


def test_pid_1_notices_when_its_own_state_changed():
    """The init's second line of defence: a change to its limits is seen (checked in a
    forked process, so this test's own limits stay as they are)."""
    import resource

    before = own_state()
    child = os.fork()
    if child == 0:  # pragma: no cover - the forked check
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(soft, 32), hard))
        changed = [key for key, value in own_state().items() if before[key] != value]
        os._exit(0 if changed == ["rlimit RLIMIT_NOFILE"] else 1)
    _, status = os.waitpid(child, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


# --- honest limits ---------------------------------------------------------------------

OUT_OF_CPU = """
    import resource
    def f(n):
        if n == 0:
            resource.setrlimit(resource.RLIMIT_CPU, (1, 2))  # SIGXCPU after 1 s of CPU
            while True:
                pass
        return n
    """


def test_a_kill_for_cpu_time_is_a_timeout_and_the_next_case_still_runs():
    cases = ({"args": [codec.encode(0)], "kwargs": {}}, {"args": [codec.encode(7)], "kwargs": {}})
    source = Job(source=textwrap.dedent(OUT_OF_CPU), entrypoint="f", cases=cases, limits=LIMITS)
    (outcome,) = run_all(source)
    assert outcome.status == "ok", outcome.detail
    first, second = outcome.cases
    assert first.kind == "timeout" and "CPU time" in (first.message or ""), first
    assert second.kind == "value" and codec.decode(second.value) == 7


def test_only_sigxcpu_or_a_sigkill_after_the_cpu_limit_counts_as_out_of_cpu():
    import signal

    from critpt_grader.runner.supervisor import ran_out_of_cpu

    killed = signal.SIGKILL  # a wait status for "killed by a signal" is the signal number
    assert ran_out_of_cpu(signal.SIGXCPU, 0.5, limit=10)
    assert ran_out_of_cpu(killed, 10.2, limit=10)  # ignored SIGXCPU, then the hard limit
    assert not ran_out_of_cpu(killed, 3.0, limit=10)  # another SIGKILL (the memory cgroup)
    assert not ran_out_of_cpu(0, 20.0, limit=10)  # exited normally
    assert not ran_out_of_cpu(None, 20.0, limit=10)


def test_an_idle_warm_sandbox_gives_the_next_job_its_whole_wall_clock():
    """The clock starts when a job arrives, not when the sandbox began waiting for it."""
    short = Limits(wall_seconds=2, case_seconds=1)
    quick = Job(source="def f():\n    return 3\n", entrypoint="f", cases=(CALL,), limits=short)

    async def go() -> list[RunOutcome]:
        async with LocalBackend(Settings(max_concurrent_sandboxes=1)) as backend:
            first = await backend.run(quick)
            await asyncio.sleep(3)  # longer than the job's wall clock
            return [first, await backend.run(quick)]

    for outcome in asyncio.run(go()):  # the second, after the idle wait, is not timed out
        assert value(outcome) == 3
