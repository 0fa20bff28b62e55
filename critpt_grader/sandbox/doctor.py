"""``critpt-grader doctor``: what containment a candidate gets on *this* machine.

Containment depends on the host (root or not, cgroup v1 or v2, seccomp, user namespaces,
where the interpreter lives), so the doctor starts one real, fresh candidate sandbox, runs
:data:`PROBE` in it as an ordinary job, and turns what the probe saw from inside, plus what
the host says about itself (:class:`HostFacts`), into one :class:`Layer` per containment
layer: ``held``, ``missing`` or ``weak``, what was seen, what it stops and the fix.

The probe never changes anything that outlives its sandbox: kernel settings
(``/proc/sys``, ``/proc/sysrq-trigger``) are only *opened* for writing and closed, never
written; the create tests make a uniquely named file and delete it at once, and only when
the probe is inside a sandbox (its PID 1 is the sandbox's runner); the calls against PID 1
(``setpriority``, ``prlimit``, ``sched_setaffinity``) set the values PID 1 already has, and
are made only under that same condition. The doctor uses a fresh sandbox: a warm one would
retire itself after a probe that touched its PID 1.

:func:`assess` is pure (facts in, rows and a verdict out) so every rule is unit-tested
with synthetic probe dictionaries; :func:`examine` does the running.
"""

from __future__ import annotations

import asyncio
import os
import pwd
import resource
import shutil
import stat
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

Status = Literal["held", "missing", "weak"]
SANDBOX_USER = "critpt-sandbox"
CGROUP_ROOT = Path("/sys/fs/cgroup")
# A writable /tmp or /dev/shm larger than this is not meaningfully bounded.
SCRATCH_BOUND_BYTES = 1 << 30
USER_WRITABLE_PLACES = ("/tmp/", "/var/tmp/", "/dev/shm/", "/home/", "/root/")

# Runs inside the sandbox as a candidate's ``answer``; every value is a str, int or bool.
PROBE = r"""
def answer():
    import ctypes
    import errno
    import os
    import resource
    import socket
    import sys
    import uuid

    found = {}

    def why(exc):
        return errno.errorcode.get(exc.errno, str(exc.errno)) if exc.errno else type(exc).__name__

    def read(path):
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                return handle.read()
        except OSError as exc:
            return "unreadable: " + why(exc)

    def open_for_write(path):
        # Opened and closed: not one byte is written.
        if not os.path.exists(path):
            return "absent"
        try:
            os.close(os.open(path, os.O_WRONLY))
        except OSError as exc:
            return why(exc)
        return "open"

    def create(folder):
        # A new, uniquely named file, deleted at once.
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

    def status_line(key):
        for line in read("/proc/self/status").splitlines():
            if line.startswith(key + ":"):
                return line.split(":", 1)[1].strip()
        return ""

    def limit(which):
        soft = resource.getrlimit(which)[0]
        return -1 if soft == resource.RLIM_INFINITY else int(soft)

    def size(folder):
        try:
            stats = os.statvfs(folder)
        except OSError:
            return -1
        return int(stats.f_blocks * stats.f_frsize)

    found["uid"], found["gid"] = os.getuid(), os.getgid()
    found["uid_map"] = " ".join(read("/proc/self/uid_map").split())
    found["gid_map"] = " ".join(read("/proc/self/gid_map").split())
    found["cap_eff"] = status_line("CapEff")
    found["seccomp"] = status_line("Seccomp")
    found["no_new_privs"] = status_line("NoNewPrivs")
    found["executable"] = sys.executable
    # Host root's own files (/usr): their owner shows as our uid only when we are host root;
    # as the overflow uid when host root is not mapped into our namespace at all.
    try:
        found["usr_owner"] = os.stat("/usr").st_uid
    except OSError:
        found["usr_owner"] = -1
    overflow = read("/proc/sys/kernel/overflowuid").strip()
    found["overflow_uid"] = int(overflow) if overflow.isdigit() else 65534

    pid1 = read("/proc/1/cmdline").replace("\0", " ").strip()
    found["pid1_cmdline"] = pid1[:200]
    # Only inside a sandbox is PID 1 the runner (or bubblewrap): the host's never is.
    inside = "critpt_grader.runner" in pid1 or os.path.basename(pid1.split(" ")[0]) == "bwrap"
    found["inside"] = inside

    for key, path in (
        ("core_pattern", "/proc/sys/kernel/core_pattern"),
        ("drop_caches", "/proc/sys/vm/drop_caches"),
        ("sysrq_trigger", "/proc/sysrq-trigger"),
        ("pid1_oom_score_adj", "/proc/1/oom_score_adj"),
    ):
        found["open_" + key] = open_for_write(path)

    found["sys_present"] = os.path.isdir("/sys")
    try:
        found["sys_entries"] = ",".join(sorted(os.listdir("/sys"))[:12])
    except OSError as exc:
        found["sys_entries"] = "" if not found["sys_present"] else "unlistable: " + why(exc)
    try:
        found["home_entries"] = ",".join(sorted(os.listdir("/home"))[:12])
    except OSError:
        found["home_entries"] = ""
    found["shadow"] = (
        "absent" if not os.path.exists("/etc/shadow")
        else "readable" if os.access("/etc/shadow", os.R_OK) else "present"
    )

    for key, folder in (
        ("root", "/"), ("etc", "/etc"), ("dev", "/dev"), ("root_home", "/root"),
        ("tmp", "/tmp"), ("dev_shm", "/dev/shm"),
    ):
        found["create_" + key] = create(folder) if inside else "skipped"
    found["tmp_bytes"], found["dev_shm_bytes"] = size("/tmp"), size("/dev/shm")

    try:
        with socket.create_connection(("1.1.1.1", 53), timeout=1):
            found["net_connect"] = "connected"
    except socket.timeout:
        found["net_connect"] = "timeout"
    except OSError as exc:
        found["net_connect"] = why(exc)
    interfaces = []
    for line in read("/proc/net/dev").splitlines()[2:]:
        if ":" in line:
            interfaces.append(line.split(":", 1)[0].strip())
    found["net_interfaces"] = ",".join(interfaces)

    # A new user namespace, tried in a forked child (one thread; nothing else affected).
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        child = os.fork()
        if child == 0:
            code = 0 if libc.unshare(0x10000000) == 0 else 100 + min(ctypes.get_errno(), 99)
            os._exit(code)
        _, wait_status = os.waitpid(child, 0)
        code = os.waitstatus_to_exitcode(wait_status)
        found["unshare_user"] = (
            "allowed" if code == 0
            else errno.errorcode.get(code - 100, str(code - 100)) if code >= 100
            else "child ended with " + str(code)
        )
    except OSError as exc:
        found["unshare_user"] = "untested: " + why(exc)

    # Against PID 1, setting what it already has: a refusal is the finding, not the value.
    if inside:
        try:
            os.setpriority(os.PRIO_PROCESS, 1, os.getpriority(os.PRIO_PROCESS, 1))
            found["pid1_setpriority"] = "allowed"
        except OSError as exc:
            found["pid1_setpriority"] = why(exc)
        try:
            resource.prlimit(1, resource.RLIMIT_NOFILE, resource.prlimit(1, resource.RLIMIT_NOFILE))
            found["pid1_prlimit"] = "allowed"
        except OSError as exc:
            found["pid1_prlimit"] = why(exc)
        try:
            os.sched_setaffinity(1, os.sched_getaffinity(1))
            found["pid1_setaffinity"] = "allowed"
        except OSError as exc:
            found["pid1_setaffinity"] = why(exc)
    else:
        for key in ("pid1_setpriority", "pid1_prlimit", "pid1_setaffinity"):
            found[key] = "skipped"

    found["rlimit_nproc"] = limit(resource.RLIMIT_NPROC)
    found["rlimit_as"] = limit(resource.RLIMIT_AS)
    found["rlimit_cpu"] = limit(resource.RLIMIT_CPU)
    return found
"""


@dataclass(frozen=True, slots=True)
class HostFacts:
    """What the host says about itself, and the containment label of the probe's run."""

    euid: int
    bwrap: str = ""  # path, "" when absent
    bwrap_version: str = ""
    setpriv: str = ""
    sandbox_user: str = SANDBOX_USER  # whom a root grader runs sandboxed code as
    sandbox_user_exists: bool = False
    cgroup_mode: str = "none"  # v1, v2, hybrid (v1 plus a v2 mount), none
    containment: str = ""  # the RunOutcome's label, opaque
    python: str = ""  # the interpreter the sandbox runs (settings.sandbox_python)
    python_public: bool | None = None  # every user can reach and run it (None: unknown)
    nproc: int = -1  # the grader's own soft RLIMIT_NPROC (-1: unlimited)
    userns: str = ""  # unprivileged user namespaces: "allowed", or why not
    require_strong: bool = False
    settings: dict[str, Any] = field(default_factory=dict)  # containment-related settings


@dataclass(frozen=True, slots=True)
class Layer:
    name: str
    status: Status
    seen: str
    fix: str
    stops: str
    essential: bool = False  # missing here means the containment is not strong


@dataclass(frozen=True, slots=True)
class Report:
    rows: tuple[Layer, ...]
    strong: bool

    def to_json(self) -> dict[str, Any]:
        return {"strong": self.strong, "rows": [asdict(row) for row in self.rows]}


# --- the rules ----------------------------------------------------------------------------

FIX_UID = (
    f"run sandboxes as the unprivileged `{SANDBOX_USER}` user (setpriv + user namespace), "
    "or run the grader as a non-root user"
)


IDENTITY_MAP = "0 0 4294967295"  # the uid_map of the host's own user namespace


def outside_uid(uid: Any, uid_map: str) -> int | None:
    """The uid that ``uid`` maps to one namespace up, from the text of ``/proc/self/uid_map``
    (``inside outside count`` triples). That is the host uid when the parent namespace is
    the host's, and always when the map is :data:`IDENTITY_MAP` (the host's namespace)."""
    numbers = uid_map.split()
    if not isinstance(uid, int) or isinstance(uid, bool):
        return None
    if not numbers or len(numbers) % 3 or not all(n.isdigit() for n in numbers):
        return None
    for start in range(0, len(numbers), 3):
        inside, outside, count = (int(n) for n in numbers[start : start + 3])
        if inside <= uid < inside + count:
            return outside + (uid - inside)
    return None


def host_root_inside(probe: dict[str, Any]) -> bool | None:
    """Whether the sandbox's uid is host uid 0; None when the probe cannot tell.

    ``uid_map`` alone is not enough: bubblewrap may nest a second user namespace (for
    ``--disable-userns``), whose map names the uid in the *intermediate* namespace ("999 0
    1" there is not host root). In order, the evidence is: the host's own map (``0 0
    4294967295``: the uid is the host uid); the kernel's own uid check on ``/proc/sys``
    (opened for write: host root; ``EACCES``: not); the owner of ``/usr``, a host root
    file, which shows as the sandbox's uid only when the sandbox is host root and as the
    overflow uid when host root is not mapped in at all; last, the map's outside uid."""
    uid, uid_map = probe.get("uid"), " ".join(str(probe.get("uid_map", "")).split())
    if not isinstance(uid, int):
        return None
    if uid_map == IDENTITY_MAP:
        return uid == 0
    kernel = {probe.get("open_core_pattern"), probe.get("open_drop_caches")}
    if "open" in kernel:
        return True
    if kernel == {"EACCES"}:
        return False
    owner, overflow = probe.get("usr_owner"), probe.get("overflow_uid", 65534)
    if isinstance(owner, int) and owner >= 0 and owner != overflow:
        return owner == uid  # host root is mapped in, as ``owner``
    if isinstance(owner, int) and owner == overflow and uid != overflow:
        return False  # host root is not mapped in at all
    outside = outside_uid(uid, uid_map)
    return None if outside is None else outside == 0


def label_tokens(label: str) -> list[str]:
    """The parts of a containment label ("bwrap+cgroup+seccomp+user:x WARNING: ...")."""
    return label.split()[0].split("+") if label.strip() else []


def assess(host: HostFacts, probe: dict[str, Any]) -> Report:
    """Rows for every layer and the verdict: strong unless an essential layer is missing."""
    rows = [
        _bubblewrap(host),
        _host_uid(host, probe),
        _capabilities(probe),
        _kernel_settings(probe),
        _sysrq(probe),
        _read_only(probe),
        _network(probe),
        _pids(host, probe),
        _scratch("/tmp", probe, "tmp", "private /tmp", missing_is_weak=True),
        _scratch("/dev/shm", probe, "dev_shm", "/dev/shm", missing_is_weak=False),
        _seccomp(host, probe),
        _no_new_privs(probe),
        _namespaces(probe),
        _pid1(probe),
        _memory_cpu(probe),
        _host_view(probe),
        _interpreter(host, probe),
        _cgroup(host),
        _sandbox_user(host, probe),
        _settings(host),
    ]
    strong = not any(row.essential and row.status == "missing" for row in rows)
    return Report(tuple(rows), strong)


def _layer(name, status, seen, fix, stops, essential=False) -> Layer:
    return Layer(name, status, seen, fix if status != "held" else "", stops, essential)


def _bubblewrap(host: HostFacts) -> Layer:
    used = "bwrap" in label_tokens(host.containment)
    base, _, warning = host.containment.partition(" WARNING: ")
    seen = (
        f"{host.bwrap} ({host.bwrap_version})" if host.bwrap else "not installed"
    ) + f"; sandbox ran as {base or '?'}"
    if warning:
        seen += f" (weak: {warning.rpartition(': ')[2]})"
    return _layer(
        "bubblewrap",
        "held" if used else "missing",
        seen,
        "install bubblewrap (apt-get install bubblewrap) and make sure it can create "
        "namespaces here",
        "the whole host: files, processes, network (no sandbox without it)",
        essential=True,
    )


def _host_uid(host: HostFacts, probe: dict[str, Any]) -> Layer:
    uid, uid_map = probe.get("uid"), " ".join(str(probe.get("uid_map", "")).split())
    root = host_root_inside(probe)
    seen = f"uid {uid} inside, uid_map '{uid_map}'"
    if uid_map == IDENTITY_MAP:
        seen += f" (host namespace) → host uid {uid}"
    else:
        seen += f", /usr owner {probe.get('usr_owner', '?')}"
        seen += " → host root" if root else " → not host root" if root is False else ""
    users = [t.partition(":")[2] for t in label_tokens(host.containment) if t.startswith("user:")]
    if users and not root:
        seen += f" (host user {users[0]})"
    return _layer(
        "host uid",
        "missing" if root else "held" if root is False else "weak",
        seen,
        FIX_UID,
        "host root: every file, process and kernel setting uid 0 owns",
        essential=True,
    )


def _capabilities(probe: dict[str, Any]) -> Layer:
    cap = str(probe.get("cap_eff", ""))
    try:
        held = int(cap, 16) == 0
    except ValueError:
        held = False
    return _layer(
        "capabilities",
        "held" if held else "missing",
        f"CapEff {cap or '?'}",
        "bubblewrap must drop every capability (--cap-drop ALL); check the bwrap version",
        "privileged calls: mounts, raw sockets, other users' processes and files",
        essential=True,
    )


def _kernel_settings(probe: dict[str, Any]) -> Layer:
    core, drop = probe.get("open_core_pattern"), probe.get("open_drop_caches")
    missing = "open" in (core, drop)
    return _layer(
        "kernel settings",
        "missing" if missing else "held",
        f"open for write: core_pattern {core}, drop_caches {drop}",
        f"/proc/sys is writable by host root only: {FIX_UID}",
        "kernel settings (/proc/sys): a path to host root (core_pattern runs a program)",
        essential=True,
    )


def _sysrq(probe: dict[str, Any]) -> Layer:
    sysrq = probe.get("open_sysrq_trigger")
    return _layer(
        "sysrq-trigger",
        "missing" if sysrq == "open" else "held",
        f"open for write: {sysrq}",
        f"/proc/sysrq-trigger is writable by host root only: {FIX_UID}",
        "rebooting, crashing or freezing the machine",
        essential=True,
    )


def _read_only(probe: dict[str, Any]) -> Layer:
    paths = (("/", "root"), ("/etc", "etc"), ("/dev", "dev"), ("/root", "root_home"))
    results = {path: str(probe.get(f"create_{key}", "?")) for path, key in paths}
    writable = [path for path, result in results.items() if result.startswith("created")]
    untested = [path for path, result in results.items() if result in ("skipped", "?")]
    status: Status = "missing" if writable else "weak" if untested else "held"
    seen = ", ".join(
        f"{path} {'WRITABLE' if path in writable else result}" for path, result in results.items()
    )
    return _layer(
        "read-only system",
        status,
        seen,
        "mount /, /etc and /dev read-only in the sandbox (bwrap --remount-ro / --ro-bind)"
        + ("; the probe could not test it (not inside a sandbox)" if untested else ""),
        "planting files the next job or the runner trusts",
        essential=True,
    )


def _network(probe: dict[str, Any]) -> Layer:
    connect = str(probe.get("net_connect", "?"))
    interfaces = [i for i in str(probe.get("net_interfaces", "")).split(",") if i]
    outward = [i for i in interfaces if i != "lo"]
    missing = connect == "connected" or bool(outward)
    return _layer(
        "network",
        "missing" if missing else "held",
        f"connect 1.1.1.1:53 {connect}; interfaces {','.join(interfaces) or 'none'}",
        "give the sandbox its own network namespace (bwrap --unshare-net / --unshare-all)",
        "exfiltrating tasks, fetching answers, attacking the network",
        essential=True,
    )


def _pids(host: HostFacts, probe: dict[str, Any]) -> Layer:
    cgroup = "cgroup" in label_tokens(host.containment)
    nproc, root = probe.get("rlimit_nproc"), host_root_inside(probe)
    # The kernel exempts host root from RLIMIT_NPROC; the host's own (default) limit is not
    # one the runner set for the sandbox.
    set_here = isinstance(nproc, int) and nproc >= 0 and (host.nproc < 0 or nproc < host.nproc)
    rlimit = set_here and root is False
    seen = f"cgroup {'yes' if cgroup else 'no'}; RLIMIT_NPROC {_limit(nproc)}"
    if root is not False and not cgroup:
        seen += " (ignored: host root)"
    elif not set_here and isinstance(nproc, int) and nproc >= 0:
        seen += " (the host's default)"
    return _layer(
        "process count",
        "held" if cgroup or rlimit else "missing",
        seen,
        "a pids cgroup per sandbox (run as root with cgroups mounted) or a non-root sandbox "
        "uid, under which RLIMIT_NPROC counts",
        "fork bombs",
        essential=True,
    )


def _scratch(path: str, probe: dict[str, Any], key: str, name: str, *, missing_is_weak) -> Layer:
    created, size = str(probe.get(f"create_{key}", "?")), probe.get(f"{key}_bytes", -1)
    seen = f"{created}, {_bytes(size)}"
    writable = created.startswith("created")
    bounded = isinstance(size, int) and 0 <= size <= SCRATCH_BOUND_BYTES
    if writable:
        status: Status = "held" if bounded else "weak"
    elif created in ("skipped", "?"):
        status = "weak"
    else:
        status = "weak" if missing_is_weak else "held"
    fix = (
        f"mount a size-limited tmpfs on {path} (bwrap --size N --tmpfs {path})"
        if writable or created in ("skipped", "?")
        else f"jobs need a writable {path}: mount a size-limited tmpfs there"
    )
    return _layer(name, status, seen, fix, "filling the host's memory or disk")


def _seccomp(host: HostFacts, probe: dict[str, Any]) -> Layer:
    mode = str(probe.get("seccomp", ""))
    labelled = "seccomp" in label_tokens(host.containment)
    return _layer(
        "seccomp",
        "held" if mode == "2" else "weak",
        f"Seccomp: {mode or '?'} (label {'says' if labelled else 'lacks'} seccomp)",
        "on x86-64 keep the `seccomp` setting on; bubblewrap must accept --seccomp",
        "keyrings, new namespaces, ptrace, mounts, bpf, io_uring",
    )


def _no_new_privs(probe: dict[str, Any]) -> Layer:
    value = str(probe.get("no_new_privs", ""))
    return _layer(
        "no_new_privs",
        "held" if value == "1" else "weak",
        f"NoNewPrivs: {value or '?'}",
        "bubblewrap sets it with --seccomp (or as an unprivileged user); check its version",
        "regaining privileges through setuid programs in view",
    )


def _namespaces(probe: dict[str, Any]) -> Layer:
    result = str(probe.get("unshare_user", "?"))
    return _layer(
        "new namespaces",
        "missing"
        if result == "allowed"
        else "held"
        if result in ("EPERM", "EACCES", "EINVAL", "ENOSPC", "EUSERS")
        else "weak",
        f"unshare(CLONE_NEWUSER) {result}",
        "the seccomp filter refuses unshare/clone with namespace flags (keep `seccomp` on)",
        "regaining capabilities inside a new user namespace (kernel attack surface)",
    )


def _pid1(probe: dict[str, Any]) -> Layer:
    calls = {
        "setpriority": probe.get("pid1_setpriority"),
        "prlimit": probe.get("pid1_prlimit"),
        "sched_setaffinity": probe.get("pid1_setaffinity"),
    }
    oom = probe.get("open_pid1_oom_score_adj")
    allowed = [name for name, result in calls.items() if result == "allowed"]
    untested = [name for name, result in calls.items() if result in (None, "skipped")]
    inside = bool(probe.get("inside"))
    seen = ", ".join(f"{name} {result}" for name, result in calls.items())
    seen += f", oom_score_adj open-for-write {oom}; PID 1 is {probe.get('pid1_cmdline') or '?'}"
    if not inside:
        status: Status = "missing"
        fix = "the sandbox needs its own PID namespace with the runner as PID 1 (bwrap --as-pid-1)"
    elif allowed:
        status, fix = (
            "missing",
            (
                "the seccomp filter must refuse prlimit/setpriority/sched_setaffinity on other "
                "processes"
            ),
        )
    elif oom == "open" or untested:
        status, fix = (
            "weak",
            "PID 1 must not be writable by the candidate (non-dumpable, other uid)",
        )
    else:
        status, fix = "held", ""
    return _layer(
        "PID 1 (the runner)",
        status,
        seen,
        fix,
        "a candidate starving or killing the runner that reports its result",
    )


def _memory_cpu(probe: dict[str, Any]) -> Layer:
    memory, cpu = probe.get("rlimit_as"), probe.get("rlimit_cpu")
    bounded = [isinstance(v, int) and v >= 0 for v in (memory, cpu)]
    return _layer(
        "memory and CPU",
        "held" if all(bounded) else "weak",
        f"RLIMIT_AS {_limit(memory, bytes_=True)}, RLIMIT_CPU {_limit(cpu)} s",
        "the runner sets RLIMIT_AS and RLIMIT_CPU; a memory cgroup bounds the sandbox too",
        "exhausting the host's memory or CPU",
    )


def _host_view(probe: dict[str, Any]) -> Layer:
    sys_present, entries = bool(probe.get("sys_present")), str(probe.get("sys_entries", ""))
    home, shadow = str(probe.get("home_entries", "")), str(probe.get("shadow", "?"))
    seen = f"/sys {'shows ' + (entries or 'nothing') if sys_present else 'absent'}; "
    seen += f"/home {home or 'empty/absent'}; /etc/shadow {shadow}"
    if shadow == "readable":
        status: Status = "missing"
    elif (sys_present and entries) or home or shadow == "present":
        status = "weak"
    else:
        status = "held"
    return _layer(
        "host files hidden",
        status,
        seen,
        "show the sandbox only the system folders (expose_host_filesystem off); no /sys",
        "reading task files, repositories, secrets and the host's devices",
    )


def _interpreter(host: HostFacts, probe: dict[str, Any]) -> Layer:
    inside = str(probe.get("executable", ""))
    places = {host.python, inside} - {""}
    risky = sorted(p for p in places if p.startswith(USER_WRITABLE_PLACES))
    unreachable = host.euid == 0 and host.python_public is False
    seen = f"host {host.python or '?'}; inside {inside or '?'}"
    if risky:
        seen += "; under /tmp or a home folder"
    if unreachable:
        seen += "; not readable by every user"
    return _layer(
        "interpreter",
        "weak" if risky or unreachable else "held",
        seen,
        "install the grader's environment where every user can read it and only root can "
        f"write (/opt, /usr/local), readable by `{host.sandbox_user}`; not in /tmp or a home "
        "folder",
        "swapping the interpreter or its libraries under the grader; a sandbox user that "
        "cannot start it",
    )


def _cgroup(host: HostFacts) -> Layer:
    used = "cgroup" in label_tokens(host.containment)
    return _layer(
        "cgroup",
        "held" if used else "missing" if host.euid == 0 else "weak",
        f"mode {host.cgroup_mode}; sandbox {'has' if used else 'has no'} cgroup",
        "run the grader as root on a host with the pids (and memory) controller, or delegate "
        "a writable cgroup subtree to the grader's user",
        "fork bombs and memory use across the whole sandbox",
    )


def _sandbox_user(host: HostFacts, probe: dict[str, Any]) -> Layer:
    needed = host.euid == 0
    seen = (
        f"{host.sandbox_user} {'exists' if host.sandbox_user_exists else 'absent'}; "
        f"setpriv {host.setpriv or 'absent'}; unprivileged user namespaces {host.userns or '?'}"
    )
    ready = host.sandbox_user_exists and bool(host.setpriv) and host.userns == "allowed"
    if not needed:
        seen += "; grader is not root: sandboxes run as its own uid"
    elif ready and host_root_inside(probe):
        ready = False
        seen += "; but the sandbox ran as host root, not as this user"
    return _layer(
        "sandbox user",
        "held" if ready or not needed else "weak",
        seen,
        f"useradd --system --no-create-home --shell /usr/sbin/nologin {host.sandbox_user}; "
        "install util-linux (setpriv); allow unprivileged user namespaces "
        "(sysctl user.max_user_namespaces, kernel.unprivileged_userns_clone); a grader "
        "version that drops to this user",
        "host root inside the sandbox when the grader runs as root",
    )


def _settings(host: HostFacts) -> Layer:
    shown = ", ".join(f"{k}={v}" for k, v in sorted(host.settings.items()))
    opted_out = sorted(
        k
        for k, v in host.settings.items()
        if (v is True and (k.startswith("allow_") or k == "expose_host_filesystem"))
        or (k == "seccomp" and v is False)
    )
    # A root grader refuses weak containment by itself unless waived (allow_weak_containment).
    refuses = host.require_strong or (
        host.euid == 0 and "allow_weak_containment" in host.settings and not opted_out
    )
    fix = []
    if not refuses:
        fix.append("set CRITPT_GRADER_REQUIRE_STRONG_CONTAINMENT=1 so a weaker host refuses to run")
    if opted_out:
        fix.append("drop the opt-outs: " + ", ".join(opted_out))
    return _layer(
        "settings",
        "held" if refuses and not opted_out else "weak",
        f"require_strong_containment={host.require_strong}" + (f"; {shown}" if shown else ""),
        "; ".join(fix),
        "silently falling back to weaker containment",
    )


def _limit(value: Any, *, bytes_: bool = False) -> str:
    if not isinstance(value, int):
        return "?"
    if value < 0:
        return "unlimited"
    return _bytes(value) if bytes_ else str(value)


def _bytes(value: Any) -> str:
    if not isinstance(value, int) or value < 0:
        return "size ?"
    return f"{value / (1 << 20):.0f} MiB"


# --- the host side ------------------------------------------------------------------------

CONTAINMENT_SETTINGS = ("seccomp", "expose_host_filesystem")


def host_facts(settings: Any, containment: str) -> HostFacts:
    """What this machine and these settings say; ``containment`` is the probe's label."""
    bwrap = shutil.which("bwrap") or ""
    user = str(getattr(settings, "sandbox_user", SANDBOX_USER))
    python = str(getattr(settings, "sandbox_python", ""))
    nproc = resource.getrlimit(resource.RLIMIT_NPROC)[0]
    return HostFacts(
        euid=os.geteuid(),
        bwrap=bwrap,
        bwrap_version=_version(bwrap),
        setpriv=shutil.which("setpriv") or "",
        sandbox_user=user,
        sandbox_user_exists=_user_exists(user),
        cgroup_mode=cgroup_mode(),
        containment=containment,
        python=python,
        python_public=publicly_runnable(python) if python else None,
        nproc=-1 if nproc == resource.RLIM_INFINITY else int(nproc),
        userns=userns_state(),
        require_strong=bool(getattr(settings, "require_strong_containment", False)),
        settings=containment_settings(settings),
    )


def publicly_runnable(program: str) -> bool:
    """Whether any user can run ``program``: every folder on the way to it (and to what its
    symlinks point at) searchable by others, the file itself readable and executable."""
    path = Path(program)
    try:
        targets = {path.absolute(), path.resolve()}
        for target in targets:
            for folder in target.parents:
                if not folder.stat().st_mode & stat.S_IXOTH:
                    return False
        mode = path.resolve().stat().st_mode
    except OSError:
        return False
    return bool(mode & stat.S_IROTH and mode & stat.S_IXOTH)


def containment_settings(settings: Any) -> dict[str, Any]:
    """The settings that decide containment, including opt-outs added later (any field
    naming cgroups, containment, root, uid or users)."""
    settings = getattr(settings, "local", settings)  # the local backend's own settings
    fields = getattr(type(settings), "model_fields", {})
    words = ("cgroup", "containment", "root", "uid", "user", "allow_")
    return {
        name: getattr(settings, name)
        for name in fields
        if name != "require_strong_containment"
        and (name in CONTAINMENT_SETTINGS or any(word in name for word in words))
    }


def cgroup_mode(root: Path = CGROUP_ROOT) -> str:
    if (root / "cgroup.controllers").exists():
        return "v2"
    v1 = any((root / c / "cgroup.procs").exists() for c in ("pids", "memory", "cpu"))
    if v1:
        return "hybrid" if (root / "unified" / "cgroup.controllers").exists() else "v1"
    return "none"


def userns_state() -> str:
    """Whether an unprivileged user may create a user namespace here (read-only look)."""
    checks = (
        ("/proc/sys/user/max_user_namespaces", lambda v: v != "0", "max_user_namespaces=0"),
        (
            "/proc/sys/kernel/unprivileged_userns_clone",
            lambda v: v != "0",
            "unprivileged_userns_clone=0",
        ),
        (
            "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
            lambda v: v != "1",
            "apparmor_restrict_unprivileged_userns=1",
        ),
    )
    for path, fine, refusal in checks:
        try:
            value = Path(path).read_text().strip()
        except OSError:
            continue
        if not fine(value):
            return refusal
    return "allowed"


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwuid(int(name)) if name.isdigit() else pwd.getpwnam(name)
    except KeyError:
        return name.isdigit()  # a bare uid is usable without an entry
    return True


def _version(program: str) -> str:
    if not program:
        return ""
    try:
        completed = subprocess.run(
            [program, "--version"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return "?"
    return completed.stdout.strip().splitlines()[0] if completed.stdout.strip() else "?"


# --- running it ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Examination:
    """What :func:`examine` found: a report, or (no sandbox could run the probe) why not."""

    report: Report | None
    host: HostFacts
    failure: str = ""
    probe: dict[str, Any] = field(default_factory=dict)


def examine(settings: Any) -> Examination:
    """Start one fresh candidate sandbox, run :data:`PROBE` in it and assess the result.

    The probe runs with the operator's ``settings`` except that a weak sandbox is let run
    (the probe is this trusted program, and the point is to see what is missing) and the
    sandbox is fresh; the settings row reports what the operator's settings would do."""
    from critpt_grader import codec
    from critpt_grader.sandbox.base import Job
    from critpt_grader.sandbox.local import LocalBackend

    update: dict[str, Any] = {"warm_sandboxes": False, "require_strong_containment": False}
    local = getattr(settings, "local", settings)  # the local backend's own settings
    if "allow_weak_containment" in type(local).model_fields:
        update["allow_weak_containment"] = True
    if local is settings:
        probing = settings.model_copy(update=update)
    else:
        probing = settings.model_copy(update={"local": local.model_copy(update=update)})
    job = Job(
        source=PROBE,
        entrypoint="answer",
        cases=({"args": [], "kwargs": {}},),
        limits=probing.limits(),
        role="candidate",
    )

    async def go():
        async with LocalBackend(probing) as backend:
            return await backend.run(job)

    outcome = asyncio.run(go())
    host = host_facts(settings, outcome.containment)
    if outcome.status != "ok":
        detail = outcome.detail or outcome.stderr.strip()[-500:]
        return Examination(
            None, host, f"no sandbox could run the probe: {outcome.status}: {detail}"
        )
    case = outcome.cases[0] if outcome.cases else None
    if case is None or case.kind != "value" or case.value is None:
        why = f"{case.kind}: {case.error_type} {case.message}" if case else "no case outcome"
        return Examination(None, host, f"the probe did not return: {why}")
    probe = codec.decode(case.value)
    if not isinstance(probe, dict):
        return Examination(None, host, f"the probe returned {type(probe).__name__}")
    probe = {str(k): v for k, v in probe.items()}
    return Examination(assess(host, probe), host, probe=probe)
