"""``critpt-grader audit``: mutation canaries that find the tasks which cannot tell a wrong
answer from the right one.

    critpt-grader audit --tasks fixtures/public --out reports/audit
    critpt-grader audit --tasks Challenge_*.json --json --jobs 4

TASKSET is a task file (``task_data`` ``.jsonl`` or ``.json``, a CritPt challenge JSON) or a
folder: an acceptance set's ``tasks.jsonl`` when it has one, else its ``*.json``/``*.jsonl``
files. CritPt problems whose answer is withheld (``answer_code`` is the template, as in
CritPt's public challenges) have no reference to mutate and are skipped (and listed). Prints
the task table and the survivors, writes ``report.md``, ``report.html`` and ``report.json``
to ``--out``; with ``--json`` prints one object instead. Exit 0 when it
ran, whatever it found; 2 for unusable input.

A mutant is a candidate like any other, under the same sandbox flags, except that a case
gets at most ``--case-seconds`` (default here :data:`CASE_SECONDS`, not the grading default of
30 s): a mutant that loops for ever is killed by that limit, and a wrong answer that slow
would score 0 anyway. A slow reference needs a larger limit (its preflight says so).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from critpt_grader.commands.common import (
    add_jobs_flag,
    add_json_flag,
    add_sandbox_flags,
    add_tasks_option,
    comma_list,
    print_json,
    settings_from,
    task_paths,
)
from critpt_grader.errors import InputError
from critpt_grader.private_files import write_private_text

CASE_SECONDS = 5.0
WALL_SECONDS = 60.0
DEFAULT_OUT = Path("reports/audit")


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "audit",
        help="find weak tasks: wrong answers derived from each reference that still score 1",
        description="Derive wrong answers from each task's reference (mutation canaries), grade "
        "them through the pipeline and report the tasks that let one pass; also the preflight, "
        "cases and distinct inputs, branches no case reaches and the statement's promises. "
        f"A call gets {CASE_SECONDS:g} s and a run {WALL_SECONDS:g} s unless --case-seconds and "
        "--wall-seconds say otherwise (a mutant that loops is killed by the limit).",
    )
    add_tasks_option(parser, "to audit", positional_alias=True)
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"report folder (default: {DEFAULT_OUT})"
    )
    parser.add_argument(
        "--max-mutants",
        type=int,
        default=None,
        metavar="N",
        help="mutants per task at most, spread over the reference (default: 200)",
    )
    parser.add_argument(
        "--probes",
        type=int,
        default=None,
        metavar="N",
        help="probe inputs per task at most, moved from its cases (default: 24; 0: none)",
    )
    parser.add_argument(
        "--problem-ids",
        type=comma_list,
        metavar="ID,..",
        help="audit only these tasks of the sets, comma-separated",
    )
    add_jobs_flag(parser, "the max_concurrent_sandboxes setting, the CPU count")
    add_json_flag(parser, "the audit (tasks, survivors, totals)")
    add_sandbox_flags(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from critpt_grader.audit import AuditOptions, audit
    from critpt_grader.reports.audit import AuditProgress, print_tables, write_html, write_markdown

    if args.jobs is not None and args.jobs < 1:
        raise InputError("--jobs must be at least 1")
    paths = task_paths(args, required=True)
    tasks, skipped = load_tasksets(paths)
    if args.problem_ids:
        unknown = set(args.problem_ids) - {t.problem_id for t in tasks}
        if unknown:
            raise InputError("--problem-ids: no such task: " + ", ".join(sorted(unknown)))
        tasks = [t for t in tasks if t.problem_id in args.problem_ids]
    if not tasks:
        raise InputError("no task with a reference to audit in " + ", ".join(map(str, paths)))
    settings = settings_from(
        args,
        case_seconds=args.case_seconds or CASE_SECONDS,
        wall_seconds=args.wall_seconds or WALL_SECONDS,
    )
    defaults = AuditOptions()
    options = AuditOptions(
        max_mutants=defaults.max_mutants if args.max_mutants is None else args.max_mutants,
        probes=defaults.probes if args.probes is None else args.probes,
        jobs=args.jobs,
    )
    progress = AuditProgress()
    with progress:
        report = asyncio.run(
            audit(tasks, settings, options, progress.advance, on_plan=progress.planned)
        )
    report.sources = [str(path) for path in paths]
    document = report.to_dict()
    document["skipped_without_reference"] = skipped
    args.out.mkdir(parents=True, exist_ok=True)
    write_private_text(args.out / "report.json", json.dumps(document, indent=1))
    write_markdown(report, args.out / "report.md")
    write_html(report, args.out / "report.html")
    document["reports"] = [
        str(args.out / name) for name in ("report.json", "report.md", "report.html")
    ]
    if args.json:
        print_json(document)
    else:
        print_tables(report)
        if skipped:
            shown = ", ".join(skipped[:5]) + (", …" if len(skipped) > 5 else "")
            print(f"skipped {len(skipped)} problems whose answer is withheld: {shown}")
        print(f"wrote {args.out / 'report.md'} and {args.out / 'report.html'}")
    return 0


def load_tasksets(paths: list[Path]) -> tuple[list, list[str]]:
    """The tasks of every path, in file order, and the ids of those without a reference."""
    from critpt_grader.audit.checks import reference_present
    from critpt_grader.rows.tasksets import task_files
    from critpt_grader.tasks import load_tasks

    tasks, skipped = [], []
    for path in paths:
        for file in task_files(path):
            for task in load_tasks(file):
                (tasks if reference_present(task) else skipped).append(task)
    return tasks, [t.problem_id for t in skipped]
