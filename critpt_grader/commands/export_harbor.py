"""``critpt-grader export-harbor``: a task set as one NeMo Gym Harbor dataset.

    critpt-grader export-harbor --tasks fixtures/public/tasks.jsonl --out harbor/public --org critpt
    critpt-grader export-harbor --tasks Challenge_*.json --out harbor/critpt --json

Writes ``dataset.toml``, ``task.toml``, ``tasks.jsonl``, ``task_data.py``,
``instruction.template.md``, ``environment/Dockerfile`` with the grader's wheel,
``tests/verifier.py`` and ``solution/answer.template.md`` (see
:mod:`critpt_grader.harbor.export`). Exit 0 when written; 2, naming the task and the field,
for a task set it cannot carry.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from critpt_grader.commands.common import add_tasks_option, task_paths


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "export-harbor",
        help="write a task set as a NeMo Gym Harbor dataset",
        description="Write one parameterized Harbor dataset (a template, one row per task, "
        "a verifier that grades through critpt-grader) from task rows or CritPt challenges.",
    )
    add_tasks_option(parser, "to export", positional_alias=True)
    parser.add_argument("--out", required=True, type=Path, help="a new or empty folder")
    parser.add_argument("--org", help="name the tasks '<org>/<task_id>' (task.toml [task].name)")
    parser.add_argument(
        "--wheel", type=Path, help="ship this wheel of the grader (default: build one)"
    )
    parser.add_argument("--json", action="store_true", help="print what was written as JSON")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from critpt_grader.harbor.export import export

    done = export(task_paths(args, required=True), args.out, org=args.org, wheel=args.wheel)
    if args.json:
        summary = {
            "out": str(done.out),
            "tasks": done.tasks,
            "format": done.task_format,
            "wheel": done.wheel,
        }
        print(json.dumps(summary))
    else:
        print(f"wrote {done.tasks} {done.task_format} tasks to {done.out} (wheel {done.wheel})")
    return 0
