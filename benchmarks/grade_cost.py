"""What grading one row costs, broken down, on the local backend (in-process side by side).

    python benchmarks/grade_cost.py [--rounds 5] [--json]

Grades the five task_data example rows (their own references as responses) ``--rounds``
times through one ``Grader`` per backend, so the first round pays the reference preflight
and later rounds hit the preflight cache. Per row (median seconds):
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

ROWS = Path(__file__).resolve().parents[2] / "shared" / "reference" / (
    "critpt_custom_grader_example.jsonl")
PHASES = ("start", "imports", "run", "compare", "total")


async def measure(backend: str, rounds: int) -> dict[str, dict[str, float]]:
    tasks = load_tasks(ROWS)
    samples: dict[str, list[float]] = {phase: [] for phase in (*PHASES, "preflight")}
    async with Grader(Settings(backend=backend)) as grader:
        for _ in range(rounds):
            for task in tasks:
                result = await grader.grade(task, f"```python\n{task.reference_source}\n```")
                assert result.reward == 1.0, (task.problem_id, result.reason)
                for phase, seconds in result.timings.items():
                    if phase in samples:
                        samples[phase].append(seconds)
    return {phase: {"median": statistics.median(values), "n": len(values)}
            for phase, values in samples.items() if values}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not ROWS.exists():
        raise SystemExit(f"example rows not found at {ROWS}")
    results = {name: asyncio.run(measure(name, args.rounds)) for name in ("local", "in-process")}
    if args.json:
        print(json.dumps(results, indent=2))
        return
    local, inproc = results["local"], results["in-process"]
    print(f"per-row cost, median seconds over {args.rounds} rounds x 5 rows")
    print(f"{'phase':<10} {'local':>10} {'in-process':>11} {'ratio':>8}")
    for phase in ("preflight", *PHASES):
        a = local.get(phase, {}).get("median")
        b = inproc.get(phase, {}).get("median")
        if a is None:
            continue
        ratio = f"{a / b:8.1f}x" if b else "        -"
        print(f"{phase:<10} {a:10.4f} {b if b is not None else float('nan'):11.4f} {ratio}")
    share = local["compare"]["median"] / local["total"]["median"]
    print(f"compare is {share:.2%} of a local row; the sandbox is the rest")


if __name__ == "__main__":
    main()
