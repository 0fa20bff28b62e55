"""The ``critpt-grader`` command: a thin shell over the pure core.

Each subcommand lives in ``critpt_grader/commands/<name>.py`` and exposes ``add_parser`` and
``run``. Bad input never produces a traceback: a :class:`GraderError` (or unreadable input)
becomes a one-line reason on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from critpt_grader.errors import GraderError

SUBCOMMANDS = (
    "grade",
    "compare",
    "acceptance",
    "batch",
    "report",
    "serve",
    "reverify",
    "doctor",
    "sandboxes",
    "explain",
    "export_harbor",
    "audit",
)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command's parser; ``only``: with that one subcommand (its module alone is
    imported: a cold ``critpt-grader grade`` does not load what ``serve`` or the reports
    need)."""
    return _parser(only)[0]


def _parser(only: str | None) -> tuple[argparse.ArgumentParser, argparse._SubParsersAction]:
    parser = argparse.ArgumentParser(
        prog="critpt-grader",
        description="Grade answers to CritPt-style physics problems, strictly and in a sandbox.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMANDS if only is None else (only,):
        try:
            module = importlib.import_module(f"critpt_grader.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"critpt_grader.commands.{name}":
                continue  # not built yet: only list the subcommands that exist
            raise
        module.add_parser(subparsers)
    return parser, subparsers


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    module = words[0].replace("-", "_") if words else ""
    parser = None
    if module in SUBCOMMANDS:  # the named subcommand's module alone
        parser, subparsers = _parser(module)
        if words[0] not in subparsers.choices:
            parser = None
    if parser is None:
        parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "run", None):
        parser.print_help()
        return 2
    try:
        return int(args.run(args) or 0)
    except (GraderError, OSError, ValueError) as exc:
        print(f"critpt-grader {args.command}: {_one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def _one_line(exc: Exception) -> str:
    """The reason in one line; a settings error names the setting and what it must be."""
    errors = getattr(exc, "errors", None)
    if callable(errors) and type(exc).__name__ == "ValidationError":
        first = errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        return f"setting {where}: {first['msg']}"
    return " ".join(str(exc).split())


if __name__ == "__main__":
    sys.exit(main())
