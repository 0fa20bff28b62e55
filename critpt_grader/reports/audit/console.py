"""The audit in the terminal: progress on stderr, the task table and survivors on stdout.

On a terminal the progress is a live ``rich`` bar; otherwise a plain line every tenth of the
run. Every cell is escaped for ``rich`` markup, so a task's text is never read as a style.
"""

from __future__ import annotations

import sys
from typing import TextIO

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from critpt_grader.audit.findings import AuditReport
from critpt_grader.reports.audit import text


class AuditProgress:
    """Counts finished units (a preflight, a mutant, a reach probe); a context manager."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream or sys.stderr
        self._total = 0
        self._done = 0
        self._next_plain = 0
        self._live: Progress | None = None
        self._bar = None

    def __enter__(self) -> AuditProgress:
        console = Console(file=self._stream)
        if console.is_terminal:
            self._live = Progress(
                TextColumn("auditing"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=console,
                transient=True,
            )
            self._live.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._live is not None:
            self._live.stop()

    def planned(self, total: int) -> None:
        self._total = total
        if self._live is not None:
            self._bar = self._live.add_task("audit", total=total)

    def advance(self, problem_id: str, units: int) -> None:
        self._done += units
        if self._live is not None and self._bar is not None:
            self._live.update(self._bar, advance=units)
        elif self._total and self._done >= self._next_plain:
            print(f"audit: {self._done}/{self._total} ({problem_id})", file=self._stream)
            self._next_plain = self._done + max(1, self._total // 10)


def print_tables(report: AuditReport, stream: TextIO | None = None) -> None:
    console = Console(file=stream or sys.stdout, width=160)
    table = Table(title="Task audit", title_justify="left")
    for header in text.TASK_HEADERS:
        table.add_column(header, justify="right" if header in text.NUMERIC else "left")
    for row in text.task_rows(report):
        style = "red" if row[1] != "ok" else None
        table.add_row(*(escape(cell) for cell in row), style=style)
    console.print(table)
    for task in report.tasks:
        for survivor in task.survivors:
            console.print(
                f"[bold red]{escape(task.problem_id)}[/] {escape(text.survivor_title(survivor))}"
            )
            console.print(f"  {escape(survivor.advice)}")
        for line in text.other_findings(task):
            console.print(f"[yellow]{escape(task.problem_id)}[/] {escape(line)}")
    console.print(escape(text.summary_line(report)))
