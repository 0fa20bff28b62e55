"""``critpt-grader grade``: grade one response to one task and print the verdict."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from critpt_grader.commands.common import add_sandbox_flags, settings_from
from critpt_grader.errors import InputError, TaskError
from critpt_grader.tasks import Task, load_tasks, read_json


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "grade",
        help="grade one response to one task",
        description="Grade one response. Exit 0 whenever a verdict was produced, whatever it "
        "is; exit 2 with a one-line reason for unusable input.",
    )
    parser.add_argument(
        "--task",
        required=True,
        type=Path,
        help="a task row (.json), a .jsonl of rows, or a CritPt challenge JSON",
    )
    parser.add_argument("--problem-id", help="which task of a file holding several")
    parser.add_argument(
        "--response",
        required=True,
        type=Path,
        help="the model's answer: .txt/.md text or a .json Responses API object",
    )
    parser.add_argument("--json", action="store_true", help="print the GradeResult as JSON")
    add_sandbox_flags(parser)
    parser.set_defaults(run=run)


# The shared helper under its former name: reverify still imports it (and settings_from) here.
add_settings_arguments = add_sandbox_flags


def pick_task(path: Path, problem_id: str | None) -> Task:
    tasks = load_tasks(path)
    if problem_id is not None:
        chosen = [t for t in tasks if t.problem_id == problem_id]
        if not chosen:
            raise TaskError(problem_id, "problem_id", f"not found in {path}")
        return chosen[0]
    if len(tasks) != 1:
        raise InputError(f"{path} holds {len(tasks)} tasks; pick one with --problem-id")
    return tasks[0]


def read_response(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the response {path}: {exc}") from None
    if path.suffix == ".json":
        return read_json(text, f"response {path}")
    return text


def run(args: argparse.Namespace) -> int:
    from critpt_grader.pipeline import grade

    task = pick_task(args.task, args.problem_id)
    response = read_response(args.response)
    result = grade(task, response, settings=settings_from(args))
    if args.json:
        print(json.dumps(result.model_dump(mode="json"), ensure_ascii=False))
    else:
        print_result(result)
    return 0


def print_result(result) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    colour = {"scored": "green" if result.reward == 1 else "red"}.get(result.outcome, "yellow")
    console.print(
        f"[bold {colour}]{result.outcome}[/] reward={result.reward:g} "
        f"category={result.category.value}"
        + (f" failure_kind={result.failure_kind}" if result.failure_kind else "")
    )
    if result.reason:
        console.print(f"reason: {result.reason}")
    leaves = [(case.index, leaf) for case in result.cases for leaf in case.leaves]
    if leaves:
        table = Table("case", "path", "kind", "status", "tolerance", "reason")
        for index, leaf in leaves[:50]:
            tolerance = f"{leaf.tolerance} ({leaf.tolerance_source})" if leaf.tolerance else ""
            table.add_row(
                str(index), leaf.path or "/", leaf.kind, leaf.status, tolerance, leaf.reason
            )
        console.print(table)
