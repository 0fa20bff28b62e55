"""``critpt-grader reverify JOURNAL``: re-grade what a crash or an outage left in a journal.

Rows re-graded: those accepted but never finished (the server died), cancelled (the client went
away), failed internally, or left ``provider_unavailable``. Each is graded again from its saved
candidate source, with no new model call, against its task: the one journaled with the row, or
its ``problem_id`` in the task sets the server had loaded (their paths are in the journal;
``--tasks`` replaces them). Verdicts are written back to the journal.

Prints what it did; with ``--json`` one object: ``{"rows", "pending", "regraded",
"unfinished", "by_category", "missing_tasks"}``, where ``unfinished`` counts rows still without a
lasting verdict (0 after a clean run), and ``in_flight`` the rows a live server (or another
``reverify``) is grading now. Exit 0 when nothing is left unfinished but those, 1 otherwise.

It is safe beside a live server: a row is taken only when its owner (the process that
accepted or claimed it) is gone, and claimed before it is graded
(:mod:`critpt_grader.server.journal`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

from critpt_grader.commands.common import (
    add_sandbox_flags,
    add_tasks_option,
    settings_from,
    task_paths,
)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "reverify",
        help="re-grade journaled rows a crash or an outage left without a verdict",
        description="Re-grade the rows of a serve --journal folder that were left unfinished, "
        "cancelled or provider_unavailable, from their saved source (no model call).",
    )
    parser.add_argument("journal", type=Path, metavar="JOURNAL", help="the --journal folder")
    add_tasks_option(parser, "to resolve problem_id rows (default: those the server loaded)")
    parser.add_argument("--jobs", type=int, default=8, help="rows graded at once")
    parser.add_argument("--json", action="store_true", help="print one JSON summary")
    add_sandbox_flags(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from critpt_grader.errors import InputError
    from critpt_grader.server.journal import FILENAME, Journal

    folder = args.journal
    if not (folder / FILENAME).exists() and not (folder.is_file() and folder.suffix == ".sqlite3"):
        raise InputError(f"{folder}: no journal ({FILENAME}) there")
    journal = Journal(folder)
    try:
        summary = asyncio.run(reverify(journal, settings_from(args), task_paths(args), args.jobs))
    finally:
        journal.close()
    if args.json:
        print(json.dumps(summary, ensure_ascii=False))
    else:
        categories = ", ".join(f"{k} {v}" for k, v in sorted(summary["by_category"].items()))
        print(
            f"journal {journal.path}: {summary['rows']} rows, {summary['pending']} to re-grade; "
            f"{summary['regraded']} re-graded" + (f" ({categories})" if categories else "")
        )
        for pid in summary["missing_tasks"]:
            print(f"  no task for problem_id {pid!r} in the loaded sets")
        print(f"unfinished: {summary['unfinished']}")
    return 0 if summary["unfinished"] == 0 else 1


async def reverify(journal, settings, task_paths: list[Path] | None, jobs: int) -> dict[str, Any]:
    """Re-grade the journal's pending rows; the summary."""
    from critpt_grader.rows.rejected import RowRejected
    from critpt_grader.rows.resolve import resolve_task
    from critpt_grader.rows.tasksets import TaskSets
    from critpt_grader.server.service import VerifyService

    pending = journal.pending()
    keyed = any(row.task_key is not None for row in pending)
    paths = task_paths if task_paths else [Path(p) for p in journal.task_paths()]
    sets = TaskSets(paths if keyed else [])
    service = VerifyService(settings, tasks=sets)
    await service.start()
    regraded: Counter[str] = Counter()
    missing: set[str] = set()
    slots = asyncio.Semaphore(max(1, jobs))

    async def one(row) -> None:
        if row.task_row is not None:
            try:
                task = resolve_task(row.task_row, sets)[0]
            except RowRejected:
                task = None
        else:
            task = sets.get(row.task_key or "")
        if task is None:
            missing.add(row.problem_id or row.task_key or row.id)
            return
        if not journal.claim(row):
            return  # another re-grader took it first
        async with slots:
            result = await service.regrade(task, row.source, row.response)
        journal.finish(row.id, result.category.value, result.model_dump(mode="json"))
        regraded[result.category.value] += 1

    try:
        await asyncio.gather(*(one(row) for row in pending))
    finally:
        await service.aclose()
    unfinished = journal.unfinished()
    return {
        "rows": journal.counts()["rows"],
        "pending": len(pending),
        "regraded": sum(regraded.values()),
        "unfinished": unfinished,
        "in_flight": journal.in_flight(),
        "by_category": dict(regraded),
        "missing_tasks": sorted(missing),
    }
