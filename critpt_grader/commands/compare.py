"""``critpt-grader compare``: compare two wire values with the grader's comparator.

    critpt-grader compare --expected '{"format":"critpt-value-v1","value":["float","0x1p+0"]}' \\
        --candidate @answer.json --problem "Report E with relative error below 1e-6." --json

Exit 0 whenever a verdict was produced (whatever it is); exit 2 for unusable input.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from critpt_grader.errors import CodecError, InputError


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "compare",
        help="compare an expected and a candidate wire value",
        description="Compare two critpt-value-v1 envelopes leaf by leaf. WIRE is envelope "
        "JSON text or @FILE. Exit 0 whenever a verdict was produced.",
    )
    parser.add_argument("--expected", required=True, metavar="WIRE", help="expected envelope")
    parser.add_argument("--candidate", required=True, metavar="WIRE", help="candidate envelope")
    parser.add_argument("--problem", default="", help="statement text (promises, conventions)")
    parser.add_argument("--output-doc", help="the template docstring's Outputs section")
    parser.add_argument("--rtol", help="task-level relative tolerance (exact decimal text)")
    parser.add_argument("--atol", help="task-level absolute tolerance (exact decimal text)")
    parser.add_argument("--json", action="store_true", help="print the verdict as JSON")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from critpt_grader.compare import Policy, compare_values

    expected = _load_wire(args.expected, "--expected")
    candidate = _load_wire(args.candidate, "--candidate")
    try:
        policy = Policy(
            problem=args.problem or "",
            output_doc=args.output_doc,
            task_rtol=args.rtol,
            task_atol=args.atol,
        )
    except ValueError as exc:
        raise InputError(f"bad tolerance: {exc}") from None
    verdict = compare_values(expected, candidate, policy)
    if args.json:
        print(json.dumps(verdict.to_dict(), ensure_ascii=False))
    else:
        _print_table(verdict)
    return 0


def _load_wire(argument: str, flag: str) -> Any:
    from critpt_grader.codec import loads

    text = argument
    if argument.startswith("@"):
        path = Path(argument[1:])
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"{flag}: cannot read {path}: {exc}") from None
    try:
        return loads(text)
    except CodecError as exc:
        raise InputError(f"{flag}: not a critpt-value-v1 envelope: {exc}") from None
    except ValueError as exc:
        raise InputError(f"{flag}: not valid JSON: {exc}") from None


def _print_table(verdict) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    colours = {"equal": "green", "mismatch": "red", "uncertain": "yellow", "invalid": "magenta"}
    table = Table(title=f"verdict: {verdict.status}", title_justify="left")
    for column in ("path", "kind", "status", "expected", "observed", "tolerance", "reason"):
        table.add_column(column, overflow="fold")
    for leaf in verdict.leaves:
        table.add_row(
            escape(leaf.path or "(root)"),
            leaf.kind,
            f"[{colours[leaf.status]}]{leaf.status}[/]",
            escape(leaf.expected or ""),
            escape(leaf.observed or ""),
            escape(leaf.tolerance.text if leaf.tolerance else ""),
            escape(leaf.reason),
        )
    Console(highlight=False).print(table)
