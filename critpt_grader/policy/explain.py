"""How a task's statement will be read, per output: the tool a task author runs before a
training run (``critpt-grader explain``).

:func:`explain` builds plain data from a :class:`~critpt_grader.tasks.Task`: for every output
(declared names, else the expected value's members), the clauses bound to it with the reason,
the tolerance and the conventions that will apply; the clauses bound to nothing, with the
reason; and precision wording nobody could read. When the task stores an expected value (task
rows), the tolerance is the one the comparator will use at the output's first numeric leaf of
the first case (significant figures depend on the value); when it does not (CritPt challenges:
the reference supplies it at grading), the rule is given in words.

This is the only module of the statement package that looks at tasks and the comparator; the
reading itself stays in :mod:`critpt_grader.statement`. Nothing here runs code.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any

from critpt_grader.codec import decode
from critpt_grader.codec.values import ExactComplex
from critpt_grader.policy.context import CaseContext, Policy
from critpt_grader.policy.conventions import PURPOSE, read_conventions
from critpt_grader.policy.promises import Local, localize, read_promises
from critpt_grader.policy.tolerance import Exactness, exactness_of_number
from critpt_grader.statement import Binding, OutputSet, resolve


@dataclass(frozen=True)
class ClauseLine:
    """One phrase and what became of it."""

    phrase: str
    kind: str  # "precision" or "convention"
    meaning: str  # "atol 0.005 (half a unit in decimal 2)", "sign", …
    source: str  # "statement" or "outputs"
    sentence: str
    about: str  # the noun phrase it is about
    how: str  # its role in the sentence
    bound: str  # "Ra_c", "the whole answer", or "" (nothing)
    reason: str


@dataclass(frozen=True)
class OutputLine:
    name: str
    path: str | None  # JSON Pointer, None when the value is not known
    declared: str  # its description as declared ("" when none)
    kind: str = ""  # its type as declared ("" when none)
    clauses: list[ClauseLine] = field(default_factory=list)
    tolerance: str = ""
    conventions: list[str] = field(default_factory=list)
    # Where the tolerance comes from: "promise" (the statement's), "leaf" or "task" (stored
    # on the task), "default"; "" when nothing numeric is compared.
    tolerance_source: str = ""


@dataclass(frozen=True)
class Explanation:
    task_id: str
    origin: str
    value_known: bool
    outputs: list[OutputLine]
    unbound: list[ClauseLine]
    unread: list[str]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def explain(task: Any) -> Explanation:
    """Explain how ``task``'s statement is read (``task``: a loaded :class:`Task`)."""

    problem, doc = task.problem or "", task.output_doc
    promises = read_promises(problem, doc)
    conventions = read_conventions(problem, doc)
    value, known = _expected(task)
    outputs = promises.statement.outputs(value, known=known)
    context = CaseContext(_policy(task), value) if known else None

    lines: list[tuple[ClauseLine, Binding, dict[str, ClauseLine] | None]] = []
    for clause in promises.clauses:
        binding = resolve(clause.target, outputs, "precision")
        per_output = None
        if clause.width is not None and (binding.bound or binding.others):
            local = localize(clause, binding, outputs, promises.statement, known=known)
            if local is not None:
                per_output = {item.name: _local_line(clause, binding, item) for item in local}
                if not any(item.clause for item in local):
                    notes = "; ".join(dict.fromkeys(item.note for item in local))
                    binding = Binding(reason=f"not applied: {notes}")
        if not clause.honoured and per_output is None:
            binding = Binding(reason=f"not honoured: {clause.reason}")
        meaning = clause.meaning_text()
        lines.append((_line(clause, "precision", meaning, binding), binding, per_output))
    for item in conventions.phrases:
        occurrence = item.occurrence
        binding = resolve(occurrence.target, outputs, PURPOSE[item.convention])
        lines.append((_line(occurrence, "convention", item.convention, binding), binding, None))

    rows = _output_rows(outputs, value, known)
    explained: list[OutputLine] = []
    for name, path, declared, kind in rows:
        own = [
            line if per_output is None else per_output.get(name, _not_applied(line))
            for line, binding, per_output in lines
            if binding.answer
            or (name in binding.names and name != "(the answer)")
            or _places_under(binding, outputs, name, path)
        ]
        tolerance, source = _tolerance(context, value, path, own, task, kind)
        explained.append(
            OutputLine(
                name,
                path,
                declared,
                kind,
                own,
                tolerance,
                _conventions(context, path, own),
                source,
            )
        )
    unbound = [line for line, binding, _ in lines if not binding.bound]
    unread = []
    if context is not None:
        unread = list(context.promises.cues)
    else:
        unread = [
            cue.sentence for cue in promises.cues if resolve(cue.target, outputs, "precision").bound
        ]
    return Explanation(task.problem_id, task.origin, known, explained, unbound, unread)


def _places_under(binding: Binding, outputs: OutputSet, name: str, path: str | None) -> bool:
    """A clause bound to a place of the answer ("the first entry" → ``[0]``) shows under the
    row that holds that place."""
    if path is None or name in binding.names:
        return False
    for bound in binding.names:
        if not bound.startswith("["):
            continue
        place = outputs.path(bound)
        if place is not None and (path == "" or place == path or place.startswith(path + "/")):
            return True
    return False


def _line(found: Any, kind: str, meaning: str, binding: Binding) -> ClauseLine:
    target = found.target
    bound = "the whole answer" if binding.answer else ", ".join(binding.names)
    return ClauseLine(
        found.phrase if hasattr(found, "phrase") else found.text,
        kind,
        meaning,
        found.source,
        found.sentence,
        target.text,
        target.how,
        bound,
        binding.reason,
    )


def _local_line(clause: Any, binding: Binding, item: Local) -> ClauseLine:
    """A width with a unit as it applies at one output (see :func:`localize`)."""
    if item.clause is None:
        meaning = f"not applied here: {item.note}"
        return _line(clause, "precision", meaning, Binding(reason=binding.reason))
    return _line(item.clause, "precision", item.clause.meaning_text(), binding)


def _not_applied(line: ClauseLine) -> ClauseLine:
    meaning = "not applied here: the statement names no unit for this output"
    return dataclasses.replace(line, meaning=meaning, bound="")


def _expected(task: Any) -> tuple[Any, bool]:

    for case in task.cases:
        if case.expected is not None and case.expected.kind == "value":
            return decode(case.expected.value), True
    return None, False


def _policy(task: Any):

    leaves = {leaf.path: leaf for leaf in task.tolerances}
    if task.cases:
        leaves.update({leaf.path: leaf for leaf in task.cases[0].tolerances})
    return Policy(
        problem=task.problem or "",
        output_doc=task.output_doc,
        task_rtol=task.rtol,
        task_atol=task.atol,
        leaf_tolerances=tuple(leaves.values()),
    )


def _output_rows(
    outputs: OutputSet, value: Any, known: bool
) -> list[tuple[str, str | None, str, str]]:
    if known and outputs.paths:
        rows = []
        for output in outputs.outputs:
            path = outputs.path(output.name)
            if path is not None:
                rows.append((output.name, path, output.description, output.kind))
        return rows
    if outputs.outputs:
        return [(o.name, None, o.description, o.kind) for o in outputs.outputs]
    if known and isinstance(value, tuple):
        return [(f"[{i}]", f"/{i}", "", "") for i in range(len(value))]
    return [("(the answer)", "" if known else None, "", "")]


def _tolerance(
    context: Any, value: Any, path: str | None, own: list[ClauseLine], task: Any, kind: str
) -> tuple[str, str]:
    """The tolerance's text and its source (see :attr:`OutputLine.tolerance_source`)."""
    if context is not None and path is not None:
        leaf = _first_number(value, path)
        if leaf is None:
            return "no numeric leaf (compared exactly or by proof)", ""
        leaf_path, number, exact = leaf
        tolerance = context.tolerance(leaf_path, number, expected_exact=exact)
        where = "" if leaf_path == path else f" at {leaf_path}"
        text = f"{tolerance.text}{where}, first case (expected {_short(number)})"
        return text, tolerance.source
    precise = [line for line in own if line.kind == "precision" and line.bound]
    if precise:
        rules = list(dict.fromkeys(f"{line.meaning} ('{line.phrase}')" for line in precise))
        if len(rules) == 1:
            return f"promise: {rules[0]}", "promise"
        return f"promise, the tightest at each leaf of: {'; '.join(rules)}", "promise"
    if task.rtol is not None or task.atol is not None:
        return f"task: rtol={task.rtol or '5e-12'}, atol={task.atol or '0'}", "task"
    if re.search(r"\bint\b", kind) and not re.search(r"float|complex", kind):
        return "exact for an int answer; a float at rtol=5e-12 (default)", "default"
    if re.search(r"sympy|Expr|Symbol|Interval", kind):
        return "symbolic: equal only when proved (numbers inside at rtol=5e-12)", "default"
    return "rtol=5e-12 (default; an exact answer to an int compares exactly)", "default"


def _conventions(context: Any, path: str | None, own: list[ClauseLine]) -> list[str]:
    if context is not None and path is not None:
        return sorted(
            {
                f"{c.convention} ('{c.phrase}')"
                for p, c in context.conventions.by_path
                if p == path or p == "" or path.startswith(p + "/") or p.startswith(path + "/")
            }
        )
    return sorted(
        {f"{line.meaning} ('{line.phrase}')" for line in own if line.kind == "convention"}
    )


def _first_number(value: Any, path: str) -> tuple[str, Fraction, Exactness | None] | None:
    node = value
    for part in [p for p in path.split("/")[1:]]:
        key = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict):
            node = node.get(key)
        elif isinstance(node, list | tuple) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return None
    return _first_leaf(node, path)


def _first_leaf(node: Any, path: str) -> tuple[str, Fraction, Exactness | None] | None:

    if isinstance(node, bool):
        return None
    if isinstance(node, int):
        return path, Fraction(abs(node)), "int"
    if isinstance(node, float):
        return (
            (path, abs(Fraction(node)), None)
            if node == node and abs(node) != float("inf")
            else None
        )
    if isinstance(node, Decimal):
        return (path, abs(Fraction(node)), None) if node.is_finite() else None
    if isinstance(node, Fraction):
        return path, abs(node), exactness_of_number(node)
    if isinstance(node, complex):
        return path, Fraction(abs(node)), None
    if isinstance(node, ExactComplex):
        scale = Fraction(abs(complex(float(node.re), float(node.im))))
        return path, scale, exactness_of_number(node)
    if isinstance(node, list | tuple):
        for i, item in enumerate(node):
            found = _first_leaf(item, f"{path}/{i}")
            if found:
                return found
    if isinstance(node, dict):
        for key, item in node.items():
            found = _first_leaf(item, f"{path}/{key}")
            if found:
                return found
    return None


def _short(value: Fraction) -> str:
    return f"{float(value):.6g}"
