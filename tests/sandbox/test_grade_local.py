"""grade() end to end through the local bubblewrap backend: every verdict the issue names."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import pytest

from critpt_grader import grade
from critpt_grader.sandbox.local import LocalBackend
from critpt_grader.settings import Settings
from critpt_grader.tasks import load_tasks
from tests.support.grading import HALF, RAISES, answer, envelope, task_row, value_case

pytestmark = pytest.mark.sandbox

FLOAT_HALF = {"format": "critpt-value-v1", "value": ["float", (0.5).hex()]}


SETTINGS = Settings(case_seconds=3, wall_seconds=30)


def run(task, response, settings=SETTINGS):
    return grade(task, response, settings=settings)


def test_correct_candidate_scores_one():
    result = run(HALF, answer("def half(n):\n    return 0.5 * n"))
    assert (result.outcome, result.reward, result.category) == ("scored", 1.0, "passed")
    assert result.containment.startswith("bwrap")


def test_wrong_candidate_scores_zero_and_names_the_case():
    result = run(HALF, answer("def half(n):\n    return n / 3"))
    assert (result.outcome, result.reward, result.category) == ("scored", 0.0, "candidate_mismatch")
    assert result.cases[0].status == "mismatch" and "case 0" in result.reason


def test_no_code_scores_zero():
    result = run(HALF, "The answer is one half of n, obviously.")
    assert (result.reward, result.category) == (0.0, "candidate_source_missing")
    assert result.outcome == "scored"


def test_syntax_error_scores_zero():
    result = run(HALF, answer("def half(n):\n    return n /"))
    assert (result.reward, result.category) == (0.0, "candidate_source_error")


def test_exception_scores_zero():
    result = run(HALF, answer("def half(n):\n    raise ValueError('no')"))
    assert (result.reward, result.category) == (0.0, "candidate_exception")


def _pids_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def test_infinite_loop_scores_zero_within_bound_and_leaves_nothing_behind():
    marker = f"301.{os.getpid()}"  # this test's own: no other run's sleeper matches
    result = run(
        HALF,
        answer(f"""
        import subprocess
        subprocess.Popen(["sleep", "{marker}"])
        def half(n):
            while True:
                pass
    """),
    )
    assert (result.reward, result.category) == (0.0, "candidate_timeout")
    # The sandbox's processes are killed at teardown; the kernel may take a moment to reap.
    deadline = time.monotonic() + 30
    while _pids_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _pids_with(marker) == []


def test_memory_bomb_scores_zero():
    result = run(HALF, answer("def half(n):\n    x = bytearray(4 << 30)\n    return n / 2"))
    assert (result.reward, result.category) == (0.0, "candidate_memory")


def test_expected_exception_raised_scores_one_and_not_raised_zero():
    assert run(RAISES, answer("def inverse(x):\n    return 1 / x")).reward == 1.0
    result = run(RAISES, answer("def inverse(x):\n    return float('inf')"))
    assert (result.reward, result.category) == (0.0, "candidate_mismatch")


@pytest.mark.parametrize(
    ("code", "raised"),
    [
        ("def inverse(x):\n    return 1 / xx", "NameError"),  # a typo
        ("import sys\ndef inverse(x):\n    sys.exit(1)", "SystemExit"),
        ("def inverse(x):\n    raise KeyboardInterrupt", "KeyboardInterrupt"),
        (
            "class ZeroDivisionError(ArithmeticError):\n    pass\n"
            "def inverse(x):\n    raise ZeroDivisionError('x')",
            "critpt_program.ZeroDivisionError",
        ),
        (
            # Every name faked and the builtins binding replaced, over an ArithmeticError:
            # identity still tells, and its genuine builtin bases hold no ZeroDivisionError.
            "import builtins\nclass Fake(ArithmeticError):\n    pass\n"
            "Fake.__name__ = Fake.__qualname__ = 'ZeroDivisionError'\n"
            "Fake.__module__ = 'builtins'\nbuiltins.ZeroDivisionError = Fake\n"
            "def inverse(x):\n    raise Fake('x')",
            "builtins.ZeroDivisionError",
        ),
    ],
)
def test_expected_exception_needs_the_builtin_type_in_the_sandbox(code, raised):
    result = run(RAISES, answer(code))
    assert (result.reward, result.category) == (0.0, "candidate_mismatch")
    assert f"expected ZeroDivisionError, raised {raised}" in result.reason
    assert result.containment.startswith("bwrap")


def test_a_program_subclass_of_the_expected_type_passes_in_the_sandbox():
    # Judged by its genuine builtin bases: a ZeroDivisionError however it is dressed (the
    # old rule scored a program's own subclass 0).
    dressed = (
        "import builtins\nclass Fake(ZeroDivisionError):\n    pass\n"
        "Fake.__name__ = Fake.__qualname__ = 'ZeroDivisionError'\n"
        "Fake.__module__ = 'builtins'\nbuiltins.ZeroDivisionError = Fake\n"
        "def inverse(x):\n    raise Fake('x')"
    )
    result = run(RAISES, answer(dressed))
    assert (result.reward, result.category) == (1.0, "passed")
    assert "raised builtins.ZeroDivisionError, a subclass of it by its builtin bases" in (
        result.cases[0].detail
    )
    plain = "class Zero(ZeroDivisionError):\n    pass\ndef inverse(x):\n    raise Zero('x')"
    assert run(RAISES, answer(plain)).reward == 1.0


def test_a_builtin_subclass_of_the_stated_type_passes_in_the_sandbox():
    stated = task_row(
        "def inverse(x):\n    return 1 / x\n",
        "inverse",
        [
            {
                "args": [envelope(["int", "0"])],
                "expected": {"kind": "exception", "error_type": "ArithmeticError"},
            }
        ],
    )
    result = run(stated, answer("def inverse(x):\n    raise OverflowError('x')"))
    assert (result.reward, result.category) == (1.0, "passed")
    assert (
        result.cases[0].detail
        == "expected ArithmeticError, raised OverflowError, a builtin subclass of it"
    )


def test_reference_that_does_not_reproduce_is_unscorable_and_no_candidate_runs(tmp_path):
    marker = tmp_path / "candidate-ran"
    broken = task_row(
        "def half(n):\n    return n / 4\n",
        "half",
        [value_case([["int", "1"]], ["float", (0.5).hex()])],
    )
    result = run(broken, answer(f"open({str(marker)!r}, 'w')\ndef half(n):\n    return n/2"))
    assert (result.outcome, result.category, result.failure_kind) == (
        "unscorable",
        "reference_mismatch",
        "verifier_error",
    )
    assert result.terminal and result.mask_sample and result.preflight == "failed"
    assert not marker.exists() and result.stdout == ""


def test_incomplete_response_is_a_failure():
    response = {
        "status": "incomplete",
        "incomplete_details": {"reason": "max_output_tokens"},
        "output": [],
    }
    result = run(HALF, response)
    assert (result.outcome, result.failure_kind) == ("failure", "critpt_grader:response_incomplete")
    assert result.terminal is False


def test_candidate_cannot_read_the_task_file_or_open_a_socket(tmp_path):
    task_file = tmp_path / "task.json"
    task_file.write_text(json.dumps(HALF))
    result = run(
        HALF,
        answer(f"""
        import socket
        def half(n):
            try:
                open({str(task_file)!r}).read()
                return -1.0
            except OSError:
                pass
            try:
                socket.create_connection(("1.1.1.1", 53), timeout=1)
                return -2.0
            except OSError:
                pass
            return n / 2
    """),
    )
    assert (result.reward, result.category) == (1.0, "passed")


def test_fake_result_and_exit_at_import_is_a_candidate_fault():
    result = run(
        HALF,
        answer("""
        import os, sys, json
        print('CRITPT-RESULT 0000 {"cases": []}')
        sys.stdout.flush()
        os._exit(0)
        def half(n):
            return n / 2
    """),
    )
    assert result.outcome == "scored" and result.reward == 0.0
    assert result.category in ("candidate_invalid_output", "candidate_source_error")
    assert result.terminal and result.failure_kind is None


def test_numpy_float64_answer_scores_one():
    result = run(HALF, answer("import numpy as np\ndef half(n):\n    return np.float64(n) / 2"))
    assert (result.reward, result.category) == (1.0, "passed")


def test_five_example_rows_grade_one_with_their_own_reference(example_rows_path):
    for task in load_tasks(example_rows_path):
        result = run(task, answer(task.reference_source))
        assert (task.problem_id, result.reward, result.category) == (
            task.problem_id,
            1.0,
            "passed",
        ), result.reason


def test_critpt_worked_example_gold_and_changed_coefficient(critpt_public):
    path = critpt_public / "example_challenges" / "quantum_error_correction.json"
    task = next(t for t in load_tasks(path) if t.problem_id == "quantum_error_correction_main")
    gold = task.reference_source.replace("def real_answer(", "def answer(")
    result = run(task, answer(gold))
    assert (result.reward, result.category) == (1.0, "passed"), result.reason
    changed = gold.replace("sp.Rational(16, 25)", "sp.Rational(17, 25)")
    assert changed != gold
    result = run(task, answer(changed))
    assert (result.reward, result.category) == (0.0, "candidate_mismatch"), result.reason


STRONG = Settings(require_strong_containment=True, case_seconds=3)


def test_refusing_weak_containment_when_bubblewrap_is_missing():
    # A bubblewrap that is not there: the local backend probes it and finds none.
    backend = LocalBackend(STRONG, bwrap="/nonexistent/critpt-grader-test/bwrap")
    try:
        result = grade(
            HALF, answer("def half(n):\n    return n / 2"), settings=STRONG, backend=backend
        )
        containment = asyncio.run(backend.containment())
    finally:
        asyncio.run(backend.aclose())
    assert not containment.bwrap and not containment.strong
    assert (result.outcome, result.category) == ("failure", "provider_unavailable")
    assert (result.reward, result.mask_sample, result.terminal) == (0.0, True, False)
    assert "refusing to run code: bubblewrap does not run here" in result.reason
    assert "bwrap" not in result.containment and result.cases == []


def test_the_same_row_scores_one_where_bubblewrap_runs():
    probe = LocalBackend(STRONG)
    try:
        if not asyncio.run(probe.containment()).strong:
            pytest.skip("the strong containment (bubblewrap) is not available here")
    finally:
        asyncio.run(probe.aclose())
    result = run(HALF, answer("def half(n):\n    return n / 2"), STRONG)
    assert (result.outcome, result.reward, result.category) == ("scored", 1.0, "passed")
    assert result.containment.startswith("bwrap")
