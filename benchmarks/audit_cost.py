"""What a mutant costs the audit, and what sharing a task's warm sandbox and cached
preflight saves, side by side in one run on the local backend.

    python benchmarks/audit_cost.py [--mutants 12] [--json]

Takes the first ``--mutants`` mutants of each of four public fixture tasks (:data:`TASK_IDS`,
whose mutants end quickly: a looping mutant costs the case limit whatever the way) and
grades each one, sequentially, three ways:

  shared     one Grader for all: warm sandboxes, the task's preflight cached (the audit's way)
  no cache   a Grader per mutant over one shared warm backend: the preflight runs every time
  cold       a Grader per mutant with its own backend: a new sandbox pool and preflight each

and prints the median seconds per mutant and the ratio to ``shared``. Then it times the whole
audit of those tasks (mutants, probes, reach probes) with ``--jobs`` 2.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from pathlib import Path

from critpt_grader.audit import AuditOptions, audit
from critpt_grader.audit.mutate import mutants
from critpt_grader.audit.run import as_response
from critpt_grader.pipeline import Grader
from critpt_grader.sandbox import make_backend
from critpt_grader.settings import Settings
from critpt_grader.tasks import load_tasks

TASKS = Path(__file__).resolve().parents[1] / "fixtures" / "public" / "tasks.jsonl"
TASK_IDS = (
    "pub-at-hydrogen-fine-structure",
    "pub-cm-haldane-topological-phase",
    "pub-fluids-pipe-flow-regime",
    "pub-sm-fermi-chemical-potential",
)


async def timed(grader: Grader, task, source: str) -> float:
    started = time.perf_counter()
    await grader.grade(task, as_response(source))
    return time.perf_counter() - started


async def measure(n_mutants: int) -> dict:
    settings = Settings(case_seconds=5, wall_seconds=60)
    tasks = [t for t in load_tasks(TASKS) if t.problem_id in TASK_IDS]
    work = [(t, m.source) for t in tasks for m in mutants(t.reference_source, n_mutants)]
    seconds: dict[str, list[float]] = {"shared": [], "no cache": [], "cold": []}
    async with Grader(settings) as grader:
        for task, source in work:
            seconds["shared"].append(await timed(grader, task, source))
    backend = make_backend(settings.backend, settings)
    async with backend:
        for task, source in work:
            async with Grader(settings, backend) as grader:
                seconds["no cache"].append(await timed(grader, task, source))
    for task, source in work:
        async with Grader(settings) as grader:
            seconds["cold"].append(await timed(grader, task, source))
    started = time.perf_counter()
    report = await audit(tasks, settings, AuditOptions(jobs=2))
    whole = time.perf_counter() - started
    medians = {name: statistics.median(values) for name, values in seconds.items()}
    return {
        "tasks": len(tasks),
        "mutants": len(work),
        "median_seconds": medians,
        "ratio_to_shared": {name: medians[name] / medians["shared"] for name in medians},
        "audit_seconds": whole,
        "audit_mutants": report.totals()["mutants"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mutants", type=int, default=12)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = asyncio.run(measure(args.mutants))
    if args.json:
        print(json.dumps(result))
        return
    print(f"{result['mutants']} mutants of {result['tasks']} tasks, graded one at a time")
    print("| way | median ms per mutant | × shared |")
    print("|---|---|---|")
    for name, value in result["median_seconds"].items():
        print(f"| {name} | {value * 1000:.1f} | {result['ratio_to_shared'][name]:.1f} |")
    print(
        f"whole audit of those tasks ({result['audit_mutants']} mutants, probes and reach "
        f"probes, --jobs 2): {result['audit_seconds']:.1f} s"
    )


if __name__ == "__main__":
    main()
