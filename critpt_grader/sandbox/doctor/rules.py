"""The rules: probe readings and host facts in, one row per containment layer and a verdict out.

:func:`assess` turns what :mod:`.probe` saw from inside a sandbox (its dict) and what the
host says (:class:`~.facts.HostFacts`) into :class:`~.facts.Layer` rows: ``held``,
``missing`` or ``weak``, what was seen, what the layer stops and the fix.

What it assumes: nothing about the machine it runs on; every probe value may be missing or
of the wrong type (an unknown reading is shown as ``?`` and never counts as held where that
would flatter the sandbox).

What it guarantees: it is pure (no files, processes or settings are read), so every rule is
unit-tested with synthetic probe dictionaries; the containment is strong exactly when no
essential layer is ``missing``; a ``held`` row has no fix.
"""

from __future__ import annotations

from typing import Any

from critpt_grader.sandbox.doctor.facts import SANDBOX_USER, HostFacts, Layer, Report, Status

# A writable /tmp or /dev/shm larger than this is not meaningfully bounded.
SCRATCH_BOUND_BYTES = 1 << 30
USER_WRITABLE_PLACES = ("/tmp/", "/var/tmp/", "/dev/shm/", "/home/", "/root/")

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
        _own_world(probe),
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


def _host_root(host: HostFacts, probe: dict[str, Any]) -> bool | None:
    """Whether the sandbox is host root: never when a grader that is not root started it (no
    namespace hands out more than its creator has; a job's own /proc, which shows no
    /proc/sys, leaves the probe without the kernel's own uid check), else as the probe
    shows (:func:`host_root_inside`)."""
    return False if host.euid != 0 else host_root_inside(probe)


def _host_uid(host: HostFacts, probe: dict[str, Any]) -> Layer:
    uid, uid_map = probe.get("uid"), " ".join(str(probe.get("uid_map", "")).split())
    root = _host_root(host, probe)
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
    nproc, root = probe.get("rlimit_nproc"), _host_root(host, probe)
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


def _own_world(probe: dict[str, Any]) -> Layer:
    pid, pids = probe.get("own_pid"), str(probe.get("proc_pids", "?"))
    pid1 = str(probe.get("pid1_cmdline") or "?")
    held = pid == 2 and pids == "1,2" and pid1.split(" ")[0] == "critpt-job-init"
    return _layer(
        "own world",
        "held" if held else "weak",
        f"pid {pid}, /proc shows pids {pids}; PID 1 is {pid1}",
        "every job needs namespaces of its own (runner/world.py): bubblewrap must let the "
        "runner keep CAP_SYS_ADMIN in the sandbox's user namespace (--cap-add)",
        "one job leaving a note for the next: pids, inode numbers, IPC ids, /proc counters",
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
