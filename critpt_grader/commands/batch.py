"""``critpt-grader batch IN.jsonl --out OUT.jsonl``: grade a file of ``/verify`` rows.

Each IN line is a ``/verify`` body; each OUT line the matching response plus ``"row"`` (the
0-based IN line), in completion order. Resumable: rows OUT already answers are skipped, and a
torn last line is cut off (:mod:`critpt_grader.batch.outfile`). A progress bar (rows/s, ETA)
on stderr, one summary line on stdout at the end (with ``--json``, one object instead: ``rows``,
``counts`` (``scored_1``, ``scored_0``, ``unscorable``, ``failure``, ``rejected``: the keys
``critpt-grader report`` counts by), ``rejected`` by category, ``already_done``, ``seconds``,
``out``, ``interrupted``, ``all_rejected``). Exit 0 when every row was answered (whatever
its verdict), 1 when every row this run answered was rejected (never graded: say an unknown
``problem_id`` or a missing ``--tasks``; said on stderr), 130 on Ctrl-C (what was written
stays), 2 on unusable input.
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

from critpt_grader.commands.common import (
    add_jobs_flag,
    add_json_flag,
    add_sandbox_flags,
    add_tasks_option,
    print_json,
    settings_from,
    task_paths,
)
from critpt_grader.errors import InputError
from critpt_grader.rows.metrics import COUNT_KEYS, REJECTED, counts_sentence, row_count_key
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
    add_jobs_flag(
        parser,
        "the max_concurrent_sandboxes setting, the CPU count; with --ray, the cluster's CPU "
        "count, one Ray worker per row",
    )
    add_tasks_option(parser, "for rows that carry only a problem_id (as serve --tasks)", default=[])
    parser.add_argument(
        "--ray",
        nargs="?",
        const=True,
        default=None,
        metavar="ADDRESS",
        help="grade on a Ray cluster (ADDRESS, or RAY_ADDRESS, or a local Ray when absent)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    add_json_flag(parser, "the counts by outcome, the rejections and the OUT path")
    add_sandbox_flags(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    return batch(
        args.input,
        args.out,
        jobs=args.jobs,
        tasks=task_paths(args),
        ray=args.ray,
        progress=not args.quiet,
        settings=settings_from(args),
        as_json=args.json,
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
    as_json: bool = False,
) -> int:
    from critpt_grader.batch import grade_indexed
    from critpt_grader.batch.outfile import OutWriter, resume
    from critpt_grader.rows.tasksets import TaskSets

    if not input_path.is_file():
        raise InputError(f"{input_path}: no such file")
    if jobs is not None and jobs < 1:
        raise InputError(f"--jobs must be at least 1, got {jobs}")
    sets = TaskSets(tasks or [])
    state = resume(out_path, input_path)  # refuses an OUT written from another IN
    done, total = state.done, state.total
    todo = max(total - len([i for i in done if i < total]), 0)
    tally: Counter[str] = Counter()
    refusals: Counter[str] = Counter()  # rejected rows by category
    started = time.perf_counter()

    async def go() -> None:
        pairs = _rows(input_path, done)
        with (
            OutWriter(out_path, in_fingerprint=state.in_fingerprint) as writer,
            BatchProgress(todo, enabled=progress) as bar,
        ):
            async for out in grade_indexed(
                pairs, settings=settings, tasks=sets, jobs=jobs, ray=ray
            ):
                writer.write(out)
                kind = row_count_key(out)
                tally[kind] += 1
                if kind == REJECTED:
                    refusals[str(out.get("category"))] += 1
                bar.advance()

    interrupted = False
    try:
        asyncio.run(go())
    except KeyboardInterrupt:
        interrupted = True
    seconds = time.perf_counter() - started
    graded = sum(tally.values())
    all_rejected = graded > 0 and tally[REJECTED] == graded
    if all_rejected:
        why = ", ".join(f"{n} {category}" for category, n in refusals.most_common())
        print(
            f"critpt-grader batch: every row this run answered was rejected, none graded "
            f"({why}); see the detail of the OUT rows in {out_path}",
            file=sys.stderr,
            flush=True,
        )
    if as_json:
        print_json(
            {
                "rows": graded,
                "counts": {key: tally[key] for key in COUNT_KEYS},
                "rejected": dict(refusals),
                "already_done": len(done),
                "seconds": round(seconds, 3),
                "out": str(out_path),
                "interrupted": interrupted,
                "all_rejected": all_rejected,
            }
        )
    else:
        rate = graded / seconds if seconds > 0 else 0.0
        print(
            f"batch: {graded} rows in {seconds:.1f} s ({rate:.1f} rows/s): "
            f"{counts_sentence(tally)}; "
            f"{len(done)} already in {out_path}"
            + ("; interrupted (run again to resume)" if interrupted else ""),
            flush=True,
        )
    if interrupted:
        return 130
    return 1 if all_rejected else 0


def _rows(path: Path, done: set[int]) -> Iterator[tuple[int, bytes]]:
    """``(index, line)`` of every IN line not yet answered, read lazily."""
    with path.open("rb") as file:
        for index, line in enumerate(file):
            if index not in done:
                yield index, line


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
