"""Exception expectations check the type: a raise meets the expected builtin type when its
class is that type by its genuine builtin bases (the builtin, a builtin subclass, a program's
or a library's subclass), never one of the never-pass types, whoever derives from them.

Pipeline cases run on the in-process backend (the runner logic is the sandbox's);
``test_grade_local.py`` repeats the decisive ones through the real local sandbox.
"""

from __future__ import annotations

import builtins
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from critpt_grader import grade, raised
from critpt_grader.runner.program import describe_raised, load_program, run_case
from critpt_grader.settings import Settings
from critpt_grader.tasks import load_row
from tests.support.grading import answer, envelope, task_row

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


def test_a_candidate_subclass_of_the_right_builtin_passes():
    # It is a ValueError (``except ValueError`` catches it), judged by its builtin bases;
    # the old rule ("a builtin subclass" only) scored it 0 (issue 28, class 7).
    body = candidate("raise Negative('negative')", "class Negative(ValueError):\n    pass\n")
    result = graded(checking_task(), body)
    assert (result.reward, result.category) == (1.0, "passed")
    assert result.cases[1].leaves[0].reason == (
        "expected ValueError, raised critpt_program.Negative, a subclass of it by its builtin "
        "bases (a class the program defines)"
    )


@pytest.mark.parametrize(
    "prelude",
    [
        "class InputError(ValueError):\n    pass\nclass Rejected(InputError):\n    pass\n",
        "class Rejected(KeyError, ValueError):\n    pass\n",  # two builtin bases
        "class Rejected(UnicodeError):\n    pass\n",  # a builtin subclass's subclass
        "class Mixin:\n    pass\nclass Rejected(Mixin, ValueError):\n    pass\n",
    ],
)
def test_a_program_class_deriving_from_the_expected_type_passes(prelude):
    result = graded(checking_task(), candidate("raise Rejected('negative')", prelude))
    assert (result.reward, result.category) == (1.0, "passed"), result.reason


@pytest.mark.parametrize(
    ("prelude", "why"),
    [
        ("class Rejected(TypeError):\n    pass\n", "which is not a ValueError"),
        ("class Rejected(Exception):\n    pass\n", "which is not a ValueError"),
        ("class Rejected(ArithmeticError):\n    pass\n", "which is not a ValueError"),
        # a never-pass type stays one, whoever derives from it, even beside ValueError
        ("class Rejected(NameError):\n    pass\n", "an undefined name is a bug"),
        ("class Rejected(NameError, ValueError):\n    pass\n", "an undefined name is a bug"),
        ("class Rejected(ValueError, RecursionError):\n    pass\n", "runaway recursion"),
        ("class Rejected(ModuleNotFoundError):\n    pass\n", "a missing module"),
        ("class Rejected(IndentationError):\n    pass\n", "does not compile"),
        ("class Rejected(BaseException):\n    pass\n", "it is not an Exception"),
        ("class Rejected(KeyboardInterrupt):\n    pass\n", "it is not an Exception"),
    ],
)
def test_a_program_class_of_another_or_a_never_pass_type_fails(prelude, why):
    result = graded(checking_task(), candidate("raise Rejected('negative')", prelude))
    assert (result.reward, result.category) == (0.0, "candidate_mismatch")
    assert "expected ValueError, raised critpt_program.Rejected" in result.reason
    assert why in result.reason


@pytest.mark.parametrize(
    "prelude",
    [
        "class Stub(NotImplementedError):\n    pass\n",  # derives from RuntimeError
        "class Stop(SystemExit):\n    pass\n",
        "class Stop(GeneratorExit):\n    pass\n",
        "class Deep(RecursionError):\n    pass\n",
    ],
)
def test_a_program_subclass_of_a_never_pass_type_fails_even_for_its_base(prelude):
    name = prelude.split()[1].split("(")[0]
    for expected in ("Exception", "RuntimeError"):
        task = checking_task(candidate("raise RuntimeError('x')"), error_type=expected)
        result = graded(task, candidate(f"raise {name}('negative')", prelude))
        assert (result.reward, result.category) == (0.0, "candidate_mismatch"), result.reason


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


def test_a_reference_raising_its_own_class_expects_its_builtin_base():
    # The expectation is the most derived builtin the reference's class derives from (the
    # old rule made such a task a reference_error).
    own = candidate("raise Negative('negative')", "class Negative(ValueError):\n    pass\n")
    for error_type in (None, "ValueError"):
        task = checking_task(own, error_type)
        result = graded(task, candidate("raise ValueError('negative')"))
        assert (result.outcome, result.reward) == ("scored", 1.0), result.reason
        assert graded(task, own).reward == 1.0
        wrong = graded(task, candidate("raise TypeError('negative')"))
        assert (wrong.reward, wrong.category) == (0.0, "candidate_mismatch")
        assert "expected ValueError, raised TypeError" in wrong.reason
    stated = graded(checking_task(own, "TypeError"), candidate("raise TypeError('x')"))
    assert (stated.outcome, stated.category) == ("unscorable", "reference_mismatch")


def test_a_reference_raising_its_own_never_pass_class_is_a_reference_error():
    own = candidate("raise Oops('negative')", "class Oops(NameError):\n    pass\n")
    result = graded(checking_task(own), candidate("raise ValueError('negative')"))
    assert (result.outcome, result.category) == ("unscorable", "reference_error")
    assert "the reference raised critpt_program.Oops" in result.reason


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


def test_a_metaclass_mro_that_hides_a_builtin_base_leaves_no_builtin_bases():
    # ``except ValueError`` would catch these, ``except NameError`` not the first: a forged
    # MRO is reported as unknown bases, which never meets an expectation.
    hides = """
class Meta(type):
    def mro(cls):
        return [cls, ValueError, Exception, BaseException, object]
class Odd(NameError, metaclass=Meta):
    pass
def f():
    raise Odd
"""
    odd = described(hides)
    assert (odd.builtin, odd.builtin_mro) == (False, ())
    met, reason = raised.judge("ValueError", odd)
    assert not met and "nothing is known of its builtin bases" in reason
    adds = hides.replace("Odd(NameError,", "Odd(Exception,")
    assert described(adds).builtin_mro == ()
    plain = described("class Odd(ValueError):\n    pass\ndef f():\n    raise Odd\n")
    assert plain.builtin_mro == ("ValueError", "Exception", "BaseException")
    assert raised.judge("ValueError", plain)[0]


def test_a_library_class_is_judged_by_its_builtin_bases():
    pytest.importorskip("numpy")
    singular = described("import numpy\ndef f():\n    numpy.linalg.inv(numpy.zeros((2, 2)))\n")
    assert not singular.builtin and singular.qualname == "LinAlgError"
    met, reason = raised.judge("ValueError", singular)
    assert met and reason.endswith("a library's class, or one dressed as it)")
    assert not raised.judge("ArithmeticError", singular)[0]


@pytest.mark.parametrize(
    ("mro", "met"),
    [
        (("ValueError", "Exception", "BaseException"), True),
        (("UnicodeDecodeError", "UnicodeError", "ValueError", "Exception", "BaseException"), True),
        (("ValueError",), False),  # a builtin's own bases left out
        (("ValueError", "BaseException", "Exception"), False),  # out of order
        (("Bogus", "ValueError", "Exception", "BaseException"), False),  # no builtin
        (("print", "ValueError", "Exception", "BaseException"), False),
        ((), False),
    ],
)
def test_reported_builtin_bases_must_be_a_builtin_mro(mro, met):
    assert raised.judge("ValueError", raised.Raised("lib", "Odd", False, mro))[0] is met


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


BUILTIN_EXCEPTIONS = sorted(
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException) and name.isidentifier()
)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(BUILTIN_EXCEPTIONS), st.sampled_from(BUILTIN_EXCEPTIONS))
def test_a_program_subclass_is_judged_as_its_builtin_base(base, expected):
    """Whatever the builtin and the expected type, a program's subclass of the builtin meets
    the expectation exactly when the builtin itself does (never-pass types included)."""
    own = type("Own", (getattr(builtins, base),), {"__module__": "critpt_program"})
    as_builtin = describe_raised(getattr(builtins, base))
    as_own = describe_raised(own)
    assert as_own["error_builtin"] is False and as_own["error_module"] == "critpt_program"
    real = raised.Raised("builtins", base, True, tuple(as_builtin["error_builtin_mro"]))
    sub = raised.Raised("critpt_program", "Own", False, tuple(as_own["error_builtin_mro"]))
    assert raised.judge(expected, sub)[0] is raised.judge(expected, real)[0]
