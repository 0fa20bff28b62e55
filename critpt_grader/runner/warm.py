"""A warm sandbox: the runner as a long-lived init that serves jobs one after another.

The init (PID 1 of the sandbox's namespace) ignores every signal a job could send it,
imports the libraries once, freezes its heap, becomes non-dumpable and forks the zygote
(:mod:`critpt_grader.runner.zygote`) — all before the first job. It supervises each job
itself, exactly as a one-shot runner would: it reads the job from stdin, has the zygote fork
a fresh child per run of cases (the child reads the job from a sealed memfd and sets the
job's rlimits on itself) and writes the framed result. As the namespace's init it cannot be
killed, stopped or traced from inside, so a program cannot stretch its case limit. After
the job it resets the sandbox: it kills every other process in the namespace but the zygote,
empties ``/tmp`` and ``/dev/shm`` (the only writable places) and removes System V IPC
objects. Then it checks itself: the zygote must still run, and its own rlimits, priority,
CPU affinity and OOM score must be what they were when it started (the seccomp filter
already refuses changing them from another process; this is the second line). Only then
does it write ``CRITPT-IDLE`` to stdout. If anything fails it exits, and the host replaces
the sandbox. (POSIX message queues and kernel keyrings, which the init could not enumerate,
are refused outright by the seccomp filter.)

So one job cannot see another's data, files or processes, nor change what a later job gets:
every job's processes come from the zygote, whose memory is the warm-up's and no job's, and
each starts from the same warm, clean state as a fresh sandbox — in a world of its own
(:mod:`critpt_grader.runner.world`: its own PID, mount, IPC and network namespaces, fresh
``/tmp`` and ``/dev/shm``, its own ``/proc``), so that no counter one job moves reaches the
next. The init refuses to serve without worlds (``CRITPT_GRADER_JOB_WORLDS``); the reset
above is then a second line: a job's files and IPC objects went with its world.
"""

from __future__ import annotations

import ctypes
import os
import resource
import sys
from pathlib import Path
from typing import Any

from critpt_grader.runner import protocol, signals, world
from critpt_grader.runner.job import run_job, start_zygote, warm_up, write_all
from critpt_grader.runner.namespace import kill_others
from critpt_grader.runner.zygote import Zygote

_IPC_RMID = 0
_SCRATCH = ("/tmp", "/dev/shm")


def serve(*, scipy: bool = False) -> int:
    """Serve jobs until the host closes stdin; non-zero when the sandbox must be replaced.
    ``scipy``: preload SciPy's common modules too (the host asks for it for jobs that name
    SciPy; every other sandbox's forks stay smaller and cheaper without it)."""
    if os.getpid() != 1:
        # The reset kills every process it may signal: only safe as a namespace's init.
        os.write(2, b"critpt runner: --serve must run as PID 1 of its own namespace\n")
        return 2
    if not world.required():
        # Jobs one after another in one sandbox: only with a world of its own for each.
        os.write(2, b"critpt runner: --serve needs a world per job (CRITPT_GRADER_JOB_WORLDS)\n")
        return 2
    signals.ignore_all()
    warm_up(scipy=scipy)
    before = own_state()
    zygote = start_zygote()  # before the first job: its memory holds no job's data
    if not write_all(1, protocol.IDLE_TAG + b"\n"):  # ready: the imports are done
        return 1
    while True:
        try:
            code = run_job(zygote)
        except protocol.InputClosed:
            return 0
        if code != 0 or not reset_namespace(zygote):
            return 4
        if not zygote.alive():
            sys.stderr.write("critpt runner: a job ended the zygote\n")
            return 6  # retire: no process can be started any more
        if changed := [key for key, value in own_state().items() if before[key] != value]:
            sys.stderr.write(f"critpt runner: a job changed PID 1's {', '.join(changed)}\n")
            return 5  # retire: the host starts a fresh sandbox for the next job
        if not write_all(1, protocol.IDLE_TAG + b"\n"):
            return 1


def own_state() -> dict[str, Any]:
    """What a job must not be able to change about the init: its limits, its scheduling
    priority and CPU affinity, its OOM score."""
    # One name per limit (RLIMIT_OFILE is RLIMIT_NOFILE): the last in reverse order wins.
    names = sorted((n for n in dir(resource) if n.startswith("RLIMIT_")), reverse=True)
    limits = {getattr(resource, name): name for name in names}
    state: dict[str, Any] = {
        f"rlimit {name}": resource.getrlimit(number) for number, name in limits.items()
    }
    state["priority"] = os.getpriority(os.PRIO_PROCESS, 0)
    state["CPU affinity"] = os.sched_getaffinity(0)
    state["scheduling policy"] = os.sched_getscheduler(0)
    try:
        state["OOM score"] = Path("/proc/self/oom_score_adj").read_text().strip()
    except OSError:
        state["OOM score"] = None
    return state


def reset_namespace(zygote: Zygote) -> bool:
    """Leave the init and the zygote alone in a clean sandbox; False when that cannot be
    confirmed."""
    if not kill_others(zygote):
        return False
    try:
        kept = _mount_points_and_their_folders()
        for folder in _SCRATCH:
            if os.path.isdir(folder):
                os.chmod(folder, 0o1777)  # a program may have locked the folder itself
                _empty(folder, kept)
        return _remove_sysv_ipc()
    except (OSError, RecursionError):
        return False


def _mount_points_and_their_folders() -> frozenset[str]:
    """Read-only binds can sit under /tmp (the runtime of a checkout or venv there): the
    mount points and the folders leading to them stay; everything else goes."""
    kept: set[str] = set()
    with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as mounts:
        for line in mounts:
            point = line.split()[4].replace("\\040", " ")
            for scratch in _SCRATCH:
                if point.startswith(scratch + "/"):
                    path = Path(point)
                    kept.update(str(p) for p in (path, *path.parents))
    return frozenset(kept)


def _empty(folder: str, kept: frozenset[str] = frozenset()) -> None:
    """Remove everything inside ``folder`` but the ``kept`` paths, even what a program
    locked with chmod 000."""
    for entry in os.scandir(folder):
        if entry.path in kept:
            if not os.path.ismount(entry.path):
                _empty(entry.path, kept)  # a folder leading to a bind: clear around it
            continue
        if entry.is_dir(follow_symlinks=False):
            os.chmod(entry.path, 0o700)  # the owner may always do this, capabilities or not
            _empty(entry.path)
            os.rmdir(entry.path)
        else:
            os.unlink(entry.path)


def _remove_sysv_ipc() -> bool:
    """Shared memory, semaphores and message queues outlive their processes: remove them."""
    libc = ctypes.CDLL(None, use_errno=True)
    removers = {
        "shm": lambda ident: libc.shmctl(ident, _IPC_RMID, None),
        "sem": lambda ident: libc.semctl(ident, 0, _IPC_RMID),
        "msg": lambda ident: libc.msgctl(ident, _IPC_RMID, None),
    }
    for kind, remove in removers.items():
        table = Path("/proc/sysvipc") / kind
        if not table.exists():
            continue
        for ident in _ipc_ids(table):
            remove(ident)
        if _ipc_ids(table):
            return False
    return True


def _ipc_ids(table: Path) -> list[int]:
    rows = table.read_text().splitlines()[1:]
    return [int(row.split()[1]) for row in rows if row.split()]
