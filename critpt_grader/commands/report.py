"""``critpt-grader report OUT.jsonl [OUT2.jsonl] [--out DIR]``: the results of a graded batch.

Writes ``report.md`` and ``report.html`` (self-contained) to DIR: accuracy over scored rows
with a Wilson 95% interval, pass@k / majority@k, verdicts by category and why rows were not
scored, a per-problem table, the slowest rows, and with OUT2 the rows whose verdict changed
(matched by ``row`` and ``problem_id``). One summary line on stdout; with ``--json``, one
object instead: the summary the reports show (``rows``, ``scored``, ``accuracy``,
``accuracy_ci95_wilson`` (also ``accuracy_ci95``), ``accuracy_ci95_clustered``,
``categories``, ``problems``…, ``diff`` with OUT2), plus ``files`` (the reports written) and
``skipped_lines`` (unreadable OUT lines).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from critpt_grader.commands.common import add_json_flag, print_json
from critpt_grader.errors import InputError

DEFAULT_OUT = Path("batch-report")


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "report",
        help="write a Markdown and HTML results report of a batch OUT file (or diff two)",
        description=(
            "Summarize the OUT file of `critpt-grader batch` (accuracy with a 95% interval, "
            "pass@k / majority@k, categories, per problem, slowest rows) into report.md and "
            "report.html; with a second OUT file, also the rows whose verdict changed."
        ),
    )
    parser.add_argument("outs", type=Path, nargs="+", metavar="OUT.jsonl", help="one or two")
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"report folder (default: {DEFAULT_OUT})"
    )
    parser.add_argument(
        "--names",
        default=None,
        metavar="A,B",
        help="labels of the OUT files in the report (default: their file names)",
    )
    add_json_flag(parser, "the summary and the files written")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    names = args.names.split(",") if args.names else None
    return report(args.outs, args.out, names=names, as_json=args.json)


def report(
    outs: list[Path], out_dir: Path, *, names: list[str] | None = None, as_json: bool = False
) -> int:
    from critpt_grader.reports.batch.html import write_html
    from critpt_grader.reports.batch.markdown import write_markdown
    from critpt_grader.reports.batch.summary import read_out, summarize

    if len(outs) > 2:
        raise InputError(f"give one or two OUT files, got {len(outs)}")
    for path in outs:
        if not path.is_file():
            raise InputError(f"{path}: no such file")
    labels = list(names or [])
    labels += [p.name for p in outs[len(labels) :]]
    if len(outs) == 2 and labels[0] == labels[1]:
        labels = [str(p) for p in outs]
    read = [read_out(p) for p in outs]
    for path, (rows, _) in zip(outs, read, strict=True):
        if not rows:
            raise InputError(f"{path}: no OUT rows")
    other = read[1][0] if len(read) == 2 else None
    names_pair = (labels[0], labels[1] if len(labels) > 1 else "B")
    summary = summarize(read[0][0], other, names=names_pair)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_markdown(summary, out_dir / "report.md")
    write_html(summary, out_dir / "report.html")
    skipped = sum(n for _, n in read)
    if as_json:
        files = [str(out_dir / "report.md"), str(out_dir / "report.html")]
        print_json({**summary, "files": files, "skipped_lines": skipped})
        return 0
    accuracy = summary["accuracy"]
    line = f"report: {summary['rows']} rows, {summary['scored']} scored, accuracy " + (
        "–" if accuracy is None else f"{100 * accuracy:.1f}%"
    )
    if "diff" in summary:
        d = summary["diff"]
        line += f"; vs {labels[1]}: {d['gained']} gained, {d['lost']} lost, "
        line += f"{d['other_changes']} other changes"
    if skipped:
        line += f"; {skipped} unreadable lines skipped"
    print(f"{line}; wrote {out_dir / 'report.md'} and {out_dir / 'report.html'}", flush=True)
    return 0
