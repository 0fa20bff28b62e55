"""``critpt-grader batch IN.jsonl --out OUT.jsonl``: grade a file of ``/verify`` rows.

Each IN line is a ``/verify`` body; each OUT line the matching response plus ``"row"`` (the
0-based IN line), in completion order. Resumable: rows OUT already answers are skipped, and a
torn last line is cut off (:mod:`critpt_grader.batch.outfile`). A progress bar (rows/s, ETA)
on stderr, one summary line on stdout at the end. Exit 0 when every row was answered (whatever
its verdict), 130 on Ctrl-C (what was written stays), 2 on unusable input.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from critpt_grader.errors import InputError
from critpt_grader.settings import Settings


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "batch",
        help="grade a JSONL file of /verify rows into a JSONL file of /verify responses",
        description=(
            "Grade every row of IN (one /verify body per line) and append its /verify response "
            'plus "row" (the 0-based IN line) to OUT. Rows OUT already holds are skipped.'
        ),
    )
    parser.add_argument("input", type=Path, metavar="IN.jsonl")
    parser.add_argument("--out", type=Path, required=True, metavar="OUT.jsonl")
    parser.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="sandboxes at once (default: the CPU count); with --ray, the number of workers",
    )
    parser.add_argument(
        "--tasks",
        nargs="+",
        default=[],
        metavar="PATH",
        help="task sets for rows that carry only a problem_id (as serve --tasks)",
    )
    parser.add_argument(
        "--ray",
        nargs="?",
        const=True,
        default=None,
        metavar="ADDRESS",
        help="grade on a Ray cluster (ADDRESS, or RAY_ADDRESS, or a local Ray when absent)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    return batch(
        args.input,
        args.out,
        jobs=args.jobs,
        tasks=args.tasks,
        ray=args.ray,
        progress=not args.quiet,
    )


def batch(
    input_path: Path,
    out_path: Path,
    *,
    jobs: int | None = None,
    tasks: list[str] | None = None,
    ray: bool | str | None = None,
    progress: bool = True,
    settings: Settings | None = None,
) -> int:
    from critpt_grader.batch import grade_indexed
    from critpt_grader.batch.outfile import OutWriter, done_rows
    from critpt_grader.rows.tasksets import TaskSets

    if not input_path.is_file():
        raise InputError(f"{input_path}: no such file")
    if jobs is not None and jobs < 1:
        raise InputError(f"--jobs must be at least 1, got {jobs}")
    sets = TaskSets(tasks or [])
    done = done_rows(out_path)
    total = _count_lines(input_path)
    todo = max(total - len([i for i in done if i < total]), 0)
    tally: Counter[str] = Counter()
    started = time.perf_counter()

    async def go() -> None:
        pairs = _rows(input_path, done)
        with OutWriter(out_path) as writer, BatchProgress(todo, enabled=progress) as bar:
            async for out in grade_indexed(
                pairs, settings=settings, tasks=sets, jobs=jobs, ray=ray
            ):
                writer.write(out)
                tally[_kind(out)] += 1
                bar.advance()

    interrupted = False
    try:
        asyncio.run(go())
    except KeyboardInterrupt:
        interrupted = True
    seconds = time.perf_counter() - started
    graded = sum(tally.values())
    parts = [f"{tally[k]} {k}" for k in ("passed", "scored 0", "unscorable", "failure", "rejected")]
    rate = graded / seconds if seconds > 0 else 0.0
    print(
        f"batch: {graded} rows in {seconds:.1f} s ({rate:.1f} rows/s): {', '.join(parts)}; "
        f"{len(done)} already in {out_path}"
        + ("; interrupted (run again to resume)" if interrupted else ""),
        flush=True,
    )
    return 130 if interrupted else 0


def _kind(out: dict[str, Any]) -> str:
    if out.get("rejected"):
        return "rejected"
    if out.get("outcome") == "scored":
        return "passed" if out.get("reward") == 1 else "scored 0"
    return str(out.get("outcome"))


def _rows(path: Path, done: set[int]) -> Iterator[tuple[int, bytes]]:
    """``(index, line)`` of every IN line not yet answered, read lazily."""
    with path.open("rb") as file:
        for index, line in enumerate(file):
            if index not in done:
                yield index, line


def _count_lines(path: Path) -> int:
    """IN rows: newline count, plus a last line without one (read in chunks)."""
    count, last = 0, b"\n"
    with path.open("rb") as file:
        while chunk := file.read(1 << 20):
            count += chunk.count(b"\n")
            last = chunk[-1:]
    return count + (last != b"\n")


class BatchProgress:
    """A rich bar on a terminal (rows, rows/s, elapsed, ETA); nothing otherwise."""

    def __init__(self, total: int, *, enabled: bool = True) -> None:
        self.total = total
        self.enabled = enabled
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> BatchProgress:
        if not self.enabled:
            return self
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        console = Console(file=sys.stderr)
        if not console.is_terminal:
            return self
        self._progress = Progress(
            TextColumn("grading"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]} rows/s"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
        )
        self._progress.start()
        self._task = self._progress.add_task("grading", total=self.total, rate="–")
        return self

    def advance(self) -> None:
        if self._progress is None:
            return
        self._progress.advance(self._task)
        speed = self._progress.tasks[0].speed
        self._progress.update(self._task, rate=f"{speed:.1f}" if speed else "–")

    def __exit__(self, *exc_info: object) -> None:
        if self._progress is not None:
            self._progress.stop()
