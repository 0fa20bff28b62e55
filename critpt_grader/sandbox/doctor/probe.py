"""The doctor's probe: what one candidate sandbox lets its code see and do, seen from inside.

This file is not imported inside the sandbox: :mod:`~critpt_grader.sandbox.doctor.run`
reads its source text and ships it as an ordinary candidate job whose entry point is
:func:`answer`, so what runs inside is exactly this linted, tested file. The runner loads
it as a fresh module of its own, not as part of the package.

What it assumes:
  * only the standard library: it runs in the sandbox's interpreter, and imports nothing
    from ``critpt_grader``;
  * Linux: ``/proc`` tells the uid maps, capabilities, seccomp mode and PID 1;
  * it is *inside* a sandbox exactly when PID 1 is the sandbox's runner (or bubblewrap) or,
    where every job has a world of its own, that world's init (``critpt-job-init``); the
    host's PID 1 never is (:func:`inside_sandbox`).

What it guarantees:
  * importing it does nothing; only :func:`answer` probes, and it returns a flat dict
    whose values are each a str, int or bool (the keys :mod:`.rules` reads);
  * nothing it does outlives its sandbox: kernel settings (``/proc/sys``,
    ``/proc/sysrq-trigger``) and PID 1's ``oom_score_adj`` are only *opened* for writing and
    closed at once, never written (:func:`open_for_write`); the create tests make a new,
    uniquely named file and delete it at once (:func:`create`), and only inside a sandbox;
    the calls against PID 1 (:func:`pid1_calls`) set what PID 1 already has, and only inside
    a sandbox; a new user namespace is tried in a forked child that exits at once;
  * the helpers without side effects (:func:`why`, :func:`one_line`, :func:`status_field`,
    :func:`overflow_uid`, :func:`command_line`, :func:`inside_sandbox`,
    :func:`listing`, :func:`interfaces`, :func:`shadow_state`, :func:`unshare_result`) only
    turn text into values, so they are unit-tested in-process on sample input.
"""

from __future__ import annotations

import ctypes
import errno
import os
import resource
import socket
import sys
import uuid
from collections.abc import Callable, Iterable

Found = dict[str, str | int | bool]

CLONE_NEWUSER = 0x10000000
OVERFLOW_UID = 65534  # the kernel's default, when /proc/sys/kernel/overflowuid is unreadable
PID1_CMDLINE_CHARS = 200
LISTED_ENTRIES = 12
NET_TARGET = ("1.1.1.1", 53)
NET_TIMEOUT_SECONDS = 1
# (key, path): opened for writing and closed, never written.
KERNEL_SETTINGS = (
    ("core_pattern", "/proc/sys/kernel/core_pattern"),
    ("drop_caches", "/proc/sys/vm/drop_caches"),
    ("sysrq_trigger", "/proc/sysrq-trigger"),
    ("pid1_oom_score_adj", "/proc/1/oom_score_adj"),
)
# (key, folder): where a new file is tried, inside a sandbox only.
CREATE_FOLDERS = (
    ("root", "/"),
    ("etc", "/etc"),
    ("dev", "/dev"),
    ("root_home", "/root"),
    ("tmp", "/tmp"),
    ("dev_shm", "/dev/shm"),
)
PID1_CALLS = ("pid1_setpriority", "pid1_prlimit", "pid1_setaffinity")
JOB_INIT = "critpt-job-init"  # PID 1 of a job's own world (critpt_grader/runner/world.py)


# --- pure: text in, values out ------------------------------------------------------------


def why(exc: OSError) -> str:
    """The errno name of ``exc`` ("EACCES"), or its type name when it carries no errno."""
    return errno.errorcode.get(exc.errno, str(exc.errno)) if exc.errno else type(exc).__name__


def one_line(text: str) -> str:
    """``text`` with every run of whitespace made one space (a uid_map as one line)."""
    return " ".join(text.split())


def status_field(status: str, key: str) -> str:
    """The value of ``key`` in the text of ``/proc/self/status``; "" when it is absent."""
    for line in status.splitlines():
        if line.startswith(key + ":"):
            return line.split(":", 1)[1].strip()
    return ""


def overflow_uid(text: str) -> int:
    """The kernel's overflow uid from the text of ``/proc/sys/kernel/overflowuid``."""
    value = text.strip()
    return int(value) if value.isdigit() else OVERFLOW_UID


def command_line(raw: str) -> str:
    """The text of ``/proc/PID/cmdline`` (NUL-separated) as one line."""
    return raw.replace("\0", " ").strip()


def inside_sandbox(pid1: str) -> bool:
    """Whether PID 1's command line is the sandbox's runner, bubblewrap or a job's init."""
    program = pid1.split(" ")[0]
    return (
        "critpt_grader.runner" in pid1
        or os.path.basename(program) == "bwrap"
        or program == JOB_INIT
    )


def listing(names: Iterable[str]) -> str:
    """The first :data:`LISTED_ENTRIES` names, sorted, comma-separated."""
    return ",".join(sorted(names)[:LISTED_ENTRIES])


def interfaces(net_dev: str) -> str:
    """The interface names in the text of ``/proc/net/dev``, comma-separated."""
    names = []
    for line in net_dev.splitlines()[2:]:
        if ":" in line:
            names.append(line.split(":", 1)[0].strip())
    return ",".join(names)


def shadow_state(exists: bool, readable: bool) -> str:
    return "absent" if not exists else "readable" if readable else "present"


def unshare_result(code: int) -> str:
    """What the unshare child's exit code says: 0 allowed, 100 + errno refused."""
    if code == 0:
        return "allowed"
    if code >= 100:
        return errno.errorcode.get(code - 100, str(code - 100))
    return "child ended with " + str(code)


# --- looking: reads, and the probes that touch the sandbox --------------------------------


def read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError as exc:
        return "unreadable: " + why(exc)


def open_for_write(path: str) -> str:
    """Opened and closed: not one byte is written."""
    if not os.path.exists(path):
        return "absent"
    try:
        os.close(os.open(path, os.O_WRONLY))
    except OSError as exc:
        return why(exc)
    return "open"


def create(folder: str) -> str:
    """A new, uniquely named file, deleted at once."""
    if not os.path.isdir(folder):
        return "absent"
    path = os.path.join(folder, ".critpt-doctor-" + uuid.uuid4().hex)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except OSError as exc:
        return why(exc)
    try:
        os.unlink(path)
    except OSError as exc:
        return "created (not removed: " + why(exc) + ")"
    return "created"


def soft_limit(which: int) -> int:
    """Our soft limit ``which``; -1 for unlimited."""
    soft = resource.getrlimit(which)[0]
    return -1 if soft == resource.RLIM_INFINITY else int(soft)


def size(folder: str) -> int:
    """The size in bytes of the filesystem holding ``folder``; -1 when unknown."""
    try:
        stats = os.statvfs(folder)
    except OSError:
        return -1
    return int(stats.f_blocks * stats.f_frsize)


def owner(path: str) -> int:
    try:
        return os.stat(path).st_uid
    except OSError:
        return -1


def host_view() -> Found:
    """What the sandbox shows of the host's /sys, /home and /etc/shadow."""
    found: Found = {"sys_present": os.path.isdir("/sys")}
    try:
        found["sys_entries"] = listing(os.listdir("/sys"))
    except OSError as exc:
        found["sys_entries"] = "" if not found["sys_present"] else "unlistable: " + why(exc)
    try:
        found["home_entries"] = listing(os.listdir("/home"))
    except OSError:
        found["home_entries"] = ""
    exists = os.path.exists("/etc/shadow")
    found["shadow"] = shadow_state(exists, exists and os.access("/etc/shadow", os.R_OK))
    return found


def connect() -> str:
    """One outward TCP connection, refused or timed out when the network is contained."""
    try:
        with socket.create_connection(NET_TARGET, timeout=NET_TIMEOUT_SECONDS):
            return "connected"
    except TimeoutError:
        return "timeout"
    except OSError as exc:
        return why(exc)


def try_unshare_user() -> str:
    """A new user namespace, tried in a forked child (one thread; nothing else affected)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        child = os.fork()
        if child == 0:
            code = 1
            try:
                code = 0 if libc.unshare(CLONE_NEWUSER) == 0 else 100 + min(ctypes.get_errno(), 99)
            finally:
                os._exit(code)
        _, wait_status = os.waitpid(child, 0)
        return unshare_result(os.waitstatus_to_exitcode(wait_status))
    except OSError as exc:
        return "untested: " + why(exc)


def attempt(call: Callable[[], object]) -> str:
    try:
        call()
    except OSError as exc:
        return why(exc)
    return "allowed"


def pid1_calls() -> Found:
    """Against PID 1, setting what it already has: a refusal is the finding, not the value.
    Only inside a sandbox, where PID 1 is the sandbox's own runner."""
    nofile = resource.RLIMIT_NOFILE
    return {
        "pid1_setpriority": attempt(
            lambda: os.setpriority(os.PRIO_PROCESS, 1, os.getpriority(os.PRIO_PROCESS, 1))
        ),
        "pid1_prlimit": attempt(lambda: resource.prlimit(1, nofile, resource.prlimit(1, nofile))),
        "pid1_setaffinity": attempt(lambda: os.sched_setaffinity(1, os.sched_getaffinity(1))),
    }


# --- the entry point ----------------------------------------------------------------------


def answer() -> Found:
    """Every probe, in order; the sandbox's runner calls this and returns what it gives."""
    found: Found = {}
    found["uid"], found["gid"] = os.getuid(), os.getgid()
    found["uid_map"] = one_line(read("/proc/self/uid_map"))
    found["gid_map"] = one_line(read("/proc/self/gid_map"))
    status = read("/proc/self/status")
    found["cap_eff"] = status_field(status, "CapEff")
    found["seccomp"] = status_field(status, "Seccomp")
    found["no_new_privs"] = status_field(status, "NoNewPrivs")
    found["executable"] = sys.executable
    # Host root's own files (/usr): their owner shows as our uid only when we are host root;
    # as the overflow uid when host root is not mapped into our namespace at all.
    found["usr_owner"] = owner("/usr")
    found["overflow_uid"] = overflow_uid(read("/proc/sys/kernel/overflowuid"))

    # Before anything here forks: a job's own world shows its init and this process only.
    found["own_pid"] = os.getpid()
    found["proc_pids"] = listing(name for name in os.listdir("/proc") if name.isdigit())
    pid1 = command_line(read("/proc/1/cmdline"))
    found["pid1_cmdline"] = pid1[:PID1_CMDLINE_CHARS]
    inside = inside_sandbox(pid1)
    found["inside"] = inside

    for key, path in KERNEL_SETTINGS:
        found["open_" + key] = open_for_write(path)
    found.update(host_view())
    for key, folder in CREATE_FOLDERS:
        found["create_" + key] = create(folder) if inside else "skipped"
    found["tmp_bytes"], found["dev_shm_bytes"] = size("/tmp"), size("/dev/shm")

    found["net_connect"] = connect()
    found["net_interfaces"] = interfaces(read("/proc/self/net/dev"))
    found["unshare_user"] = try_unshare_user()
    found.update(pid1_calls() if inside else dict.fromkeys(PID1_CALLS, "skipped"))

    found["rlimit_nproc"] = soft_limit(resource.RLIMIT_NPROC)
    found["rlimit_as"] = soft_limit(resource.RLIMIT_AS)
    found["rlimit_cpu"] = soft_limit(resource.RLIMIT_CPU)
    return found
