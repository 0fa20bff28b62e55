"""The audit's pure parts: mutants, reach probes, probe inputs, the oracle and the checks."""

from __future__ import annotations

import ast
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from critpt_grader import codec
from critpt_grader.audit import checks, oracle
from critpt_grader.audit.branches import EXIT_STATUS, branches
from critpt_grader.audit.mutate import mutants
from critpt_grader.audit.probes import probe_cases, usable
from critpt_grader.audit.run import as_response
from critpt_grader.extract import extract
from critpt_grader.sandbox.base import CaseOutcome
from critpt_grader.tasks import load_row

SOURCE = """import numpy as np

def energy(m, k):  # a comment that stays
    omega = np.sqrt(k / m)
    return 0.5 * omega**2 + 2 * np.pi * np.sin(omega) - 3
"""


def by_description(source: str) -> dict[str, str]:
    return {m.description: m.source for m in mutants(source)}


def changed_lines(source: str) -> set[tuple[str, str]]:
    """(description, the mutant's changed line) of every mutant."""
    found = set()
    for mutant in mutants(source):
        diff = mutant.diff(source).splitlines()
        added = [line for line in diff if line.startswith("+") and not line.startswith("+++")]
        found.add((mutant.description, added[0][1:].strip()))
    return found


def test_every_operator_proposes_its_change():
    lines = changed_lines(SOURCE)
    expected = {
        ("0.5 → 1.0 (×2)", "return 1.0 * omega**2 + 2 * np.pi * np.sin(omega) - 3"),
        ("0.5 → 0.525 (×1.05)", "return 0.525 * omega**2 + 2 * np.pi * np.sin(omega) - 3"),
        ("0.5 → 0.5005 (×(1+1e-3))", "return 0.5005 * omega**2 + 2 * np.pi * np.sin(omega) - 3"),
        ("returned value negated", "return -(0.5 * omega ** 2 + 2 * np.pi * np.sin(omega) - 3)"),
        ("'-' → '+'", "return (0.5 * omega ** 2 + 2 * np.pi * np.sin(omega) + 3)"),
        ("term '3' dropped", "return (0.5 * omega ** 2 + 2 * np.pi * np.sin(omega))"),
        ("exponent 2 → 3", "return 0.5 * (omega ** 3) + 2 * np.pi * np.sin(omega) - 3"),
        ("sin → cos", "return 0.5 * omega**2 + 2 * np.pi * np.cos(omega) - 3"),
        ("sin → tan", "return 0.5 * omega**2 + 2 * np.pi * np.tan(omega) - 3"),
        ("3 → 4", "return 0.5 * omega**2 + 2 * np.pi * np.sin(omega) - 4"),
        ("3 → 2", "return 0.5 * omega**2 + 2 * np.pi * np.sin(omega) - 2"),
        ("factor np.pi removed", "return 0.5 * omega**2 + 2 * np.sin(omega) - 3"),
        ("factor 2 removed", "return 0.5 * omega**2 + np.pi * np.sin(omega) - 3"),
    }
    assert expected <= lines, expected - lines
    assert "arguments 'a' and 'b' swapped" in by_description("f = g(a, b)\n")
    assert "unary minus dropped" in by_description("f = -g(a)\n")


def test_a_mutant_differs_by_one_line_and_keeps_the_comments():
    for mutant in mutants(SOURCE):
        assert ast.dump(ast.parse(mutant.source)) != ast.dump(ast.parse(SOURCE))
        assert "# a comment that stays" in mutant.source
        changed = [line for line in mutant.diff(SOURCE).splitlines() if line[:1] in "+-"]
        assert len(changed) == 4, mutant  # ---/+++ headers, one line out, one line in


def test_mutants_are_reproducible_and_unique_and_the_limit_spreads_them():
    every = mutants(SOURCE)
    assert [m.source for m in every] == [m.source for m in mutants(SOURCE)]
    assert len({m.source for m in every}) == len(every)
    assert [m.id for m in every] == [f"m{k:03d}" for k in range(len(every))]
    some = mutants(SOURCE, limit=5)
    assert len(some) == 5 and some[0].source == every[0].source
    assert some[-1].line >= every[len(every) // 2].line  # spread, not the first five


def test_defaults_annotations_and_docstrings_are_left_alone():
    source = 'def f(x: "float" = 2.0, n: int = 3) -> float:\n    """Twice 2."""\n    return 7 * x\n'
    found = mutants(source)
    assert found and all(m.line == 3 for m in found)  # only the 7 on the return line


def test_siblings_only_where_they_exist():
    assert not any("log10" in d for d in by_description("import sympy as sp\ny = sp.log(x)\n"))
    assert "log → log10" in by_description("import numpy as np\ny = np.log(x)\n")
    # A bare name swaps only to a sibling the module also names.
    assert not by_description("from math import sin\ny = sin(x)\n").keys() & {"sin → cos"}
    assert "sin → cos" in by_description("from math import sin, cos\ny = sin(x) + cos(x)\n")


@settings(max_examples=60, deadline=None)
@given(
    st.recursive(
        st.sampled_from(["x", "y", "2", "3.5", "np.pi", "np.sin(x)", "np.exp(y)"]),
        lambda inner: st.tuples(inner, st.sampled_from(["+", "-", "*", "/", "**"]), inner).map(
            lambda t: f"({t[0]} {t[1]} {t[2]})"
        ),
        max_leaves=6,
    )
)
def test_property_every_mutant_of_an_expression_parses_and_differs(expression):
    source = f"import numpy as np\n\ndef f(x, y):\n    return {expression}\n"
    reference = ast.dump(ast.parse(source))
    dumps = set()
    for mutant in mutants(source):
        dump = ast.dump(ast.parse(mutant.source))
        assert dump != reference and dump not in dumps
        dumps.add(dump)


def test_a_mutant_is_graded_as_a_fenced_answer_even_with_backticks_inside():
    source = 'def f():\n    return "```"\n'
    extraction = extract(as_response(source), max_bytes=10_000, entrypoint="f")
    assert extraction.status == "code" and extraction.source.strip() == source.strip()


# -- reach probes -----------------------------------------------------------------------------

BRANCHY = """def helper(x):
    return x

def f(a, b):
    if a > 0: return 1
    elif a < -5:
        b = 2
    else:
        if b:
            return 3
    try:
        y = 1 / b
    except ZeroDivisionError:
        y = 0
    for _ in range(0):
        y += 1
    return y if a else -y
"""


def test_every_branch_gets_one_probe_that_compiles():
    found = branches(BRANCHY, "f")
    whats = [b.what for b in found]
    assert whats == [
        "the function helper (never called)",
        "the body of the if at line 5",
        "the body of the if at line 6",
        "the else branch of the if at line 6",  # the block after the elif, not the elif itself
        "the body of the if at line 9",
        "the handler of ZeroDivisionError at line 13",
        "the body of the for loop at line 15",
        "the first value of the conditional expression at line 17",
        "the else value of the conditional expression at line 17",
    ]
    for branch in found:
        compile(branch.probe, "probe", "exec")
        assert branch.probe.count(f"_exit({EXIT_STATUS})") == 1


def test_a_probe_before_a_compound_statement_gets_its_own_line():
    probe = branches(BRANCHY, "f")[3].probe  # the else block starts with an if
    assert f"        __import__('os')._exit({EXIT_STATUS})\n        if b:" in probe


# -- probe inputs -----------------------------------------------------------------------------


def job_case(*args):
    return {"args": [codec.encode(a) for a in args], "kwargs": {}}


def decoded(case):
    return [codec.decode(a) for a in case["args"]]


def test_float_probes_break_symmetry_and_leave_zero():
    probes = probe_cases([job_case(2.0, 2.0), job_case(0.0, 1.5)])
    values = [decoded(p) for _, p in probes]
    assert [2.125, 2.1992] in [[round(v, 4) for v in pair] for pair in values]
    zero_moved = [decoded(p) for origin, p in probes if origin == 1]
    assert zero_moved and all(pair[0] != 0.0 for pair in zero_moved)


def test_int_probes_recombine_values_the_other_cases_use_and_bools_stay():
    probes = probe_cases([job_case(1, -1, True), job_case(3, 1, True)])
    ints = sorted(tuple(decoded(p)) for _, p in probes)
    # Half the ints from the other case: combinations no case has, of values the author used.
    assert ints == [(1, 1, True), (3, -1, True)]


def test_no_probe_repeats_a_case_and_the_limit_holds():
    cases = [job_case(float(k), k) for k in range(1, 20)]
    probes = probe_cases(cases, limit=7)
    assert len(probes) == 7
    keys = {str(c) for c in cases}
    assert all(str(p) not in keys for _, p in probes)
    assert probe_cases([{"names": ["m", "r0"]}]) == []


def test_a_probe_counts_only_where_the_reference_keeps_its_kind_of_outcome():
    value, error = CaseOutcome("value", codec.encode(1)), CaseOutcome("exception")
    assert usable(value, value) and usable(error, error)
    assert not usable(value, error) and not usable(value, CaseOutcome("timeout"))


# -- the oracle -------------------------------------------------------------------------------


def value(v) -> CaseOutcome:
    return CaseOutcome("value", codec.encode(v))


def test_identical_is_bit_exact():
    assert oracle.identical(value(0.1), value(0.1))
    assert not oracle.identical(value(0.0), value(-0.0))
    raised = CaseOutcome("exception", error_type="ValueError", error_qualname="ValueError")
    assert oracle.identical(raised, raised)


def test_largest_difference_is_relative_and_names_its_leaf():
    found = oracle.largest_difference(value([1.0, 10.0]), value([1.01, 10.5]))
    assert found.path == "/1" and found.relative == Fraction(10.5) / 10 - 1
    assert oracle.largest_difference(value([1.0]), value([1.0])) is None
    assert oracle.largest_difference(value(0.0), value(1e-3)).relative is None


def test_the_strict_policy_keeps_conventions_and_drops_promises():
    task = load_row(
        {
            "task_data": {
                "schema_version": 1,
                "problem_id": "p",
                "problem": "Return the vector up to an overall sign, "
                "with relative error below 1e-2.",
                "reference_source": "def f():\n    return [1.0, 2.0]\n",
                "entrypoint": "f",
                "test_cases": [
                    {"args": [], "expected": {"kind": "value", "value": codec.encode([1.0, 2.0])}}
                ],
            }
        }
    )
    strict = oracle.strict_policy(task, {})
    loose = oracle.task_policy(task, 0, {})
    reference = value([1.0, 2.0])
    assert oracle.judge(0, reference, value([-1.0, -2.0]), strict).equal
    assert not oracle.judge(0, reference, value([1.001, 2.0]), strict).equal
    assert oracle.judge(0, reference, value([1.001, 2.0]), loose).equal


# -- checks -----------------------------------------------------------------------------------


def row(problem: str, **tolerance):
    return load_row(
        {
            "task_data": {
                "schema_version": 1,
                "problem_id": "p",
                "problem": problem,
                "reference_source": "def f(x):\n    return x\n",
                "entrypoint": "f",
                "test_cases": [
                    {
                        "args": [codec.encode(k * 1.0)],
                        "expected": {"kind": "value", "value": codec.encode(k * 1.0)},
                    }
                    for k in (1, 1, 2)
                ],
                **tolerance,
            }
        }
    )


def test_a_promise_wider_than_the_stored_tolerance_is_listed_once_per_leaf():
    looser = checks.looser_promises(row("Report f with relative error below 1e-3.", rtol="1e-9"))
    assert [(p.path, p.stored) for p in looser] == [("/", "rtol=1e-9 (task)")]
    assert "1e-3" in looser[0].promise
    # Tighter than stored, or no stored tolerance at all: nothing to say.
    assert (
        checks.looser_promises(row("Report f with relative error below 1e-12.", rtol="1e-9")) == []
    )
    assert checks.looser_promises(row("Report f with relative error below 1e-3.")) == []


def test_distinct_inputs_counts_repeated_cases_once():
    assert checks.distinct_inputs([job_case(1.0), job_case(1.0), job_case(2.0)]) == 2


def test_a_tasks_run_seconds_count_its_own_runs_not_its_waits_for_a_slot(monkeypatch):
    import asyncio

    from critpt_grader.audit import run as audit_run
    from critpt_grader.audit.findings import TaskAudit
    from critpt_grader.audit.run import AuditOptions, _Auditor
    from critpt_grader.settings import Settings

    clock = [0.0]  # a clock the test moves: no sleep decides anything
    monkeypatch.setattr(audit_run.time, "perf_counter", lambda: clock[0])

    # Two tasks of one id (the same task in two sets) are still counted apart.
    one, other = TaskAudit("same-id", "task_data"), TaskAudit("same-id", "task_data")

    async def scenario() -> dict[str, float]:
        auditor = _Auditor(None, Settings(), AuditOptions(), 1, lambda _id, _n: None)
        holding, release = asyncio.Event(), asyncio.Event()

        async def first() -> None:
            async with auditor._slot(one):
                holding.set()
                await release.wait()

        async def second() -> None:
            async with auditor._slot(other):  # waits for the one slot
                clock[0] += 1.0

        runs = asyncio.gather(first(), second())
        await holding.wait()
        clock[0] += 5.0  # the first holds the slot for 5 s while the second waits
        release.set()
        await runs
        return {"first": one.run_seconds, "second": other.run_seconds}

    assert asyncio.run(scenario()) == {"first": 5.0, "second": 1.0}
