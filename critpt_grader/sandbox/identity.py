"""Who sandboxed code is on the host: never uid 0.

Bubblewrap started by root keeps host uid 0 inside the sandbox, and files such as
``/proc/sys/kernel/core_pattern`` check only the uid, not capabilities: a root-run sandbox
could reach host root through them. So a root grader never starts bubblewrap itself. The
launcher drops to a dedicated unprivileged user first (``setpriv``: real, effective and saved
uid and gid, no supplementary groups, no capabilities, an empty bounding set, no new
privileges) and that user's bubblewrap makes an unprivileged user namespace. Every process
of the sandbox is then that host uid, whatever its namespace calls it, and every kernel check
treats it as an ordinary user. A grader that is not root runs the sandbox as itself, which is
already an ordinary user.

The user is ``critpt-sandbox``, created by ``.ci/install``; where it is missing, ``nobody``.
It only needs to read and execute the sandbox runtime (the interpreter, its packages and this
package): the install puts them where every user can read them.
"""

from __future__ import annotations

import os
import pwd
import shutil
from dataclasses import dataclass

DEFAULT_USER = "critpt-sandbox"
FALLBACK_USER = "nobody"


@dataclass(frozen=True, slots=True)
class SandboxIdentity:
    """The host uid/gid that sandboxed code runs as, and the name it goes by."""

    uid: int
    gid: int
    name: str


def sandbox_identity(user: str = DEFAULT_USER) -> SandboxIdentity | None:
    """Whom a sandbox started by this process runs as on the host.

    Not root: this process's own uid (bubblewrap cannot map to anyone else). Root: ``user``
    (a name or a number), else ``nobody``; None when neither exists, and the caller refuses."""
    if os.geteuid() != 0:
        return SandboxIdentity(os.getuid(), os.getgid(), _name(os.getuid()))
    for candidate in (user, FALLBACK_USER):
        found = _lookup(candidate)
        if found is not None and found.uid != 0 and found.gid != 0:
            return found
    return None


def drop_prefix(identity: SandboxIdentity | None) -> list[str]:
    """The command prefix that makes the rest of the command line run as ``identity``.

    Empty when this process is already that user (it is not root)."""
    if identity is None or os.geteuid() != 0:
        return []
    # util-linux's own place too: a grader started with a bare PATH must still drop root, or
    # its candidates would run as root (the runner refuses that, so nothing would run).
    setpriv = shutil.which("setpriv") or shutil.which("setpriv", path="/usr/bin:/bin")
    if setpriv is None:
        raise FileNotFoundError("setpriv (util-linux) is needed to drop root for sandboxes")
    return [
        setpriv,
        f"--reuid={identity.uid}",
        f"--regid={identity.gid}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--no-new-privs",  # a setuid binary in sight cannot raise anything
        "--",
    ]


def _lookup(user: str) -> SandboxIdentity | None:
    try:
        entry = pwd.getpwuid(int(user)) if user.isdigit() else pwd.getpwnam(user)
    except KeyError:
        if user.isdigit():  # a bare number without an entry is still a valid uid
            return SandboxIdentity(int(user), int(user), user)
        return None
    return SandboxIdentity(entry.pw_uid, entry.pw_gid, entry.pw_name)


def _name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)
