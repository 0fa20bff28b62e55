"""Cases that never tell two inputs apart: the ``swap-parameters`` mutant and the static
input-diversity check (``critpt_grader.audit.diversity``)."""

from __future__ import annotations

import asyncio

import pytest

from critpt_grader import codec
from critpt_grader.audit.diversity import indistinct_inputs, parameter_names
from critpt_grader.audit.mutate import mutants

SOURCE = """def power(a, b):
    return a**2 * b


def energy(a, b, n: int, x: float, c=1.0):  # a comment that stays
    return power(a, b) * n - x * c
"""


def case(*args) -> dict:
    return {"args": [codec.encode(a) for a in args], "kwargs": {}}


def test_each_pair_of_parameters_of_one_kind_is_swapped_in_the_def_line():
    swaps = [m for m in mutants(SOURCE, entrypoint="energy") if m.operator == "swap-parameters"]
    # n: int and x: float are of different kinds; c has a default: neither is swapped.
    assert [m.description for m in swaps] == ["parameters 'a' and 'b' swapped"]
    (swap,) = swaps
    assert swap.line == 5
    changed = [line for line in swap.diff(SOURCE).splitlines() if line[:1] in "+-"]
    assert changed[2:] == [
        "-def energy(a, b, n: int, x: float, c=1.0):  # a comment that stays",
        "+def energy(b, a, n: int, x: float, c=1.0):  # a comment that stays",
    ]
    # Without the entry point (or with one the module lacks) there is nothing to swap.
    assert not [m for m in mutants(SOURCE) if m.operator == "swap-parameters"]
    assert not [m for m in mutants(SOURCE, entrypoint="nope") if m.operator == "swap-parameters"]


def test_the_swap_calls_the_reference_with_the_arguments_exchanged():
    (swap,) = [m for m in mutants(SOURCE, entrypoint="power") if m.operator == "swap-parameters"]
    scope: dict = {}
    exec(swap.source, scope)  # the test's own source
    assert scope["power"](2.0, 3.0) == 3.0**2 * 2.0


def test_inputs_equal_in_every_case_are_named_with_the_case_count():
    names = parameter_names(SOURCE, "energy")
    assert names == ["a", "b", "n", "x", "c"]
    cases = [case(2.0, 2.0, 1, 0.5), case(3.0, 3.0, 2, 0.25), case(1.5, 1.5, 3, 0.75)]
    (found,) = indistinct_inputs(cases, names)
    assert (found.first, found.second, found.cases) == ("a", "b", 3)
    assert found.message == (
        "'a' and 'b' are equal in all 3 cases: an answer that swaps them passes; "
        "add a case where they differ"
    )


def test_no_false_alarm_one_case_a_case_that_differs_or_another_type():
    names = ["a", "b"]
    assert indistinct_inputs([case(2.0, 2.0)], names) == []  # one case varies nothing
    assert indistinct_inputs([case(2.0, 2.0), case(3.0, 4.0)], names) == []
    assert indistinct_inputs([case(2, 2.0), case(3, 3.0)], names) == []  # int and float
    named = [{"names": ["a", "b"]}, {"names": ["a", "b"]}]  # CritPt: the template's names
    assert indistinct_inputs(named, names) == []
    # Beyond the names a position is numbered.
    (found,) = indistinct_inputs([case(1.0, 5.0, 5.0), case(2.0, 6.0, 6.0)], ["a"])
    assert (found.first, found.second) == ("argument 2", "argument 3")


def _row(problem_id: str, source: str, entry: str, inputs: list[tuple]) -> dict:
    scope: dict = {}
    exec(source, scope)  # the test's own reference
    cases = [
        {
            "args": [codec.encode(a) for a in args],
            "expected": {"kind": "value", "value": codec.encode(scope[entry](*args))},
        }
        for args in inputs
    ]
    return {
        "task_data": {
            "schema_version": 1,
            "problem_id": problem_id,
            "problem": f"Implement {entry}.",
            "reference_source": source,
            "entrypoint": entry,
            "test_cases": cases,
        }
    }


@pytest.mark.sandbox
def test_the_audit_flags_a_swap_the_cases_cannot_see_and_spares_a_symmetric_reference():
    from critpt_grader.audit import AuditOptions, audit
    from critpt_grader.settings import Settings
    from critpt_grader.tasks import load_row

    equal = [(2.0, 2.0), (3.0, 3.0), (0.5, 0.5)]
    tasks = [
        load_row(_row("asymmetric", "def energy(a, b):\n    return a**2 * b\n", "energy", equal)),
        load_row(
            _row(
                "symmetric",
                "def reduced(m1, m2):\n    return m1 * m2 / (m1 + m2)\n",
                "reduced",
                equal,
            )
        ),
    ]
    report = asyncio.run(audit(tasks, Settings(case_seconds=5), AuditOptions(jobs=2)))
    asymmetric, symmetric = report.tasks
    swapped = [s for s in asymmetric.survivors if s.operator == "swap-parameters"]
    assert [s.description for s in swapped] == ["parameters 'a' and 'b' swapped"]
    assert swapped[0].passed_by == "inputs" and asymmetric.weak
    assert [(f.first, f.second, f.cases) for f in asymmetric.indistinct_inputs] == [("a", "b", 3)]
    # Swapping m1 and m2 changes nothing: the same answer, and the cases lack nothing.
    assert not [s for s in symmetric.survivors if s.operator == "swap-parameters"]
    assert symmetric.indistinct_inputs == []
    assert report.totals()["indistinct_inputs"] == 1
