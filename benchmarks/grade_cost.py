"""What grading one row costs, broken down, on the local backend (in-process side by side).

    python benchmarks/grade_cost.py [--rounds 5] [--json]

Grades the five task_data example rows (their own references as responses) ``--rounds``
times through one ``Grader`` per configuration — the local backend with a fresh sandbox per
run, the local backend with warm sandboxes (the default), and the in-process backend — so
the first round pays the reference preflight and later rounds hit the preflight cache.
Per row (median seconds):
  preflight   the reference's sandbox run + its check (first round only; then cached)
  start       candidate sandbox start: cgroup, bubblewrap, interpreter
  imports     the runner's warm-up imports (numpy, sympy, mpmath, codec, parser)
  run         loading the candidate, the calls, encoding
  compare     decoding and per-leaf comparison on the host
  total       grade() as its caller sees it
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
from pathlib import Path

from critpt_grader.pipeline import Grader
from critpt_grader.settings import Settings
from critpt_grader.tasks import load_tasks

ROWS = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "reference"
    / ("critpt_custom_grader_example.jsonl")
)
PHASES = ("start", "imports", "run", "compare", "total")


CONFIGURATIONS = {
    "local fresh": Settings(backend="local", warm_sandboxes=False),
    "local warm": Settings(backend="local", warm_sandboxes=True),
    "in-process": Settings(backend="in-process"),
}


async def measure(settings: Settings, rounds: int) -> dict[str, dict[str, float]]:
    tasks = load_tasks(ROWS)
    samples: dict[str, list[float]] = {phase: [] for phase in (*PHASES, "preflight")}
    async with Grader(settings) as grader:
        for _ in range(rounds):
            for task in tasks:
                result = await grader.grade(task, f"```python\n{task.reference_source}\n```")
                assert result.reward == 1.0, (task.problem_id, result.reason)
                for phase, seconds in result.timings.items():
                    if phase in samples:
                        samples[phase].append(seconds)
    return {
        phase: {"median": statistics.median(values), "n": len(values)}
        for phase, values in samples.items()
        if values
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not ROWS.exists():
        raise SystemExit(f"example rows not found at {ROWS}")
    results = {
        name: asyncio.run(measure(settings, args.rounds))
        for name, settings in CONFIGURATIONS.items()
    }
    if args.json:
        print(json.dumps(results, indent=2))
        return
    names = list(results)
    print(f"per-row cost, median milliseconds over {args.rounds} rounds x 5 rows")
    print(f"{'phase':<10}" + "".join(f"{name:>13}" for name in names) + f"{'fresh/warm':>12}")
    for phase in ("preflight", *PHASES):
        row = [results[name].get(phase, {}).get("median") for name in names]
        if row[0] is None:
            continue
        cells = "".join(f"{v * 1000:13.1f}" if v is not None else f"{'-':>13}" for v in row)
        ratio = f"{row[0] / row[1]:11.1f}x" if row[1] else f"{'-':>12}"
        print(f"{phase:<10}{cells}{ratio}")
    fresh = results["local fresh"]
    share = fresh["compare"]["median"] / fresh["total"]["median"]
    print(f"compare is {share:.2%} of a fresh local row; the sandbox is the rest")


if __name__ == "__main__":
    main()
