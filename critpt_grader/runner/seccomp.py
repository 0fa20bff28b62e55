"""Seccomp filters: refuse the system calls no grading job needs.

Bubblewrap already removes capabilities, so most of these calls would fail anyway; the
filter closes what remains open to an unprivileged root inside a sandbox:
  * the kernel keyrings (``keyctl``, ``add_key``, ``request_key``): uid 0's user keyring is
    shared by every sandbox and the host, a channel between runs and a way to read keys;
  * POSIX message queues, which would outlive a job in a reused sandbox;
  * new namespaces (``unshare``, ``setns``, ``clone`` with namespace flags): a user
    namespace hands a program capabilities again, inside it;
  * pidfds (``pidfd_open``, ``pidfd_getfd``, ``pidfd_send_signal``, ``clone`` with
    ``CLONE_PIDFD``, the ``SO_PEERPIDFD`` and ``SO_PASSPIDFD`` socket options): a pidfd's
    inode number counts every process the host ever started, a note one job could leave
    the next that no namespace separates (:mod:`critpt_grader.runner.world`);
  * ``ptrace`` and ``process_vm_readv/writev``, mounts, module loading, ``bpf``,
    ``userfaultfd``, ``perf_event_open``, ``io_uring`` and other kernel attack surface;
  * changing another process: ``prlimit64``, ``sched_setaffinity``, ``sched_setscheduler``,
    ``sched_setparam``, ``sched_setattr``, ``migrate_pages`` and ``move_pages`` only on the
    caller itself (pid 0), ``setpriority`` only for ``PRIO_PROCESS`` and who 0,
    ``ioprio_set`` not at all: a job cannot lower the limits, priority or CPU set of a warm
    sandbox's PID 1 (every process of a sandbox is the same uid, which the kernel would
    otherwise allow).
A refused call fails with ``EPERM``. ``clone3`` fails with ``ENOSYS`` so the C library falls
back to ``clone``, whose flags the filter can inspect. Any other architecture than the one
the filter was written for is killed (a 32-bit ABI could otherwise bypass the numbers).

Two programs. :func:`job_filter` is all of the above: a job's process runs under it. Where
the runner gives every job a world of its own (:mod:`critpt_grader.runner.world`), its own
processes must still make namespaces and mounts for each job, so bubblewrap loads
:func:`runner_filter` — the same without ``unshare``, ``setns`` and ``mount`` (and only
those) — and each job's process adds :func:`job_filter` on top (:func:`install`) before it
loads the program: filters stack, and the job's calls must pass both. Without worlds
bubblewrap loads :func:`job_filter` itself, as before.

The filters are classic BPF, assembled here (no libseccomp needed); bubblewrap loads one with
``--seccomp FD``. They exist for x86-64 only; elsewhere both are None and sandboxes run
without a filter (the containment label says so).
"""

from __future__ import annotations

import ctypes
import platform
import struct

# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6]
_NR, _ARCH, _ARG0_LOW, _ARG1_LOW = 0, 4, 16, 24  # pid_t and int arguments: the low word
_AUDIT_ARCH_X86_64 = 0xC000003E
_X32_SYSCALL_BIT = 0x40000000

_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JSET_K = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K

_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_RET_KILL_PROCESS = 0x80000000
_EPERM, _ENOSYS = 1, 38

_CLONE, _CLONE3 = 56, 435
# CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET, and CLONE_PIDFD
_CLONE_REFUSED = (
    0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
) | 0x00001000
_SETSOCKOPT, _GETSOCKOPT = 54, 55
_ARG2_LOW = 32
_SOL_SOCKET, _SO_PASSPIDFD, _SO_PEERPIDFD = 1, 76, 77

# x86-64 numbers (asm/unistd_64.h).
DENIED_X86_64 = {
    "ptrace": 101, "syslog": 103, "vhangup": 153, "pivot_root": 155, "acct": 163,
    "mount": 165, "umount2": 166, "swapon": 167, "swapoff": 168, "reboot": 169,
    "iopl": 172, "ioperm": 173, "init_module": 175, "delete_module": 176, "quotactl": 179,
    "lookup_dcookie": 212, "mq_open": 240, "mq_unlink": 241, "mq_timedsend": 242,
    "mq_timedreceive": 243, "mq_notify": 244, "mq_getsetattr": 245, "kexec_load": 246,
    "add_key": 248, "request_key": 249, "keyctl": 250, "unshare": 272,
    "perf_event_open": 298, "fanotify_init": 300, "name_to_handle_at": 303,
    "open_by_handle_at": 304, "setns": 308, "process_vm_readv": 310,
    "process_vm_writev": 311, "finit_module": 313, "kexec_file_load": 320, "bpf": 321,
    "userfaultfd": 323, "io_uring_setup": 425, "io_uring_enter": 426,
    "io_uring_register": 427, "open_tree": 428, "move_mount": 429, "fsopen": 430,
    "fsconfig": 431, "fsmount": 432, "mount_setattr": 442, "ioprio_set": 251,
    "pidfd_send_signal": 424, "pidfd_open": 434, "pidfd_getfd": 438,
}  # fmt: skip

# Calls allowed only on the caller itself: their first argument (a pid) must be 0.
SELF_ONLY_X86_64 = {
    "sched_setparam": 142, "sched_setscheduler": 144, "sched_setaffinity": 203,
    "migrate_pages": 256, "move_pages": 279, "prlimit64": 302, "sched_setattr": 314,
}  # fmt: skip
_SETPRIORITY = 141  # allowed for (PRIO_PROCESS, 0) only: os.nice() on oneself

# What the runner's own processes call to build a job's world; never a job's process.
WORLD_CALLS = frozenset({"unshare", "setns", "mount"})

_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2


def job_filter() -> bytes | None:
    """The filter a job's process runs under, or None where none is written."""
    return _program(frozenset())


def runner_filter() -> bytes | None:
    """The filter for a sandbox whose runner builds a world per job: :func:`job_filter`
    less :data:`WORLD_CALLS`. Never enough for a job: its process adds :func:`job_filter`."""
    return _program(WORLD_CALLS)


class _Program(ctypes.Structure):  # struct sock_fprog
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


# Made once, at import (before any job: a warm sandbox's zygote forks every job's process
# from here), not in each job's process: a ctypes class and a libc handle per call cost
# about a tenth of a millisecond of every job.
_libc = ctypes.CDLL(None, use_errno=True)


def install(program: bytes) -> None:
    """Put the calling process (and what it starts) under ``program`` for good."""
    fprog = _Program(len(program) // 8, program)
    if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    if _libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")


def _program(allowed: frozenset[str]) -> bytes | None:
    if platform.machine() != "x86_64":
        return None
    denied = [number for name, number in DENIED_X86_64.items() if name not in allowed]
    return _assemble(
        [
            ("", _LD_W_ABS, 0, 0, _ARCH),
            ("", _JEQ_K, 0, "kill", _AUDIT_ARCH_X86_64),
            ("", _LD_W_ABS, 0, 0, _NR),
            ("", _JGE_K, "deny", 0, _X32_SYSCALL_BIT),
            ("", _JEQ_K, "enosys", 0, _CLONE3),
            *(("", _JEQ_K, "deny", 0, number) for number in sorted(denied)),
            *(("", _JEQ_K, "self", 0, number) for number in sorted(SELF_ONLY_X86_64.values())),
            ("", _JEQ_K, "setpriority", 0, _SETPRIORITY),
            ("", _JEQ_K, "sockopt", 0, _SETSOCKOPT),
            ("", _JEQ_K, "sockopt", 0, _GETSOCKOPT),
            ("", _JEQ_K, 0, "allow", _CLONE),
            ("", _LD_W_ABS, 0, 0, _ARG0_LOW),
            ("", _JSET_K, "deny", "allow", _CLONE_REFUSED),
            ("sockopt", _LD_W_ABS, 0, 0, _ARG1_LOW),  # level == SOL_SOCKET
            ("", _JEQ_K, 0, "allow", _SOL_SOCKET),
            ("", _LD_W_ABS, 0, 0, _ARG2_LOW),  # optname: a pidfd's
            ("", _JEQ_K, "deny", 0, _SO_PASSPIDFD),
            ("", _JEQ_K, "deny", "allow", _SO_PEERPIDFD),
            ("setpriority", _LD_W_ABS, 0, 0, _ARG0_LOW),  # which == PRIO_PROCESS (0)
            ("", _JEQ_K, 0, "deny", 0),
            ("", _LD_W_ABS, 0, 0, _ARG1_LOW),  # who == 0
            ("", _JEQ_K, "allow", "deny", 0),
            ("self", _LD_W_ABS, 0, 0, _ARG0_LOW),  # pid == 0
            ("", _JEQ_K, "allow", "deny", 0),
            ("allow", _RET_K, 0, 0, _RET_ALLOW),
            ("deny", _RET_K, 0, 0, _RET_ERRNO | _EPERM),
            ("enosys", _RET_K, 0, 0, _RET_ERRNO | _ENOSYS),
            ("kill", _RET_K, 0, 0, _RET_KILL_PROCESS),
        ]
    )


def _assemble(program: list[tuple[str, int, int | str, int | str, int]]) -> bytes:
    """Encode ``(label, code, jump_true, jump_false, k)`` rows; a jump names a label."""
    labels = {label: index for index, (label, *_) in enumerate(program) if label}
    encoded = bytearray()
    for index, (_, code, jump_true, jump_false, k) in enumerate(program):
        offsets = [
            labels[jump] - index - 1 if isinstance(jump, str) else jump
            for jump in (jump_true, jump_false)
        ]
        encoded += struct.pack("=HBBI", code, offsets[0], offsets[1], k)
    return bytes(encoded)
