"""What grading one row costs, broken down, on the local backend (in-process side by side).

    python benchmarks/grade_cost.py [--rounds 5] [--json] [--only NAME]
    python benchmarks/grade_cost.py --against REV [--only "local warm"] [--repeats 3]

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

``--against REV`` measures this tree and the commit ``REV`` (checked out in a temporary
worktree the sandbox user can read) side by side in one run: each configuration alternately
in both trees, ``--repeats`` times in fresh processes, then the median per phase and the
ratio this/REV — e.g. what the zygote costs a warm row against the commit before it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from baseline import baseline_tree  # benchmarks/ is first on sys.path

from critpt_grader.pipeline import Grader
from critpt_grader.settings import Settings
from critpt_grader.tasks import load_tasks

# The shared reference data sits beside the checkout (or beside its folder of worktrees).
_EXAMPLE = Path("shared") / "reference" / "critpt_custom_grader_example.jsonl"
_HERE = Path(__file__).resolve()
ROWS = next(
    (folder / _EXAMPLE for folder in _HERE.parents if (folder / _EXAMPLE).exists()),
    _HERE.parents[2] / _EXAMPLE,
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


def measure_in(tree: Path, name: str, rounds: int) -> dict[str, dict[str, float]]:
    """``measure`` of configuration ``name`` in a fresh process importing the package from
    ``tree``."""
    command = [sys.executable, __file__, "--only", name, "--rounds", str(rounds), "--json"]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(command, env=env, cwd=tree, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"measuring {name} in {tree} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout)[name]


def side_by_side(revision: str, names: list[str], rounds: int, repeats: int) -> None:
    here = Path(__file__).resolve().parents[1]
    with baseline_tree(revision) as baseline:
        for name in names:
            samples: dict[str, dict[str, list[float]]] = {"this": {}, revision: {}}
            for _ in range(repeats):  # alternate, so both see the same machine
                for label, tree in (("this", here), (revision, baseline)):
                    for phase, stats in measure_in(tree, name, rounds).items():
                        samples[label].setdefault(phase, []).append(stats["median"])
            print(
                f"{name}: per-row median ms, {repeats} alternating runs x {rounds} rounds x 5 rows"
            )
            print(f"{'phase':<10}{'this tree':>12}{revision[:12]:>14}{'this/' + revision[:7]:>14}")
            for phase in ("preflight", *PHASES):
                if phase not in samples["this"] or phase not in samples[revision]:
                    continue
                ours = statistics.median(samples["this"][phase])
                theirs = statistics.median(samples[revision][phase])
                ratio = f"{ours / theirs:13.2f}x" if theirs else f"{'-':>14}"
                print(f"{phase:<10}{ours * 1000:12.1f}{theirs * 1000:14.1f}{ratio}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--only", action="append", choices=list(CONFIGURATIONS))
    parser.add_argument("--against", metavar="REV", help="measure commit REV side by side")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if not ROWS.exists():
        raise SystemExit(f"example rows not found at {ROWS}")
    names = args.only or list(CONFIGURATIONS)
    if args.against:
        side_by_side(args.against, names, args.rounds, args.repeats)
        return
    results = {name: asyncio.run(measure(CONFIGURATIONS[name], args.rounds)) for name in names}
    if args.json:
        print(json.dumps(results, indent=2))
        return
    if len(names) < 2:
        print(json.dumps(results, indent=2))
        return
    print(f"per-row cost, median milliseconds over {args.rounds} rounds x 5 rows")
    print(f"{'phase':<10}" + "".join(f"{name:>13}" for name in names) + f"{'fresh/warm':>12}")
    for phase in ("preflight", *PHASES):
        row = [results[name].get(phase, {}).get("median") for name in names]
        if row[0] is None:
            continue
        cells = "".join(f"{v * 1000:13.1f}" if v is not None else f"{'-':>13}" for v in row)
        ratio = f"{row[0] / row[1]:11.1f}x" if row[1] else f"{'-':>12}"
        print(f"{phase:<10}{cells}{ratio}")
    fresh = results.get("local fresh")
    if fresh is None:
        return
    share = fresh["compare"]["median"] / fresh["total"]["median"]
    print(f"compare is {share:.2%} of a fresh local row; the sandbox is the rest")


if __name__ == "__main__":
    main()
