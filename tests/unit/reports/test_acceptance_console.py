"""Terminal output: plain progress off a TTY, and the agreement and disagreement tables."""

from __future__ import annotations

import io
from datetime import UTC, datetime

from rich.console import Console

from critpt_grader.acceptance.sets import Expected, load_set
from critpt_grader.reports.acceptance.console import GradingProgress, print_tables
from critpt_grader.reports.acceptance.document import RunContext, build_report
from tests.support.acceptance_fakes import MINI_SET, fake_loader, graded, mismatch


def test_plain_progress_prints_about_ten_lines_and_the_final_count():
    stream = io.StringIO()
    items = [graded(line=i) for i in range(1, 38)] + [graded(error="boom", line=38)]
    with GradingProgress(len(items), stream) as progress:
        for item in items:
            progress.advance(item)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "grading 38 candidates"
    assert lines[-1] == "graded 38/38, 1 not met"
    assert 5 <= len(lines) <= 12


def test_tables_show_each_kind_and_escape_cell_text():
    acceptance_set = load_set(MINI_SET, load_tasks=fake_loader)
    items = [
        graded("reference", line=1, set_name="mini"),
        graded(
            "canary",
            expect=Expected("scored", 0.0, "candidate_mismatch"),
            line=2,
            set_name="mini",
            label="[red]sign[/red]",
        ),
        graded(
            "canary",
            mismatch(observed="[bold]-1.5"),
            expect=Expected("scored", 1.0, None),
            line=3,
            set_name="mini",
        ),
    ]
    context = RunContext([acceptance_set], [], None, None, datetime.now(UTC), 0.1)
    out = io.StringIO()
    print_tables(build_report(context, items), Console(file=out, width=200))
    text = out.getvalue()
    assert "Agreement per kind" in text and "Disagreements (2)" in text
    assert "[red]sign[/red]" in text  # shown literally, not swallowed as markup
    assert "observed [bold]-1.5" in text
    assert "1/3 met, 2 not met" in text
