"""What one sandboxed run costs, broken down, for the local and in-process backends.

    python benchmarks/sandbox_cost.py [--runs 20] [--json]

Each run grades a small SymPy job (two cases). Phases (seconds):
  start     host spawn → runner's first line: cgroup launcher, bubblewrap, interpreter start
  imports   the runner's warm-up imports (numpy, sympy, mpmath, codec, parser)
  run       forking the child, loading the program, the calls, encoding
  teardown  the rest of the wall time: reading the frame, killing, removing the cgroup
  total     as seen by the caller of ``backend.run``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time

from critpt_grader import codec
from critpt_grader.sandbox import make_backend
from critpt_grader.sandbox.base import Job
from critpt_grader.settings import Settings

SOURCE = """
import sympy as sp

def answer(n):
    x = sp.symbols("x")
    return sp.expand((x + 1) ** n)
"""
PHASES = ("start", "imports", "run", "teardown", "total")


def benchmark_job() -> Job:
    cases = tuple({"args": [codec.encode(n)], "kwargs": {}} for n in (3, 5))
    return Job(source=SOURCE, entrypoint="answer", cases=cases, limits=Settings().limits())


async def measure(backend_name: str, runs: int) -> tuple[str, list[dict[str, float]]]:
    samples = []
    job = benchmark_job()
    async with make_backend(backend_name, Settings()) as backend:
        await backend.run(job)  # warm-up: probes, page cache
        containment = ""
        for _ in range(runs):
            started = time.perf_counter()
            outcome = await backend.run(job)
            total = time.perf_counter() - started
            if outcome.status != "ok":
                raise SystemExit(f"{backend_name}: {outcome.status}: {outcome.detail}")
            containment = outcome.containment
            phases = {key: outcome.timings.get(key, 0.0) for key in ("start", "imports", "run")}
            phases["teardown"] = max(total - sum(phases.values()), 0.0)
            phases["total"] = total
            samples.append(phases)
    return containment, samples


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(fraction * len(ordered)), len(ordered) - 1)]


def summarize(samples: list[dict[str, float]]) -> dict[str, dict[str, float]]:
    return {
        phase: {
            "median": statistics.median(s[phase] for s in samples),
            "p90": percentile([s[phase] for s in samples], 0.9),
        }
        for phase in PHASES
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    report = {}
    for name in ("local", "in-process"):
        containment, samples = asyncio.run(measure(name, args.runs))
        report[name] = {"containment": containment, "runs": args.runs, **summarize(samples)}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"per-run cost over {args.runs} runs, milliseconds (median / p90)")
    header = f"{'phase':<10}" + "".join(
        f"{name + ' (' + report[name]['containment'] + ')':>32}" for name in report
    )
    print(header)
    for phase in PHASES:
        cells = "".join(
            f"{report[n][phase]['median'] * 1e3:>22.1f} / {report[n][phase]['p90'] * 1e3:>7.1f}"
            for n in report
        )
        print(f"{phase:<10}{cells}")


if __name__ == "__main__":
    main()
