"""One job from stdin to a framed result on stdout: warm-up, supervision, limits.

Used by the one-shot runner (``python -m critpt_grader.runner``) and, per job, by a warm
sandbox's init (:mod:`critpt_grader.runner.warm`). Either way the process that supervises
the job is the sandbox's PID 1, which nothing in the sandbox can signal, stop or trace. It
never forks the job's processes itself: the zygote (:mod:`critpt_grader.runner.zygote`) does,
and the job reaches them in a sealed memfd, never through the zygote's memory. It never
lowers its own limits: each forked child sets the job's rlimits
(:mod:`critpt_grader.runner.limits`) before it loads the program, so they end with the
child and never reach a later job.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import gc
import os
import time

from critpt_grader.runner import protocol, world
from critpt_grader.runner.supervisor import Supervisor
from critpt_grader.runner.zygote import Zygote

_PR_SET_DUMPABLE = 4


def make_non_dumpable() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")


def warm_up(*, scipy: bool = False) -> float:
    """Import what programs use, freeze the heap, become non-dumpable; return the seconds.
    ``scipy``: warm scipy's common modules too (a warm sandbox's init, which pays once)."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from critpt_grader.runner.program import preload_libraries

    started = time.monotonic()
    preload_libraries(scipy=scipy)
    imports = time.monotonic() - started
    gc.collect()
    gc.freeze()  # children share the warm heap copy-on-write
    make_non_dumpable()
    return imports


def run_job(zygote: Zygote | None = None) -> int:
    """Read one job from stdin, run it, write the framed result to stdout.

    ``zygote``: this process is a warm sandbox's init, warmed up, with its zygote forked
    before any job; otherwise it warms up and starts a zygote for this one job itself. It
    owns the namespace (and may signal all of it) only as its PID 1."""
    text = protocol.read_job_bytes(0, max_bytes=64 << 20)
    # The clock starts when the job has arrived: a warm sandbox may wait idle for minutes.
    started_wall = time.time()
    started = time.monotonic()
    job = protocol.parse_job(text)
    if os.environ.get(protocol.UNPRIVILEGED_VARIABLE) == "1" and 0 in privileges():
        # Seen from inside, before any of the job runs: the host asked for an unprivileged
        # user and did not get one (Daytona runs commands as root unless they drop).
        why = f"the runner runs as uid/gid 0 in its sandbox (uids, gids {privileges()})"
        refusal = {"status": "unavailable", "detail": why, "cases": [None] * len(job["cases"])}
        frame = protocol.format_frame(protocol.read_nonce(0), refusal)
        return 0 if write_all(1, frame) else 1
    limits = job["limits"]
    wall = float(limits["wall_seconds"])
    # Leave the host a margin to receive the frame before its own wall clock fires.
    deadline = started + max(wall - min(1.0, 0.1 * wall), 0.1)
    imports = 0.0
    own_zygote = zygote is None
    if zygote is None:
        imports = warm_up()
        zygote = start_zygote()
    job_fd = sealed_memfd(text)
    del text
    run_started = time.monotonic()
    try:
        supervisor = Supervisor(
            job, job_fd, zygote, limits, deadline, owns_namespace=os.getpid() == 1
        )
        result = supervisor.run()
    finally:
        os.close(job_fd)
        if own_zygote:
            zygote.close()
    result["timings"] = {
        "runner_started": started_wall,
        "imports": imports,
        "run": time.monotonic() - run_started,
    }
    return 0 if write_all(1, protocol.format_frame(protocol.read_nonce(0), result)) else 1


def privileges() -> tuple[int, ...]:
    """Real, effective and saved uid, then gid, as this process sees them."""
    return (*os.getresuid(), *os.getresgid())


def start_zygote() -> Zygote:
    """The zygote, giving every process a world of its own when the host asks for that
    (:mod:`critpt_grader.runner.world`); then this process, which needs no privilege after
    that, gives up its capabilities."""
    worlds = world.required()
    zygote = Zygote.start(worlds=worlds)
    if worlds:
        world.drop_capabilities()
    return zygote


def sealed_memfd(data: bytes) -> int:
    """A memfd holding ``data`` that nobody can change any more: a child reads its job here."""
    fd = os.memfd_create("critpt-job", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    seals = fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, seals)
    return fd


def write_all(fd: int, data: bytes) -> bool:
    while data:
        try:
            data = data[os.write(fd, data) :]
        except InterruptedError:
            continue
        except OSError as exc:
            if exc.errno == errno.EPIPE:
                return False
            raise
    return True
