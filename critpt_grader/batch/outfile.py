"""The OUT file of a batch: resumable, and durable line by line.

Each OUT row is one line, written whole, then flushed (so a ``kill -9`` of the grader loses
nothing it wrote) and fsynced at most every :data:`SYNC_SECONDS` and at the end (a power
cut loses at most that much). On resume the OUT file is read line by line: every complete
line that parses and names its ``"row"`` marks that IN row done; a torn last line (a kill in
the middle of a write) is cut off before writing continues. Only the set of done row numbers
is kept in memory.

**Fingerprints.** Every OUT row carries the ``input_hash`` of the IN row it answers and the
``in_fingerprint`` of the whole IN file (:mod:`critpt_grader.batch.fingerprint`).
:func:`resume` refuses, before anything is graded or the OUT file is touched, an OUT file
written from another IN: some row's ``in_fingerprint`` is not this IN's, or a done row's
``input_hash`` is not the hash of this IN's line at that row number. It also refuses an OUT
file written before fingerprints existed (a row without them): nothing would show which IN
it answers, so it must not be extended; write to a new OUT file. The per-row check costs no
memory beyond the done set: a sum of row/hash digests over OUT is compared with the same sum
over the IN lines it names, and only on a mismatch are both files read again to name the
first differing row.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from critpt_grader.batch.fingerprint import IN_FINGERPRINT, INPUT_HASH, Fingerprint, in_hashes
from critpt_grader.errors import InputError
from critpt_grader.private_files import private_file

SYNC_SECONDS = 1.0


_SUM_MOD = 1 << 256


def done_rows(path: Path) -> set[int]:
    """The IN rows ``path`` already answers; cuts a torn last line off the file. Checks no
    fingerprint: :func:`resume` does."""
    done = {row["row"] for row in _good_rows(path)}
    _cut_torn_tail(path)
    return done


@dataclass(frozen=True, slots=True)
class Resume:
    """What a batch run resumes from: the IN rows OUT already answers, this IN's
    ``in_fingerprint`` (to write on every new OUT row) and its number of rows."""

    done: set[int]
    in_fingerprint: str
    total: int


def resume(out_path: Path, in_path: Path) -> Resume:
    """The done rows of ``out_path`` after checking it was written from ``in_path``
    (:class:`InputError` otherwise, naming the first row that differs); then cuts a torn last
    line off ``out_path``. Reads OUT once and IN once (again only to explain a refusal)."""
    done: set[int] = set()
    fingerprints: set[str] = set()
    out_sum = 0
    for row in _good_rows(out_path):
        index = row["row"]
        row_hash, fingerprint = row.get(INPUT_HASH), row.get(IN_FINGERPRINT)
        if not isinstance(row_hash, str) or not isinstance(fingerprint, str):
            raise InputError(
                f"{out_path}: row {index} has no {INPUT_HASH}/{IN_FINGERPRINT}: this OUT file "
                "was written before batch fingerprints, so nothing shows which IN it answers; "
                "write to a new OUT file"
            )
        fingerprints.add(fingerprint)
        if index not in done:  # a row written twice counts once, as read_out keeps one
            done.add(index)
            out_sum = (out_sum + _row_digest(index, row_hash)) % _SUM_MOD
    current = Fingerprint()
    in_sum = 0
    for index, row_hash in in_hashes(in_path):
        current.add(row_hash)
        if index in done:
            in_sum = (in_sum + _row_digest(index, row_hash)) % _SUM_MOD
    total, fingerprint = current.rows, current.hexdigest()
    if done and (fingerprints != {fingerprint} or in_sum != out_sum):
        raise InputError(_mismatch(out_path, in_path, fingerprint, total))
    _cut_torn_tail(out_path)
    return Resume(done, fingerprint, total)


def _row_digest(index: int, row_hash: str) -> int:
    digest = hashlib.sha256(f"{index}:{row_hash}".encode()).digest()
    return int.from_bytes(digest, "big")


def _mismatch(out_path: Path, in_path: Path, fingerprint: str, total: int) -> str:
    """Why ``out_path`` is not from ``in_path``: the first done row whose input differs, a done
    row past the end of IN, or else the fingerprint alone (a row not yet answered differs)."""
    answered: dict[int, str] = {}
    foreign: tuple[int, str] | None = None
    for row in _good_rows(out_path):
        answered.setdefault(row["row"], row[INPUT_HASH])
        if foreign is None and row[IN_FINGERPRINT] != fingerprint:
            foreign = (row["row"], row[IN_FINGERPRINT])
    refuse = (
        f"{out_path} was not written from {in_path}; grade into a new OUT file, or resume "
        "with the IN file it came from"
    )
    for index, row_hash in in_hashes(in_path):
        if index in answered and answered[index] != row_hash:
            return (
                f"{refuse}: row {index} (IN line {index + 1}) differs: OUT answered input "
                f"{INPUT_HASH} {answered[index][:12]}…, this IN's line hashes to {row_hash[:12]}…"
            )
    beyond = sorted(i for i in answered if not 0 <= i < total)
    if beyond:
        return f"{refuse}: OUT answers row {beyond[0]} but {in_path} has only {total} rows"
    index, other = foreign if foreign is not None else (min(answered), "?")
    return (
        f"{refuse}: row {index} has {IN_FINGERPRINT} {other[:12]}…, this IN's is "
        f"{fingerprint[:12]}… (every answered row matches its IN line, so a row not yet "
        "answered differs, or IN gained or lost rows)"
    )


def _good_rows(path: Path) -> Any:
    """The OUT rows of ``path`` that name their ``"row"``, up to the first torn or unreadable
    line (what resuming keeps)."""
    if not path.exists():
        return
    with path.open("rb") as file:
        for line in file:
            if not line.endswith(b"\n"):
                return  # torn: the writer was killed mid-line
            try:
                row = json.loads(line)
            except ValueError:
                return
            if isinstance(row, dict) and isinstance(row.get("row"), int):
                yield row


def _cut_torn_tail(path: Path) -> None:
    """Cut ``path`` after its last good line (a torn or unreadable tail)."""
    if not path.exists():
        return
    good_end = 0
    with path.open("rb") as file:
        offset = 0
        for line in file:
            offset += len(line)
            if not line.endswith(b"\n"):
                break
            try:
                json.loads(line)
            except ValueError:
                break
            good_end = offset
    if good_end != path.stat().st_size:
        with path.open("r+b") as file:
            file.truncate(good_end)


class OutWriter:
    """Appends OUT rows to ``path``, one line each, flushed as written; with
    ``in_fingerprint`` (:attr:`Resume.in_fingerprint`), stamps it on every row."""

    def __init__(self, path: Path, *, in_fingerprint: str | None = None) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        # OUT rows echo task_data, expected values included: readable by the grader only.
        self._file = private_file(path).open("ab")
        self._synced = time.monotonic()
        self._fingerprint = in_fingerprint

    def write(self, row: dict[str, Any]) -> None:
        if self._fingerprint is not None:
            row = {**row, IN_FINGERPRINT: self._fingerprint}
        line = json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n"
        self._file.write(line.encode("utf-8"))
        self._file.flush()
        if time.monotonic() - self._synced >= SYNC_SECONDS:
            self.sync()

    def sync(self) -> None:
        os.fsync(self._file.fileno())
        self._synced = time.monotonic()

    def close(self) -> None:
        if not self._file.closed:
            self._file.flush()
            self.sync()
            self._file.close()

    def __enter__(self) -> OutWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
