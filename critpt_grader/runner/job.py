"""One job from stdin to a framed result on stdout: limits, warm-up, supervision.

Used by the one-shot runner (``python -m critpt_grader.runner``) and, per job, by a warm
sandbox's init (:mod:`critpt_grader.runner.warm`).
"""

from __future__ import annotations

import ctypes
import errno
import gc
import math
import os
import resource
import time
from typing import Any

from critpt_grader.runner import protocol
from critpt_grader.runner.supervisor import Supervisor

_PR_SET_DUMPABLE = 4


def process_limit(limits: dict[str, Any]) -> int | None:
    """The RLIMIT_NPROC to set, or None. That limit counts every process of the user on the
    whole machine, not the sandbox's, so the host says what it should be (in the
    environment): a number, or ``none`` where a pids cgroup bounds the sandbox (or the user
    is root, whom the kernel exempts). Without word from the host: ``max_processes``."""
    told = os.environ.get(protocol.NPROC_VARIABLE, "")
    if told == "none":
        return None
    return int(told) if told.isdigit() else int(limits["max_processes"])


def apply_rlimits(limits: dict[str, Any]) -> None:
    """Limits every process of the sandbox inherits."""
    memory = int(limits["memory_mb"]) << 20
    cpu = math.ceil(float(limits["wall_seconds"])) + 1
    wanted = {
        resource.RLIMIT_AS: memory,
        resource.RLIMIT_CPU: cpu,
        resource.RLIMIT_FSIZE: int(limits["max_file_bytes"]),
        resource.RLIMIT_NOFILE: int(limits["max_open_files"]),
        resource.RLIMIT_CORE: 0,
    }
    if (processes := process_limit(limits)) is not None:
        wanted[resource.RLIMIT_NPROC] = processes
    for which, value in wanted.items():
        _, hard = resource.getrlimit(which)
        capped = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(which, (capped, capped))


def make_non_dumpable() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")


def warm_up() -> float:
    """Import what programs use, freeze the heap, become non-dumpable; return the seconds."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from critpt_grader.runner.program import preload_libraries

    started = time.monotonic()
    preload_libraries()
    imports = time.monotonic() - started
    gc.collect()
    gc.freeze()  # children share the warm heap copy-on-write
    make_non_dumpable()
    return imports


def run_job(*, warm: bool = False) -> int:
    """Read one job from stdin, run it, write the framed result to stdout.

    ``warm``: this process was forked by a warm sandbox's init (already warmed up), which
    owns the PID namespace; otherwise this process warms up itself, after the job's rlimits
    are in place, and owns the namespace only when it is its init (PID 1)."""
    started_wall = time.time()
    started = time.monotonic()
    job = protocol.read_job(0, max_bytes=64 << 20)
    limits = job["limits"]
    wall = float(limits["wall_seconds"])
    # Leave the host a margin to receive the frame before its own wall clock fires.
    deadline = started + max(wall - min(1.0, 0.1 * wall), 0.1)
    apply_rlimits(limits)
    imports = 0.0 if warm else warm_up()
    owns_namespace = os.getppid() == 1 if warm else os.getpid() == 1
    run_started = time.monotonic()
    result = Supervisor(job, limits, deadline, owns_namespace=owns_namespace).run()
    result["timings"] = {
        "runner_started": started_wall,
        "imports": imports,
        "run": time.monotonic() - run_started,
    }
    return 0 if write_all(1, protocol.format_frame(protocol.read_nonce(0), result)) else 1


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
