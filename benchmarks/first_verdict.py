"""How long the first verdict takes from a cold start, and where the time goes.

    python benchmarks/first_verdict.py [--against caf3050] [--repeats 5] [--row N]

One public row (``fixtures/public``: row ``--row`` of the candidates that pass) is graded
from nothing, each time in a new process:

  cold CLI     ``python -m critpt_grader.cli grade --task T --response R --json``: the wall
               time to the verdict and the CPU time of all its processes (sandboxes and
               comparison workers included: a cpuacct cgroup of its own where the benchmark
               can make one, as root on cgroup v1; else only the children it waited for)
  in-process   a fresh interpreter that imports the grader and grades the row once, with the
               phases: imports (the grader's modules), the reference's sandbox start, the
               candidate's sandbox start (each from the moment it was asked for, with its
               offset from the first), the reference preflight, the candidate's run, the
               comparison, and the first verdict (``grade`` from call to result)

``--against REV`` measures this tree and commit ``REV`` (checked out in a temporary worktree
the sandbox user can read) alternately, ``--repeats`` times each, and prints the medians side
by side with the ratio this/REV; it also checks that both give the row the same verdict.
Timings are wall-clock on a shared machine: compare the two columns of one run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from baseline import baseline_tree  # benchmarks/ is first on sys.path

HERE = Path(__file__).resolve().parents[1]
PUBLIC = HERE / "fixtures" / "public"


def write_row(index: int, folder: Path) -> tuple[Path, Path]:
    """The task and response files of the ``index``-th passing public candidate."""
    candidates = [json.loads(line) for line in (PUBLIC / "candidates.jsonl").open()]
    passing = [c for c in candidates if c["expect"].get("category") == "passed"]
    chosen = passing[index]
    for line in (PUBLIC / "tasks.jsonl").open():
        row = json.loads(line)
        if row["task_data"]["problem_id"] == chosen["against"]:
            break
    else:
        raise SystemExit(f"no task {chosen['against']}")
    task, response = folder / "task.json", folder / "response.md"
    task.write_text(json.dumps(row))
    response.write_text(chosen["response"])
    return task, response


CPUACCT = Path("/sys/fs/cgroup/cpuacct")  # cgroup v1: counts every process, killed ones too


def _accounting_group() -> Path | None:
    """A fresh cpuacct cgroup for one run (root on cgroup v1), else None."""
    if not os.access(CPUACCT, os.W_OK):
        return None
    group = CPUACCT / f"critpt-first-verdict-{os.getpid()}-{time.monotonic_ns()}"
    try:
        group.mkdir()
    except OSError:
        return None
    return group


def cold_cli(tree: Path, task: Path, response: Path) -> dict[str, float | str]:
    """The CLI's wall time to the verdict and the CPU time of all its processes: counted by a
    cpuacct cgroup where one can be made (the sandboxes' runners are killed, never waited
    for, so getrusage misses them); else the children the CLI waited for."""
    command = [sys.executable, "-m", "critpt_grader.cli", "grade", "--json"]
    command += ["--task", str(task), "--response", str(response)]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    group = _accounting_group()

    def join() -> None:
        if group is not None:
            (group / "cgroup.procs").write_text(str(os.getpid()))

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    try:
        done = subprocess.run(
            command,
            env=env,
            cwd=tree,
            capture_output=True,
            text=True,
            check=False,
            preexec_fn=join,  # the benchmark itself starts no thread
        )
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if group is not None:
            time.sleep(0.2)  # the last sandbox processes are being killed
            cpu = int((group / "cpuacct.usage").read_text()) / 1e9
        else:
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    finally:
        if group is not None:
            for _ in range(50):
                try:
                    group.rmdir()
                    break
                except OSError:
                    time.sleep(0.1)
    if done.returncode != 0:
        raise SystemExit(f"grade in {tree} failed:\n{done.stderr[-2000:]}")
    category = json.loads(done.stdout)["category"]
    return {"wall": wall, "cpu": cpu, "category": category}


# Run in a fresh interpreter whose package comes from the tree under test (PYTHONPATH).
IN_PROCESS = r"""
import asyncio, json, sys, time
began = time.perf_counter()
from critpt_grader.pipeline import Grader
from critpt_grader.sandbox.local import LocalBackend
from critpt_grader.settings import Settings
from critpt_grader.tasks import load_tasks
imports = time.perf_counter() - began
starts = {}
real = LocalBackend._start_warm

async def start_warm(self, *args, **kwargs):
    job = sys._getframe(1).f_locals.get("job")
    role = getattr(job, "role", "?")
    asked = time.perf_counter()
    try:
        return await real(self, *args, **kwargs)
    finally:
        starts.setdefault(role, (asked, time.perf_counter()))

LocalBackend._start_warm = start_warm

async def main():
    task = load_tasks(sys.argv[1])[0]
    response = open(sys.argv[2]).read()
    async with Grader(Settings()) as grader:
        t0 = time.perf_counter()
        result = await grader.grade(task, response)
        verdict = time.perf_counter() - t0
    first = min(asked for asked, _ in starts.values())
    out = {"imports": imports, "first verdict": verdict, "category": result.category.value}
    for role in ("reference", "candidate"):
        if role in starts:
            asked, done = starts[role]
            out[f"{role} sandbox start"] = done - asked
            out[f"{role} start asked at"] = asked - first
    out["preflight"] = result.timings.get("preflight", 0.0)
    out["candidate run"] = result.timings.get("candidate_run", 0.0)
    out["compare"] = result.timings.get("compare", 0.0)
    print(json.dumps(out))

asyncio.run(main())
"""


def in_process(tree: Path, task: Path, response: Path) -> dict[str, float | str]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    command = [sys.executable, "-c", IN_PROCESS, str(task), str(response)]
    done = subprocess.run(command, env=env, cwd=tree, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"in-process grade in {tree} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


PHASES = (
    "imports",
    "reference sandbox start",
    "candidate sandbox start",
    "candidate start asked at",
    "preflight",
    "candidate run",
    "compare",
    "first verdict",
)


def measure(trees: dict[str, Path], repeats: int, row: int) -> None:
    folder = Path(tempfile.mkdtemp(prefix="critpt-first-verdict-"))
    folder.chmod(0o755)
    try:
        task, response = write_row(row, folder)
        cli: dict[str, list[dict]] = {label: [] for label in trees}
        split: dict[str, list[dict]] = {label: [] for label in trees}
        for _ in range(repeats):  # alternate, so every tree sees the same machine
            for label, tree in trees.items():
                cli[label].append(cold_cli(tree, task, response))
                split[label].append(in_process(tree, task, response))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    labels = list(trees)
    categories = {s["category"] for runs in (*cli.values(), *split.values()) for s in runs}
    print(f"first verdict of one public row from a cold start; medians of {repeats} runs, s")
    header = f"{'':<28}" + "".join(f"{label[:12]:>14}" for label in labels)
    if len(labels) == 2:
        header += f"{labels[0][:5] + '/' + labels[1][:7]:>16}"
    print(header)

    def line(name: str, runs: dict[str, list[dict]], key: str) -> None:
        values = [
            statistics.median(float(r.get(key, 0.0)) for r in runs[label]) for label in labels
        ]
        cells = "".join(f"{v:14.3f}" for v in values)
        ratio = f"{values[0] / values[1]:15.2f}x" if len(values) == 2 and values[1] else ""
        print(f"{name:<28}{cells}{ratio}")

    line("cold CLI: wall", cli, "wall")
    line("cold CLI: CPU (all procs)", cli, "cpu")
    for phase in PHASES:
        line(f"in-process: {phase}", split, phase)
    print(f"verdicts: {sorted(categories)} ({'the same' if len(categories) == 1 else 'DIFFER'})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", metavar="REV", help="measure commit REV side by side")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--row", type=int, default=0, help="which passing public row")
    args = parser.parse_args()
    if not args.against:
        measure({"this tree": HERE}, args.repeats, args.row)
        return
    with baseline_tree(args.against) as baseline:
        measure({"this tree": HERE, args.against: baseline}, args.repeats, args.row)


if __name__ == "__main__":
    main()
