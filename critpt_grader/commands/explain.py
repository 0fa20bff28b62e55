"""``critpt-grader explain``: how a task's statement will be read, per output.

    critpt-grader explain --task Challenge_31.json
    critpt-grader explain --task fixtures/public/tasks.jsonl --problem-id pub-qm-box-spectrum --json

For each output: the clauses bound to it (precision and conventions) and why, the tolerance
and the conventions that will apply; then the clauses bound to nothing, and why; then
precision wording nobody could read. A file of several tasks is explained task by task
unless ``--problem-id`` picks one; ``--json`` prints one object: ``tasks`` (one explanation
each) and ``totals``. Exit 0 when every task was explained; 2 for unusable input.
"""

from __future__ import annotations

import argparse

from critpt_grader.commands.common import add_json_flag, add_tasks_option, print_json, task_paths
from critpt_grader.commands.grade import load_sets, pick_task


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "explain",
        help="show how a task's statement is read, per output",
        description="Print, per output, the statement's clauses bound to it and why, and the "
        "tolerance and conventions that will apply. Runs no code.",
    )
    add_tasks_option(parser, "holding the tasks to explain")
    parser.add_argument("--problem-id", help="explain only this task of the sets")
    add_json_flag(parser, "the explanations (tasks, totals)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from critpt_grader.policy.explain import explain

    paths = task_paths(args, required=True)
    one = args.problem_id is not None
    tasks = [pick_task(paths, args.problem_id)] if one else load_sets(paths)
    explanations = [explain(task) for task in tasks]
    if args.json:
        print_json(document(explanations))
    else:
        print("\n\n".join(render(e) for e in explanations))
    return 0


def document(explanations: list) -> dict:
    """The ``--json`` object: one per command, as every command prints (the tasks inside)."""
    return {
        "tasks": [e.to_dict() for e in explanations],
        "totals": {
            "tasks": len(explanations),
            "outputs": sum(len(e.outputs) for e in explanations),
            "unbound": sum(len(e.unbound) for e in explanations),
            "unread": sum(len(e.unread) for e in explanations),
        },
    }


def render(explanation) -> str:
    """Plain text, one block per task (stable: docs/author/explain.md quotes it)."""
    known = (
        "expected values stored"
        if explanation.value_known
        else ("expected values not stored: the reference supplies them when grading")
    )
    count = len(explanation.outputs)
    lines = [
        f"{explanation.task_id} ({explanation.origin}; {count} output"
        f"{'s' if count != 1 else ''}; {known})"
    ]
    for output in explanation.outputs:
        where = f" [{output.path or '/'}]" if output.path is not None else ""
        kind = f": {output.kind}" if output.kind else ""
        declared = f" — {_clip(output.declared, 70)}" if output.declared else ""
        lines.append(f"  {output.name}{where}{kind}{declared}")
        for clause in output.clauses:
            lines.extend(_clause(clause))
        lines.append(f"    tolerance    {output.tolerance}")
        lines.append(f"    conventions  {', '.join(output.conventions) or 'none'}")
    if explanation.unbound:
        lines.append("  bound to nothing")
        for clause in explanation.unbound:
            lines.extend(_clause(clause))
    for cue in explanation.unread:
        lines.append(f"  no promise read: '{_clip(cue, 90)}'")
    return "\n".join(lines)


def _clause(clause) -> list[str]:
    head = f"    {clause.kind:<10}   '{clause.phrase}' ({clause.source}) = {clause.meaning}"
    return [head, f"                 {_clip(clause.reason, 150)}"]


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
