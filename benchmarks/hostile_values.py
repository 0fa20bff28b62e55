"""What hostile candidate values cost the grader's host, under the comparison budget.

    python benchmarks/hostile_values.py [--seconds 10] [--memory-mb 1024] [--json]

Every row is graded through the pipeline (``Grader``: extract, reference preflight, decode,
compare, verdict). The sandbox is a scripted backend that runs no code and returns, for every
case, the wire envelope a sandbox would deliver for the value; so the figures are the host's
side alone (decoding, comparison, the worker hop), not the cost of building the value.

Per hostile value: the verdict, the wall time of ``grade()`` (it includes the preflight of a
new task), the CPU time the comparison workers spent on the row and whether that stayed within
the row budget (``compare_seconds``), the grader's peak RSS so far (``ru_maxrss`` of this
process) and the comparison worker's peak RSS for that row. Then side by side:

* a normal row (a float answer) and a symbolic one: median ``compare`` time with the worker
  hop and in-process (``compare_in_process``), so the hop's overhead reads directly;
* undecidable 5-case rows (each case a tuple of ``atan(k*x) + atan(1/(k*x))`` summed over
  k = 1..10 against ``5*pi``, positive ``x``: agrees at every point, proved nowhere), with 3 and
  with 40 leaves a case, in-process without a budget and in the worker with it;
* ``RUSAGE_CHILDREN`` once the workers are gone (the zygote and the workers it reaped).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import time
from typing import Any

from critpt_grader.pipeline import Grader
from critpt_grader.sandbox.base import CaseOutcome, RunOutcome
from critpt_grader.settings import Settings

_WIRE: dict[str, dict] = {}


def envelope(node: Any) -> dict:
    return {"format": "critpt-value-v1", "value": node}


class WireBackend:
    """Runs no code: every case returns the envelope named in the job's source."""

    name = "wire"

    async def run(self, job):
        value = _WIRE[job.source.split("# wire:", 1)[1].strip()]
        cases = [CaseOutcome("value", value=value) for _ in job.cases]
        return RunOutcome("ok", cases=cases, symbols={"x": {"positive": True}})

    async def aclose(self) -> None:
        pass


def source(node: Any) -> str:
    key = str(len(_WIRE))
    _WIRE[key] = envelope(node)
    return f"def f(x):\n    pass\n# wire:{key}"


def response(node: Any) -> str:
    return f"```python\n{source(node)}\n```\n"


def task(name: str, expected: Any, cases: int = 1) -> dict:
    case = {
        "args": [envelope(["int", "1"])],
        "expected": {"kind": "value", "value": envelope(expected)},
    }
    return {
        "responses_create_params": {"input": []},
        "task_data": {
            "schema_version": 1,
            "problem_id": name,
            "reference_source": source(expected),
            "entrypoint": "f",
            "test_cases": [case] * cases,
        },
    }


HALF = ["float", (0.5).hex()]
ZERO = ["float", (0.0).hex()]
HOSTILE: list[tuple[str, Any, Any]] = [
    ("exp(exp(exp(9))) vs 0.5", HALF, ["symbolic", "exp(exp(exp(9)))"]),
    ("exp(-10**12) vs 0.0", ZERO, ["symbolic", "exp(-1000000000000)"]),
    ("gamma(10**100)", HALF, ["symbolic", "gamma(10**100)"]),
    ("factorial(10**9)", HALF, ["symbolic", "factorial(10**9)"]),
    ("sin(exp(exp(exp(9))))", HALF, ["symbolic", "sin(exp(exp(exp(9))))"]),
    ("E**E**E**E**E**9", HALF, ["symbolic", "E**E**E**E**E**9"]),
    ("10**10**8 (text)", HALF, ["symbolic", "10**10**8"]),
    ("Pow(2, 10**9)", HALF, ["symbolic", "Pow(2, 10**9)"]),
    ("Integral(.., (x, 0, 10**100))", HALF, ["symbolic", "Integral(exp(x**2), (x, 0, 10**100))"]),
    ("Sum(.., (k, 1, 10**100))", HALF, ["symbolic", "Sum(1/k**2, (k, 1, 10**100))"]),
    ("400-deep parentheses", HALF, ["symbolic", "(" * 400 + "x" + ")" * 400]),
    ("'1e99999999' vs legacy 0.5", ["legacy", "0.5"], ["str", "1e99999999"]),
    ("'1e99999999' vs 0.5", HALF, ["str", "1e99999999"]),
    ("16000-digit int text", ["legacy", "0.5"], ["str", "7" * 16000]),
    ("1024-digit int", HALF, ["int", "9" * 1024]),
    ("decimal 1e1024", HALF, ["decimal", "1E+1024"]),
    ("32000-element list", ["list", [HALF] * 200], ["list", [["float", (1.5).hex()]] * 32000]),
    (
        "180x180 symbolic matrix",
        ["list", [["list", [HALF] * 180]] * 180],
        ["list", [["list", [["symbolic", "x**2 + 1"]] * 180]] * 180],
    ),
    (
        "2000 towers vs 2000 floats",
        ["list", [HALF] * 2000],
        ["list", [["symbolic", "exp(exp(exp(9)))"]] * 2000],
    ),
]


def _kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


async def hostile_rows(settings: Settings) -> list[dict]:
    rows = []
    async with Grader(settings, backend=WireBackend()) as grader:
        pool = grader.judging.runner
        for number, (name, expected, hostile) in enumerate(HOSTILE):
            pool.peak_rss_kb = 0
            worker_cpu = pool.cpu_seconds
            started = time.monotonic()
            result = await grader.grade(task(f"hostile-{number}", expected), response(hostile))
            seconds = time.monotonic() - started
            compare = result.timings.get("compare", 0.0)
            rows.append(
                {
                    "value": name,
                    "category": str(result.category),
                    "reward": result.reward,
                    "seconds": seconds,
                    "compare_seconds": compare,
                    "worker_cpu_seconds": pool.cpu_seconds - worker_cpu,
                    "within_budget": pool.cpu_seconds - worker_cpu <= settings.compare_seconds,
                    "grader_peak_rss_mb": _kb() / 1024,
                    "worker_peak_rss_mb": getattr(pool, "peak_rss_kb", 0) / 1024,
                    "reason": result.reason[:110],
                }
            )
    return rows


async def row_cost(settings: Settings, expected: Any, answer: Any, rounds: int) -> dict:
    async with Grader(settings, backend=WireBackend()) as grader:
        row_task = task(f"normal-{json.dumps(answer)}-{settings.compare_in_process}", expected)
        samples = []
        for _ in range(rounds):
            result = await grader.grade(row_task, response(answer))
            assert str(result.category) == "passed", result.reason
            samples.append(result.timings["compare"])
    return {"median_ms": 1000 * statistics.median(samples), "rounds": rounds}


UNDECIDED = " + ".join(f"atan({k}*x) + atan(1/({k}*x))" for k in range(1, 11))


async def undecidable(settings: Settings, leaves: int) -> dict:
    async with Grader(settings, backend=WireBackend()) as grader:
        pool = grader.judging.runner
        expected = ["tuple", [["symbolic", "5*pi"]] * leaves]
        name = f"undecidable-{leaves}-{settings.compare_in_process}"
        row_task = task(name, expected, cases=5)
        await grader.grade(row_task, response(expected))  # the preflight, once
        cpu, worker_cpu = time.process_time(), getattr(pool, "cpu_seconds", 0.0)
        started = time.monotonic()
        answer = ["tuple", [["symbolic", UNDECIDED]] * leaves]
        result = await grader.grade(row_task, response(answer))
        return {
            "category": str(result.category),
            "seconds": time.monotonic() - started,
            "host_cpu_seconds": time.process_time() - cpu,
            "worker_cpu_seconds": getattr(pool, "cpu_seconds", 0.0) - worker_cpu,
            "reason": result.reason[:110],
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="compare_seconds")
    parser.add_argument("--memory-mb", type=int, default=1024, help="compare_memory_mb")
    parser.add_argument("--rounds", type=int, default=200, help="normal rows to time")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    worker = Settings(
        backend="in-process",
        compare_seconds=args.seconds,
        compare_memory_mb=args.memory_mb,
        compare_workers=1,
    )
    inline = Settings(backend="in-process", compare_in_process=True)
    start_kb = _kb()
    report: dict[str, Any] = {
        "budget": {"cpu_seconds": args.seconds, "memory_mb": args.memory_mb},
        "grader_rss_at_start_mb": start_kb / 1024,
        "hostile": asyncio.run(hostile_rows(worker)),
    }
    report["normal_row"] = {
        "float, worker": asyncio.run(row_cost(worker, HALF, HALF, args.rounds)),
        "float, in-process": asyncio.run(row_cost(inline, HALF, HALF, args.rounds)),
        "symbolic, worker": asyncio.run(
            row_cost(worker, ["symbolic", "sqrt(2)*x/2"], ["symbolic", "x/sqrt(2)"], args.rounds)
        ),
        "symbolic, in-process": asyncio.run(
            row_cost(inline, ["symbolic", "sqrt(2)*x/2"], ["symbolic", "x/sqrt(2)"], args.rounds)
        ),
    }
    report["undecidable_5_cases"] = {
        f"{leaves} leaves/case, {mode}": asyncio.run(undecidable(settings, leaves))
        for leaves in (3, 40)
        for mode, settings in (("worker", worker), ("in-process", inline))
    }
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    report["children"] = {
        "peak_rss_mb": children.ru_maxrss / 1024,
        "cpu_seconds": children.ru_utime + children.ru_stime,
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(
        f"budget: {args.seconds:g} s CPU, {args.memory_mb} MiB per row; grader RSS at start "
        f"{start_kb / 1024:.0f} MB"
    )
    print(
        f"{'value':34} {'category':22} {'wall s':>7} {'worker CPU s':>12} {'in budget':>9} "
        f"{'grader MB':>9} {'worker MB':>9}"
    )
    for row in report["hostile"]:
        print(
            f"{row['value']:34} {row['category']:22} {row['seconds']:7.3f} "
            f"{row['worker_cpu_seconds']:12.3f} {'yes' if row['within_budget'] else 'NO':>9} "
            f"{row['grader_peak_rss_mb']:9.0f} {row['worker_peak_rss_mb']:9.0f}"
        )
    print()
    for name, cost in report["normal_row"].items():
        print(f"normal row, {name:22} compare median {cost['median_ms']:.2f} ms")
    for name, cost in report["undecidable_5_cases"].items():
        print(
            f"undecidable 5-case row, {name:26} {cost['category']:22} "
            f"{cost['seconds']:6.1f} s wall, {cost['host_cpu_seconds']:5.1f} s grader CPU, "
            f"{cost['worker_cpu_seconds']:5.1f} s worker CPU"
        )
    print(
        f"RUSAGE_CHILDREN (zygote + workers): peak {report['children']['peak_rss_mb']:.0f} MB, "
        f"{report['children']['cpu_seconds']:.1f} s CPU"
    )


if __name__ == "__main__":
    main()
