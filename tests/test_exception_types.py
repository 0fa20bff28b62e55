"""Exception expectations check the type: only the expected builtin or a builtin subclass.

Pipeline cases run on the in-process backend (the runner logic is the sandbox's);
``test_grade_local.py`` repeats the decisive ones through the real local sandbox.
"""

from __future__ import annotations

import textwrap

import pytest

from critpt_grader import grade, raised
from critpt_grader.runner.program import describe_raised, load_program, run_case
from critpt_grader.settings import Settings
from critpt_grader.tasks import load_row
from tests.test_grade_local import answer, envelope, task_row

IN_PROCESS = Settings(backend="in-process")

REFERENCE = """
def check(n):
    if n < 0:
        raise ValueError("n must be nonnegative")
    return n
"""


def checking_task(reference: str = REFERENCE, error_type: str | None = None) -> dict:
    expected = {"kind": "exception", **({"error_type": error_type} if error_type else {})}
    return task_row(
        textwrap.dedent(reference),
        "check",
        [
            {
                "args": [envelope(["int", "2"])],
                "expected": {"kind": "value", "value": envelope(["int", "2"])},
            },
            {"args": [envelope(["int", "-1"])], "expected": expected},
        ],
    )


def graded(task: dict, body: str):
    return grade(task, answer(textwrap.dedent(body)), settings=IN_PROCESS)


def candidate(raise_line: str, prelude: str = "") -> str:
    return (
        textwrap.dedent(prelude)
        + "\ndef check(n):\n    if n < 0:\n        "
        + raise_line
        + "\n    return n\n"
    )


# --- the candidate's raise -----------------------------------------------------------------


def test_the_expected_builtin_passes_and_says_so():
    result = graded(checking_task(), candidate("raise ValueError('negative')"))
    assert (result.reward, result.category) == (1.0, "passed")
    leaf = result.cases[1].leaves[0]
    assert (leaf.kind, leaf.status, leaf.expected, leaf.observed) == (
        "exception",
        "equal",
        "ValueError",
        "ValueError",
    )


@pytest.mark.parametrize(
    ("raise_line", "prelude", "raised_name"),
    [
        ("raise ValueErorr('negative')", "", "NameError"),  # a typo
        ("sys.exit(1)", "import sys", "SystemExit"),
        ("raise KeyboardInterrupt", "", "KeyboardInterrupt"),
        ("raise GeneratorExit", "", "GeneratorExit"),
        ("raise TypeError('negative')", "", "TypeError"),  # a genuine builtin, the wrong one
        ("raise Exception('negative')", "", "Exception"),  # the expected type's base
    ],
)
def test_other_raises_score_zero_and_name_both_types(raise_line, prelude, raised_name):
    result = graded(checking_task(), candidate(raise_line, prelude))
    assert (result.outcome, result.reward, result.category) == ("scored", 0.0, "candidate_mismatch")
    assert f"expected ValueError, raised {raised_name}" in result.reason
    case = result.cases[1]
    assert case.status == "mismatch" and case.outcome == "exception"
    assert case.detail.startswith(f"expected ValueError, raised {raised_name}")
    assert result.first_difference().observed == raised_name


def test_a_class_the_candidate_names_value_error_fails():
    body = candidate("raise ValueError('negative')", "class ValueError(Exception):\n    pass\n")
    result = graded(checking_task(), body)
    assert (result.reward, result.category) == (0.0, "candidate_mismatch")
    assert "raised critpt_program.ValueError" in result.reason
    assert "named like the builtin ValueError, not the builtin" in result.reason


def test_a_candidate_subclass_of_the_right_builtin_fails():
    # "a builtin subclass of it": a class the program defines is not a builtin, whatever
    # it derives from (the rule; documented in README).
    body = candidate("raise Negative('negative')", "class Negative(ValueError):\n    pass\n")
    result = graded(checking_task(), body)
    assert (result.reward, result.category) == (0.0, "candidate_mismatch")
    assert "raised critpt_program.Negative (a class the program defines" in result.reason


ARITHMETIC = """
def check(n):
    if n < 0:
        raise ArithmeticError("negative")
    return n
"""


def test_a_genuine_builtin_subclass_passes():
    result = graded(checking_task(ARITHMETIC), candidate("1 / 0"))
    assert (result.reward, result.category) == (1.0, "passed")
    assert result.cases[1].leaves[0].reason == (
        "expected ArithmeticError, raised ZeroDivisionError, a builtin subclass of it"
    )


def test_a_base_class_of_the_expected_type_fails():
    zero = "def check(n):\n    if n < 0:\n        return 1 / 0\n    return n\n"
    result = graded(checking_task(zero), candidate("raise ArithmeticError('negative')"))
    assert (result.reward, result.category) == (0.0, "candidate_mismatch")
    assert "expected ZeroDivisionError, raised ArithmeticError" in result.reason


@pytest.mark.parametrize(
    ("raise_line", "prelude"),
    [
        ("raise NameError('x')", ""),
        ("print(total)\n        total = 0", ""),  # UnboundLocalError
        ("compile('(', 'x', 'exec')", ""),  # SyntaxError
        ("raise IndentationError('x')", ""),
        ("import no_such_module_anywhere", ""),  # ModuleNotFoundError
        ("raise ImportError('x')", ""),
        ("check(n)", ""),  # RecursionError
        ("raise SystemExit(0)", ""),
        ("raise BaseException('x')", ""),
    ],
)
def test_never_pass_types_fail_even_when_exception_is_expected(raise_line, prelude):
    result = graded(checking_task(error_type="Exception"), candidate(raise_line, prelude))
    assert (result.reward, result.category) == (0.0, "candidate_mismatch"), result.reason
    assert "expected Exception, raised " in result.reason


# --- the row's stated type and the reference ------------------------------------------------


def test_a_row_stated_type_is_honoured():
    task = checking_task(error_type="LookupError")
    lookup = "def check(n):\n    if n < 0:\n        return {}[n]\n    return n\n"
    task["task_data"]["reference_source"] = lookup
    assert graded(task, candidate("raise IndexError('negative')")).reward == 1.0
    assert graded(task, candidate("raise KeyError(n)")).reward == 1.0
    result = graded(task, candidate("raise ValueError('negative')"))
    assert (result.reward, result.category) == (0.0, "candidate_mismatch")
    assert "expected LookupError, raised ValueError" in result.reason


def test_a_row_stated_type_contradicted_by_the_reference_is_unscorable():
    result = graded(checking_task(error_type="TypeError"), candidate("raise TypeError('x')"))
    assert (result.outcome, result.category, result.failure_kind) == (
        "unscorable",
        "reference_mismatch",
        "verifier_error",
    )
    assert "expected TypeError, raised ValueError" in result.reason
    assert result.preflight == "failed"


@pytest.mark.parametrize(
    ("reference", "named"),
    [
        ("raise ValueErorr('negative')", "NameError"),
        ("raise SystemExit(2)", "SystemExit"),
        ("raise RecursionError('deep')", "RecursionError"),
    ],
)
@pytest.mark.parametrize("error_type", [None, "ValueError"])
def test_a_reference_raising_a_never_pass_type_is_a_reference_error(reference, named, error_type):
    task = checking_task(candidate(reference), error_type=error_type)
    result = graded(task, candidate("raise ValueError('negative')"))
    assert (result.outcome, result.category) == ("unscorable", "reference_error")
    assert f"the reference raised {named}" in result.reason


def test_a_reference_raising_its_own_class_is_a_reference_error():
    own = candidate("raise Negative('negative')", "class Negative(ValueError):\n    pass\n")
    result = graded(checking_task(own), candidate("raise ValueError('negative')"))
    assert (result.outcome, result.category) == ("unscorable", "reference_error")
    assert "exception expectations are builtin types only" in result.reason
    stated = graded(checking_task(own, "ValueError"), candidate("raise ValueError('x')"))
    assert (stated.outcome, stated.category) == ("unscorable", "reference_mismatch")


def test_the_stated_type_is_part_of_the_preflight_cache_key():
    from critpt_grader.pipeline import _preflight_key

    one, two = (load_row(checking_task(error_type=t)) for t in ("ValueError", "LookupError"))
    assert _preflight_key(one) != _preflight_key(two)


def test_delivered_alias_rows_with_and_without_a_type():
    row = task_row(
        textwrap.dedent(REFERENCE),
        "check",
        [
            {"input": [2], "output": 2},
            {"input": [-1], "expected_error": "n must be nonnegative"},
            {"input": [-2], "expected_error": "n must be nonnegative", "error_type": "ValueError"},
        ],
    )
    task = load_row(row)
    assert [c.expected.error_type for c in task.cases] == [None, None, "ValueError"]
    assert graded(row, candidate("raise ValueError('x')")).reward == 1.0
    assert graded(row, candidate("raise ValueErorr('x')")).reward == 0.0


# --- the pure rule and the runner's report ----------------------------------------------------


def described(source: str) -> raised.Raised:
    job = {"source": source, "entrypoint": "f", "cases": [{"args": [], "kwargs": {}}]}
    outcome = run_case(load_program(job), 0, value_bytes=1 << 20)
    assert outcome["kind"] == "exception"

    class Outcome:
        pass

    carrier = Outcome()
    carrier.__dict__.update(outcome)
    return raised.Raised.of(carrier)


def test_the_runner_reports_module_qualname_and_the_builtin_mro():
    assert describe_raised(ZeroDivisionError) == {
        "error_type": "ZeroDivisionError",
        "error_module": "builtins",
        "error_qualname": "ZeroDivisionError",
        "error_builtin": True,
        "error_builtin_mro": ["ZeroDivisionError", "ArithmeticError", "Exception", "BaseException"],
    }
    own = described(
        "class Outer:\n    class Bad(KeyError):\n        pass\ndef f():\n    raise Outer.Bad\n"
    )
    assert (own.module, own.qualname, own.builtin) == ("critpt_program", "Outer.Bad", False)
    assert own.builtin_mro == ("KeyError", "LookupError", "Exception", "BaseException")
    assert own.name == "critpt_program.Outer.Bad"


def test_a_metaclass_cannot_fake_the_description():
    source = """
class Meta(type):
    __name__ = "ValueError"
    __module__ = property(lambda cls: "builtins")
    def __eq__(cls, other):
        return True
    def __hash__(cls):
        return hash(ValueError)
class Odd(Exception, metaclass=Meta):
    pass
def f():
    raise Odd
"""
    odd = described(source)
    assert (odd.builtin, odd.qualname, odd.module) == (False, "Odd", "critpt_program")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("ValueError", "ValueError"),
        ("builtins.ValueError", "ValueError"),
        ("IOError", "OSError"),
        ("Exception", "Exception"),
        ("ArithmeticError", "ArithmeticError"),
    ],
)
def test_stated_types_are_read(name, expected):
    assert raised.expected_type(name) == expected


@pytest.mark.parametrize(
    "name",
    [
        "NameError",
        "UnboundLocalError",
        "SyntaxError",
        "ModuleNotFoundError",
        "RecursionError",
        "NotImplementedError",
        "SystemExit",
        "KeyboardInterrupt",
        "BaseException",
        "MemoryError",
        "print",
        "NoSuchError",
        "numpy.linalg.LinAlgError",
        "",
        3,
    ],
)
def test_stated_types_that_can_never_be_met_are_refused(name):
    with pytest.raises(ValueError):
        raised.expected_type(name)


def test_a_row_with_an_unmeetable_type_is_task_invalid():
    result = graded(checking_task(error_type="NameError"), candidate("raise NameError('x')"))
    assert (result.outcome, result.category) == ("unscorable", "task_invalid")
    assert "test_cases[1].expected.error_type" in result.reason


def test_a_stub_raising_not_implemented_never_meets_a_runtime_error_expectation():
    """NotImplementedError derives from RuntimeError: a stub must not pass that way."""
    stub = raised.Raised(
        module="builtins",
        qualname="NotImplementedError",
        builtin=True,
        builtin_mro=("NotImplementedError", "RuntimeError", "Exception", "BaseException"),
    )
    met, reason = raised.judge("RuntimeError", stub)
    assert not met and "NotImplementedError" in reason
