"""Input diversity: parameters the task's cases never tell apart.

A task whose cases give ``a`` and ``b`` the same value every time cannot tell an answer that
swaps them from the right one (``a**2*b`` and ``a*b**2`` agree wherever ``a = b``); the
``swap-parameters`` mutant (:mod:`critpt_grader.audit.mutate`) shows it by running, this check
says it from the cases alone, naming the two parameters and the case count.

Pure. Precise rather than thorough: values are compared as written on the wire (``2`` and
``2.0`` differ, so a type never raises a false alarm), only tasks with two cases or more are
looked at (one case varies nothing), and CritPt's named inputs are left alone.
"""

from __future__ import annotations

import ast
import json
from typing import Any

from critpt_grader.audit.findings import IndistinctInputs


def parameter_names(source: str, entrypoint: str) -> list[str]:
    """The entry point's positional parameter names, in order (``[]`` when it has no plain
    module-level ``def``)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    names: list[str] = []
    for node in tree.body:  # the last def of the name is the one Python binds
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == entrypoint:
            names = [a.arg for a in [*node.args.posonlyargs, *node.args.args]]
    return names


def indistinct_inputs(cases: list[dict[str, Any]], names: list[str]) -> list[IndistinctInputs]:
    """Pairs of inputs equal in every one of the job-shaped ``cases`` (``{"args", "kwargs"}``),
    named by ``names`` where a position has one (``argument 3`` otherwise)."""
    if len(cases) < 2 or any("args" not in case for case in cases):
        return []
    slots = _slots(cases, names)
    found = []
    for k, (first, values) in enumerate(slots):
        for second, others in slots[k + 1 :]:
            if values == others:
                found.append(
                    IndistinctInputs(first, second, len(cases), _message(first, second, len(cases)))
                )
    return found


def differ_somewhere(
    inputs: list[dict[str, Any]], names: list[str], first: str, second: str
) -> bool:
    """Do ``first`` and ``second`` take different values in one of ``inputs`` (probes)?"""
    usable = [case for case in inputs if "args" in case]
    if not usable:
        return False
    values = dict(_slots(usable, names))
    return first in values and second in values and values[first] != values[second]


def _slots(cases: list[dict[str, Any]], names: list[str]) -> list[tuple[str, list[str]]]:
    """``(name, its wire value in each case)`` of every input all cases give."""
    width = min(len(case["args"]) for case in cases)
    slots = [
        (names[k] if k < len(names) else f"argument {k + 1}", [_wire(c["args"][k]) for c in cases])
        for k in range(width)
    ]
    shared = set(cases[0].get("kwargs", {}))
    for case in cases[1:]:
        shared &= set(case.get("kwargs", {}))
    slots += [(key, [_wire(c["kwargs"][key]) for c in cases]) for key in sorted(shared)]
    return slots


def _wire(envelope: dict[str, Any]) -> str:
    return json.dumps(envelope.get("value"), sort_keys=True)


def _message(first: str, second: str, cases: int) -> str:
    return (
        f"'{first}' and '{second}' are equal in all {cases} cases: an answer that swaps them "
        "passes; add a case where they differ"
    )
