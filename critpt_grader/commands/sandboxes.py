"""``critpt-grader sandboxes``: the remote sandboxes this machine's journal owns.

    critpt-grader sandboxes            # journalled sandboxes not confirmed deleted
    critpt-grader sandboxes --sweep    # delete this owner's leftovers at the provider

The ownership journal (``CRITPT_GRADER_DAYTONA_JOURNAL_DIR``) records every Daytona sandbox
before it is created and after its delete is confirmed. ``--sweep`` lists the provider's
sandboxes carrying this owner's label (``CRITPT_GRADER_DAYTONA_OWNER``) and deletes each
that the journal does not show deleted, sparing runs still alive on this machine. Exit 0;
1 when leftovers remain after a sweep; 2 for unusable settings or a missing SDK.
"""

from __future__ import annotations

import argparse
import asyncio
import json

from critpt_grader.sandbox.daytona import DaytonaBackend, DaytonaSettings
from critpt_grader.sandbox.journal import OwnershipJournal


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "sandboxes",
        help="list (or --sweep) remote sandboxes left behind",
        description="Show the journalled Daytona sandboxes not confirmed deleted; with "
        "--sweep, delete this owner's leftovers at the provider.",
    )
    parser.add_argument("--sweep", action="store_true", help="delete leftovers now")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    config = DaytonaSettings(sweep=False)
    swept: list[str] = []
    if args.sweep:
        swept = asyncio.run(_sweep(config))
    journal = OwnershipJournal(config.journal_dir)
    pending = journal.entries(owner=config.owner, pending=True)
    if args.json:
        rows = [{"name": e.name, "run": e.run, "role": e.role, "state": e.state} for e in pending]
        print(json.dumps({"owner": config.owner, "swept": swept, "pending": rows}, indent=2))
    else:
        for name in swept:
            print(f"deleted  {name}")
        for entry in pending:
            print(f"pending  {entry.name}  run {entry.run}  {entry.role}  {entry.state}")
        print(f"owner {config.owner}: {len(swept)} deleted, {len(pending)} not confirmed deleted")
    return 1 if args.sweep and pending else 0


async def _sweep(config: DaytonaSettings) -> list[str]:
    async with DaytonaBackend(daytona=config) as backend:
        return await backend.sweep()
