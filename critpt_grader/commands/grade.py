"""``critpt-grader grade``: grade one response to one task and print the verdict."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

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
    add_settings_arguments(parser)
    parser.set_defaults(run=run)


def add_settings_arguments(parser: argparse.ArgumentParser) -> None:
    """Limits and backend flags shared by the commands that grade; each overrides the
    matching ``CRITPT_GRADER_*`` environment setting."""
    group = parser.add_argument_group("sandbox settings")
    group.add_argument(
        "--backend",
        help="sandbox backend (local, daytona, in-process; more from installed entry points)",
    )
    group.add_argument("--case-seconds", type=float, help="time limit for one call")
    group.add_argument("--wall-seconds", type=float, help="time limit for a whole run")
    group.add_argument("--memory-mb", type=int, help="address space per process")
    group.add_argument(
        "--require-strong-containment",
        action="store_true",
        default=None,
        help="refuse to run code without bubblewrap containment",
    )


def settings_from(args: argparse.Namespace):
    from critpt_grader.settings import Settings

    overrides = {
        name: getattr(args, name, None)
        for name in (
            "backend",
            "case_seconds",
            "wall_seconds",
            "memory_mb",
            "require_strong_containment",
        )
    }
    return Settings(**{k: v for k, v in overrides.items() if v is not None})


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
