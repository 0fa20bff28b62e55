"""Ending every job process of a sandbox's PID namespace, and only those.

Used only by the namespace's init (the supervisor), where every other process but the zygote
belongs to a job. ``kill(-1)`` would reach the zygote too, so the processes are listed from
``/proc`` and killed one by one until none but the kept ones remain: a killed process cannot
fork again, and the pids cgroup bounds how many there are, so the loop ends. A pid cannot be
reused under our feet: nothing else forks while it runs (the zygote only forks on request).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time

from critpt_grader.runner.zygote import Zygote

_ROUNDS = 2000


def kill_others(zygote: Zygote) -> bool:
    """SIGKILL every process but this one (PID 1) and the zygote, reaping what is ours; True
    once none is left."""
    for _ in range(_ROUNDS):
        keep = {str(os.getpid())} | (set() if zygote.dead else {str(zygote.pid)})
        others = [entry for entry in os.listdir("/proc") if entry.isdigit() and entry not in keep]
        for pid in others:
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)
        # A job's killed process stays a zombie until the zygote reaps it: let a stopped
        # zygote go on; orphans are ours to reap.
        zygote.resume()
        reap_orphans(zygote)
        if not others:
            return True
        time.sleep(0.001)
    return False


def reap_orphans(zygote: Zygote) -> None:
    """Reap every ended child of this process without waiting; note the zygote's end."""
    with contextlib.suppress(ChildProcessError):
        while True:
            pid, _ = os.waitpid(-1, os.WNOHANG)
            if not pid:
                return
            zygote.reaped(pid)
