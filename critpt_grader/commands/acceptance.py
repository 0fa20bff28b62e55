"""``critpt-grader acceptance``: grade every candidate of acceptance sets against its expectation.

Exit codes: 0 every expectation met, 1 at least one not met, 2 unusable input (a set that
cannot be read, filters that select nothing, every set skipped). With ``--json``, instead of the
tables one object on stdout: ``passed``, ``candidates``, ``met``, ``not_met``, ``by_kind``,
``duration_seconds``, ``skipped_sets`` and ``reports`` (the paths written).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from critpt_grader.acceptance.run import GraderLike, grade_all, select_candidates
from critpt_grader.acceptance.sets import KINDS, AcceptanceSet, SkippedSet, load_set
from critpt_grader.commands.common import (
    add_jobs_flag,
    add_json_flag,
    add_sandbox_flags,
    comma_list,
    print_json,
    settings_from,
)
from critpt_grader.errors import InputError
from critpt_grader.reports.acceptance.console import GradingProgress, print_tables
from critpt_grader.reports.acceptance.document import RunContext, build_report, write_json
from critpt_grader.reports.acceptance.html import write_html
from critpt_grader.reports.acceptance.markdown import write_markdown
from critpt_grader.settings import Settings

DEFAULT_SET = Path("fixtures/public")
DEFAULT_OUT = Path("reports/acceptance")

GraderFactory = Callable[[], AbstractAsyncContextManager[GraderLike]]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "acceptance",
        help="grade an acceptance set and report where verdicts differ from expectations",
        description=(
            "Grade every candidate of one or more acceptance sets, print the agreement per "
            "kind and the disagreements, and write report.json, report.md and report.html."
        ),
    )
    parser.add_argument(
        "sets", nargs="*", type=Path, metavar="SET", help=f"set folder (default: {DEFAULT_SET})"
    )
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"report folder (default: {DEFAULT_OUT})"
    )
    parser.add_argument(
        "--kinds", type=comma_list, help=f"only these kinds, comma-separated: {','.join(KINDS)}"
    )
    parser.add_argument(
        "--problem-ids",
        type=comma_list,
        metavar="ID,..",
        help="only candidates written for or graded against these task ids, comma-separated",
    )
    add_jobs_flag(parser, "the max_concurrent_sandboxes setting, the CPU count")
    add_json_flag(parser, "the met / not met counts and the report paths")
    add_sandbox_flags(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    return acceptance(
        args.sets or [DEFAULT_SET],
        out=args.out,
        kinds=args.kinds,
        task_ids=args.problem_ids,
        jobs=args.jobs,
        settings=settings_from(args),
        as_json=args.json,
    )


def acceptance(
    set_paths: Sequence[Path],
    *,
    out: Path,
    kinds: Sequence[str] | None = None,
    task_ids: Sequence[str] | None = None,
    jobs: int | None = None,
    settings: Settings | None = None,
    grader_factory: GraderFactory | None = None,
    as_json: bool = False,
) -> int:
    """Run the whole command and return its exit code.

    ``settings`` default to the environment's; ``jobs`` overrides their sandbox concurrency.
    ``grader_factory`` replaces the real grader (tests). ``as_json``: one JSON object on
    stdout instead of the tables.
    """
    if jobs is not None and jobs < 1:
        raise InputError(f"--jobs must be at least 1, got {jobs}")
    if kinds is not None and (unknown := sorted(set(kinds) - set(KINDS))):
        raise InputError(f"--kinds: unknown kind {', '.join(unknown)} (known: {', '.join(KINDS)})")
    sets, skipped = _load_sets(set_paths)
    if task_ids is not None:
        known = {task_id for s in sets for task_id in s.tasks}
        if unknown := sorted(set(task_ids) - known):
            raise InputError(f"--problem-ids: no task {', '.join(unknown)} in the sets")
    selected = select_candidates(sets, kinds=kinds, task_ids=task_ids)
    if not selected:
        raise InputError("no candidate matches --kinds/--problem-ids")

    if grader_factory is None:
        settings = settings or Settings()
        if jobs is not None:
            settings = settings.model_copy(update={"max_concurrent_sandboxes": jobs})
        jobs = settings.max_concurrent_sandboxes
        grader_factory = partial(_real_grader, settings)
    started_at, started = datetime.now(UTC), time.perf_counter()
    graded = asyncio.run(_grade(selected, jobs or 1, grader_factory))
    context = RunContext(sets, skipped, kinds, task_ids, started_at, time.perf_counter() - started)
    report = build_report(context, graded)
    out.mkdir(parents=True, exist_ok=True)
    write_json(report, out / "report.json")
    write_markdown(report, out / "report.md")
    write_html(report, out / "report.html")
    if as_json:
        summary = report["summary"]
        print_json(
            {
                "passed": report["passed"],
                "candidates": summary["candidates"],
                "met": summary["met"],
                "not_met": summary["not_met"],
                "by_kind": summary["by_kind"],
                "duration_seconds": report["duration_seconds"],
                "skipped_sets": [s["name"] for s in report["skipped_sets"]],
                "reports": {kind: str(out / f"report.{kind}") for kind in ("json", "md", "html")},
            }
        )
    else:
        print_tables(report)
        print(f"reports written to {out}/report.{{json,md,html}}")
    return 0 if report["passed"] else 1


def _load_sets(paths: Sequence[Path]) -> tuple[list[AcceptanceSet], list[SkippedSet]]:
    sets, skipped = [], []
    for path in paths:
        loaded = load_set(path)
        if isinstance(loaded, SkippedSet):
            print(f"skipped set {loaded.name}: {loaded.reason}", file=sys.stderr)
            skipped.append(loaded)
        else:
            sets.append(loaded)
    if not sets:
        raise InputError("no set to grade: every set was skipped")
    names = [s.name for s in sets]
    if len(set(names)) != len(names):
        raise InputError(f"two sets share a name: {', '.join(sorted(names))}")
    return sets, skipped


async def _grade(selected: list, jobs: int, grader_factory: GraderFactory) -> list:
    async with grader_factory() as grader:
        with GradingProgress(len(selected)) as progress:
            return await grade_all(selected, grader, jobs=jobs, on_done=progress.advance)


def _real_grader(settings: Settings) -> AbstractAsyncContextManager[GraderLike]:
    from critpt_grader.pipeline import Grader  # late: the sandbox stack loads only when grading

    return Grader(settings)
