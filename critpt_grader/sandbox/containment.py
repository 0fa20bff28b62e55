"""Host-side containment pieces: a cgroup per sandbox and the bubblewrap probe.

Root ignores ``RLIMIT_NPROC``, so a fork bomb run as root is only stopped by a ``pids``
cgroup. Each sandbox gets its own cgroup (v1 ``pids``, plus ``memory`` when writable) under
the grader's own cgroup, so limits nest inside whatever the operator set. The launcher places
itself in it before it execs bubblewrap; afterwards every process still in it is killed and
the cgroup is removed. Where cgroups cannot be created the caller falls back and records it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
PROBE_SECONDS = 10.0


@dataclass(frozen=True, slots=True)
class Containment:
    """Which containment a sandbox had; ``label`` is what every outcome records."""

    bwrap: bool
    cgroup: bool
    root: bool
    seccomp: bool = False  # only ever with bubblewrap, which loads the filter

    @property
    def label(self) -> str:
        if self.bwrap:
            base = "bwrap+cgroup" if self.cgroup else "bwrap+rlimits"
            return base + ("+seccomp" if self.seccomp else "")
        return "cgroup+rlimits" if self.cgroup else "rlimits-only"

    @property
    def strong(self) -> bool:
        """A fork bomb and the host's files are both out of reach."""
        return self.bwrap and (self.cgroup or not self.root)


def own_cgroup(controller: str) -> Path | None:
    """This process's cgroup directory for a v1 ``controller``, when mounted and writable."""
    mount = CGROUP_ROOT / controller
    if not (mount / "cgroup.procs").exists():
        return None
    relative = "/"
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            if controller in controllers.split(","):
                relative = path
    here = mount / relative.lstrip("/")
    here = here if here.is_dir() else mount
    return here if os.access(here, os.W_OK) else None


@dataclass(slots=True)
class Cgroup:
    """One sandbox's cgroup directories (one per controller)."""

    directories: tuple[Path, ...]

    @property
    def procs_files(self) -> tuple[str, ...]:
        return tuple(str(directory / "cgroup.procs") for directory in self.directories)

    def pids(self) -> set[int]:
        found: set[int] = set()
        for procs in self.procs_files:
            with contextlib.suppress(OSError, ValueError):
                found.update(int(pid) for pid in Path(procs).read_text().split())
        return found

    def oom_kills(self) -> int:
        """How many processes the memory controller killed in this cgroup so far."""
        for directory in self.directories:
            control = directory / "memory.oom_control"
            with contextlib.suppress(OSError, ValueError):
                for line in control.read_text().splitlines():
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return int(value)
        return 0

    def kill_all(self, wait_seconds: float = 5.0) -> bool:
        """SIGKILL every member until none is left; True when the cgroup is empty."""
        end = time.monotonic() + wait_seconds
        while members := self.pids():
            for pid in members:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            if time.monotonic() >= end:
                return False
            time.sleep(0.005)
        return True

    def remove(self, wait_seconds: float = 5.0) -> bool:
        """Remove the directories; an emptied cgroup can take a moment to become removable."""
        end = time.monotonic() + wait_seconds
        remaining = list(self.directories)
        while remaining:
            for directory in list(remaining):
                try:
                    directory.rmdir()
                    remaining.remove(directory)
                except FileNotFoundError:
                    remaining.remove(directory)
                except OSError:
                    pass
            if not remaining or time.monotonic() >= end:
                break
            time.sleep(0.01)
        return not remaining


def create_cgroup(name: str, *, max_processes: int, memory_bytes: int) -> Cgroup | None:
    """A fresh cgroup named ``name``: ``pids.max`` always, a memory limit when possible.

    None when no ``pids`` cgroup can be made (not root, no v1 hierarchy)."""
    pids_parent = own_cgroup("pids")
    if pids_parent is None:
        return None
    directories: list[Path] = []
    try:
        pids_dir = pids_parent / name
        pids_dir.mkdir()
        directories.append(pids_dir)
        (pids_dir / "pids.max").write_text(str(max_processes))
    except OSError:
        Cgroup(tuple(directories)).remove(wait_seconds=0.1)
        return None
    memory_parent = own_cgroup("memory")
    if memory_parent is not None:
        memory_dir = memory_parent / name
        try:
            memory_dir.mkdir()
            directories.append(memory_dir)
            (memory_dir / "memory.limit_in_bytes").write_text(str(memory_bytes))
        except OSError:
            # The pids limit is what root needs; memory stays bounded by RLIMIT_AS.
            if memory_dir in directories:
                directories.remove(memory_dir)
                with contextlib.suppress(OSError):
                    memory_dir.rmdir()
    return Cgroup(tuple(directories))


@cache
def cgroups_available() -> bool:
    """Whether this process can create (and remove) a pids cgroup. Also removes the empty
    cgroups that grader processes which ended without cleaning up left behind."""
    probe = create_cgroup(f"critpt-probe-{os.getpid()}", max_processes=8, memory_bytes=1 << 26)
    if probe is None:
        return False
    probe.remove(wait_seconds=1.0)
    sweep_stale_cgroups()
    return True


def sweep_stale_cgroups() -> list[Path]:
    """Remove sandbox cgroups (``critpt-<pid>-...``) whose creating process is gone and
    which hold no process; return what was removed."""
    removed = []
    for controller in ("pids", "memory"):
        parent = own_cgroup(controller)
        if parent is None:
            continue
        for directory in parent.glob("critpt-*-*"):
            owner = directory.name.split("-")[1]
            if not owner.isdigit() or Path(f"/proc/{owner}").exists():
                continue  # the owner may still be running (or its pid was reused): keep
            with contextlib.suppress(OSError):
                directory.rmdir()  # fails, harmlessly, while a process is still inside
                removed.append(directory)
    return removed


def process_budget(cgroup: Cgroup | None, max_processes: int, sandboxes: int) -> str:
    """What a sandbox's runner should set as RLIMIT_NPROC (see the runner's
    ``process_limit``): ``none`` under a pids cgroup or as root; otherwise the user's
    current process count plus room for every sandbox this grader may run at once."""
    if cgroup is not None or os.geteuid() == 0:
        return "none"
    return str(user_task_count() + max_processes * sandboxes)


def user_task_count(uid: int | None = None) -> int:
    """Processes and threads of ``uid`` on this machine: what RLIMIT_NPROC counts."""
    uid = os.getuid() if uid is None else uid
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if entry.stat().st_uid == uid:
                    count += len(os.listdir(f"/proc/{entry.name}/task"))
    return count


@cache
def bwrap_works(bwrap: str = "bwrap") -> bool:
    """Whether bubblewrap runs here with every option a sandbox uses (probed once)."""
    path = shutil.which(bwrap)
    if path is None:
        return False
    options = [
        "--unshare-all", "--die-with-parent", "--new-session", "--as-pid-1",
        "--ro-bind", "/", "/", "--size", str(1 << 20), "--tmpfs", "/tmp",
        "--proc", "/proc", "--dev", "/dev", "--cap-drop", "ALL", "--clearenv",
    ]  # fmt: skip
    try:
        completed = subprocess.run(
            [path, *options, "true"],
            capture_output=True,
            timeout=PROBE_SECONDS,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return completed.returncode == 0


@cache
def bwrap_seccomp_works(bwrap: str = "bwrap") -> bool:
    """Whether bubblewrap loads the sandbox's seccomp filter here (probed once)."""
    from critpt_grader.sandbox.seccomp import filter_fd, seccomp_filter

    path, program = shutil.which(bwrap), seccomp_filter()
    if path is None or program is None:
        return False
    fd = filter_fd(program)
    try:
        completed = subprocess.run(
            [path, "--unshare-all", "--ro-bind", "/", "/", "--seccomp", str(fd), "true"],
            capture_output=True,
            timeout=PROBE_SECONDS,
            check=False,
            pass_fds=(fd,),
        )
    except (OSError, subprocess.SubprocessError):
        return False
    finally:
        os.close(fd)
    return completed.returncode == 0


# The launcher joins each cgroup named in its arguments, then execs the rest: the process is
# contained before bubblewrap (and anything it starts) exists.
LAUNCH_FAILED = 125  # the launcher's exit code when it cannot join a cgroup
CGROUP_LAUNCHER = (
    'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done;'
    ' exec "$@"'
)


def launcher_prefix(cgroup: Cgroup | None) -> list[str]:
    if cgroup is None:
        return []
    return [
        "/bin/sh",
        "-c",
        CGROUP_LAUNCHER,
        "sh",
        str(len(cgroup.procs_files)),
        *cgroup.procs_files,
    ]
