"""What a client sees of a verdict (issue 30, item 2): under the default view nothing it gets
depends on the expected value beyond the statuses themselves.

The strongest form of "no field lets a client compute the expected value": grade one wrong
answer against two tasks that differ only in their expected values (same types) and compare
what the client gets. Under ``rules`` and ``verdict`` the two are identical, byte for byte;
under ``full`` they differ (so the pairs below would catch a leak).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import sympy

from critpt_grader import codec, grade
from critpt_grader.result import GradeResult
from critpt_grader.rows.tasksets import TaskSets
from critpt_grader.server.reveal import client_reason, for_client
from critpt_grader.server.service import VerifyService
from critpt_grader.settings import Settings
from tests.support.server_harness import fenced

SETTINGS = Settings(backend="in-process", compare_in_process=True)
X = sympy.Symbol("x")


def task(expected: Any, problem: str = "", args: tuple = (1,)) -> dict:
    case = {
        "args": [codec.encode(a) for a in args],
        "expected": {"kind": "value", "value": codec.encode(expected)},
    }
    data = {
        "schema_version": 1,
        "problem_id": "hidden",
        "reference_source": f"def f(n):\n    return {expected!r}\n",
        "entrypoint": "f",
        "test_cases": [case],
    }
    if problem:
        data["problem"] = problem
    return {"responses_create_params": {"input": []}, "task_data": data}


def symbolic_task(expected: str) -> dict:
    row = task(0)
    row["task_data"]["reference_source"] = (
        f"import sympy\nx = sympy.Symbol('x')\ndef f(n):\n    return {expected}\n"
    )
    row["task_data"]["test_cases"][0]["expected"]["value"] = codec.encode(
        sympy.sympify(expected, locals={"x": X})
    )
    return row


def exception_task(error: str) -> dict:
    row = task(0)
    row["task_data"]["reference_source"] = f"def f(n):\n    raise {error}('no')\n"
    row["task_data"]["test_cases"][0]["expected"] = {"kind": "exception", "message": error}
    return row


def graded(row: dict, answer: str) -> GradeResult:
    return grade(row, fenced(f"def f(n):\n    {answer}"), settings=SETTINGS)


def seen(result: GradeResult, reveal: str) -> str:
    view = for_client(result, reveal).model_dump(mode="json")
    view.pop("timings")
    return json.dumps(view, sort_keys=True)


DECIMALS = "Give the answer to 4 decimal places."
SIGNIFICANT = "Give the energy to 3 significant figures."
# (name, the task with one expected value, with another, a wrong answer to both)
PAIRS = [
    ("float, default tolerance", task(0.123456789), task(0.987654321), "return 2.5"),
    ("int, compared exactly", task(7), task(4096), "return 9"),
    ("a list shorter, then longer", task([1.0, 2.0, 3.0]), task([1.0] * 7), "return [5.0] * 5"),
    (
        "map keys",
        task({"E": 1.0, "N": 2}),
        task({"E": 3.0, "Q": 2}),
        "return {'E': 9.0, 'M': 2}",
    ),
    ("a set", task({1.0, 2.0}), task({3.0, 4.0}), "return {7.0, 8.0}"),
    ("a string", task("up"), task("left"), "return 'down'"),
    (
        "significant figures: the width is measured at the expected value",
        task(1234.5678, SIGNIFICANT),
        task(98.7654, SIGNIFICANT),
        "return 5.0",
    ),
    (
        "decimal places: the scale guard drops the width below it",
        task(0.000003, DECIMALS),
        task(0.5, DECIMALS),
        "return 10.0",
    ),
    ("a symbolic answer", symbolic_task("x**2 + 1"), symbolic_task("x**3 - 7"), "return 'x + 5'"),
    (
        "an exception's type",
        exception_task("ValueError"),
        exception_task("ZeroDivisionError"),
        "raise KeyError('k')",
    ),
    (
        "a value where an exception is due",
        exception_task("ValueError"),
        exception_task("KeyError"),
        "return 1.5",
    ),
]


@pytest.mark.parametrize(("name", "one", "other", "answer"), PAIRS, ids=[p[0] for p in PAIRS])
def test_what_a_client_sees_does_not_depend_on_the_expected_value(name, one, other, answer):
    first, second = graded(one, answer), graded(other, answer)
    assert first.reward == second.reward == 0.0, (first.reason, second.reason)
    assert first.outcome == "scored", first.reason
    if name != "a value where an exception is due":
        assert seen(first, "full") != seen(second, "full")  # the pair has teeth
    for reveal in ("rules", "verdict"):
        assert seen(first, reveal) == seen(second, reveal), (reveal, seen(first, reveal))


def test_the_echoed_reason_is_the_views_reason():
    """/verify echoes only the view's reason (never its cases): client_reason builds it
    alone, and it must be the reason for_client's whole view carries."""
    results = [graded(row, answer) for _, one, other, answer in PAIRS for row in (one, other)]
    results.append(graded(task(0.5), "return 0.5"))  # passed
    results.append(graded(task(0.5), "return undefined_name"))  # the client's own exception
    broken = task(0.5)
    broken["task_data"]["reference_source"] = "def f(n):\n    return 0.25\n"
    results.append(graded(broken, "return 0.5"))  # a task fault: the reference disagrees
    assert len({r.category for r in results}) >= 3
    for result in results:
        for reveal in ("rules", "verdict", "full"):
            expected = for_client(result, reveal).reason
            assert client_reason(result, reveal) == expected, (reveal, result.reason)


def test_the_rules_view_names_the_rule_and_keeps_the_clients_own_text():
    result = graded(task(0.123456789), "return 2.5")
    view = for_client(result, "rules")
    (leaf,) = view.cases[0].leaves
    assert (leaf.path, leaf.kind, leaf.status) == ("", "float", "mismatch")
    assert leaf.reason == "beyond rtol=5e-12 (default)" and leaf.tolerance_source == "default"
    assert leaf.expected is None and leaf.observed is None
    assert view.reason == "case 0: /: beyond rtol=5e-12 (default)"
    exact = for_client(graded(task(7), "return 9"), "rules")
    assert exact.cases[0].leaves[0].reason == "not equal, compared exactly (default)"
    raised = for_client(graded(task(0.5), "raise ValueError('my own message')"), "rules")
    assert raised.reason == "case 0: raised ValueError: my own message"
    assert raised.category == "candidate_exception"
    promise = for_client(graded(task(1234.5678, SIGNIFICANT), "return 5.0"), "rules")
    assert promise.cases[0].leaves[0].tolerance == "the statement's precision promise"
    author = task(0.25)
    author["task_data"]["rtol"] = "1e-6"
    within = for_client(graded(author, "return 0.25000001"), "rules")
    assert within.cases[0].leaves[0].reason == "within rtol=1e-6 (task)"
    assert within.reward == 1.0
    shape = for_client(graded(task([1.0, 2.0, 3.0]), "return [1.0, 2.5]"), "rules")
    assert [leaf.path for leaf in shape.cases[0].leaves] == [""]  # no leaf per element
    assert shape.reason == "case 0: /: the length differs"


def test_a_task_fault_shows_neither_the_reference_nor_the_expected_values():
    broken = task(0.123456789)
    broken["task_data"]["reference_source"] = "def f(n):\n    return 0.987654321\n"
    result = graded(broken, "return 0.5")
    assert result.category == "reference_mismatch" and "0.98" in json.dumps(
        result.model_dump(mode="json")
    )
    view = for_client(result, "rules")
    assert view.cases == [] and "0.98" not in view.reason and "0.12" not in view.reason
    assert view.reason.startswith("the reference does not reproduce the stored expectations")


def test_the_verdict_view_is_the_reward_and_the_category():
    view = for_client(graded(task(0.123456789), "return 2.5"), "verdict")
    assert view.cases == [] and view.reason == "a value or the exception differs"
    assert (view.reward, view.category) == (0.0, "candidate_mismatch")


def test_the_service_answers_in_its_view_and_journals_everything(tmp_path):
    (tmp_path / "hidden.jsonl").write_text(json.dumps(task(0.123456789)) + "\n")
    tasks = TaskSets([tmp_path / "hidden.jsonl"])
    body = {"problem_id": "hidden", "response": fenced("def f(n):\n    return 0.5")}

    async def go(reveal: str) -> tuple[dict, dict, dict]:
        settings = Settings(backend="in-process", compare_in_process=True, server_reveal=reveal)
        service = VerifyService(settings, tasks=tasks, journal_dir=tmp_path / reveal)
        await service.start()
        try:
            out = await service.verify(service.prepare(body, f"key-{reveal}"))
            stored = service.stored_verdict(f"key-{reveal}")
            journaled = service.journal.verdict(out["critpt_grader"]["row_id"])
            return out, stored, journaled
        finally:
            await service.aclose()

    for reveal in ("rules", "verdict"):
        out, stored, journaled = asyncio.run(go(reveal))
        client_text = json.dumps(untimed(out)) + json.dumps(untimed(stored))
        assert out["reward"] == 0.0 and stored["category"] == "candidate_mismatch"
        assert "0.1234" not in client_text and "0.3765" not in client_text
        assert "0.377" not in client_text and (0.123456789).hex() not in client_text
        assert "0.123456789" in json.dumps(journaled)  # the journal keeps full detail
    out, stored, _ = asyncio.run(go("full"))
    assert "0.123456789" in json.dumps(stored) and "differs by" in out["critpt_grader"]["reason"]


def untimed(value: Any) -> Any:
    """A response without its timings (numbers that could match anything)."""
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if k not in ("timings", "seconds")}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value
