"""Does a CPU hog in one sandbox slow down a correct candidate graded beside it?

    python benchmarks/cpu_fairness.py [--task ID] [--rounds 15] [--hogs 30] [--json]

Grades one public fixture task (its reference as the response) ``--rounds`` times alone,
then again while, through the same ``Grader`` and local backend (warm sandboxes), another
sandbox runs a candidate whose entry point forks ``--hogs`` processes that spin forever
(and spins itself). Median grade seconds, alone and beside the hog, per configuration:
  quota 1 core   ``sandbox_cpus=1`` (the default): the hog's cgroup gets one core of CPU time
  no quota       ``sandbox_cpus=64``: the quota does not bind; cgroups still get equal shares
  no cpu cgroup  sandboxes get no cpu cgroup at all (how it was before ``sandbox_cpus``)
Also shown, over the graded rounds beside the hog: the CPU the hog's processes used (in
cores), how busy the machine's CPUs were (other work on the machine included), and how many
of the hog cgroup's CFS periods were throttled. Needs root (cgroups); the hog is cancelled after the
measurement, which kills its sandbox's cgroup, and the script checks nothing is left.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

from critpt_grader.pipeline import Grader
from critpt_grader.sandbox import containment, local
from critpt_grader.settings import Settings
from critpt_grader.tasks import Task, load_tasks

TASKS = Path(__file__).resolve().parents[1] / "fixtures" / "public" / "tasks.jsonl"
DEFAULT_TASK = "pub-sm-fermi-chemical-potential"  # ~80 ms of numerics in the sandbox
HOG = """
import os

def {entrypoint}(*args, **kwargs):
    for _ in range({hogs}):
        if os.fork() == 0:
            while True:
                pass
    while True:
        pass
"""


def settings(cpus: float) -> Settings:
    return Settings(
        backend="local",
        warm_sandboxes=True,
        sandbox_cpus=cpus,
        max_processes=64,  # room for the hog's processes
        max_concurrent_sandboxes=2,  # the graded candidate and the hog
        case_seconds=120,  # the hog is cancelled long before
        wall_seconds=300,
    )


@contextmanager
def no_cpu_cgroup() -> Iterator[None]:
    """Sandboxes get pids and memory cgroups only, as before ``sandbox_cpus`` existed."""
    create = containment.create_cgroup

    def without_cpu(*args, **kwargs):
        return create(*args, **{**kwargs, "cpus": None})

    with mock.patch.object(local, "create_cgroup", without_cpu):
        yield


CONFIGURATIONS = {
    "quota 1 core": (1.0, False),
    "no quota": (64.0, False),
    "no cpu cgroup": (1.0, True),
}


def cpu_times() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs, from /proc/stat."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, sum(fields)


def process_cpu(pids: set[int]) -> dict[int, float]:
    """CPU seconds (user + system) each of ``pids`` has used so far."""
    ticks = os.sysconf("SC_CLK_TCK")
    used = {}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        used[pid] = (int(fields[11]) + int(fields[12])) / ticks
    return used


def sandbox_cgroups() -> list[str]:
    """Names of this process's sandbox cgroups (in the pids hierarchy or v2 parent)."""
    parent = containment.own_cgroup("pids")
    if parent is None:
        return []
    return [d.name for d in parent.glob(f"critpt-{os.getpid()}-*")]


def members(name: str) -> set[int]:
    parent = containment.own_cgroup("pids")
    assert parent is not None
    return containment.Cgroup((parent / name,)).pids()


def throttled(name: str) -> str:
    """``nr_throttled/nr_periods`` from the hog cgroup's cpu.stat, when it has one."""
    parent = containment.own_cgroup("cpu")
    stat = parent / name / "cpu.stat" if parent is not None else None
    if stat is None or not stat.exists():
        return "-"
    values = dict(line.split() for line in stat.read_text().splitlines() if " " in line)
    return f"{values.get('nr_throttled', '?')}/{values.get('nr_periods', '?')}"


async def grade_seconds(grader: Grader, task: Task, response: str, rounds: int) -> list[float]:
    seconds = []
    for _ in range(rounds):
        started = time.perf_counter()
        result = await grader.grade(task, response)
        seconds.append(time.perf_counter() - started)
        assert result.reward == 1.0, (result.category, result.reason)
    return seconds


async def measure(cpus: float, task: Task, rounds: int, hogs: int) -> dict[str, object]:
    response = f"```python\n{task.reference_source}\n```"
    hog_response = f"```python\n{HOG.format(entrypoint=task.entrypoint, hogs=hogs)}\n```"
    async with Grader(settings(cpus)) as grader:
        await grader.grade(task, response)  # preflight, probes
        # Two warm candidate sandboxes: one for the hog, one for the graded candidate.
        await asyncio.gather(*(grader.grade(task, response) for _ in range(2)))
        alone = await grade_seconds(grader, task, response, rounds)

        hog = asyncio.create_task(grader.grade(task, hog_response))
        deadline = time.monotonic() + 30
        hog_cgroup = None
        while hog_cgroup is None and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
            busy = [n for n in sandbox_cgroups() if len(members(n)) > hogs]
            hog_cgroup = busy[0] if busy else None
        assert hog_cgroup is not None and not hog.done(), "the hog did not start"
        await asyncio.sleep(0.5)  # let it settle into its quota
        busy_before, total_before = cpu_times()
        hog_before, started = process_cpu(members(hog_cgroup)), time.monotonic()
        beside = await grade_seconds(grader, task, response, rounds)
        hog_after, elapsed = process_cpu(members(hog_cgroup)), time.monotonic() - started
        busy_after, total_after = cpu_times()
        hog_cores = sum(hog_after[p] - hog_before[p] for p in hog_before if p in hog_after)
        assert not hog.done(), "the hog ended early"
        hog_throttled = throttled(hog_cgroup)
        hog.cancel()
        await asyncio.gather(hog, return_exceptions=True)
        assert hog_cgroup not in sandbox_cgroups(), "the hog's cgroup is still there"
    leftover = sandbox_cgroups()
    assert not leftover, f"sandbox cgroups left behind: {leftover}"
    return {
        "alone": statistics.median(alone),
        "beside_hog": statistics.median(beside),
        "slowdown": statistics.median(beside) / statistics.median(alone),
        "hog_cores": hog_cores / elapsed,
        "machine_busy": (busy_after - busy_before) / max(1, total_after - total_before),
        "hog_throttled": hog_throttled,
        "rounds": rounds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default=DEFAULT_TASK)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--hogs", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    task = next((t for t in load_tasks(TASKS) if t.problem_id == args.task), None)
    if task is None:
        raise SystemExit(f"no task {args.task!r} in {TASKS}")
    results = {}
    for name, (cpus, without_cpu) in CONFIGURATIONS.items():
        if without_cpu:
            with no_cpu_cgroup():
                results[name] = asyncio.run(measure(cpus, task, args.rounds, args.hogs))
        else:
            results[name] = asyncio.run(measure(cpus, task, args.rounds, args.hogs))
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(
        f"{task.problem_id}: median grade ms over {args.rounds} rounds, alone and beside a "
        f"sandbox running {args.hogs} busy processes; {os.cpu_count()} CPUs"
    )
    print(
        f"{'':<15}{'alone':>9}{'beside':>9}{'slowdown':>10}{'hog cores':>11}{'CPUs busy':>11}"
        f"{'throttled':>13}"
    )
    for name, r in results.items():
        print(
            f"{name:<15}{r['alone'] * 1000:9.1f}{r['beside_hog'] * 1000:9.1f}"
            f"{r['slowdown']:9.2f}x{r['hog_cores']:11.2f}{r['machine_busy']:10.0%} "
            f"{r['hog_throttled']:>12}"
        )
    quota = results["quota 1 core"]["slowdown"]
    verdict = "met" if quota < 3 else "NOT met"
    print(f"target: slowdown < 3x with the quota: {verdict} ({quota:.2f}x)")


if __name__ == "__main__":
    main()
