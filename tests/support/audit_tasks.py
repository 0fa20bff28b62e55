"""A small task set of weak and well-posed tasks for the audit tests, as task_data rows.

Each weak task has one flaw a mutant exploits; each well-posed task has none. Expectations
are computed here by the reference itself (these are the test's own tasks)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from critpt_grader import codec


def _row(problem_id: str, source: str, entry: str, inputs: list[tuple], fn, **extra) -> dict:
    cases = []
    for args in inputs:
        expected = {"kind": "value", "value": codec.encode(fn(*args))}
        cases.append({"args": [codec.encode(a) for a in args], "expected": expected})
    return {
        "task_data": {
            "schema_version": 1,
            "problem_id": problem_id,
            "problem": extra.pop("problem", f"Implement {entry}."),
            "reference_source": source,
            "entrypoint": entry,
            "test_cases": cases,
            **extra,
        }
    }


def _exec(source: str, entry: str):
    scope: dict[str, Any] = {}
    exec(source, scope)  # the test's own reference, never a candidate
    return scope[entry]


def rows() -> list[dict]:
    made = []

    def add(problem_id, source, entry, inputs, **extra):
        made.append(_row(problem_id, source, entry, inputs, _exec(source, entry), **extra))

    # Weak: every case at x = 0, where sin and tan agree.
    add(
        "weak-one-point",
        "import math\n\ndef wave(x):\n    return 3.0 * math.sin(x)\n",
        "wave",
        [(0.0,)],
    )
    # Weak: symmetric inputs, so swapping the arguments of `power` changes nothing.
    add(
        "weak-symmetric",
        "def power(a, b):\n    return a**2 * b\n\n\ndef energy(a, b):\n    return power(a, b)\n",
        "energy",
        [(2.0, 2.0), (3.0, 3.0)],
    )
    # Weak: a 10% tolerance admits a constant off by 5%.
    add(
        "weak-loose-tolerance",
        "def drift(v):\n    return 1.5 * v + 0.25\n",
        "drift",
        [(1.0,), (2.5,), (-4.0,)],
        rtol="0.1",
    )
    # Well posed: several points, the default tolerance; one guard branch no case reaches.
    add(
        "well-posed",
        "import math\n\n\ndef field(x):\n    if x > 100:\n"
        "        raise ValueError('out of range')\n"
        "    return math.sin(x) + 2 * x**2 - math.exp(-x)\n",
        "field",
        [(0.3,), (1.7,), (-2.2,)],
    )
    # Well posed under its statement: the vector is defined up to an overall sign, so the
    # negated return is the same answer (equivalent, not a survivor).
    add(
        "signed-vector",
        "import numpy as np\n\n\ndef axis(t):\n    return np.array([np.cos(t), 2 * np.sin(t)])\n",
        "axis",
        [(0.4,), (1.3,), (2.9,)],
        problem="Implement axis(t). Return the vector up to an overall sign.",
    )
    # A promise wider than the stored tolerance.
    add(
        "looser-promise",
        "def gap(d):\n    return 0.5 * d**2 + 3.0 * d\n",
        "gap",
        [(1.2,), (0.7,), (2.4,)],
        problem="Implement gap(d). Report the gap with relative error below 1e-3.",
        rtol="1e-9",
    )
    # Well posed, with a loop a sign flip makes endless: that mutant is killed by the case limit.
    add(
        "loop-countdown",
        "def steps(n):\n    k = 0\n    while n > 0:\n"
        "        n -= 2\n        k += 1\n    return k\n",
        "steps",
        [(5,), (8,), (3,), (0,)],
    )
    # A broken task: the stored value is not what the reference returns.
    broken = _row(
        "broken-expectation", "def one(x):\n    return x + 1\n", "one", [(1,)], lambda x: x + 2
    )
    made.append(broken)
    return made


def write(folder: Path) -> Path:
    path = folder / "tasks.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows()), encoding="utf-8")
    return path
