"""Fingerprints of batch input: which IN row an OUT row answers, and which IN file it came from.

``input_hash`` of an IN row is the SHA-256 (hex) of its canonical content: the line parsed as
JSON (as strictly as the grader parses it, :func:`~critpt_grader.jsonlimits.loads_strict`) and
dumped again with sorted keys, compact separators and UTF-8 text, so whitespace and key order
do not count. A line that does not parse (not JSON, a duplicate key, nesting past the limit)
is hashed as its raw bytes, without the line ending (``\\n`` or ``\\r\\n``). A row given as a
parsed object (:func:`~critpt_grader.grade_many` over dicts) hashes as its JSON text would.

``in_fingerprint`` of an IN file is the SHA-256 (hex) of the sequence of its rows' input
hashes, each followed by ``\\n``, in line order: one pass over the file, O(1) memory, and
blind to whitespace exactly as the row hashes are (a whitespace-only edit of IN changes no
fingerprint). It changes when any row's content changes, rows are reordered, added or removed.

Both are written on every OUT row, top-level next to ``"row"`` (the batch's own bookkeeping;
a row the batch rejected carries no ``critpt_grader`` object), and win over IN keys of the
same name that ``/verify`` echoes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from critpt_grader.jsonlimits import loads_strict
from critpt_grader.rows.canonical import content_hash

INPUT_HASH = "input_hash"
IN_FINGERPRINT = "in_fingerprint"


def input_hash(item: Any) -> str:
    """The SHA-256 (hex) of an IN row's canonical content (see the module docstring)."""
    if isinstance(item, bytes | str):
        raw = item.encode("utf-8", "surrogatepass") if isinstance(item, str) else item
        raw = _strip_newline(raw)
        try:
            parsed = loads_strict(raw.decode("utf-8-sig"))  # as the row intake reads it
        except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
            return hashlib.sha256(raw).hexdigest()
        return content_hash(parsed)
    return content_hash(item)


def _strip_newline(raw: bytes) -> bytes:
    if raw.endswith(b"\n"):
        raw = raw[:-1]
        if raw.endswith(b"\r"):
            raw = raw[:-1]
    return raw


class Fingerprint:
    """``in_fingerprint`` built row by row: :meth:`add` each input hash in IN order."""

    def __init__(self) -> None:
        self._sha = hashlib.sha256()
        self.rows = 0

    def add(self, row_hash: str) -> None:
        self._sha.update(row_hash.encode("ascii") + b"\n")
        self.rows += 1

    def hexdigest(self) -> str:
        return self._sha.hexdigest()


def in_hashes(path: Path) -> Iterator[tuple[int, str]]:
    """``(row, input_hash)`` of every IN line of ``path``, read lazily."""
    with path.open("rb") as file:
        for index, line in enumerate(file):
            yield index, input_hash(line)


def in_fingerprint(path: Path) -> str:
    """The ``in_fingerprint`` of the IN file ``path``."""
    fingerprint = Fingerprint()
    for _, row_hash in in_hashes(path):
        fingerprint.add(row_hash)
    return fingerprint.hexdigest()
