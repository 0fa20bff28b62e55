"""The local backend end to end: real bubblewrap, real cgroups, hostile programs."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import tempfile
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from critpt_grader import codec
from critpt_grader.sandbox.base import Job, Limits, RunOutcome
from critpt_grader.sandbox.containment import bwrap_works
from critpt_grader.sandbox.local import LocalBackend
from critpt_grader.sandbox.seccomp import seccomp_filter
from critpt_grader.settings import Settings
from tests.support.paths import REPO, SHARED

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(
        shutil.which("bwrap") is None or not bwrap_works(),
        reason="bubblewrap (bwrap) is not installed or cannot run here",
    ),
]

# A run wall clock only a stretched case could reach, even on a busy machine.
LIMITS = Limits(wall_seconds=300, case_seconds=3, output_bytes=64 * 1024)

# Inside a sandbox: the entries of /tmp less the mount points and the folders leading to them.
# A venv or checkout under /tmp (CI clones there) is bound read-only into the sandbox's /tmp,
# so a clean /tmp is not always empty; only what a job wrote must not survive it.
LISTED_TMP = """
        def listed_tmp():
            with open("/proc/self/mountinfo") as mounts:
                points = [line.split()[4] for line in mounts]
            binds = {point.split("/")[2] for point in points if point.startswith("/tmp/")}
            return sorted(set(os.listdir("/tmp")) - binds)
        """


@pytest.fixture(params=[True, False], ids=["warm", "fresh"])
def either(request) -> Settings:
    """Settings for a warm (reused) sandbox, then for a fresh one per job."""
    return Settings(warm_sandboxes=request.param)


def run(job: Job, settings: Settings | None = None, **backend_options) -> RunOutcome:
    async def go() -> RunOutcome:
        async with LocalBackend(settings, **backend_options) as backend:
            return await backend.run(job)

    return asyncio.run(go())


def job(source: str, *cases: dict, entrypoint: str = "f", limits: Limits = LIMITS, **kw) -> Job:
    return Job(
        source=textwrap.dedent(source),
        entrypoint=entrypoint,
        cases=cases or (call(),),
        limits=limits,
        **kw,
    )


def call(*args) -> dict:
    return {"args": [codec.encode(arg) for arg in args], "kwargs": {}}


def our_cgroups() -> list[str]:
    """Cgroups this test process created that still exist."""
    found = []
    for controller in ("pids", "memory"):
        for root, dirs, _ in os.walk(f"/sys/fs/cgroup/{controller}"):
            found += [d for d in dirs if d.startswith(f"critpt-{os.getpid()}-")]
            if root.count("/") > 6:
                dirs.clear()
    return found


def processes_mentioning(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_returns_a_numpy_value_and_captures_stdout(either):
    outcome = run(
        job(
            """
            import numpy as np
            def f(x):
                print("computing", x)
                return np.float64(x) / 4
            """,
            call(3),
        ),
        either,
    )
    assert outcome.status == "ok", outcome.detail
    assert outcome.containment.startswith("bwrap+cgroup")
    assert codec.decode(outcome.cases[0].value) == 0.75
    assert outcome.stdout == "computing 3\n"
    assert {"start", "imports", "run", "total"} <= outcome.timings.keys()
    assert our_cgroups() == []


def test_exception_is_captured_with_its_type():
    outcome = run(job("def f():\n    raise ValueError('no solution')\n"))
    case = outcome.cases[0]
    assert (case.kind, case.error_type, case.message) == ("exception", "ValueError", "no solution")


def test_syntax_error_is_a_source_error_with_the_line():
    outcome = run(job("x = 1\n\ndef f(:\n    return 1\n"))
    assert outcome.status == "source_error"
    assert "line 3" in outcome.detail


def test_missing_entry_point_names_what_was_found():
    outcome = run(job("def g():\n    return 1\n", entrypoint="answer"))
    assert outcome.status == "source_error"
    assert "'answer'" in outcome.detail and "g" in outcome.detail


def test_sole_public_function_is_used_when_the_job_allows_it():
    outcome = run(job("def _h():\n    return 1\ndef g():\n    return 2\n", entrypoint="answer",
                      entrypoint_fallback=True))  # fmt: skip
    assert outcome.status == "ok"
    assert codec.decode(outcome.cases[0].value) == 2


def test_infinite_loop_times_out_the_case_and_leaves_nothing_behind(either):
    marker = f"critpt-marker-{uuid.uuid4().hex}"
    source = f"""
        import subprocess, time
        def f(n):
            if n == 0:
                subprocess.Popen(["/bin/sh", "-c", "sleep 300; : {marker}"])
                while True:
                    pass
            return n
        """
    outcome = run(job(source, call(0), call(7)), either)
    assert outcome.status == "ok", outcome.detail
    # The per-case limit ended the call (the run's own limit would have ended the run, not
    # the case): read from what the runner reports, never from a clock in the test.
    assert outcome.cases[0].kind == "timeout"
    assert re.search(r"did not finish within|CPU time limit", outcome.cases[0].message or "")
    # A fresh child ran the next case.
    assert codec.decode(outcome.cases[1].value) == 7
    assert processes_mentioning(marker) == []
    assert our_cgroups() == []


def test_suite_wall_clock_stops_the_run(either):
    # The case's own 20 s of CPU would end it as a case timeout; the run's status says the
    # suite's 3 s wall clock stopped it first.
    limits = Limits(wall_seconds=3, case_seconds=20)
    outcome = run(job("def f():\n    while True:\n        pass\n", limits=limits), either)
    assert outcome.status == "timeout"
    assert our_cgroups() == []


def test_memory_bomb_is_reported_as_memory():
    source = """
        def f(kind):
            if kind == "one":
                return len(bytearray(8 << 30))
            chunks = []
            while True:
                chunks.append(bytearray(64 << 20))
        """
    limits = Limits(wall_seconds=30, case_seconds=10, memory_mb=512)
    outcome = run(job(source, call("one"), call("grow"), limits=limits))
    assert [case.kind for case in outcome.cases] == ["memory", "memory"]


def test_fork_bomb_is_held_by_the_pids_cgroup(either):
    source = """
        import os, time
        def f():
            started = 0
            for _ in range(200):
                try:
                    pid = os.fork()
                except OSError:
                    break
                if pid == 0:
                    time.sleep(60)
                    os._exit(0)
                started += 1
            return started
        """
    outcome = run(job(source), either)
    assert outcome.status == "ok", outcome.detail
    assert outcome.cases[0].kind == "value"
    assert codec.decode(outcome.cases[0].value) < LIMITS.max_processes
    assert our_cgroups() == []


def test_a_task_file_in_a_private_host_folder_cannot_be_read():
    folder = tempfile.mkdtemp(prefix="critpt-task-")
    try:
        task_file = Path(folder) / "task.json"
        task_file.write_text('{"reference_source": "secret"}')
        outcome = run(job("def f(path):\n    return open(path).read()\n", call(str(task_file))))
    finally:
        shutil.rmtree(folder)
    case = outcome.cases[0]
    assert (case.kind, case.error_type) == ("exception", "FileNotFoundError")


def test_network_is_unreachable():
    source = """
        import socket
        def f():
            failures = []
            try:
                socket.create_connection(("1.1.1.1", 53), timeout=2)
            except OSError as exc:
                failures.append(type(exc).__name__)
            try:
                socket.getaddrinfo("example.com", 80)
            except OSError as exc:
                failures.append(type(exc).__name__)
            return failures
        """
    outcome = run(job(source))
    assert len(codec.decode(outcome.cases[0].value)) == 2


@pytest.mark.parametrize("host_root", [False, True])
def test_host_files_cannot_be_written(host_root):
    folder = Path(__file__).resolve().parent  # a folder of this checkout's tests
    targets = [folder / f"sandbox-write-probe-{uuid.uuid4().hex}", Path("/usr/lib/critpt-probe")]
    source = "def f(path):\n    open(path, 'w').write('x')\n"
    settings = Settings(expose_host_filesystem=host_root)
    outcome = run(job(source, *(call(str(t)) for t in targets)), settings)
    for case in outcome.cases:
        assert case.kind == "exception"
        assert case.error_type in {"OSError", "FileNotFoundError", "PermissionError"}
    assert not any(target.exists() for target in targets)


def test_only_the_runtime_is_visible_by_default():
    """Task data kept anywhere outside the interpreter and the package stays out of sight:
    this repository's tests, the shared data folder, root's home."""
    source = """
        import os
        def f(paths):
            return [os.path.exists(p) for p in paths]
        """
    here = Path(__file__).resolve()
    hidden = [str(here), str(REPO / "pyproject.toml"), str(SHARED)]
    hidden += ["/etc/shadow", "/root/.bashrc"]
    visible = ["/usr/bin/env", "/etc/passwd", str(Path(codec.__file__).resolve())]
    outcome = run(job(source, call(hidden + visible)))
    assert codec.decode(outcome.cases[0].value) == [False] * len(hidden) + [True] * len(visible)


def test_fake_result_and_exit_at_import_is_a_crash(either):
    fake = '{"status":"ok","detail":"","cases":[{"kind":"value","value":null}]}'
    source = f"""
        import os, sys
        for nonce in ("0" * 32, "f" * 32):
            print("CRITPT-RESULT " + nonce + " " + {fake!r}, flush=True)
        for path in ("/proc/1/fd/1", "/proc/self/fd/1"):
            try:
                with open(path, "w") as out:
                    out.write("CRITPT-RESULT " + "0" * 32 + " {{}}\\n")
            except OSError:
                pass
        os._exit(0)
        def f():
            return 1
        """
    outcome = run(job(source, call(), call()), either)
    assert outcome.status == "ok", outcome.detail
    assert [case.kind for case in outcome.cases] == ["crashed", "crashed"]
    assert "CRITPT-RESULT" in outcome.stdout  # the forgery stayed in the captured output


# Every pid it might guess but its own: in its own world the job sees only its init (PID 1)
# and itself; the supervisor and the zygote are not in its PID namespace at all (its
# parent, the zygote, shows as 0: kill(0) would be its own process group).
KILL_THE_SUPERVISOR = """
    import os, signal
    def f():
        for pid in {os.getppid(), *range(1, 400)} - {os.getpid(), 0}:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        return 5
    """

STOP_THE_SUPERVISOR_AND_HANG = """
    import os, signal
    def f():
        for pid in (os.getppid(), 1, -1):
            try:
                os.kill(pid, signal.SIGSTOP)
            except OSError:
                pass
        while True:
            pass
    """


@pytest.mark.parametrize("warm", [False, True], ids=["fresh", "warm"])
def test_the_program_cannot_kill_its_supervisor(warm):
    async def go() -> list[RunOutcome]:
        settings = Settings(max_concurrent_sandboxes=1, warm_sandboxes=warm)
        async with LocalBackend(settings) as backend:
            killed = await backend.run(job(KILL_THE_SUPERVISOR))
            after = await backend.run(job("def f():\n    return 6\n"))
            return [killed, after]

    killed, after = asyncio.run(go())
    assert killed.status == "ok", killed.detail
    assert codec.decode(killed.cases[0].value) == 5
    assert after.status == "ok" and codec.decode(after.cases[0].value) == 6


def test_a_job_that_kills_the_zygote_at_once_keeps_its_answer_every_time():
    """Regression: a job that killed its zygote before the zygote had answered with its pid
    lost its own result ("the zygote did not answer", crashed) in 3 of 20 fresh runs beside
    two busy processes. The zygote now answers before the job's code starts (and, in a
    world of its own, the job cannot even see the zygote)."""

    async def go() -> list[RunOutcome]:
        settings = Settings(max_concurrent_sandboxes=1, warm_sandboxes=False)
        async with LocalBackend(settings) as backend:
            return [await backend.run(job(KILL_THE_SUPERVISOR)) for _ in range(12)]

    outcomes = asyncio.run(go())
    assert [(o.status, o.cases[0].kind) for o in outcomes] == [("ok", "value")] * 12


@pytest.mark.parametrize("warm", [False, True], ids=["fresh", "warm"])
def test_a_stopped_supervisor_cannot_stretch_the_case_limit(warm):
    """SIGSTOP to the supervisor (PID 1 of the sandbox) is ignored: the hang costs one case
    limit, not the suite's wall clock."""
    # A wall clock far beyond one case limit, so that only a stretched case can reach it,
    # even on a machine so busy that start-up alone takes a minute.
    limits = Limits(wall_seconds=300, case_seconds=1.5)
    outcome = run(job(STOP_THE_SUPERVISOR_AND_HANG, limits=limits), Settings(warm_sandboxes=warm))
    assert outcome.status == "ok", outcome.detail  # not the wall clock's "timeout"
    assert outcome.cases[0].kind == "timeout"


def test_warm_sandbox_jobs_do_not_see_each_other():
    source = """
        import os, subprocess
        def f(marker):
            seen = listed_tmp()
            with open(f"/tmp/{marker}", "w") as out:
                out.write("left behind")
            subprocess.Popen(["/bin/sleep", "300"])
            others = [p for p in os.listdir("/proc") if p.isdigit() and int(p) > os.getpid()]
            return [seen, len(others)]
        """

    async def go() -> list[RunOutcome]:
        async with LocalBackend(Settings(max_concurrent_sandboxes=1)) as backend:
            return [await backend.run(job(LISTED_TMP + source, call(f"m{n}"))) for n in range(3)]

    outcomes = asyncio.run(go())
    for n, outcome in enumerate(outcomes):
        assert outcome.status == "ok", outcome.detail
        seen, _ = codec.decode(outcome.cases[0].value)
        earlier = {f"m{k}" for k in range(n)}
        assert not earlier & set(seen), seen  # no file of an earlier job is left in /tmp
    assert our_cgroups() == []


def test_stdout_flood_is_truncated(either):
    limits = Limits(wall_seconds=30, case_seconds=10, output_bytes=8192)
    outcome = run(
        job("def f():\n    print('x' * 5_000_000)\n    return 1\n", limits=limits), either
    )
    assert outcome.cases[0].kind == "value"
    assert len(outcome.stdout.encode()) <= limits.output_bytes
    assert outcome.stdout.endswith("[output truncated]")


def test_non_utf8_output_is_decoded_with_replacement():
    outcome = run(job("import os\ndef f():\n    os.write(1, b'\\xff\\xfeok')\n    return 1\n"))
    assert outcome.stdout == "\ufffd\ufffdok"


def test_critpt_setup_reports_symbol_assumptions(either):
    setup = "import sympy as sp\n\nm, r0 = sp.symbols('m r0', positive=True)\nx = sp.symbols('x')\n"
    source = setup + "\ndef answer(m, r0):\n    return m * r0**2\n"
    outcome = run(
        Job(
            source=source,
            entrypoint="answer",
            cases=({"names": ["m", "r0"]},),
            setup_source=setup,
            limits=LIMITS,
        ),
        either,
    )
    assert outcome.status == "ok", outcome.detail
    assert outcome.cases[0].kind == "value"
    assert outcome.symbols == {"m": {"positive": True}, "r0": {"positive": True}}


WHO_AM_I = "import os\ndef f():\n    return os.getuid()\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="the rule for a root grader")
def test_a_root_grader_refuses_to_run_code_without_bubblewrap():
    outcome = run(job(WHO_AM_I), bwrap="no-such-bwrap")
    assert outcome.status == "unavailable"
    assert "bubblewrap does not run here" in outcome.detail
    assert "ALLOW_WEAK_CONTAINMENT" in outcome.detail


@pytest.mark.skipif(os.geteuid() != 0, reason="the rule for a root grader")
def test_a_waived_weak_run_still_drops_root_and_shouts_in_its_label():
    outcome = run(job(WHO_AM_I), Settings(allow_weak_containment=True), bwrap="no-such-bwrap")
    assert outcome.status == "ok", outcome.detail
    assert codec.decode(outcome.cases[0].value) != 0  # never host root, even here
    assert "WARNING" in outcome.containment and "bubblewrap" in outcome.containment
    assert "+user:" in outcome.containment


@pytest.mark.skipif(os.geteuid() == 0, reason="the rule for a grader that is not root")
def test_without_bubblewrap_an_unprivileged_run_is_weaker_and_says_so():
    outcome = run(job(WHO_AM_I), bwrap="no-such-bwrap")
    assert outcome.status == "ok", outcome.detail
    assert outcome.containment in {"cgroup+rlimits", "rlimits-only"}


def test_strong_containment_can_be_required():
    settings = Settings(require_strong_containment=True)
    outcome = run(job("def f():\n    return 1\n"), settings, bwrap="no-such-bwrap")
    assert outcome.status == "unavailable"
    assert "bubblewrap does not run here" in outcome.detail


def test_aclose_tears_down_running_sandboxes():
    marker = f"critpt-marker-{uuid.uuid4().hex}"
    source = f"""
        import subprocess
        def f():
            subprocess.Popen(["/bin/sh", "-c", "sleep 300; : {marker}"])
            while True:
                pass
        """
    # Bounds far past the test: only aclose() ends this run.
    endless = job(source, limits=Limits(wall_seconds=600, case_seconds=300))

    async def go() -> RunOutcome:
        backend = LocalBackend()
        running = asyncio.create_task(backend.run(endless))
        deadline = time.monotonic() + 60
        while not processes_mentioning(marker):  # the job is running in its sandbox
            assert not running.done(), running.result()
            assert time.monotonic() < deadline, "the job did not start within 60 s"
            await asyncio.sleep(0.01)
        await backend.aclose()
        return await running

    outcome = asyncio.run(go())
    assert outcome.status == "unavailable"
    assert processes_mentioning(marker) == []
    assert our_cgroups() == []


def test_a_job_without_cases_still_loads_the_program():
    outcome = run(Job(source="def f(:\n", entrypoint="f", cases=(), limits=LIMITS))
    assert outcome.status == "source_error"


def test_slow_loading_times_out_every_case():
    outcome = run(job("while True:\n    pass\n", call(), call()))
    assert outcome.status == "ok"
    assert [case.kind for case in outcome.cases] == ["timeout", "timeout"]
    assert "loading" in outcome.cases[0].message


def test_concurrent_runs_share_the_slots():
    settings = Settings(max_concurrent_sandboxes=2)

    async def go() -> list[RunOutcome]:
        async with LocalBackend(settings) as backend:
            jobs = [job("def f(n):\n    return n * n\n", call(n)) for n in range(4)]
            return await asyncio.gather(*(backend.run(j) for j in jobs))

    outcomes = asyncio.run(go())
    assert [codec.decode(o.cases[0].value) for o in outcomes] == [0, 1, 4, 9]
    assert our_cgroups() == []


def test_one_backend_serves_successive_event_loops():
    backend = LocalBackend(Settings(max_concurrent_sandboxes=1))

    async def two_at_once() -> list[RunOutcome]:
        jobs = [job("def f(n):\n    return n\n", call(n)) for n in range(2)]
        return await asyncio.gather(*(backend.run(j) for j in jobs))

    for _ in range(2):  # as the synchronous grade() does: a new loop per call
        assert [o.status for o in asyncio.run(two_at_once())] == ["ok", "ok"]
    asyncio.run(backend.aclose())


def test_a_warm_sandbox_survives_locked_and_nested_leftovers():
    source = """
        import os
        def f(n):
            found = listed_tmp()
            os.makedirs("/tmp/a/b/c")
            open("/tmp/a/b/c/file", "w").close()
            os.chmod("/tmp/a/b", 0)
            os.chmod("/tmp", 0)
            return found
        """

    async def go() -> tuple[list[RunOutcome], list[int]]:
        async with LocalBackend(Settings(max_concurrent_sandboxes=1)) as backend:
            outcomes = [await backend.run(job(LISTED_TMP + source, call(n))) for n in range(2)]
            return outcomes, [sandbox.jobs for sandbox in backend._idle["candidate"]]

    outcomes, jobs_per_sandbox = asyncio.run(go())
    assert [o.status for o in outcomes] == ["ok", "ok"], outcomes[-1].detail
    # The locked folder the first job left is gone when the second job looks.
    assert ["a" in codec.decode(o.cases[0].value) for o in outcomes] == [False, False]
    assert jobs_per_sandbox == [2]  # cleaned up and reused, not replaced


def test_reference_and_candidate_jobs_never_share_a_warm_sandbox():
    async def go() -> dict[str, list[int]]:
        async with LocalBackend(Settings(max_concurrent_sandboxes=1)) as backend:
            for role in ("reference", "candidate", "reference"):
                await backend.run(job("def f():\n    return 1\n", role=role))
            return {role: [s.jobs for s in pool] for role, pool in backend._idle.items()}

    assert asyncio.run(go()) == {"reference": [2], "candidate": [1]}


@pytest.mark.skipif(seccomp_filter() is None, reason="no seccomp filter for this architecture")
def test_keyrings_namespaces_and_ptrace_are_refused(either):
    source = """
        import ctypes, os
        libc = ctypes.CDLL(None, use_errno=True)
        def f():
            calls = {
                "keyctl": (250, 0, ctypes.c_long(-4), 0),  # uid 0's user keyring: host-wide
                "unshare": (272, 0x10000000),  # a user namespace would give capabilities back
                "ptrace": (101, 0, 0, 0, 0),
            }
            refused = []
            for name, arguments in calls.items():
                if libc.syscall(*arguments) == -1 and ctypes.get_errno() == 1:
                    refused.append(name)
            pid = os.fork()  # ordinary process creation still works
            if pid == 0:
                os._exit(0)
            os.waitpid(pid, 0)
            return refused
        """
    outcome = run(job(source), either)
    assert "+seccomp" in outcome.containment.split("+user:")[0]
    assert codec.decode(outcome.cases[0].value) == ["keyctl", "unshare", "ptrace"]


def test_symbolic_arguments_are_parsed_inside_the_sandbox():
    case = {"args": [{"format": "critpt-value-v1", "value": ["symbolic", "x**3 + sin(x)"]}]}
    source = "import sympy\ndef f(e):\n    return sympy.diff(e, sympy.Symbol('x'))\n"
    outcome = run(job(source, case))
    assert outcome.status == "ok", outcome.detail
    assert codec.decode(outcome.cases[0].value).text == "3*x**2 + cos(x)"


def test_a_sandbox_that_cannot_start_is_unavailable_not_a_fault(either, monkeypatch):
    import critpt_grader.sandbox.local as local

    real = local.bwrap_command

    def broken(*args, **kwargs):
        return [*real(*args, **kwargs), "--no-such-bwrap-option"]

    monkeypatch.setattr(local, "bwrap_command", broken)
    outcome = run(job("def f():\n    return 1\n"), either)
    assert outcome.status == "unavailable", outcome.detail
    assert "bwrap" in outcome.detail
