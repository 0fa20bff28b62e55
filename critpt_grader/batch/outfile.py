"""The OUT file of a batch: resumable, and durable line by line.

Each OUT row is one line, written whole, then flushed (so a ``kill -9`` of the grader loses
nothing it wrote) and fsynced at most every :data:`SYNC_SECONDS` and at the end (a power
cut loses at most that much). On resume the OUT file is read line by line: every complete
line that parses and names its ``"row"`` marks that IN row done; a torn last line (a kill in
the middle of a write) is cut off before writing continues. Only the set of done row numbers
is kept in memory.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

SYNC_SECONDS = 1.0


def done_rows(path: Path) -> set[int]:
    """The IN rows ``path`` already answers; cuts a torn last line off the file."""
    done: set[int] = set()
    if not path.exists():
        return done
    good_end = 0
    with path.open("rb") as file:
        offset = 0
        for line in file:
            offset += len(line)
            if not line.endswith(b"\n"):
                break  # torn: the writer was killed mid-line
            try:
                row = json.loads(line)
            except ValueError:
                break
            if isinstance(row, dict) and isinstance(row.get("row"), int):
                done.add(row["row"])
            good_end = offset
    if good_end != path.stat().st_size:
        with path.open("r+b") as file:
            file.truncate(good_end)
    return done


class OutWriter:
    """Appends OUT rows to ``path``, one line each, flushed as written."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = path.open("ab")
        self._synced = time.monotonic()

    def write(self, row: dict[str, Any]) -> None:
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
