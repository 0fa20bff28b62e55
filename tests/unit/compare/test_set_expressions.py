"""An unevaluated set expression is the set SymPy reduces it to (issue 28, class 7).

A program may return ``Intersection(Interval(0, 2), Interval(1, 3), evaluate=False)``; the
codec carries it as that text, the grammar reads it unevaluated, and the comparator reduces
it under its CPU cap: it is ``Interval(1, 2)``, so it meets that interval and no other.
"""

from __future__ import annotations

import pytest

from critpt_grader import codec
from critpt_grader.codec.values import Symbolic as S
from critpt_grader.compare import Policy, compare_values
from critpt_grader.errors import GrammarError
from critpt_grader.symbolic.parse import read


def status(expected, observed, policy: Policy | None = None) -> str:
    return compare_values(expected, observed, policy or Policy()).status


@pytest.mark.parametrize(
    ("expected", "candidate"),
    [
        ("Interval(1, 2)", "Intersection(Interval(0, 2), Interval(1, 3))"),
        ("Interval(1, 2)", "Intersection(Interval(1, 3), Interval(0, 2))"),
        ("Interval(3/2, 2)", "Intersection(Interval(0, 2), Interval(1, 3), Interval(3/2, 7))"),
        ("Interval.Ropen(1, 2)", "Intersection(Interval.Ropen(-4, 2), Interval(1, 3))"),
        ("Interval(0, pi)", "Intersection(Interval(-pi, pi), Interval(0, 4))"),
        ("EmptySet", "Intersection(Interval(0, 1), Interval(2, 3))"),
        (
            "Union(Interval(0, 1), Interval(2, 3))",
            "Complement(Interval(0, 3), Interval.open(1, 2))",
        ),
        ("Interval(0, 1)", "Complement(Interval(0, 1), Interval.open(5, 6))"),
        (
            "Union(Interval(-1, 0), Interval(1, 2))",
            "Union(Intersection(Interval(-3, 0), Interval(-1, 9)), Interval(1, 2))",
        ),
        ("Intersection(Interval(0, 2), Interval(1, 3))", "Interval(1, 2)"),  # either side
    ],
)
def test_a_set_expression_equals_the_set_it_reduces_to(expected, candidate):
    assert status(S(expected), S(candidate)) == "equal"


@pytest.mark.parametrize(
    ("expected", "candidate"),
    [
        ("Interval(1, 3)", "Intersection(Interval(0, 2), Interval(1, 3))"),
        ("Interval(0, 2)", "Intersection(Interval(0, 2), Interval(1, 3))"),
        ("Interval.open(1, 2)", "Intersection(Interval(0, 2), Interval(1, 3))"),  # openness
        ("Interval(1, 2)", "Intersection(Interval.Ropen(0, 2), Interval(1, 3))"),
        ("Interval(0, 1)", "Intersection(Interval(0, 1), Interval(2, 3))"),  # empty
        ("Union(Interval(0, 1), Interval(2, 3))", "Complement(Interval(0, 3), Interval(1, 2))"),
        ("Interval(0, 3)", "SymmetricDifference(Interval(0, 2), Interval(1, 3))"),
        ("Interval(0, 1)", "Intersection(Interval(0, x), Interval(-1, 1))"),  # x may be 1/2
    ],
)
def test_a_set_expression_that_reduces_to_another_set_fails(expected, candidate):
    assert status(S(expected), S(candidate)) == "mismatch"


def test_a_program_returning_an_unevaluated_intersection():
    sympy = pytest.importorskip("sympy")
    value = sympy.Intersection(sympy.Interval(0, 2), sympy.Interval(1, 3), evaluate=False)
    decoded = codec.decode(codec.encode(value))
    assert decoded == S("Intersection(Interval(0, 2), Interval(1, 3))")
    assert status(S("Interval(1, 2)"), decoded) == "equal"
    assert status(S("Interval(1, 3)"), decoded) == "mismatch"
    assert status([S("Interval(1, 2)"), 3], [decoded, 3.0]) == "equal"


def test_set_operations_read_unevaluated_and_only_of_sets():
    reading = read("Intersection(Interval(0, 2), Interval(1, 3))")
    assert type(reading.value).__name__ == "Intersection"
    with pytest.raises(GrammarError):
        read("Intersection(1, 2)")
    with pytest.raises(GrammarError):
        read("Complement(Interval(0, 1))")
    with pytest.raises(GrammarError):
        read("SymmetricDifference(Interval(0, 1), Interval(2, 3), Interval(4, 5))")


def test_a_reduction_cut_short_by_the_cpu_cap_proves_nothing(monkeypatch):
    from critpt_grader.symbolic import cpu_cap

    def capped(function, seconds):
        raise cpu_cap.CpuCapReached("cap")

    monkeypatch.setattr(cpu_cap, "run_with_cpu_cap", capped)
    candidate = S("Intersection(Interval(0, 2), Interval(1, 3))")
    assert status(S("Interval(1, 2)"), candidate) == "mismatch"
