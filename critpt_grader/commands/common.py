"""What the subcommands share, so every one speaks the same dialect.

- :func:`add_sandbox_flags` / :func:`settings_from`: the sandbox flags of every command that
  grades (``--backend``, ``--case-seconds``, ``--wall-seconds``, ``--memory-mb``,
  ``--require-strong-containment``), each overriding its ``CRITPT_GRADER_*`` setting.
- :func:`add_jobs_flag`: ``--jobs N`` means one thing everywhere: how many rows are graded at
  once.
- :func:`add_json_flag` / :func:`print_json`: ``--json`` prints exactly one JSON object on
  stdout instead of the human output.

- :func:`add_tasks_option` / :func:`task_paths`: ``--tasks TASKSET ...`` is the one way every
  command names task sets (CritPt challenge JSON files, ``task_data`` ``.jsonl``, or folders of
  them); task ids have their own flags (``--problem-id``, ``--problem-ids``). Older spellings
  still parse: ``--task FILE`` (grade, explain) and positional sets (audit, export-harbor).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

SANDBOX_SETTINGS = (
    "backend",
    "case_seconds",
    "wall_seconds",
    "memory_mb",
    "require_strong_containment",
)
JOBS_HELP = "how many rows are graded at once"
TASKS_HELP = "task-set paths (CritPt challenge JSON files, task_data .jsonl, or folders of them)"
TASKS_METAVAR = "TASKSET"
_POSITIONAL_SETS = "positional_tasksets"  # the older positional spelling, kept parsing


def add_tasks_option(
    parser: argparse.ArgumentParser,
    purpose: str = "",
    *,
    default: list[Path] | None = None,
    positional_alias: bool = False,
) -> None:
    """``--tasks TASKSET [TASKSET ...]`` (also ``--task``): task-set paths, in the same words
    on every command; ``purpose`` says what this command does with them. ``default``: when
    none is given (``None`` here means the command decides). ``positional_alias``: the sets
    may also come as positional arguments, as this command took them before."""
    parser.add_argument(
        "--tasks",
        "--task",
        dest="tasks",
        nargs="+",
        action="extend",
        type=Path,
        default=default,
        metavar=TASKS_METAVAR,
        help=f"{TASKS_HELP}{', ' + purpose if purpose else ''}",
    )
    if positional_alias:
        parser.add_argument(
            _POSITIONAL_SETS, nargs="*", type=Path, default=[], help=argparse.SUPPRESS
        )


def task_paths(args: argparse.Namespace, *, required: bool = False) -> list[Path] | None:
    """The task sets named on the command line (``--tasks`` then any positional ones); with
    ``required``, refused when there is none."""
    given = [*(args.tasks or []), *getattr(args, _POSITIONAL_SETS, [])]
    if required and not given:
        from critpt_grader.errors import InputError

        raise InputError(f"name the task sets with --tasks {TASKS_METAVAR} [{TASKS_METAVAR} ...]")
    return given if given or args.tasks is not None else None


def add_sandbox_flags(parser: argparse.ArgumentParser) -> None:
    """Limits and backend flags shared by the commands that grade; each overrides the
    matching ``CRITPT_GRADER_*`` environment setting."""
    group = parser.add_argument_group("sandbox settings")
    group.add_argument(
        "--backend",
        help="sandbox backend (local, daytona, gym, in-process; more from installed entry points)",
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


def settings_from(args: argparse.Namespace, *more: str, **overrides: Any):
    """:class:`~critpt_grader.settings.Settings` from the environment, overridden by the
    sandbox flags given, by the ``more`` attributes of ``args`` given (a command's own
    settings flags) and by ``overrides``; a value of ``None`` overrides nothing."""
    from critpt_grader.settings import Settings

    values = {name: getattr(args, name, None) for name in (*SANDBOX_SETTINGS, *more)}
    values.update(overrides)
    return Settings(**{k: v for k, v in values.items() if v is not None})


def add_jobs_flag(parser: argparse.ArgumentParser, default: str) -> None:
    """``--jobs N``: how many rows are graded at once; ``default`` says what it is when absent."""
    parser.add_argument(
        "--jobs", type=int, default=None, metavar="N", help=f"{JOBS_HELP} (default: {default})"
    )


def comma_list(text: str) -> list[str]:
    """An ``ID,..`` flag's value: the comma-separated items, at least one."""
    items = [item.strip() for item in text.split(",") if item.strip()]
    if not items:
        raise argparse.ArgumentTypeError("expected a comma-separated list")
    return items


def add_json_flag(parser: argparse.ArgumentParser, what: str) -> None:
    """``--json``: print ``what`` as one JSON object on stdout instead of the human output."""
    parser.add_argument("--json", action="store_true", help=f"print {what} as one JSON object")


def print_json(document: Any) -> None:
    print(json.dumps(document, ensure_ascii=False), flush=True)
