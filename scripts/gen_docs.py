"""Write the generated parts of the manual: the command line page from the argparse parser and
the settings page from the pydantic field descriptions.

    python scripts/gen_docs.py           rewrite the generated blocks in docs/
    python scripts/gen_docs.py --check   exit 1 when a committed block differs from the code

Each page keeps its hand-written text; only the part between ``<!-- generated: NAME -->`` and
``<!-- end generated -->`` is written here. ``tests/test_docs.py`` checks that the committed
blocks equal what this script writes, so a new flag, subcommand or setting fails the tests
until the pages are regenerated.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

WIDTH = "100"  # argparse wraps help at $COLUMNS: a fixed width keeps the page the same everywhere
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


def cli_block() -> str:
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        from critpt_grader.cli import build_parser

        lines = ["```", build_parser().format_usage().strip(), "```", ""]
        for name, sub in subcommands().items():
            lines += [f"## critpt-grader {name}", ""]
            if sub.description:
                lines += [" ".join(sub.description.split()), ""]
            lines += ["```", sub.format_help().rstrip(), "```", ""]
    finally:
        if previous is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = previous
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
        lines += [
            f"## {title}",
            "",
            f"`{model.__module__}.{model.__qualname__}`, {len(model.model_fields)} fields, "
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
