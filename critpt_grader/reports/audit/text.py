"""The cells every view of an audit shows, so the terminal, Markdown and HTML say the same.

What it assumes: an :class:`~critpt_grader.audit.AuditReport`. What it guarantees: plain text
cells (each view escapes them its own way), tasks in the report's order.
"""

from __future__ import annotations

from critpt_grader.audit.findings import AuditReport, Survivor, TaskAudit

TASK_HEADERS = [
    "task",
    "verdict",
    "cases",
    "distinct",
    "probes",
    "mutants",
    "equivalent",
    "killed",
    "survivors",
    "score",
    "unreached",
    "looser promises",
]
NUMERIC = frozenset(TASK_HEADERS[2:])
EVIDENCE_HEADERS = ["case", "inputs", "reference", "mutant", "how it passed"]


def verdict(task: TaskAudit) -> str:
    if task.preflight != "passed":
        return f"preflight: {task.preflight}"
    return "weak" if task.weak else "ok"


def task_rows(report: AuditReport) -> list[list[str]]:
    return [
        [
            t.problem_id,
            verdict(t),
            str(t.cases),
            str(t.distinct_inputs),
            str(t.probes),
            str(t.mutants),
            str(t.equivalent),
            str(t.killed),
            str(len(t.survivors)),
            "–" if t.mutation_score is None else f"{t.mutation_score:.0%}",
            f"{len(t.unreached_branches)}/{t.branches}",
            str(len(t.looser_promises)),
        ]
        for t in report.tasks
    ]


def summary_line(report: AuditReport) -> str:
    totals = report.totals()
    return (
        f"{totals['tasks']} tasks, {totals['weak']} weak, {totals['preflight_failed']} failed "
        f"the preflight; {totals['mutants']} mutants: {totals['equivalent']} equivalent, "
        f"{totals['killed']} killed, {totals['survivors']} survived, "
        f"{totals['undecided']} undecided; {report.seconds:.1f} s "
        f"({report.startup_seconds:.1f} s of it sandbox start-up)"
    )


def survivor_title(survivor: Survivor) -> str:
    return f"{survivor.id} ({survivor.operator}, line {survivor.line}): {survivor.description}"


def evidence_rows(survivor: Survivor) -> list[list[str]]:
    rows = [[str(e.case), e.inputs, e.reference, e.mutant, e.how] for e in survivor.cases]
    if survivor.tells_apart is not None:
        probe = survivor.tells_apart
        rows.append(
            [
                f"probe (from {probe.from_case})",
                probe.inputs,
                probe.reference,
                probe.mutant,
                f"rejected: {probe.detail}",
            ]
        )
    return rows


def other_findings(task: TaskAudit) -> list[str]:
    """One line per finding that is not a survivor."""
    lines = []
    if task.preflight != "passed":
        lines.append(f"preflight {task.preflight}: {task.preflight_reason}")
    lines += [f"unreached: {b.what} (line {b.line})" for b in task.unreached_branches]
    lines += [
        f"promise looser than stored at case {p.case} {p.path}: {p.promise}; stored {p.stored}"
        for p in task.looser_promises
    ]
    lines += [f"inputs never told apart: {f.message}" for f in task.indistinct_inputs]
    lines += [
        f"undecided {u.id} ({u.description}): {u.category}: {u.reason}" for u in task.undecided
    ]
    lines += [f"note: {note}" for note in task.notes]
    return lines


# A tolerance named by where it comes from: only the statement's is a promise.
SOURCES = {
    "promise": "statement promise",
    "leaf": "task tolerance",
    "task": "task tolerance",
    "default": "default",
}


def tolerance_lines(task: TaskAudit) -> list[str]:
    """Per output, the tolerance in force labelled by its source, and the conventions."""
    lines = []
    for p in task.promises:
        source = SOURCES.get(p.get("source", ""), "tolerance")
        conventions = f"; conventions {', '.join(p['conventions'])}" if p["conventions"] else ""
        lines.append(f"{source}: {p['output']}: {p['tolerance']}{conventions}")
    return lines
