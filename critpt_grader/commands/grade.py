"""``critpt-grader grade``: grade one response to one task and print the verdict."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from critpt_grader.commands.common import (
    add_sandbox_flags,
    add_tasks_option,
    settings_from,
    task_paths,
)
from critpt_grader.errors import InputError, TaskError
from critpt_grader.tasks import Task, load_tasks, read_json


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "grade",
        help="grade one response to one task",
        description="Grade one response. Exit 0 whenever a verdict was produced, whatever it "
        "is; exit 2 with a one-line reason for unusable input.",
    )
    add_tasks_option(parser, "holding the task to grade")
    parser.add_argument("--problem-id", help="which task of sets holding several")
    parser.add_argument(
        "--response",
        required=True,
        type=Path,
        help="the model's answer: .txt/.md text or a .json Responses API object",
    )
    parser.add_argument("--json", action="store_true", help="print the GradeResult as JSON")
    add_sandbox_flags(parser)
    parser.set_defaults(run=run)


def load_sets(paths: list[Path]) -> list[Task]:
    """Every task of the task sets ``paths`` (files, or folders of them), in file order."""
    from critpt_grader.rows.tasksets import task_files

    return [task for path in paths for file in task_files(path) for task in load_tasks(file)]


def pick_task(paths: list[Path], problem_id: str | None) -> Task:
    tasks = load_sets(paths)
    where = ", ".join(map(str, paths))
    if problem_id is not None:
        chosen = [t for t in tasks if t.problem_id == problem_id]
        if not chosen:
            raise TaskError(problem_id, "problem_id", f"not found in {where}")
        return chosen[0]
    if len(tasks) != 1:
        raise InputError(f"{where} holds {len(tasks)} tasks; pick one with --problem-id")
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

    task = pick_task(task_paths(args, required=True), args.problem_id)
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
