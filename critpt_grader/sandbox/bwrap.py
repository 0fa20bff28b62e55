"""The bubblewrap command line for a sandbox: what the runner sees and its environment.

By default the sandbox sees, read-only, only the system folders (and a few files of /etc),
the interpreter with its libraries and this package; everything else on the host — task
files, repositories, home folders, secrets — is simply not there. Only two places are
writable, both private size-limited tmpfs: ``/tmp`` (also the working folder) and
``/dev/shm``. The sandbox's own root and ``/dev`` are remounted read-only once built, so a
job can leave nothing behind outside those two, which a warm sandbox empties after every
job: a file dropped in ``/`` or ``/dev`` would otherwise outlive the job and stay charged to
the sandbox's memory. Bubblewrap itself hides ``/proc/sysrq-trigger`` and makes
``/proc/sys`` read-only; ``/sys`` is not mounted at all.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from functools import cache
from pathlib import Path

from critpt_grader.runner import protocol, world
from critpt_grader.sandbox.containment import LAUNCH_FAILED

# This package's own folder (critpt_grader/), found without importing the package's root,
# whose public names reach up to the pipeline.
PACKAGE = Path(__file__).resolve().parents[1]
TMPFS_BYTES = 64 << 20  # each of /tmp and /dev/shm, at least


def sandbox_environment(python: str, home: str) -> dict[str, str]:
    """The whole environment the runner sees: nothing of the host's leaks in."""
    package_parent = str(PACKAGE.parent)
    return {
        "PATH": f"{Path(python).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "LANG": "C.UTF-8",
        "PYTHONPATH": package_parent,
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONIOENCODING": "utf-8",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "MPLBACKEND": "Agg",
        protocol.UNPRIVILEGED_VARIABLE: "1",  # the runner refuses to run a job as uid 0
    }


def bwrap_command(
    bwrap: str, view: list[str], env: dict[str, str], tmp_bytes: int, *, worlds: bool = False
) -> list[str]:
    """The bubblewrap command line. ``worlds``: the runner gives every job a world of its own
    (:mod:`critpt_grader.runner.world`), for which it keeps, in the sandbox's own user
    namespace only, the capabilities to make namespaces and mounts (every job's process
    drops them before it runs a line of the program); the host loads the runner's seccomp
    filter then (:mod:`critpt_grader.sandbox.seccomp`)."""
    command = [
        shutil.which(bwrap) or bwrap,
        "--unshare-all",
        "--unshare-user",  # always an unprivileged user namespace (see identity.py)
        "--disable-userns",  # and no further one inside it
        "--die-with-parent",
        "--new-session",
        "--as-pid-1",  # the runner is PID 1: a child cannot signal it or reach its fds
        *view_arguments(view, tmp_bytes),
        "--proc", "/proc",
        "--dev", "/dev",
        "--size", str(scratch_bytes(tmp_bytes)), "--tmpfs", "/dev/shm",
        # Built: from here on only /tmp and /dev/shm take writes (the remounts are not
        # recursive, so the two tmpfs under them stay writable).
        "--remount-ro", "/dev",
        "--remount-ro", "/",
        # /proc too: a pid namespace's own settings (kernel/pid_max) are writable by its
        # owner, and a job lowering them would reach the next job of a warm sandbox.
        "--remount-ro", "/proc",
        "--cap-drop", "ALL",
        *(argument for cap in world.CAPABILITIES if worlds for argument in ("--cap-add", cap)),
        "--clearenv",
        "--chdir", "/tmp",
    ]  # fmt: skip
    for key, value in {**env, **({world.VARIABLE: "1"} if worlds else {})}.items():
        command += ["--setenv", key, value]
    return command


def view_arguments(view: list[str], tmp_bytes: int) -> list[str]:
    """Mounts for the sandbox's filesystem: ``view`` read-only, then a private /tmp.

    A path in ``view`` that is a symlink (``/bin -> usr/bin`` on merged-/usr systems) is
    recreated as that symlink. Folders under /tmp (a venv in CI) are bound after the private
    /tmp is mounted, so they stay visible."""
    tmp = Path("/tmp")
    early, late = [], []
    for path in view:
        if os.path.islink(path) and Path(path).parent == Path("/"):
            early += ["--symlink", os.readlink(path), path]
            continue
        (late if tmp in Path(path).parents else early).extend(["--ro-bind", path, path])
    tmpfs = ["--size", str(scratch_bytes(tmp_bytes)), "--tmpfs", "/tmp"]
    return early + tmpfs + late


def scratch_bytes(max_file_bytes: int) -> int:
    """The size of each writable tmpfs: room for a few files of the largest allowed size."""
    return max(max_file_bytes * 4, TMPFS_BYTES)


SYSTEM_PATHS = (
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
    # From /etc only what programs need to start and name things; never its secrets.
    "/etc/ld.so.cache", "/etc/localtime", "/etc/passwd", "/etc/group", "/etc/nsswitch.conf",
    "/etc/alternatives",
)  # fmt: skip


def filesystem_view(python: str, *, host_root: bool) -> list[str]:
    """What the sandbox sees, read-only: the system folders (and a few files of /etc), the
    interpreter with its libraries and this package — or, with ``host_root``, the whole host
    filesystem (less /tmp). The narrow view keeps every other host file, task files and
    secrets included, out of sight."""
    runtime = runtime_paths(python)
    if host_root:
        return ["/", *(path for path in runtime if Path("/tmp") in Path(path).parents)]
    system = [path for path in SYSTEM_PATHS if os.path.lexists(path)]
    return system + [path for path in runtime if not _covered(path, system)]


@cache
def runtime_paths(python: str) -> list[str]:
    """Folders the runner needs beyond the system ones: the interpreter's prefixes (its
    standard library and site-packages, asked of the interpreter itself, once), this package
    and its grammar. Nothing else of its import path: an editable install or a ``.pth`` file
    can put a whole repository, or whatever folder the grader was started from, on it."""
    package = PACKAGE
    probe = subprocess.run(
        [python, "-s", "-c", _RUNTIME_PROBE],
        capture_output=True,
        env={"PATH": "/usr/bin:/bin"},
        cwd="/",
        timeout=30,
        check=True,
    )
    wanted = {Path(entry).resolve() for entry in json.loads(probe.stdout) if entry}
    wanted |= {Path(python).parent, Path(python).resolve().parent.parent}
    wanted |= {package, package.parent / "grammar"}
    existing = sorted(str(path) for path in wanted if path.exists() and path != Path("/"))
    return [path for path in existing if not _covered(path, [p for p in existing if p != path])]


_RUNTIME_PROBE = (
    "import json, sys; print(json.dumps([sys.prefix, sys.base_prefix, sys.exec_prefix]))"
)


def _covered(path: str, folders: list[str]) -> bool:
    return any(path == folder or path.startswith(folder.rstrip("/") + "/") for folder in folders)


def never_started(returncode: int | None, stderr: bytes) -> bool:
    """A run without a result that never reached the runner: the launcher could not join
    the cgroup, or bubblewrap itself refused (its messages start with ``bwrap:``)."""
    return returncode == LAUNCH_FAILED or stderr.lstrip().startswith(b"bwrap:")


_WORLDS_PROBE = "from critpt_grader.runner.world import probe; raise SystemExit(probe())"


@cache
def worlds_work(
    bwrap: str, prefix: tuple[str, ...], python: str, *, seccomp: bool, seconds: float = 30.0
) -> bool:
    """Whether the runner can give every job a world of its own here: the sandbox's own
    command line with worlds (and the runner's filter when ``seccomp``), started through
    ``prefix`` as sandboxes are, running a program that makes one world and settles a
    process in it (probed once)."""
    from critpt_grader.sandbox.seccomp import filter_fd, seccomp_filter

    try:
        view = filesystem_view(python, host_root=False)
    except (OSError, subprocess.SubprocessError, ValueError):
        return False
    env = sandbox_environment(python, home="/tmp")
    command = bwrap_command(bwrap, view, env, TMPFS_BYTES, worlds=True)
    program = seccomp_filter(worlds=True) if seccomp else None
    fd = filter_fd(program) if program is not None else None
    if fd is not None:
        command[1:1] = ["--seccomp", str(fd)]
    try:
        done = subprocess.run(
            [*prefix, *command, python, "-s", "-B", "-c", _WORLDS_PROBE],
            capture_output=True,
            env=env,
            cwd="/",
            timeout=seconds,
            check=False,
            pass_fds=() if fd is None else (fd,),
        )
    except (OSError, subprocess.SubprocessError):
        return False
    finally:
        if fd is not None:
            os.close(fd)
    return done.returncode == 0
