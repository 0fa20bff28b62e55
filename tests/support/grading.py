"""Task rows and answers for grading tests: a small task (HALF, RAISES) and a fenced answer."""

from __future__ import annotations

import textwrap


def envelope(node):
    return {"format": "critpt-value-v1", "value": node}


def task_row(reference: str, entry: str, cases: list[dict], **extra) -> dict:
    return {
        "responses_create_params": {"input": []},
        "task_data": {
            "schema_version": 1,
            "problem_id": f"test-{entry}",
            "reference_source": reference,
            "entrypoint": entry,
            "test_cases": cases,
            **extra,
        },
    }


def value_case(args, expected) -> dict:
    return {
        "args": [envelope(a) for a in args],
        "expected": {"kind": "value", "value": envelope(expected)},
    }


HALF = task_row(
    "def half(n):\n    return n / 2\n",
    "half",
    [
        value_case([["int", "1"]], ["float", (0.5).hex()]),
        value_case([["int", "3"]], ["float", (1.5).hex()]),
    ],
)


RAISES = task_row(
    "def inverse(x):\n    return 1 / x\n",
    "inverse",
    [{"args": [envelope(["int", "0"])], "expected": {"kind": "exception"}}],
)


def answer(code: str) -> str:
    return f"Here is my solution.\n\n```python\n{textwrap.dedent(code).strip()}\n```\n"
