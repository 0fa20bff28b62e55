"""A warm sandbox: the runner as a long-lived init that serves jobs one after another.

The init (PID 1 of the sandbox's namespace) imports the libraries once, freezes its heap and
becomes non-dumpable. It never reads a job itself: for each job it forks a fresh process
that reads the job from stdin, runs it exactly as a one-shot runner would and writes the
framed result. When that process has ended, the init resets the sandbox before the next
job: it kills every other process in the namespace, empties ``/tmp`` and ``/dev/shm`` and
removes System V IPC objects, then writes ``CRITPT-IDLE`` to stdout. If any of that fails
it exits, and the host replaces the sandbox. (POSIX message queues and kernel keyrings,
which the init could not enumerate, are refused outright by the host's seccomp filter.) So
one job cannot see another's data, files or processes; it starts from the same warm, clean
state as a fresh sandbox.

Difference from a one-shot sandbox: the process supervising a job is not the namespace's
init, so a program can kill it; the job then ends without a result (``no_result``).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import time
from pathlib import Path

from critpt_grader.runner import protocol
from critpt_grader.runner.job import run_job, warm_up, write_all

EXIT_NO_MORE_JOBS = 3
_IPC_RMID = 0
_SCRATCH = ("/tmp", "/dev/shm")


def serve() -> int:
    """Serve jobs until the host closes stdin; non-zero when the sandbox must be replaced."""
    if os.getpid() != 1:
        # The reset kills every process it may signal: only safe as a namespace's init.
        os.write(2, b"critpt runner: --serve must run as PID 1 of its own namespace\n")
        return 2
    warm_up()
    while True:
        job_process = os.fork()
        if job_process == 0:  # pragma: no cover - runs in the forked job process
            code = 1
            try:
                code = run_job(warm=True)
            except protocol.InputClosed:
                code = EXIT_NO_MORE_JOBS
            finally:
                os._exit(code)
        status = _wait_reaping_orphans(job_process)
        if not reset_namespace():
            return 4
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) == EXIT_NO_MORE_JOBS:
            return 0
        if not write_all(1, protocol.IDLE_TAG + b"\n"):
            return 1


def _wait_reaping_orphans(pid: int) -> int:
    """Wait for ``pid``; reap every orphan that reaches the init meanwhile."""
    while True:
        try:
            done, status = os.waitpid(-1, 0)
        except ChildProcessError:
            return 0
        if done == pid:
            return status


def reset_namespace() -> bool:
    """Leave the init alone in a clean sandbox; False when that cannot be confirmed."""
    for _ in range(2000):
        with contextlib.suppress(ProcessLookupError):
            os.kill(-1, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        if _only_init_left():
            break
        time.sleep(0.001)
    else:
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


def _only_init_left() -> bool:
    return [entry for entry in os.listdir("/proc") if entry.isdigit()] == ["1"]


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
