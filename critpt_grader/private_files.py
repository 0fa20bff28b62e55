"""Files the grader writes that hold expected values: readable by the grader's user only.

A journal's verdicts, a batch's OUT rows (they echo ``task_data``) and the reports built from
them all carry the expected values. Bubblewrap hides the host's files from a candidate, but
under the weak-containment waiver (``CRITPT_GRADER_ALLOW_WEAK_CONTAINMENT=1``, where
bubblewrap cannot run) the candidate is an ordinary host user and reads whatever is readable
by others: an earlier wrong answer's verdict, with its expected value, scored a later
candidate 1. So every such file is created ``0600`` (an existing one is narrowed to that when
it is opened, before anything is written to it) and a folder made for the grader alone (the
journal's) is ``0700``. A file or folder the grader cannot narrow, because another user owns
it, is refused with :class:`PrivacyError`, never used as it is.

What the grader reads (task files, batch IN files) is the operator's: keep those private too.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

FILE_MODE = 0o600
FOLDER_MODE = 0o700


class PrivacyError(OSError):
    """A grader file or folder that others could read and that the grader cannot narrow."""


def private_file(path: str | os.PathLike[str]) -> Path:
    """``path``, created empty with mode 0600 when missing, narrowed to 0600 when others
    (group or world) could read or write it."""
    path = Path(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, FILE_MODE)
    try:
        _narrow(fd, path, FILE_MODE)
    finally:
        os.close(fd)
    return path


def write_private_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) to ``path``, replacing what was there, mode 0600."""
    path = Path(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, FILE_MODE)
    with open(fd, "wb") as out:
        _narrow(out.fileno(), path, FILE_MODE)
        out.write(text.encode("utf-8"))


def private_folder(path: str | os.PathLike[str], *, ours: frozenset[str]) -> Path:
    """``path`` as a folder for the grader alone: made 0700 when missing; an existing one
    that others can enter is narrowed to 0700 only when it holds nothing but the names in
    ``ours`` (the grader's own files), else refused: a shared folder (``/tmp``, a home)
    must never lose its mode because a journal was put there."""
    path = Path(path)
    path.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    mode = stat.S_IMODE(path.stat().st_mode)
    if not mode & 0o077:
        return path
    others = sorted(name for name in os.listdir(path) if name not in ours)
    if others:
        raise PrivacyError(
            f"{path} is open to other users (mode {mode:04o}) and holds other files "
            f"({', '.join(others[:3])}…): give the grader a folder of its own, or "
            f"`chmod 700 {path}`"
        )
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        _narrow(fd, path, FOLDER_MODE)
    finally:
        os.close(fd)
    return path


def is_private(path: str | os.PathLike[str]) -> bool:
    """Whether neither group nor others may read, write or enter ``path``."""
    return not stat.S_IMODE(os.stat(path).st_mode) & 0o077


def _narrow(fd: int, path: Path, mode: int) -> None:
    if not stat.S_IMODE(os.fstat(fd).st_mode) & 0o077:
        return
    try:
        os.fchmod(fd, mode)
    except PermissionError as exc:
        raise PrivacyError(
            f"{path} is open to other users and not the grader's to narrow: "
            f"`chmod {mode:o} {path}` (as its owner) or choose another path"
        ) from exc
