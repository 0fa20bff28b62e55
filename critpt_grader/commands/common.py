"""What the subcommands share, so every one speaks the same dialect.

- :func:`add_sandbox_flags` / :func:`settings_from`: the sandbox flags of every command that
  grades (``--backend``, ``--case-seconds``, ``--wall-seconds``, ``--memory-mb``,
  ``--require-strong-containment``), each overriding its ``CRITPT_GRADER_*`` setting.
- :func:`add_jobs_flag`: ``--jobs N`` means one thing everywhere: how many rows are graded at
  once.
- :func:`add_json_flag` / :func:`print_json`: ``--json`` prints exactly one JSON object on
  stdout instead of the human output.

``--tasks`` always means task-set paths (CritPt challenge JSON files, ``task_data`` ``.jsonl``,
or folders of them); task ids have their own flags (``--problem-id``, ``--problem-ids``).
"""

from __future__ import annotations

import argparse
import json
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
