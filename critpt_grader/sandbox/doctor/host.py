"""The host side: what this machine and these settings say about containment.

:func:`host_facts` looks at bubblewrap (path and version), setpriv, the sandbox user, the
cgroup mode, whether unprivileged user namespaces are allowed, the sandbox interpreter and
the containment-related settings, and returns them as one :class:`~.facts.HostFacts`.

What it assumes: a Linux host; ``settings`` is the grader's ``Settings`` (or the local
backend's own settings), read only through ``getattr`` and pydantic's ``model_fields``.

What it guarantees: it only looks. Kernel settings are read, never written; the only
program it runs is ``bwrap --version`` (bounded by a timeout); it starts no sandbox.
"""

from __future__ import annotations

import os
import pwd
import resource
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

from critpt_grader.sandbox.doctor.facts import SANDBOX_USER, HostFacts

CGROUP_ROOT = Path("/sys/fs/cgroup")
CONTAINMENT_SETTINGS = ("seccomp", "expose_host_filesystem")


def host_facts(settings: Any, containment: str) -> HostFacts:
    """What this machine and these settings say; ``containment`` is the probe's label."""
    bwrap = shutil.which("bwrap") or ""
    local = getattr(settings, "local", settings)  # the local backend's own settings
    user = str(getattr(local, "sandbox_user", SANDBOX_USER))
    python = str(getattr(local, "sandbox_python", ""))
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
        require_strong=bool(getattr(local, "require_strong_containment", False)),
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
