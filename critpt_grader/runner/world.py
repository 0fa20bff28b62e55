"""A world of its own for every process the zygote starts: nothing a job moves reaches the next.

Reading what an earlier job computed is closed by the zygote (:mod:`.zygote`). Leaving a
note is closed here. Two jobs of one warm sandbox would otherwise share kernel state that
one can move and the next can read: the pid counter (fork until the next pid, modulo 64,
encodes an answer; the next job reads ``os.getpid()``), the inode counter of ``/tmp``
(create and unlink), SysV IPC ids, the loopback's packet counters, ``/proc``'s counts of
forks and the last pid. Burning a random number of them only adds noise; so nothing is
shared. For every process it starts, the zygote makes (:meth:`Worlds.enter`):

  * a new **PID namespace**, whose init is a do-nothing process (``critpt-job-init``, an
    exec'd ``sleep``: no Python, nothing of the warm heap) and whose second process is the
    job's; its pids do not depend on what ran before, and the job sees neither the
    supervisor nor the zygote, so it can signal neither. When the job's process has ended
    the zygote kills the init, and the kernel kills whatever else lives in the namespace;
  * a new **mount namespace** with fresh size-limited tmpfs on ``/tmp`` (also ``$HOME`` and
    the working folder) and ``/dev/shm`` — fresh inode numbers — and, mounted by the job's
    process itself, a fresh read-only ``/proc`` of its own PID namespace that shows
    processes only (``subset=pid``): no ``/proc/loadavg`` last pid, no ``/proc/stat`` fork
    count, no ``/proc/sys``, ``/proc/sysvipc`` or the host's other counters;
  * a new **IPC namespace** (SysV ids start afresh; POSIX queues are refused by seccomp)
    and a new **network namespace** whose loopback is up, as the sandbox's was (fresh
    packet counters, ports, sockets and abstract socket names).

The job's process then drops every capability (bounding and ambient sets too) and puts
itself under the job's seccomp filter (:mod:`.seccomp`) before it loads the program.

**The invariant.** A job's process starts in a world no earlier job touched: what it can
read of pids, inode numbers and device numbers of its writable filesystems, IPC ids, file
descriptor numbers, namespace and mount ids and ``/proc`` does not depend on anything an
earlier job did. Its namespaces' ids and its mounts' ids come from the kernel's allocators,
which a job cannot move: it can neither mount nor make namespaces.

**Out of scope**, said plainly: what the kernel keeps for the whole host and no namespace
separates. Timing and load (CPU, memory, page cache, ``/proc/self/stat`` times) are noisy
side channels. Inode numbers of pipes, sockets, ``/proc`` entries and pidfds, and of
memfds and shared anonymous memory come from host-wide counters (``get_next_ino``, the
kernel's internal tmpfs, pidfs) that every process on the machine moves; a job can move
them and a later one read them (docs/decide/containment.md, "Out of scope"). Closing those
takes a kernel per job (a microVM).

**How.** Bubblewrap starts the runner in a user namespace with ``CAP_SYS_ADMIN``,
``CAP_SYS_CHROOT``, ``CAP_NET_ADMIN`` and ``CAP_SETPCAP`` in it (only in it) and under
the runner's seccomp filter, which allows ``unshare``, ``setns`` and ``mount``. The
supervisor forks the zygote into a PID namespace of its own (:func:`start_pid_namespace`;
the supervisor then drops its capabilities); the zygote moves into mount, IPC and network
namespaces of its own (its *home*, :meth:`Worlds.prepare`) — namespaces it may later
``setns`` back into, which bubblewrap's own are not. Per process it ``unshare``s, mounts,
spawns the init, forks the job's process and goes home (:meth:`Worlds.leave`) before it
answers: a job never runs while the zygote is inside its world. Two forks of a warm heap
would double the cost of a row, so the init is a ``posix_spawn`` of ``sleep``, and the
zygote stays the job's process's parent (its ``getppid()`` is 0) and reaps it as before.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import shutil
import signal
import socket
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field

from critpt_grader.runner import seccomp

VARIABLE = "CRITPT_GRADER_JOB_WORLDS"  # "1": the host asks for a world per job (and grants it)
INIT_NAME = "critpt-job-init"  # the command line of a job's PID 1, as the job sees it
SCRATCH = ("/tmp", "/dev/shm")
# The capabilities the runner needs in the sandbox's user namespace (bubblewrap --cap-add).
CAPABILITIES = ("CAP_SYS_ADMIN", "CAP_SYS_CHROOT", "CAP_NET_ADMIN", "CAP_SETPCAP")

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWNET, CLONE_NEWPID = 0x20000, 0x8000000, 0x40000000, 0x20000000
JOB_NAMESPACES = CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWPID
HOME = {"mnt": CLONE_NEWNS, "ipc": CLONE_NEWIPC, "net": CLONE_NEWNET, "pid": CLONE_NEWPID}

_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
_MS_BIND, _MS_REC, _MS_PRIVATE = 0x1000, 0x4000, 0x40000
_SIOCSIFFLAGS, _IFF_UP = 0x8914, 0x1
_PR_CAPBSET_DROP, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 24, 47, 4
_CAPABILITY_VERSION_3 = 0x20080522

_libc = ctypes.CDLL(None, use_errno=True)


def required() -> bool:
    """Whether the host asked this runner to give every job a world of its own."""
    return os.environ.get(VARIABLE) == "1"


def _check(result: int, what: str) -> None:
    if result != 0:
        number = ctypes.get_errno()
        raise OSError(number, f"{what}: {os.strerror(number)}")


def _mount(source: str | None, target: str, kind: str | None, flags: int, data: str = "") -> None:
    encode = lambda text: text.encode() if text else None  # noqa: E731
    _check(
        _libc.mount(encode(source), target.encode(), encode(kind), flags, encode(data)),
        f"mount {target}",
    )


def unshare(flags: int) -> None:
    _check(_libc.unshare(flags), "unshare")


def start_pid_namespace() -> None:
    """Make the caller's next child the init of a new PID namespace (the zygote's), so that
    the zygote can go back to it after each job's (``setns`` into bubblewrap's own needs
    capabilities there, which the runner does not have)."""
    unshare(CLONE_NEWPID)


def drop_capabilities(bounding: list[int] | None = None) -> None:
    """Give up every capability for good: the bounding set (``bounding``, else read from
    /proc; where ``CAP_SETPCAP`` allows), the ambient, inheritable, permitted and effective
    sets."""
    for number in _held("CapBnd") if bounding is None else bounding:
        _libc.prctl(_PR_CAPBSET_DROP, number, 0, 0, 0)  # EPERM without CAP_SETPCAP: harmless
    _check(_libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "clear ambient")
    header = (ctypes.c_uint32 * 2)(_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable: two words each, zero
    _check(_libc.capset(header, data), "capset")


def _held(field_name: str) -> list[int]:
    """The capability numbers set in ``field_name`` of /proc/self/status."""
    with open("/proc/self/status", encoding="ascii", errors="replace") as status:
        for line in status:
            if line.startswith(field_name + ":"):
                mask = int(line.split()[1], 16)
                return [bit for bit in range(64) if mask >> bit & 1]
    return []


def _under_seccomp() -> bool:
    with open("/proc/self/status", encoding="ascii", errors="replace") as status:
        return any(line.split() == ["Seccomp:", "2"] for line in status)


@dataclass
class Worlds:
    """The zygote's means of making a world per process (see the module docstring). Its
    methods run only in the zygote, one thread, no other process sharing its files."""

    home: dict[str, int] = field(default_factory=dict)  # namespace descriptors to go back to
    sizes: dict[str, int] = field(default_factory=dict)  # each scratch folder's tmpfs bytes
    binds: dict[str, list[str]] = field(default_factory=dict)  # read-only mounts under them
    init: str = ""  # the program a job's PID 1 runs
    job_filter: bytes | None = None  # installed by each job's process, when the runner has one
    bounding: list[int] = field(default_factory=list)  # the zygote's bounding set, to drop

    @classmethod
    def prepare(cls) -> Worlds:
        """In the zygote, before its first request: move into home namespaces of its own,
        note what each world needs. ``OSError`` when the kernel refuses."""
        if os.getpid() != 1:
            raise OSError("the zygote has no PID namespace of its own to come back to")
        init = shutil.which("sleep", path="/usr/bin:/bin")
        if init is None:
            raise OSError("no sleep program in the sandbox to serve as a job's PID 1")
        unshare(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET)
        # Nothing mounted in a job's world may reach home or another world.
        _mount(None, "/", None, _MS_REC | _MS_PRIVATE)
        job_filter = seccomp.job_filter() if _under_seccomp() else None
        worlds = cls(init=init, job_filter=job_filter, bounding=_held("CapBnd"))
        for name in HOME:
            worlds.home[name] = os.open(f"/proc/self/ns/{name}", os.O_RDONLY | os.O_CLOEXEC)
        points = _mount_points()
        for folder in SCRATCH:
            if os.path.isdir(folder):
                stats = os.statvfs(folder)
                worlds.sizes[folder] = stats.f_blocks * stats.f_frsize
                worlds.binds[folder] = _outermost(p for p in points if p.startswith(folder + "/"))
        # A job's init is exec'd: it must not inherit the zygote's capabilities.
        _check(_libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "ambient")
        return worlds

    def enter(self) -> int:
        """Move the zygote into a new world and start its PID 1; that init's pid. The
        zygote's next fork is the world's second process. On ``OSError`` the caller calls
        :meth:`leave` (and ends the zygote when that fails too)."""
        unshare(JOB_NAMESPACES)
        for folder, size in self.sizes.items():
            self._fresh_tmpfs(folder, size)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            request = struct.pack("16sH22x", b"lo", _IFF_UP)
            fcntl.ioctl(sock.fileno(), _SIOCSIFFLAGS, request)  # the sandbox had lo up too
        os.chdir("/tmp" if "/tmp" in self.sizes else "/")
        null = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
        return os.posix_spawn(self.init, [INIT_NAME, "infinity"], {}, file_actions=null)

    def _fresh_tmpfs(self, folder: str, size: int) -> None:
        """A new, empty tmpfs on ``folder``, with the read-only binds that were under the
        old one bound again (a runtime under /tmp): opened before the old one is covered."""
        kept = [os.open(point, os.O_PATH | os.O_CLOEXEC) for point in self.binds[folder]]
        try:
            options = f"size={size},mode=1777"
            _mount("tmpfs", folder, "tmpfs", _MS_NOSUID | _MS_NODEV, options)
            for point, fd in zip(self.binds[folder], kept, strict=True):
                os.makedirs(point, exist_ok=True)
                _mount(f"/proc/self/fd/{fd}", point, None, _MS_BIND | _MS_REC)
        finally:
            for fd in kept:
                os.close(fd)

    def leave(self) -> None:
        """Back to the zygote's home namespaces: the world stays with its processes."""
        for name, kind in HOME.items():
            _check(_libc.setns(self.home[name], kind), f"setns {name}")

    def settle(self) -> None:
        """In the world's second process, before anything of the job: its own ``/proc``, no
        capabilities, the job's seccomp filter."""
        flags = _MS_NOSUID | _MS_NODEV | _MS_NOEXEC | _MS_RDONLY
        _mount("proc", "/proc", "proc", flags, "subset=pid")
        drop_capabilities(self.bounding)
        if self.job_filter is not None:
            seccomp.install(self.job_filter)


def end(init: int) -> None:
    """End a world: kill its PID 1 (the kernel ends everything else in it) and reap it."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(init, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(init, 0)


def _mount_points() -> list[str]:
    with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as mounts:
        return [line.split()[4].replace("\\040", " ") for line in mounts]


def _outermost(points: Iterable[str]) -> list[str]:
    """The mount points not under another of ``points``: a bind's own binds come along with
    it (``MS_REC``)."""
    outermost: list[str] = []
    for point in sorted(set(points), key=len):
        if not any(point.startswith(kept + "/") for kept in outermost):
            outermost.append(point)
    return outermost


def probe() -> int:  # pragma: no cover - runs inside a probe sandbox
    """Make one world as the zygote would and settle a process in it: 0 when that works
    (the host's check, before it relies on worlds), else a non-zero code."""
    start_pid_namespace()
    zygote = os.fork()
    if zygote == 0:
        code = 1
        try:
            maker = Worlds.prepare()
            init = maker.enter()
            child = os.fork()
            if child == 0:
                ok = False
                try:
                    maker.settle()
                    ok = sorted(os.listdir("/proc")) == ["1", "2", "self", "thread-self"]
                    # The read-only binds under the scratch folders are there again, and
                    # nothing else of the sandbox's scratch is.
                    kept = [point for points in maker.binds.values() for point in points]
                    ok = ok and all(os.path.ismount(point) for point in kept)
                finally:
                    os._exit(0 if ok else 1)
            maker.leave()
            _, status = os.waitpid(child, 0)
            end(init)
            code = os.waitstatus_to_exitcode(status)
        finally:
            os._exit(code)
    _, status = os.waitpid(zygote, 0)
    return os.waitstatus_to_exitcode(status)
