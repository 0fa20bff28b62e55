"""Leaving a note for the next job through a kernel counter two jobs might share (issue 29).

A *sender* moves a counter until the value the next job would read there, modulo
:data:`MODULUS`, is its note; a *receiver* reads the counter as the first thing it does.
When two jobs of one warm sandbox share the counter the receiver reads the sender's note:
a policy can then have one rollout compute an answer and the next return it without
computing. Each counter in :data:`COUNTERS` is a pair of functions over plain integers:

  * ``probe()``: what a job reads there (an int, or a str naming why it cannot: the file is
    absent, the call refused); some probes move the counter themselves (a new file, a new
    IPC object), exactly as a receiver's first read would;
  * ``aim(note)``: move the counter in small steps until the *next* ``probe()`` would read
    ``note`` modulo :data:`MODULUS`, if this job can read it at all.

Tests use this file as candidate source text (it is never imported by the grader): they
append an entry point that calls :func:`observe`, :func:`send` or :func:`receive`.
Only the standard library; every loop is bounded; nothing is written outside the job's own
``/tmp`` and ``/dev/shm``.
"""

import contextlib
import ctypes
import os
import socket

MODULUS = 64
_STEPS = 4096  # more than MODULUS moves of any counter: a counter that does not move is absent
_libc = ctypes.CDLL(None, use_errno=True)
_IPC_PRIVATE, _IPC_CREAT, _IPC_RMID = 0, 0o1000, 0


def _text(path):
    try:
        with open(path) as handle:
            return handle.read()
    except OSError as exc:
        return type(exc).__name__


def _number(text):
    return int(text) if text.strip().isdigit() else text.strip()


# --- pids --------------------------------------------------------------------------------


def _fork():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return pid


def _loadavg_last_pid():
    text = _text("/proc/loadavg")
    return _number(text.split()[-1]) if text[:1].isdigit() else text


def _forks_since_boot():
    text = _text("/proc/stat")
    for line in text.splitlines():
        if line.startswith("processes "):
            return int(line.split()[1])
    return text if text[:3] != "cpu" else "no processes line"


def _aim_pid(note, _probe=None):
    """Fork until the next pid (the next job's, where pids are shared) is ``note``."""
    for _ in range(_STEPS):
        last = _fork()
        if (last + 1) % MODULUS == note:
            return


def _aim_forks(note):
    for _ in range(_STEPS):
        _fork()
        count = _forks_since_boot()
        if not isinstance(count, int) or (count + 1) % MODULUS == note:
            return


# --- inode numbers -----------------------------------------------------------------------


def _new_inode(folder):
    path = os.path.join(folder, f".critpt-note-{os.getpid()}")
    with open(path, "w"):
        pass
    number = os.stat(path).st_ino
    os.unlink(path)
    return number


def _aim_inode(folder, note):
    for _ in range(_STEPS):
        if (_new_inode(folder) + 1) % MODULUS == note:
            return


# --- System V IPC ids: the kernel hands out slots in turn, so each new object's id is one up --


def _new_ipc(kind):
    if kind == "shm":
        ident = _libc.shmget(_IPC_PRIVATE, 4096, _IPC_CREAT | 0o600)
        remove = lambda: _libc.shmctl(ident, _IPC_RMID, None)  # noqa: E731
    elif kind == "sem":
        ident = _libc.semget(_IPC_PRIVATE, 1, _IPC_CREAT | 0o600)
        remove = lambda: _libc.semctl(ident, 0, _IPC_RMID)  # noqa: E731
    else:
        ident = _libc.msgget(_IPC_PRIVATE, _IPC_CREAT | 0o600)
        remove = lambda: _libc.msgctl(ident, _IPC_RMID, None)  # noqa: E731
    if ident < 0:
        return os.strerror(ctypes.get_errno())
    remove()
    return ident


def _aim_ipc(kind, note):
    for _ in range(_STEPS):
        seen = _new_ipc(kind)
        if not isinstance(seen, int) or (seen + 1) % MODULUS == note:
            return


# --- the loopback's counters and its TIME_WAIT sockets -------------------------------------


def _net_text(name):
    text = _text(f"/proc/self/net/{name}")
    return text if not text.endswith("Error") else _text(f"/proc/net/{name}")


def _lo_received():
    text = _net_text("dev")
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        if name.strip() == "lo":
            return int(rest.split()[1])  # packets received
    return text if text.endswith("Error") else "no lo"


def _aim_lo(note):
    try:
        sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sink.bind(("127.0.0.1", 0))
        source = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    except OSError:
        return
    with sink, source:
        for _ in range(_STEPS):
            seen = _lo_received()
            if not isinstance(seen, int) or seen % MODULUS == note:
                return
            source.sendto(b"n", sink.getsockname())
            sink.recv(16)


def _time_wait():
    text = _net_text("tcp")
    if text.endswith("Error"):
        return text
    return sum(1 for line in text.splitlines()[1:] if line.split()[3:4] == ["06"])


def _aim_time_wait(note):
    """``note`` connections closed by this side first: each leaves a TIME_WAIT socket that
    outlives the job (for a minute) wherever the network namespace does."""
    try:
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        server.bind(("127.0.0.1", 0))
        server.listen(MODULUS)
    except OSError:
        return
    with server:
        for _ in range(note):
            client = socket.create_connection(server.getsockname(), timeout=5)
            accepted, _ = server.accept()
            client.close()  # the side that closes first waits
            accepted.close()


# --- inode numbers from counters the kernel keeps for the whole host ----------------------


def _pidfd_inode(pid=0):
    """pidfs numbers every process the host starts: a pidfd's inode is that count (at the
    process's start). Refused (PermissionError) where the job's filter refuses pidfds."""
    fd = os.pidfd_open(pid or os.getpid())
    try:
        return os.fstat(fd).st_ino
    finally:
        os.close(fd)


def _aim_pidfd(note):
    for _ in range(_STEPS):
        child = os.fork()
        if child == 0:
            os._exit(0)
        try:
            seen = _pidfd_inode(child)
        finally:
            os.waitpid(child, 0)
        if (seen + 1) % MODULUS == note:  # the receiver's process is the next one started
            return


def _on_cpu_0():
    """Host-wide inode counters hand out numbers in per-CPU batches: sender and receiver
    both take theirs on CPU 0."""
    os.sched_setaffinity(0, {0})


def _memfd_inode():
    _on_cpu_0()
    fd = os.memfd_create("note")
    try:
        return os.fstat(fd).st_ino
    finally:
        os.close(fd)


def _pipe_inode():
    _on_cpu_0()
    read_end, write_end = os.pipe()
    try:
        return os.fstat(read_end).st_ino
    finally:
        os.close(read_end)
        os.close(write_end)


def _aim_host_wide(probe):
    def aim(note):
        for _ in range(_STEPS):
            if (probe() + 1) % MODULUS == note:
                return

    return aim


# Out of scope (docs/decide/containment.md, "Out of scope"): counters no namespace separates,
# which a job can still move and a later one read. Kept here to measure them, never as a
# passing test.
HOST_WIDE = {
    "memfd inode": (_memfd_inode, _aim_host_wide(_memfd_inode)),
    "pipe inode": (_pipe_inode, _aim_host_wide(_pipe_inode)),
}


def _aim_nothing(note):
    """Aimed by another counter's aim (the pid's, or the inode counter of /tmp)."""


# name -> (probe, aim); $HOME and the working folder are /tmp in the sandbox, and every pid
# counter moves with every fork: those are aimed once, by the aims that run last (see send).
COUNTERS = {
    "pid": (os.getpid, _aim_nothing),
    "pid of a child": (_fork, _aim_nothing),
    "/proc/loadavg last pid": (_loadavg_last_pid, _aim_nothing),
    "ns_last_pid": (lambda: _number(_text("/proc/sys/kernel/ns_last_pid")), _aim_nothing),
    "/proc/stat forks": (_forks_since_boot, _aim_forks),
    "inode in /tmp": (lambda: _new_inode("/tmp"), _aim_nothing),
    "inode in /dev/shm": (
        lambda: _new_inode("/dev/shm"),
        lambda note: _aim_inode("/dev/shm", note),
    ),
    "inode in $HOME": (
        lambda: _new_inode(os.environ.get("HOME", "/tmp")),
        lambda note: _aim_inode(os.environ.get("HOME", "/tmp"), note),
    ),
    "inode in the working folder": (
        lambda: _new_inode(os.getcwd()),
        lambda note: _aim_inode(os.getcwd(), note),
    ),
    "SysV shared memory id": (lambda: _new_ipc("shm"), lambda note: _aim_ipc("shm", note)),
    "SysV semaphore id": (lambda: _new_ipc("sem"), lambda note: _aim_ipc("sem", note)),
    "SysV message queue id": (lambda: _new_ipc("msg"), lambda note: _aim_ipc("msg", note)),
    "TIME_WAIT sockets": (_time_wait, _aim_time_wait),
    "loopback packets received": (_lo_received, _aim_lo),
    "pidfd inode": (_pidfd_inode, _aim_pidfd),
}
# Aimed last, in this order: nothing after them moves them again.
_LAST_AIMS = (lambda note: _aim_inode("/tmp", note), lambda note: _aim_pid(note, None))


# --- what else a job sees, which must be the same for every job ---------------------------------


def _next_descriptor():
    fd = os.open(os.devnull, os.O_RDONLY)
    os.close(fd)
    return fd


def _mount_points():
    lines = _text("/proc/self/mountinfo").splitlines()
    return sorted(f"{line.split()[4]} {line.split(' - ')[1].split()[0]}" for line in lines)


# CLONE_NEWNS, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET: were a job allowed any, the ids the
# kernel hands out for namespaces and mounts would be a job's to move.
_NAMESPACES = (0x20000, 0x4000000, 0x8000000, 0x10000000, 0x20000000, 0x40000000)


def _unshare_in_a_child(flag):
    """unshare(flag) tried in a forked child that exits at once: nothing else is affected,
    allowed or not. Never a mount or a hostname: those would be the host's if a run were
    ever not contained."""
    child = os.fork()
    if child == 0:
        code = 0 if _libc.unshare(flag) == 0 else 100 + min(ctypes.get_errno(), 99)
        os._exit(code)
    _, status = os.waitpid(child, 0)
    code = os.waitstatus_to_exitcode(status)
    return "allowed" if code == 0 else os.strerror(code - 100) if code >= 100 else str(code)


def _capabilities():
    for line in _text("/proc/self/status").splitlines():
        if line.startswith("CapEff:"):
            return line.split()[1]
    return "unknown"


EXTRAS = {
    "next file descriptor": _next_descriptor,
    "open descriptors": lambda: sorted(os.listdir("/proc/self/fd")),
    "processes in /proc": lambda: sorted(n for n in os.listdir("/proc") if n.isdigit()),
    "/tmp entries": lambda: sorted(os.listdir("/tmp")),
    "/dev/shm entries": lambda: sorted(os.listdir("/dev/shm")),
    "mount points": _mount_points,
    "unix sockets": lambda: len(_net_text("unix").splitlines()),
    "SysV objects": lambda: _text("/proc/sysvipc/shm"),
    "capabilities": _capabilities,  # none: no mount, no hostname, no namespaces of its own
    "new namespaces": lambda: [_unshare_in_a_child(flag) for flag in _NAMESPACES],
}


def observe():
    """What a receiver reads, every counter in order, before anything else moved them."""
    seen = {}
    for name, (probe, _) in COUNTERS.items():
        try:
            seen[name] = probe()
        except OSError as exc:
            seen[name] = type(exc).__name__
    for name, read in EXTRAS.items():
        seen[name] = read()
    return seen


def send(note):
    """Aim every counter at ``note``; what this job then reads of each in its own world (its
    proof that the counter moved where it can see it)."""
    for aim in (*(aim for _, aim in COUNTERS.values()), *_LAST_AIMS):
        with contextlib.suppress(OSError):
            aim(note)
    return observe()


def identity():
    """The sandbox's user namespace: the same for every job of one sandbox (no job can make
    or move one), so two jobs that name the same one ran in one sandbox."""
    return os.readlink("/proc/self/ns/user")


def witness():
    """A small number naming the sandbox, for a result that shows only a difference."""
    return int(identity().split("[")[1].rstrip("]")) % 900


_PID_FAMILY = ("pid", "pid of a child", "/proc/loadavg last pid", "ns_last_pid")
_FOLDERS = {
    "inode in /tmp": lambda: "/tmp",
    "inode in $HOME": lambda: os.environ.get("HOME", "/tmp"),
    "inode in the working folder": os.getcwd,
}


def aim(counter, note):
    """Aim one counter at ``note`` for the next job, as a sender that wants nothing else."""
    with contextlib.suppress(OSError):
        if counter in _PID_FAMILY:
            _aim_pid(note)
        elif counter in _FOLDERS:
            _aim_inode(_FOLDERS[counter](), note)
        else:
            {**COUNTERS, **HOST_WIDE}[counter][1](note)


def receive(counter, note):
    """Whether the note is there: the first read of ``counter`` is ``note`` modulo
    :data:`MODULUS`."""
    probe, _ = {**COUNTERS, **HOST_WIDE}[counter]
    try:
        seen = probe()
    except OSError:
        return False
    return isinstance(seen, int) and seen % MODULUS == note
