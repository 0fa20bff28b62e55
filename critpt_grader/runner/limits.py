"""The rlimits of the process that runs a program (set by that process, after the fork).

Only the forked child that loads and runs the program takes these on; its supervisor, the
sandbox's PID 1, keeps its own so that nothing a job does lowers what a later job gets.
"""

from __future__ import annotations

import math
import os
import resource
from typing import Any

from critpt_grader.runner import protocol


def process_limit(limits: dict[str, Any]) -> int | None:
    """The RLIMIT_NPROC to set, or None. That limit counts every process of the user on the
    whole machine, not the sandbox's, so the host says what it should be (in the
    environment): a number, or ``none`` where a pids cgroup bounds the sandbox (or the user
    is root, whom the kernel exempts). Without word from the host: ``max_processes``."""
    told = os.environ.get(protocol.NPROC_VARIABLE, "")
    if told == "none":
        return None
    return int(told) if told.isdigit() else int(limits["max_processes"])


def cpu_seconds(limits: dict[str, Any]) -> int:
    """RLIMIT_CPU for a process running the program: the wall clock's worth, and a second."""
    return math.ceil(float(limits["wall_seconds"])) + 1


def apply_rlimits(limits: dict[str, Any]) -> None:
    """Limits for the process running the program and everything it starts.

    CPU time: SIGXCPU at the soft limit, SIGKILL a second later for a program that ignores
    it; the supervisor reports either as a timeout (see ``Supervisor``)."""
    memory = int(limits["memory_mb"]) << 20
    cpu = cpu_seconds(limits)
    wanted = {
        resource.RLIMIT_AS: (memory, memory),
        resource.RLIMIT_CPU: (cpu, cpu + 1),
        resource.RLIMIT_FSIZE: (int(limits["max_file_bytes"]),) * 2,
        resource.RLIMIT_NOFILE: (int(limits["max_open_files"]),) * 2,
        resource.RLIMIT_CORE: (0, 0),
    }
    if (processes := process_limit(limits)) is not None:
        wanted[resource.RLIMIT_NPROC] = (processes, processes)
    for which, (soft, hard) in wanted.items():
        _, ceiling = resource.getrlimit(which)
        if ceiling != resource.RLIM_INFINITY:
            soft, hard = min(soft, ceiling), min(hard, ceiling)
        resource.setrlimit(which, (soft, hard))
