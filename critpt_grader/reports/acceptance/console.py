"""Terminal output of an acceptance run: progress on stderr, the tables on stdout.

On a terminal the progress is a live ``rich`` bar; otherwise (CI logs, pipes) it is a plain
line every tenth of the run, because a redrawn bar turns into noise in a log file.

What it assumes: ``report`` is the document of :mod:`critpt_grader.reports.acceptance.document`.

What it guarantees: the tables say what the Markdown and HTML views say (the cells come from
:mod:`.text`) and are escaped for ``rich`` markup, so a report text is never read as a style.
"""

from __future__ import annotations

import math
import sys
from typing import Any, TextIO

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from critpt_grader.acceptance.run import Graded
from critpt_grader.reports.acceptance.text import (
    DISAGREEMENT_HEADERS,
    TALLY_HEADERS,
    disagreement_rows,
    tally_rows,
)


class GradingProgress:
    """Counts finished candidates; use as a context manager around the grading."""

    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self._total = total
        self._stream = stream or sys.stderr
        self._done = 0
        self._not_met = 0
        self._live: Progress | None = None
        self._task_id: Any = None
        self._next_plain_report = 0

    def __enter__(self) -> GradingProgress:
        console = Console(file=self._stream)
        if console.is_terminal:
            self._live = Progress(
                TextColumn("grading"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("[red]{task.fields[not_met]} not met"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=console,
            )
            self._live.start()
            self._task_id = self._live.add_task("grading", total=self._total, not_met=0)
        else:
            print(f"grading {self._total} candidates", file=self._stream, flush=True)
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._live is not None:
            self._live.stop()

    def advance(self, graded: Graded) -> None:
        self._done += 1
        self._not_met += not graded.met
        if self._live is not None:
            self._live.update(self._task_id, advance=1, not_met=self._not_met)
            return
        if self._done >= self._next_plain_report or self._done == self._total:
            print(
                f"graded {self._done}/{self._total}, {self._not_met} not met",
                file=self._stream,
                flush=True,
            )
            self._next_plain_report = self._done + max(1, math.ceil(self._total / 10))


def print_tables(report: dict[str, Any], console: Console | None = None) -> None:
    if console is None:
        console = Console()
        if not console.is_terminal:
            console = Console(width=160)  # logs have no width; keep table rows on one line
    summary = report["summary"]
    console.print(
        _table("Agreement per kind", ["kind", *TALLY_HEADERS], tally_rows(summary["by_kind"]))
    )
    if summary["by_output_type"]:
        console.print(
            _table(
                "Agreement per output type",
                ["output type", *TALLY_HEADERS],
                tally_rows(summary["by_output_type"]),
            )
        )
    rows = disagreement_rows(report)
    if rows:
        console.print(_table(f"Disagreements ({len(rows)})", DISAGREEMENT_HEADERS, rows))
    for skipped in report["skipped_sets"]:
        console.print(f"[yellow]skipped set {skipped['name']}[/]: {skipped['reason']}", markup=True)
    verdict = (
        "[green]all expectations met[/]" if report["passed"] else "[red]expectations not met[/]"
    )
    console.print(
        f"{verdict}: {summary['met']}/{summary['candidates']} met, {summary['not_met']} not met",
    )


def _table(title: str, headers: list[str], rows: list[list[str]]) -> Table:
    table = Table(title=title, title_justify="left", show_lines=False)
    numeric = {"candidates", "met", "not met"}
    for header in headers:
        table.add_column(header, justify="right" if header in numeric else "left", overflow="fold")
    for row in rows:
        table.add_row(*(escape(cell) for cell in row))
    return table
