"""Write the generated parts of the manual: the command line page from the argparse parser and
the settings page from the pydantic field descriptions.

    python scripts/gen_docs.py           rewrite the generated blocks in docs/
    python scripts/gen_docs.py --check   exit 1 when a committed block differs from the code

Each page keeps its hand-written text; only the part between ``<!-- generated: NAME -->``
and ``<!-- end generated -->`` is written here. ``tests/integration/test_docs.py`` checks that
the committed blocks equal what this script writes, so a new flag, subcommand or setting
fails the tests until the pages are regenerated.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

BLOCK = re.compile(
    r"(<!-- generated: (?P<name>[a-z-]+) -->\n)(?P<body>.*?)(<!-- end generated -->)", re.S
)


def subcommands() -> dict[str, argparse.ArgumentParser]:
    """Every ``critpt-grader`` subcommand's parser, by the name typed on the command line."""
    from critpt_grader.cli import build_parser

    parser = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise RuntimeError("critpt-grader has no subcommands")


def _metavar(action: argparse.Action) -> str:
    if action.metavar is not None:
        return action.metavar if isinstance(action.metavar, str) else " ".join(action.metavar)
    return action.dest.upper() if action.option_strings else action.dest


def _usage_part(action: argparse.Action) -> str:
    """One argument as a usage line shows it, written here so every Python prints the same."""
    name = _metavar(action)
    if action.nargs == "?":
        name = f"[{name}]"
    elif action.nargs == "*":
        name = f"[{name} ...]"
    elif action.nargs == "+":
        name = f"{name} [{name} ...]"
    if not action.option_strings:
        return name
    flag = max(action.option_strings, key=len)
    text = flag if action.nargs == 0 else f"{flag} {name}"
    return text if action.required else f"[{text}]"


def _help(action: argparse.Action, prog: str) -> str:
    text = action.help or ""
    if "%" in text:
        text = text % {**vars(action), "prog": prog}
    return _cell(text)


def _arguments(action: argparse.Action) -> str:
    if not action.option_strings:
        return f"`{_usage_part(action)}`"
    shown = _metavar(action)
    if action.nargs == "?":
        shown = f"[{shown}]"
    elif action.nargs in ("*", "+"):
        shown = f"{shown} ..."
    flags = ", ".join(action.option_strings)
    return f"`{flags}`" if action.nargs == 0 else f"`{flags} {shown}`"


def cli_block() -> str:
    """Each subcommand: its description, a usage line and a table of its arguments per group,
    read from the parser's actions (not argparse's formatter, whose layout changes between
    Python versions)."""
    lines = ["```", "critpt-grader [-h] COMMAND ...", "```", ""]
    for name, sub in subcommands().items():
        actions = [a for a in sub._actions if not isinstance(a, argparse._HelpAction)]
        usage = " ".join(["critpt-grader", name, *(_usage_part(a) for a in actions)])
        lines += [f"## critpt-grader {name}", ""]
        if sub.description:
            lines += [" ".join(sub.description.split()), ""]
        lines += ["```", usage, "```", ""]
        for group in sub._action_groups:
            shown = [a for a in group._group_actions if not isinstance(a, argparse._HelpAction)]
            if not shown:
                continue
            lines += [f"| {group.title} | what it does |", "|---|---|"]
            lines += [f"| {_arguments(a)} | {_help(a, sub.prog)} |" for a in shown]
            lines.append("")
    return "\n".join(lines)


def _default(field: Any) -> str:
    if field.default_factory in (dict, list):
        return f"`{field.default_factory()}`"
    if field.default_factory is not None:
        return "computed (see the description)"
    value = field.default
    if value is None:
        return "unset"
    if value == sys.executable:
        return "the grader's own interpreter"
    if isinstance(value, bool):
        return "`1`" if value else "`0`"
    return f"`{value}`"


def _type(annotation: Any) -> str:
    if get_origin(annotation) is Literal:
        return "one of " + ", ".join(f"`{value}`" for value in get_args(annotation))
    text = getattr(annotation, "__name__", None) or str(annotation)
    text = text.replace("typing.", "").replace("pydantic.types.", "")
    return text.replace("|", "or")


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def settings_table(model: type, prefix: str) -> list[str]:
    rows = [
        "| setting | environment | type | default | what it sets |",
        "|---|---|---|---|---|",
    ]
    for name, field in model.model_fields.items():
        if name == "local":
            continue  # LocalSettings: its own table, same environment names
        described = field.description or ""
        rows.append(
            f"| `{name}` | `{prefix}{name.upper()}` | {_cell(_type(field.annotation))} "
            f"| {_cell(_default(field))} | {_cell(described)} |"
        )
    return rows


def settings_block() -> str:
    from critpt_grader.sandbox.daytona import DaytonaSettings
    from critpt_grader.sandbox.gym import GymSettings
    from critpt_grader.settings import LocalSettings, Settings

    lines: list[str] = []
    for title, model in (
        ("Settings", Settings),
        ("LocalSettings", LocalSettings),
        ("DaytonaSettings", DaytonaSettings),
        ("GymSettings", GymSettings),
    ):
        prefix = model.model_config.get("env_prefix", "")
        own = [name for name in model.model_fields if name != "local"]
        nested = " (and `local`: the LocalSettings below)" if "local" in model.model_fields else ""
        lines += [
            f"## {title}",
            "",
            f"`{model.__module__}.{model.__qualname__}`: {len(own)} fields{nested}, "
            f"environment prefix `{prefix}`.",
            "",
            *settings_table(model, prefix),
            "",
        ]
    return "\n".join(lines)


GENERATORS: dict[str, Callable[[], str]] = {"cli": cli_block, "settings": settings_block}
PAGES = {
    "cli": REPO / "docs" / "operate" / "cli.md",
    "settings": REPO / "docs" / "operate" / "settings.md",
}


def render(text: str) -> str:
    """The page text with each generated block written afresh."""

    def fill(match: re.Match[str]) -> str:
        body = GENERATORS[match["name"]]()
        return f"{match.group(1)}\n{body}\n{match.group(4)}"

    return BLOCK.sub(fill, text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say whether a page is stale")
    args = parser.parse_args(argv)
    stale = []
    for name, page in PAGES.items():
        text = page.read_text()
        if f"<!-- generated: {name} -->" not in text:
            raise SystemExit(f"{page}: no '<!-- generated: {name} -->' block")
        fresh = render(text)
        if fresh != text:
            stale.append(page)
            if not args.check:
                page.write_text(fresh)
    for page in stale:
        print(f"{'stale' if args.check else 'rewrote'}: {page.relative_to(REPO)}")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
