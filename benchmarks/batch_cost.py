"""What a batch costs: rows/s on the public set, a hanging candidate, memory per sandbox.

    python benchmarks/batch_cost.py [--rows N] [--jobs 2] [--ray] [--hang-case-seconds 2] [--json]

Sections:
  batch local    the public set's candidates (hanging ones left out; first ``--rows``) as
                 ``/verify`` rows through one local engine: a first pass pays every task's
                 reference preflight, the timed second pass has every reference cached
  batch ray      the same through Ray on this machine (``ray.init(num_cpus=jobs)``), one
                 actor per CPU, also after a first pass (``--ray``; needs the ``ray`` extra)
  hanging        a candidate that loops forever on a 3-case task, on a warm local sandbox,
                 with the run going on after a timeout (before issue 12) and stopping at it
                 (``stop_on_fault``, now)
  memory         peak RSS of the grader process, and of the processes of each warm sandbox
                 (bwrap, the sandbox's init, its idle runner) after the local batch
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import time
from collections import Counter
from pathlib import Path
from typing import Any

from procstat import rss_kib  # benchmarks/ is the script's folder, first on sys.path

from critpt_grader import codec
from critpt_grader.batch import LocalEngine, grade_indexed
from critpt_grader.rows.tasksets import TaskSets
from critpt_grader.sandbox.base import Job, Limits
from critpt_grader.sandbox.local import LocalBackend
from critpt_grader.settings import Settings

PUBLIC = Path(__file__).resolve().parents[1] / "fixtures" / "public"


def public_rows(limit: int | None) -> list[dict[str, Any]]:
    rows = []
    with (PUBLIC / "candidates.jsonl").open() as file:
        for line in file:
            candidate = json.loads(line)
            if candidate["expect"].get("category") == "candidate_timeout":
                continue  # a hang costs its case limit: measured on its own below
            rows.append({"problem_id": candidate["against"], "response": candidate["response"]})
    return rows[:limit] if limit else rows


async def timed_passes(rows, sets, engine) -> dict[str, Any]:
    """Two passes through one engine: the first warms it, the second is measured."""
    figures: dict[str, Any] = {}
    for name in ("first pass", "cached pass"):
        started = time.perf_counter()
        categories: dict[int, str] = {}
        async for out in grade_indexed(enumerate(rows), tasks=sets, engine=engine):
            categories[out["row"]] = out["category"]
        seconds = time.perf_counter() - started
        figures[name] = {"rows": len(rows), "seconds": seconds, "rows_per_s": len(rows) / seconds}
        if figures.setdefault("categories", categories) != categories:
            raise AssertionError(f"{name}: verdicts differ from the first pass")
        figures["tally"] = dict(Counter(categories.values()))
    return figures


async def batch_local(rows, sets, jobs: int) -> dict[str, Any]:
    settings = Settings(max_concurrent_sandboxes=jobs)
    engine = LocalEngine(settings, jobs)
    try:
        figures = await timed_passes(rows, sets, engine)
        figures["memory"] = memory_figures()
        return figures
    finally:
        await engine.aclose()


async def batch_ray(rows, sets, jobs: int) -> dict[str, Any]:
    import ray

    from critpt_grader.batch.ray_pool import RayEngine

    ray.init(num_cpus=jobs, include_dashboard=False, logging_level="warning")
    try:
        engine = RayEngine(None, Settings(), workers=jobs)
        try:
            return await timed_passes(rows, sets, engine)
        finally:
            await engine.aclose()
    finally:
        ray.shutdown()


async def hanging(case_seconds: float) -> dict[str, Any]:
    limits = Limits(wall_seconds=10 * case_seconds + 10, case_seconds=case_seconds)
    cases = tuple({"args": [codec.encode(n)], "kwargs": {}} for n in (1, 2, 3))
    source = "def f(n):\n    while True:\n        pass\n"
    figures = {}
    async with LocalBackend(Settings(warm_sandboxes=True)) as backend:
        warm = Job(source="def f(n):\n    return n\n", entrypoint="f", cases=cases[:1])
        await backend.run(warm)
        for name, stop in (("before (every case runs)", False), ("after (stop at fault)", True)):
            job = Job(source=source, entrypoint="f", cases=cases, limits=limits, stop_on_fault=stop)
            started = time.perf_counter()
            outcome = await backend.run(job)
            figures[name] = {
                "seconds": time.perf_counter() - started,
                "cases": [case.kind for case in outcome.cases],
            }
    figures["case_seconds"] = case_seconds
    return figures


def memory_figures() -> dict[str, Any]:
    """Peak RSS of this process (grader) and current RSS of each sandbox's process tree."""
    children: dict[int, list[int]] = {}
    names: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        pid, rest = int(entry.name), stat.rsplit(")", 1)[1].split()
        children.setdefault(int(rest[1]), []).append(pid)
        names[pid] = stat.split("(", 1)[1].rsplit(")", 1)[0]

    def tree(pid: int) -> list[int]:
        found = [pid]
        for child in children.get(pid, []):
            found += tree(child)
        return found

    sandboxes = [pid for pid in children.get(os.getpid(), []) if names.get(pid) == "bwrap"]
    per_sandbox = sorted(sum(rss_kib(p) for p in tree(pid)) / 1024 for pid in sandboxes)
    workers = [p for p in children.get(os.getpid(), []) if names.get(p) != "bwrap"]
    return {
        "grader_peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "warm_sandboxes": len(sandboxes),
        "per_warm_sandbox_mib": per_sandbox,
        "other_children_mib": sorted(sum(rss_kib(q) for q in tree(p)) / 1024 for p in workers),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=None, help="first N public rows (default all)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--ray", action="store_true", help="also through Ray on this machine")
    parser.add_argument("--hang-case-seconds", type=float, default=2.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows, sets = public_rows(args.rows), TaskSets([PUBLIC / "tasks.jsonl"])
    report: dict[str, Any] = {"jobs": args.jobs, "cpus": os.cpu_count()}
    report["hanging"] = asyncio.run(hanging(args.hang_case_seconds))
    report["batch local"] = asyncio.run(batch_local(rows, sets, args.jobs))
    if args.ray:
        report["batch ray"] = asyncio.run(batch_ray(rows, sets, args.jobs))
        same = report["batch ray"]["categories"] == report["batch local"]["categories"]
        report["ray verdicts equal local"] = same
    for section in ("batch local", "batch ray"):
        if section in report:
            report[section].pop("categories")
    print(json.dumps(report, indent=2) if args.json else _text(report))


def _text(report: dict[str, Any]) -> str:
    lines = [f"jobs {report['jobs']} on {report['cpus']} CPUs"]
    hang = report["hanging"]
    for name in ("before (every case runs)", "after (stop at fault)"):
        figure = hang[name]
        lines.append(
            f"hanging 3-case candidate, case limit {hang['case_seconds']:g} s, {name}: "
            f"{figure['seconds']:.2f} s {figure['cases']}"
        )
    for section in ("batch local", "batch ray"):
        if section not in report:
            continue
        for name in ("first pass", "cached pass"):
            f = report[section][name]
            lines.append(
                f"{section}, {name}: {f['rows']} rows in {f['seconds']:.1f} s = "
                f"{f['rows_per_s']:.1f} rows/s"
            )
    lines.append(f"verdicts: {report['batch local']['tally']}")
    if "ray verdicts equal local" in report:
        lines.append(f"ray verdicts equal local: {report['ray verdicts equal local']}")
    memory = report["batch local"]["memory"]
    lines.append(
        f"grader peak RSS {memory['grader_peak_mib']:.0f} MiB; {memory['warm_sandboxes']} warm "
        f"sandboxes, RSS each {[round(m) for m in memory['per_warm_sandbox_mib']]} MiB; "
        f"comparison workers {[round(m) for m in memory['other_children_mib']]} MiB"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
