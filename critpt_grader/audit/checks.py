"""The checks of a task that run no code: its cases, its statement's promises as ``explain``
reads them, and any promise looser than the tolerance the task stores.

Pure. A promise beats the author's tolerance (the precedence of
:mod:`critpt_grader.policy.tolerance`), so a promise wider than the stored ``rtol``/``atol``
silently loosens the task: that is worth a look before training, and is listed per leaf.
"""

from __future__ import annotations

import json
from dataclasses import replace
from decimal import Decimal
from fractions import Fraction
from typing import Any

from critpt_grader import codec
from critpt_grader.audit.findings import LooserPromise
from critpt_grader.codec.values import ExactComplex
from critpt_grader.errors import CodecError
from critpt_grader.judge.case import case_policy
from critpt_grader.policy.context import CaseContext
from critpt_grader.policy.explain import explain
from critpt_grader.policy.tolerance import exactness_of_number
from critpt_grader.tasks import Task


def reference_present(task: Task) -> bool:
    """Does the task hold a reference to audit? CritPt's public challenges withhold their
    answers: there ``answer_code`` is the template itself (``expectation = ...``)."""
    source = task.reference_source.strip()
    return bool(source) and not (
        task.origin == "critpt" and source == (task.code_template or "").strip()
    )


def distinct_inputs(cases: list[dict[str, Any]]) -> int:
    return len({json.dumps(case, sort_keys=True) for case in cases})


def promises(task: Task) -> list[dict[str, Any]]:
    """Per output: its name, the tolerance that will apply and where it comes from, the
    conventions, the clauses bound."""
    return [
        {
            "output": line.name,
            "tolerance": line.tolerance,
            "source": line.tolerance_source,  # promise, leaf, task, default ("": none)
            "conventions": line.conventions,
            "clauses": [f"'{c.phrase}' = {c.meaning}" for c in line.clauses],
        }
        for line in explain(task).outputs
    ]


def looser_promises(task: Task) -> list[LooserPromise]:
    """Leaves of the stored expectations where a promise is wider than the author's own
    tolerance (only where the author gave one: without, a promise is the only word)."""
    if task.rtol is None and task.atol is None and not _has_leaf_entries(task):
        return []
    found: dict[tuple[str, str], LooserPromise] = {}
    for index, case in enumerate(task.cases):
        if case.expected is None or case.expected.kind != "value":
            continue
        try:
            expected = codec.decode(case.expected.value)
        except CodecError:
            continue
        policy = case_policy(task, index, {})
        with_promises = CaseContext(policy, expected)
        stored = CaseContext(replace(policy, promises=False), expected)
        for path, scale, exact in numeric_leaves(expected, ""):
            promised = with_promises.tolerance(path, scale, expected_exact=exact)
            author = stored.tolerance(path, scale, expected_exact=exact)
            if (
                promised.source == "promise"
                and author.source in ("leaf", "task")
                and promised.width(scale) > author.width(scale)
            ):
                key = (path, promised.text)
                found.setdefault(key, LooserPromise(index, path or "/", promised.text, author.text))
    return list(found.values())


def _has_leaf_entries(task: Task) -> bool:
    return bool(task.tolerances) or any(case.tolerances for case in task.cases)


def numeric_leaves(value: Any, path: str):
    """``(path, |value|, exactness)`` of every finite number in a decoded value."""
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        yield path, Fraction(abs(value)), "int"
    elif isinstance(value, float):
        if value == value and abs(value) != float("inf"):
            yield path, abs(Fraction(value)), None
    elif isinstance(value, Decimal):
        if value.is_finite():
            yield path, abs(Fraction(value)), None
    elif isinstance(value, Fraction):
        yield path, abs(value), exactness_of_number(value)
    elif isinstance(value, complex):
        if all(part == part and abs(part) != float("inf") for part in (value.real, value.imag)):
            yield path, Fraction(abs(value)), None
    elif isinstance(value, ExactComplex):
        yield (
            path,
            Fraction(abs(complex(float(value.re), float(value.im)))),
            exactness_of_number(value),
        )
    elif isinstance(value, list | tuple):
        for k, item in enumerate(value):
            yield from numeric_leaves(item, f"{path}/{k}")
    elif isinstance(value, dict):
        for key, item in value.items():
            escaped = str(key).replace("~", "~0").replace("/", "~1")
            yield from numeric_leaves(item, f"{path}/{escaped}")
