"""Host-side containment pieces: a cgroup per sandbox and the bubblewrap probe.

Root ignores ``RLIMIT_NPROC``, so a fork bomb run as root is only stopped by a ``pids``
cgroup. Each sandbox gets its own cgroup: ``pids.max`` always; a memory limit, and a CPU
quota with the same share as every other sandbox (so a candidate with many busy processes
gets no more CPU than one with a single process), wherever those controllers can be had. It
sits under the grader's own cgroup, so limits nest inside whatever the operator set. The
launcher places itself in it before it execs bubblewrap; afterwards every process still in it
is killed and the cgroup is removed. Where no pids cgroup can be made the caller falls back
and records it.

cgroup v1 (a hierarchy per controller, ``/sys/fs/cgroup/<controller>``): one directory per
controller under the grader's cgroup in that hierarchy. cgroup v2 (``/sys/fs/cgroup`` is a
cgroup2 mount): one directory under a parent, the ``cgroup_parent`` setting or else the
grader's own cgroup. v2 lets a cgroup enable controllers for its children only while it holds
no process itself, so the grader's own processes first move into a leaf child,
``critpt-grader``, and sandboxes become its siblings; a parent holding other processes gives
no cgroup. The v1 path is tested against the kernel (tests/unit/sandbox/test_cgroups.py);
the v2 path there only against a file tree that mimics cgroupfs, and for real only on v2
hosts, where ``critpt-grader doctor`` runs a probe sandbox through it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path

# Module-level, read at each call, so tests can point them at a file tree.
CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_SELF_CGROUP = Path("/proc/self/cgroup")
PROBE_SECONDS = 10.0

CONTROLLERS = ("pids", "memory", "cpu")  # pids is essential, the others wherever available
PARENT_VARIABLE = "CRITPT_GRADER_CGROUP_PARENT"  # the cgroup_parent setting (v2)
GRADER_LEAF = "critpt-grader"  # v2: the leaf the grader's own processes move into
CPU_PERIOD_US = 100_000
CPU_SHARES = 1024  # v1: the same share for every sandbox
CPU_WEIGHT = 100  # v2: the same weight for every sandbox
_V2_SETUP = threading.Lock()


@dataclass(frozen=True, slots=True)
class Containment:
    """Which containment a sandbox had; ``label`` is what every outcome records.

    ``user``: the host user sandboxed code runs as when a root grader dropped to it (see
    :mod:`critpt_grader.sandbox.identity`); None when code runs as the grader's own uid,
    which for a root grader means host root. ``waived``: why the operator's explicit opt-out
    (``allow_weak_containment``) let a weak sandbox run; it is shouted in the label."""

    bwrap: bool
    cgroup: bool
    root: bool
    seccomp: bool = False  # only ever with bubblewrap, which loads the filter
    user: str | None = None
    waived: str = ""
    # A world of its own for every job (runner/world.py): only ever with bubblewrap; warm
    # sandboxes need it (the label names containment, not this).
    worlds: bool = False

    @property
    def label(self) -> str:
        if self.bwrap:
            base = "bwrap+cgroup" if self.cgroup else "bwrap+rlimits"
            base += "+seccomp" if self.seccomp else ""
        else:
            base = "cgroup+rlimits" if self.cgroup else "rlimits-only"
        if self.user is not None:
            base += f"+user:{self.user}"
        elif self.root:
            base += "+HOST-ROOT"
        return f"{base} WARNING: {self.waived}" if self.waived else base

    @property
    def host_root_inside(self) -> bool:
        return self.root and self.user is None

    @property
    def strong(self) -> bool:
        """Host root, the host's files and a fork bomb are all out of reach."""
        return self.bwrap and not self.host_root_inside and (self.cgroup or not self.root)

    def weakness(self) -> str:
        """Why this containment is not strong, in words an operator can act on ('' if it is)."""
        missing = []
        if not self.bwrap:
            missing.append("bubblewrap does not run here")
        if self.host_root_inside:
            missing.append("code would run as host root (no unprivileged sandbox user)")
        if self.root and not self.cgroup:
            missing.append("root grader without a usable cgroup (root ignores RLIMIT_NPROC)")
        return "; ".join(missing)


# _write, _mkdir and _rmdir are this module's only changes to cgroups (tests swap them).
def _write(path: Path, text: str) -> None:
    """Write one control file in a single write(2), never creating it: a file that is not
    there (a controller that is not enabled) is an error here as it is in cgroupfs."""
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _mkdir(path: Path) -> None:
    path.mkdir()


def _rmdir(path: Path) -> None:
    path.rmdir()


def _words(path: Path) -> list[str]:
    try:
        return path.read_text().split()
    except OSError:
        return []


def _pids_in(procs: Path) -> set[int]:
    return {int(word) for word in _words(procs) if word.isdigit()}


def cgroup_version() -> int:
    """2 when ``CGROUP_ROOT`` is a cgroup2 mount (``cgroup.controllers`` at its top); else 1:
    a v1 hierarchy per controller (a hybrid host's controller-less v2 mount is ignored)."""
    return 2 if (CGROUP_ROOT / "cgroup.controllers").is_file() else 1


def _own_path(controller: str | None) -> str:
    """This process's cgroup path from ``/proc/self/cgroup``: the v1 line naming
    ``controller``, or for None the v2 line (``0::/path``); ``/`` when absent."""
    with contextlib.suppress(OSError, ValueError):
        for line in PROC_SELF_CGROUP.read_text().splitlines():
            hierarchy, controllers, path = line.split(":", 2)
            if controller is None and hierarchy == "0" and not controllers:
                return path
            if controller is not None and controller in controllers.split(","):
                return path
    return "/"


def _v2_directory(path: str) -> Path:
    """A v2 cgroup path as a directory; the grader's ``critpt-grader`` leaf stands for its
    parent, which is where the grader's cgroup was before the grader moved itself."""
    directory = CGROUP_ROOT / os.path.normpath(path).lstrip("/")
    return directory.parent if directory.name == GRADER_LEAF else directory


def own_cgroup(controller: str) -> Path | None:
    """The grader's own cgroup directory for ``controller``, when the controller is there and
    the directory is writable: v1, its place in that controller's hierarchy; v2, its unified
    cgroup (read through the ``critpt-grader`` leaf), if the controller is available to it."""
    if cgroup_version() == 2:
        here = _v2_directory(_own_path(None))
        if not here.is_dir() or controller not in _words(here / "cgroup.controllers"):
            return None
        return here if os.access(here, os.W_OK) else None
    mount = CGROUP_ROOT / controller
    if not (mount / "cgroup.procs").exists():
        return None
    here = mount / _own_path(controller).lstrip("/")
    here = here if here.is_dir() else mount
    return here if os.access(here, os.W_OK) else None


@dataclass(slots=True)
class Cgroup:
    """One sandbox's cgroup: a directory per controller (v1) or a single directory (v2).
    ``controllers``: the limits that were applied, out of ``pids`` (always), ``memory`` and
    ``cpu`` (a quota plus the same share as every other sandbox)."""

    directories: tuple[Path, ...]
    controllers: frozenset[str] = frozenset()
    version: int = 1

    def describe(self) -> str:
        """E.g. ``cgroup v1 pids+memory+cpu``, for labels and diagnostics."""
        applied = "+".join(c for c in CONTROLLERS if c in self.controllers)
        return f"cgroup v{self.version} {applied or 'without limits'}"

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
        """How many processes the memory controller killed in this cgroup so far: one file
        read (v2 ``memory.events``, v1 the memory directory's ``memory.oom_control``)."""
        path = self._oom_file()
        if path is None:
            return 0
        with contextlib.suppress(OSError, ValueError):
            for line in path.read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        return 0

    def _oom_file(self) -> Path | None:
        if not self.directories:
            return None
        if self.version == 2:
            return self.directories[0] / "memory.events"
        for directory in self.directories:  # v1: the one under the memory hierarchy
            try:
                mount = directory.relative_to(CGROUP_ROOT).parts[0]
            except (ValueError, IndexError):
                continue
            if "memory" in mount.split(","):
                return directory / "memory.oom_control"
        return None

    def kill_all(self, wait_seconds: float = 5.0) -> bool:
        """Kill every member until none is left (v2: ``cgroup.kill`` where the kernel has
        it, which also catches processes forked meanwhile; else SIGKILL to each member);
        True when the cgroup is empty."""
        if self.version == 2:
            for directory in self.directories:
                if (directory / "cgroup.kill").exists():
                    with contextlib.suppress(OSError):
                        _write(directory / "cgroup.kill", "1")
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
                    _rmdir(directory)
                    remaining.remove(directory)
                except FileNotFoundError:
                    remaining.remove(directory)
                except OSError:
                    pass
            if not remaining or time.monotonic() >= end:
                break
            time.sleep(0.01)
        return not remaining


def _limit_files(
    version: int, controller: str, max_processes: int, memory_bytes: int, cpus: float
) -> list[tuple[str, str, bool]]:
    """What to write for one controller: (file, value, optional); an optional file is
    written only where the kernel has it (swap accounting)."""
    # Never above ``cpus`` (v1 refuses a child quota above its parent's); at least 1 ms.
    quota = max(1000, int(cpus * CPU_PERIOD_US + 1e-6))
    table = {
        1: {
            "pids": [("pids.max", str(max_processes), False)],
            "memory": [
                ("memory.limit_in_bytes", str(memory_bytes), False),
                ("memory.memsw.limit_in_bytes", str(memory_bytes), True),  # no swap on top
            ],
            "cpu": [
                ("cpu.cfs_period_us", str(CPU_PERIOD_US), False),
                ("cpu.cfs_quota_us", str(quota), False),
                ("cpu.shares", str(CPU_SHARES), False),
            ],
        },
        2: {
            "pids": [("pids.max", str(max_processes), False)],
            "memory": [
                ("memory.max", str(memory_bytes), False),
                ("memory.swap.max", "0", True),
            ],
            "cpu": [
                ("cpu.max", f"{quota} {CPU_PERIOD_US}", False),
                ("cpu.weight", str(CPU_WEIGHT), False),
            ],
        },
    }
    return table[version][controller]


def _apply(directory: Path, files: list[tuple[str, str, bool]]) -> None:
    for name, value, optional in files:
        if optional and not (directory / name).exists():
            continue
        _write(directory / name, value)


def create_cgroup(
    name: str,
    *,
    max_processes: int,
    memory_bytes: int,
    cpus: float | None = None,
    parent: str | Path | None = None,
) -> Cgroup | None:
    """A fresh cgroup named ``name``: ``pids.max`` always; where the controllers can be had,
    a memory limit (without swap on top) and, given ``cpus``, a CPU quota of that many cores
    plus the same share (v1 ``cpu.shares``, v2 ``cpu.weight``) as every other sandbox.
    ``Cgroup.controllers`` says which took. ``parent`` (v2 only): the delegated cgroup to
    create it under; default ``CRITPT_GRADER_CGROUP_PARENT``, else the grader's own cgroup.

    None when no pids cgroup can be made (not root or delegated, no pids controller)."""
    if cgroup_version() == 2:
        return _create_v2(name, max_processes, memory_bytes, cpus, parent)
    return _create_v1(name, max_processes, memory_bytes, cpus)


def _create_v1(
    name: str, max_processes: int, memory_bytes: int, cpus: float | None
) -> Cgroup | None:
    directories: list[Path] = []
    applied: list[str] = []
    for controller in CONTROLLERS:
        if controller == "cpu" and cpus is None:
            continue
        parent = own_cgroup(controller)
        if parent is None:
            if controller == "pids":
                return None
            continue
        directory = parent / name
        # Controllers mounted together (cpu,cpuacct style) share one directory.
        shared = next(
            (d for d in directories if directory.exists() and os.path.samefile(d, directory)),
            None,
        )
        try:
            if shared is None:
                _mkdir(directory)
                directories.append(directory)
            cores = cpus or 1.0
            if controller == "cpu" and (ceiling := _v1_cpu_ceiling(parent)) is not None:
                cores = min(cores, ceiling)  # v1 refuses a quota above an ancestor's
            files = _limit_files(1, controller, max_processes, memory_bytes, cores)
            _apply(shared or directory, files)
            applied.append(controller)
        except OSError:
            if controller == "pids":
                Cgroup(tuple(directories)).remove(wait_seconds=0.1)
                return None
            # pids is what root needs; memory stays bounded by RLIMIT_AS, CPU time by
            # RLIMIT_CPU.
            if shared is None and directory in directories:
                directories.remove(directory)
                with contextlib.suppress(OSError):
                    _rmdir(directory)
    return Cgroup(tuple(directories), frozenset(applied), version=1)


def _v1_cpu_ceiling(directory: Path) -> float | None:
    """The tightest CPU quota, in cores, on ``directory`` and its ancestors in a v1 cpu
    hierarchy; None when none has a quota."""
    ceiling = None
    for here in (directory, *directory.parents):
        if here == CGROUP_ROOT or not here.is_relative_to(CGROUP_ROOT):
            break
        with contextlib.suppress(OSError, ValueError):
            quota = int((here / "cpu.cfs_quota_us").read_text())
            period = int((here / "cpu.cfs_period_us").read_text())
            if quota > 0 and period > 0:
                ceiling = min(ceiling or quota / period, quota / period)
    return ceiling


def _create_v2(
    name: str,
    max_processes: int,
    memory_bytes: int,
    cpus: float | None,
    parent: str | Path | None,
) -> Cgroup | None:
    with _V2_SETUP:  # sandboxes start from several threads; delegate the parent once
        directory_parent = _v2_parent(parent)
        if directory_parent is None or not _delegate(directory_parent):
            return None
    directory = directory_parent / name
    try:
        _mkdir(directory)
    except OSError:
        return None
    cgroup = Cgroup((directory,), version=2)
    applied: list[str] = []
    for controller in CONTROLLERS:
        if controller == "cpu" and cpus is None:
            continue
        try:
            _apply(directory, _limit_files(2, controller, max_processes, memory_bytes, cpus or 1.0))
            applied.append(controller)
        except OSError:  # e.g. memory.max missing: the parent could not enable memory
            if controller == "pids":
                cgroup.remove(wait_seconds=0.1)
                return None
    cgroup.controllers = frozenset(applied)
    return cgroup


def _v2_parent(parent: str | Path | None) -> Path | None:
    """Where v2 sandbox cgroups go: ``parent``, else ``CRITPT_GRADER_CGROUP_PARENT`` (a
    path under the mount, ``/sys/fs/cgroup/grader.slice``, or as ``/proc/self/cgroup``
    shows it, ``/grader.slice``), else the grader's own cgroup. None when not a writable
    directory."""
    spec = str(parent) if parent else os.environ.get(PARENT_VARIABLE, "")
    if spec:
        path = Path(os.path.normpath(spec))
        directory = path if path.is_relative_to(CGROUP_ROOT) else _v2_directory(spec)
    else:
        directory = _v2_directory(_own_path(None))
    return directory if directory.is_dir() and os.access(directory, os.W_OK) else None


def _delegate(directory: Path) -> bool:
    """Let ``directory`` give pids (essential), memory and cpu to new children: enable them
    in its ``cgroup.subtree_control``. Outside the root cgroup v2 allows that only while the
    cgroup holds no process itself ("no internal processes"), so the grader's own processes
    move first into the ``critpt-grader`` leaf. False when pids cannot be had."""
    available = _words(directory / "cgroup.controllers")
    control = directory / "cgroup.subtree_control"
    if "pids" not in available or not os.access(control, os.W_OK):
        return False
    enabled = _words(control)
    missing = [c for c in CONTROLLERS if c in available and c not in enabled]
    if not missing:
        return True
    # Only the root cgroup lacks cgroup.type, and only it may hold processes meanwhile.
    if (directory / "cgroup.type").exists() and not _move_grader_to_leaf(directory):
        return False
    for controller in missing:
        try:
            _write(control, "+" + controller)
        except OSError:
            if controller == "pids":
                return False
    return True


def _move_grader_to_leaf(directory: Path) -> bool:
    """Empty ``directory`` of processes by moving them into its ``critpt-grader`` leaf, only
    when every one is the grader's own (itself, what it started, what started it): another
    service's processes are not ours to move. True when no process is left in it."""
    leaf = directory / GRADER_LEAF
    for _ in range(3):  # a process may fork meanwhile; its child lands beside it
        members = _pids_in(directory / "cgroup.procs")
        if not members:
            return True
        if members - _grader_processes(members):
            return False
        try:
            if not leaf.is_dir():
                _mkdir(leaf)
            for pid in sorted(members):
                with contextlib.suppress(ProcessLookupError):  # exited meanwhile
                    _write(leaf / "cgroup.procs", str(pid))
        except OSError:
            return False
    return not _pids_in(directory / "cgroup.procs")


def _parent_pid(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return int(stat.rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _grader_processes(members: set[int]) -> set[int]:
    """Those of ``members`` that are this process, one of its ancestors or descendants, or
    that have exited (nothing to move)."""
    me = os.getpid()
    ancestors: set[int] = set()
    pid = me
    while pid > 0 and pid not in ancestors:
        ancestors.add(pid)
        pid = _parent_pid(pid)
    ours = set()
    for member in members:
        if member in ancestors or not Path(f"/proc/{member}").exists():
            ours.add(member)
            continue
        seen: set[int] = set()
        pid = member
        while pid > 0 and pid not in seen:
            if pid == me:
                ours.add(member)
                break
            seen.add(pid)
            pid = _parent_pid(pid)
    return ours


@cache
def cgroups_available(parent: str | Path | None = None) -> bool:
    """Whether this process can create (and remove) a pids cgroup (under ``parent`` on v2,
    see :func:`create_cgroup`). Also removes the empty cgroups that grader processes which
    ended without cleaning up left behind."""
    probe = create_cgroup(
        f"critpt-probe-{os.getpid()}",
        max_processes=8,
        memory_bytes=1 << 26,
        cpus=1.0,
        parent=parent,
    )
    if probe is None:
        return False
    probe.remove(wait_seconds=1.0)
    sweep_stale_cgroups(parent)
    return True


def sweep_stale_cgroups(parent: str | Path | None = None) -> list[Path]:
    """Remove sandbox cgroups (``critpt-<pid>-...``) whose creating process is gone and
    which hold no process; return what was removed."""
    if cgroup_version() == 2:
        parents = [_v2_parent(parent)]
    else:
        parents = [own_cgroup(controller) for controller in CONTROLLERS]
    removed = []
    for directory_parent in dict.fromkeys(p for p in parents if p is not None):
        for directory in directory_parent.glob("critpt-*-*"):
            owner = directory.name.split("-")[1]
            if not owner.isdigit() or Path(f"/proc/{owner}").exists():
                continue  # the owner may still be running (or its pid was reused): keep
            with contextlib.suppress(OSError):
                _rmdir(directory)  # fails, harmlessly, while a process is still inside
                removed.append(directory)
    return removed


def process_budget(
    cgroup: Cgroup | None, max_processes: int, sandboxes: int, uid: int | None = None
) -> str:
    """What a sandbox's runner should set as RLIMIT_NPROC (see the runner's
    ``process_limit``): ``none`` under a pids cgroup or for code running as root (whom the
    kernel exempts); otherwise the sandbox user's current process count plus room for every
    sandbox this grader may run at once (the limit counts all of that user's processes)."""
    uid = os.getuid() if uid is None else uid
    if cgroup is not None or uid == 0:
        return "none"
    return str(user_task_count(uid) + max_processes * sandboxes)


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
def bwrap_works(bwrap: str = "bwrap", prefix: tuple[str, ...] = ()) -> bool:
    """Whether bubblewrap runs here with every option a sandbox uses, started through
    ``prefix`` (the drop to the sandbox user) as sandboxes are (probed once)."""
    path = shutil.which(bwrap)
    if path is None:
        return False
    options = [
        "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
        "--new-session", "--as-pid-1", "--ro-bind", "/", "/", "--size", str(1 << 20),
        "--tmpfs", "/tmp", "--proc", "/proc", "--dev", "/dev", "--size", str(1 << 20),
        "--tmpfs", "/dev/shm", "--remount-ro", "/dev", "--remount-ro", "/", "--remount-ro", "/proc",
        "--cap-drop", "ALL", "--clearenv",
    ]  # fmt: skip
    try:
        completed = subprocess.run(
            [*prefix, path, *options, "true"],
            capture_output=True,
            timeout=PROBE_SECONDS,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return completed.returncode == 0


@cache
def bwrap_seccomp_works(bwrap: str = "bwrap", prefix: tuple[str, ...] = ()) -> bool:
    """Whether bubblewrap loads the sandbox's seccomp filter here, started through
    ``prefix`` as sandboxes are (probed once)."""
    from critpt_grader.sandbox.seccomp import filter_fd, seccomp_filter

    path, program = shutil.which(bwrap), seccomp_filter()
    if path is None or program is None:
        return False
    fd = filter_fd(program)
    try:
        completed = subprocess.run(
            [*prefix, path, "--unshare-all", "--ro-bind", "/", "/", "--seccomp", str(fd), "true"],
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
