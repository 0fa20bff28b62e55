"""``critpt-grader doctor``: what containment a candidate would get on this machine.

Starts one real, fresh candidate sandbox with the local backend, probes every containment
layer from inside it (kernel settings are only opened, never written) and prints a table of
layer → held / missing / weak with the fix (:mod:`critpt_grader.sandbox.doctor`).

Exit 0 when the strong containment holds, 1 when an essential layer is missing, 2 when no
sandbox could run the probe at all (the reason is printed).
"""

from __future__ import annotations

import argparse
import json
import sys

from critpt_grader.commands.common import add_sandbox_flags, settings_from
from critpt_grader.errors import InputError

EXIT_STRONG, EXIT_WEAK, EXIT_NO_SANDBOX = 0, 1, 2
COLOURS = {"held": "green", "weak": "yellow", "missing": "bold red"}


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "doctor",
        help="check which sandbox containment this machine gives a candidate",
        description="Start a real sandbox, probe each containment layer from inside and "
        "print layer → held/missing/weak with the fix. Exit 0 when the strong containment "
        "holds, 1 when an essential layer is missing, 2 when no sandbox could start.",
    )
    parser.add_argument(
        "--json", action="store_true", help="print the rows, the verdict and what was seen"
    )
    add_sandbox_flags(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from critpt_grader.sandbox.doctor import examine

    if getattr(args, "backend", None) == "gym":
        return _gym(args)
    if getattr(args, "backend", None) not in (None, "local"):
        raise InputError("the doctor examines the local and gym backends only")
    examination = examine(settings_from(args))
    report, host = examination.report, examination.host
    if args.json:
        document = {
            "strong": bool(report and report.strong),
            "containment": host.containment,
            "rows": report.to_json()["rows"] if report else [],
            "error": examination.failure or None,
            "host": _host_json(host),
            "probe": examination.probe,
        }
        print(json.dumps(document, ensure_ascii=False))
    if report is None:
        print(f"critpt-grader doctor: {examination.failure}", file=sys.stderr)
        return EXIT_NO_SANDBOX
    if not args.json:
        _print_report(report, host.containment)
    return EXIT_STRONG if report.strong else EXIT_WEAK


def _gym(args: argparse.Namespace) -> int:
    """Run a probe job through the gym backend's provider and say what held inside: the
    runner's own layers only (a provider is not containment). Exit 1 (never strong) when the
    probe ran, 2 when no sandbox could run it."""
    import asyncio

    from critpt_grader import codec
    from critpt_grader.sandbox.base import Job
    from critpt_grader.sandbox.gym import GymBackend, probe_rows, probe_source

    settings = settings_from(args)
    backend = GymBackend(settings)
    job = Job(source=probe_source(), entrypoint="f", cases=({"args": []},))

    async def go():
        async with backend:
            return await backend.run(job)

    outcome = asyncio.run(go())
    if outcome.status != "ok" or outcome.cases[0].kind != "value":
        print(
            f"critpt-grader doctor: no gym sandbox ran the probe: {outcome.detail}", file=sys.stderr
        )
        return EXIT_NO_SANDBOX
    seen = codec.decode(outcome.cases[0].value)
    rows = probe_rows(seen)
    if args.json:
        document = {
            "strong": False,
            "containment": outcome.containment,
            "rows": [{"name": n, "status": st, "seen": sn} for n, st, sn in rows],
            "probe": seen,
        }
        print(json.dumps(document, ensure_ascii=False))
        return EXIT_WEAK
    for name, status, seen_text in rows:
        print(f"{name}: {status}; seen: {seen_text}")
    print(f"provider: {backend.config.provider} (its own isolation is not examined here)")
    print(f"containment label: {outcome.containment}")
    print(
        "strong containment: NO (a Gym provider is not the local sandbox; "
        "see docs/operate/backends.md)"
    )
    return EXIT_WEAK


def _host_json(host) -> dict:
    from dataclasses import asdict

    facts = asdict(host)
    facts["settings"] = {k: _plain(v) for k, v in facts["settings"].items()}
    return facts


def _plain(value):
    return value if isinstance(value, str | int | float | bool) or value is None else str(value)


def _print_report(report, containment: str) -> None:
    """A rich table on a terminal; plain lines (no box drawing, no colour) when piped."""
    from rich.console import Console

    console = Console(highlight=False)
    if not console.is_terminal:
        _print_plain(report, containment)
        return
    from rich.table import Table
    from rich.text import Text

    table = Table("layer", "status", "seen", "stops", "fix", show_lines=False)
    for row in report.rows:
        name = row.name + (" *" if row.essential else "")
        status = Text(row.status, style=COLOURS.get(row.status, ""))
        table.add_row(name, status, row.seen, row.stops, row.fix)
    console.print(table)
    console.print("* essential: missing means the containment is not strong")
    console.print(f"containment label: {containment or '?'}")
    if report.strong:
        console.print("[bold green]strong containment: yes[/]")
    else:
        console.print(f"[bold red]strong containment: NO[/] (missing: {_missing(report)})")


def _print_plain(report, containment: str) -> None:
    """One line per layer (``layer: status; seen: …; stops: …; fix: …``), then the verdict."""
    for row in report.rows:
        name = row.name + (" *" if row.essential else "")
        line = f"{name}: {row.status}; seen: {row.seen}; stops: {row.stops}"
        print(" ".join((line + (f"; fix: {row.fix}" if row.fix else "")).split()))
    print("* essential: missing means the containment is not strong")
    print(f"containment label: {containment or '?'}")
    if report.strong:
        print("strong containment: yes")
    else:
        print(f"strong containment: NO (missing: {_missing(report)})")


def _missing(report) -> str:
    return ", ".join(row.name for row in report.rows if row.essential and row.status == "missing")
