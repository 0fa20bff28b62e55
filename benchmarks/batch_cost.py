"""What a batch costs: rows/s on the public set, a hanging candidate, memory per sandbox.

    python benchmarks/batch_cost.py [--rows N] [--jobs 2] [--ray] [--hang-case-seconds 2] [--json]
    python benchmarks/batch_cost.py --against REV [--repeats 3] [--rows N] [--jobs 2]

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
  cpu            CPU milliseconds per cached row (the local batch's second pass), by process:
                 the grader, the comparison workers, each warm sandbox's main process (its
                 init, the supervisor), its zygote, the job processes (read from /proc:
                 the zygote's reaped children; benchmarks/procstat.py)

``--against REV`` runs the local batch (no hanging section, no Ray) for this tree and for
commit ``REV`` (checked out in a temporary worktree the sandbox user can read), alternating
``--repeats`` times so both see the same machine, and prints the medians side by side: rows/s
of the cached pass and CPU-ms per cached row by process; it also checks that both trees gave
every row the same verdict.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from baseline import baseline_tree  # benchmarks/ is first on sys.path
from procstat import ROLES, cpu_by_role, rss_kib  # benchmarks/ is first on sys.path

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
        cpu_before = cpu_by_role()
        started = time.perf_counter()
        categories: dict[int, str] = {}
        async for out in grade_indexed(enumerate(rows), tasks=sets, engine=engine):
            categories[out["row"]] = out["category"]
        seconds = time.perf_counter() - started
        cpu_after = cpu_by_role()
        figures[name] = {"rows": len(rows), "seconds": seconds, "rows_per_s": len(rows) / seconds}
        figures[name]["cpu_ms_per_row"] = {
            role: (cpu_after[role] - cpu_before[role]) * 1000 / len(rows) for role in ROLES
        }
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


def run_in(tree: Path, rows: int | None, jobs: int) -> dict[str, Any]:
    """The local batch of this script in a fresh process importing the package from ``tree``."""
    command = [sys.executable, __file__, "--json", "--local-only", "--jobs", str(jobs)]
    command += ["--keep-categories"] + (["--rows", str(rows)] if rows else [])
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(command, env=env, cwd=tree, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the batch in {tree} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)["batch local"]


def side_by_side(revision: str, rows: int | None, jobs: int, repeats: int) -> None:
    here = Path(__file__).resolve().parents[1]
    with baseline_tree(revision) as baseline:
        runs: dict[str, list[dict[str, Any]]] = {"this": [], revision: []}
        for _ in range(repeats):  # alternate, so both see the same machine
            for label, tree in (("this", here), (revision, baseline)):
                runs[label].append(run_in(tree, rows, jobs))
    same = all(
        run["categories"] == runs["this"][0]["categories"] for run in runs["this"] + runs[revision]
    )
    n = runs["this"][0]["cached pass"]["rows"]
    print(f"local batch, --jobs {jobs}, {n} public rows; medians of {repeats} alternating runs")
    print(f"{'cached pass':<26}{'this tree':>12}{revision[:12]:>14}{'this/' + revision[:7]:>14}")

    def line(name: str, pick) -> None:
        ours = statistics.median(pick(run) for run in runs["this"])
        theirs = statistics.median(pick(run) for run in runs[revision])
        ratio = f"{ours / theirs:13.2f}x" if theirs else f"{'-':>14}"
        print(f"{name:<26}{ours:12.2f}{theirs:14.2f}{ratio}")

    line("rows/s", lambda run: run["cached pass"]["rows_per_s"])
    for role in (*ROLES, "all"):
        line(
            f"CPU-ms/row {role}",
            lambda run, role=role: (
                sum(run["cached pass"]["cpu_ms_per_row"].values())
                if role == "all"
                else run["cached pass"]["cpu_ms_per_row"][role]
            ),
        )
    line("first pass s", lambda run: run["first pass"]["seconds"])
    print(f"same verdict on every row, every run: {same}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=None, help="first N public rows (default all)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--ray", action="store_true", help="also through Ray on this machine")
    parser.add_argument("--hang-case-seconds", type=float, default=2.0)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--against", metavar="REV", help="measure commit REV side by side")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--local-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--keep-categories", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.against:
        side_by_side(args.against, args.rows, args.jobs, args.repeats)
        return
    rows, sets = public_rows(args.rows), TaskSets([PUBLIC / "tasks.jsonl"])
    report: dict[str, Any] = {"jobs": args.jobs, "cpus": os.cpu_count()}
    if not args.local_only:
        report["hanging"] = asyncio.run(hanging(args.hang_case_seconds))
    report["batch local"] = asyncio.run(batch_local(rows, sets, args.jobs))
    if args.keep_categories:
        report["batch local"]["categories"] = sorted(report["batch local"]["categories"].items())
        print(json.dumps(report))
        return
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
    hang = report.get("hanging", {})
    for name in ("before (every case runs)", "after (stop at fault)") if hang else ():
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
    cpu = report["batch local"]["cached pass"]["cpu_ms_per_row"]
    lines.append(
        f"CPU-ms per cached row: {sum(cpu.values()):.1f} = "
        + ", ".join(f"{role} {ms:.2f}" for role, ms in cpu.items())
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
