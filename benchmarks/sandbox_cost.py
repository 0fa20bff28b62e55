"""What one sandboxed run costs, broken down, for each way of running a job.

    python benchmarks/sandbox_cost.py [--runs 20] [--json]

Each run is a small SymPy job (two cases), run one after another on:
  local-warm   the local backend reusing a warm sandbox (the default)
  local-fresh  the local backend with a fresh sandbox per job (``warm_sandboxes=False``)
  in-process   no sandbox at all (tests only)
Phases (seconds):
  start     host sends the job → the job's runner starts: for a fresh sandbox the cgroup
            launcher, bubblewrap and interpreter start; for a warm one, the fork
  imports   the runner's warm-up imports (numpy, sympy, mpmath, codec, parser); 0 when warm
  run       forking the child, loading the program, the calls, encoding
  teardown  the rest of the wall time: reading the frame, resetting or killing the sandbox
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


MODES = {
    "local-warm": ("local", Settings(warm_sandboxes=True, max_concurrent_sandboxes=1)),
    "local-fresh": ("local", Settings(warm_sandboxes=False, max_concurrent_sandboxes=1)),
    "in-process": ("in-process", Settings()),
}


async def measure(mode: str, runs: int) -> tuple[str, list[dict[str, float]]]:
    samples = []
    job = benchmark_job()
    backend_name, settings = MODES[mode]
    async with make_backend(backend_name, settings) as backend:
        await backend.run(job)  # warm-up: probes, page cache
        containment = ""
        for _ in range(runs):
            started = time.perf_counter()
            outcome = await backend.run(job)
            total = time.perf_counter() - started
            if outcome.status != "ok":
                raise SystemExit(f"{mode}: {outcome.status}: {outcome.detail}")
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
    for name in MODES:
        containment, samples = asyncio.run(measure(name, args.runs))
        report[name] = {"containment": containment, "runs": args.runs, **summarize(samples)}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"per-run cost over {args.runs} runs, milliseconds (median / p90)")
    header = f"{'phase':<10}" + "".join(f"{name:>32}" for name in report)
    containments = f"{'':<10}" + "".join(f"{report[n]['containment']:>32}" for n in report)
    print(header)
    print(containments)
    for phase in PHASES:
        cells = "".join(
            f"{report[n][phase]['median'] * 1e3:>22.1f} / {report[n][phase]['p90'] * 1e3:>7.1f}"
            for n in report
        )
        print(f"{phase:<10}{cells}")


if __name__ == "__main__":
    main()
