"""Benchmark: the comparator of this tree beside an earlier revision's, on the same cases.

    python benchmarks/compare_versions.py [--base REV] [--cases benchmarks/physicist_cases.py]

Each version runs in its own interpreter (the earlier one from ``git archive REV`` in a
temporary folder) over the cases of ``benchmarks/physicist_cases.py``: comparisons written as
a careful physicist grades them, each with its truth. Printed per group and version: cases a
physicist scores as the grader does, correct answers scored 0 (false rejects), wrong answers
scored 1 (false accepts), rows left unscorable ("uncertain"), and the median CPU ms per case;
then every case on which the two versions differ.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASE = "206a24c"  # main before the exact/inexact rule and the other fixes of that round

_RUN = r"""
import json, os, resource, sys, time
import importlib.util
spec = importlib.util.spec_from_file_location("cases", sys.argv[1])
cases = importlib.util.module_from_spec(spec); spec.loader.exec_module(cases)
from critpt_grader.compare import Policy, compare_expectation, compare_values
from critpt_grader.raised import Raised
# Warm the imports and the unit registry: a comparison worker has them before its first row.
compare_values(1.0, 1.0, Policy(problem="Return x in eV to 3 significant figures, within 5 meV."))
budget = int(sys.argv[2])

def one(group, truth, problem, expected, observed):
    start = time.process_time()
    try:
        if group == "exception-subclass":
            verdict = compare_expectation("exception", expected, "exception", Raised(*observed))
        else:
            verdict = compare_values(expected, observed, Policy(problem=problem))
        status, reason = verdict.status, "; ".join(l.reason for l in verdict.leaves)[:160]
    except Exception as exc:
        status, reason = "crash", f"{type(exc).__name__}: {exc}"[:160]
    return {"status": status, "ms": 1000 * (time.process_time() - start), "reason": reason}

out = []
for case in cases.CASES:
    # Each case in a forked child under the row budget a comparison worker has (CPU seconds):
    # a case past it is unscorable, as the worker pool makes it.
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        resource.setrlimit(resource.RLIMIT_CPU, (budget, budget + 1))
        os.write(write, json.dumps(one(*case)).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    _, wait, usage = os.wait4(pid, 0)
    if data:
        out.append(json.loads(data))
    else:
        ms = 1000 * (usage.ru_utime + usage.ru_stime)
        out.append({"status": "budget", "ms": ms, "reason": f"past {budget} s of CPU"})
print(json.dumps(out))
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default=BASE, help=f"the earlier revision (default {BASE})")
    parser.add_argument("--cases", type=Path, default=ROOT / "benchmarks" / "physicist_cases.py")
    parser.add_argument("--budget", type=int, default=10, help="CPU seconds a case may take")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from benchmarks.physicist_cases import CASES

    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", args.base, "critpt_grader", "grammar"],
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        results = {
            f"base {args.base}": _run(Path(tmp), args.cases, args.budget),
            "this tree": _run(ROOT, args.cases, args.budget),
        }
    _print(CASES, results)
    return 0


def _run(tree: Path, cases: Path, budget: int) -> list[dict]:
    done = subprocess.run(
        [sys.executable, "-c", _RUN, str(cases), str(budget)],
        cwd=tree,
        env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        raise SystemExit(f"the comparator in {tree} failed:\n{done.stderr}")
    return json.loads(done.stdout.splitlines()[-1])


def _score(truth: str, status: str) -> str:
    if status in ("uncertain", "invalid", "crash", "budget"):
        return "unscorable"
    if (status == "equal") == (truth == "equal"):
        return "right"
    return "false accept" if status == "equal" else "false reject"


def _print(cases: list[tuple], results: dict[str, list[dict]]) -> None:
    groups = list(dict.fromkeys(case[0] for case in cases))
    names = list(results)
    header = f"{'group':<20} {'cases':>5}" + "".join(
        f" | {name[:18]:>18}: right  f.rej  f.acc  unsc  CPU ms" for name in names
    )
    print(header)
    print("-" * len(header))
    for group in [*groups, "all"]:
        rows = [i for i, case in enumerate(cases) if group in ("all", case[0])]
        line = f"{group:<20} {len(rows):>5}"
        for name in names:
            scores = [_score(cases[i][1], results[name][i]["status"]) for i in rows]
            ms = statistics.median(results[name][i]["ms"] for i in rows)
            line += (
                f" | {'':>18}  {scores.count('right'):>5} {scores.count('false reject'):>6}"
                f" {scores.count('false accept'):>6} {scores.count('unscorable'):>5} {ms:>7.2f}"
            )
        print(line)
    print("\ncases judged differently:")
    for i, case in enumerate(cases):
        statuses = [results[name][i]["status"] for name in names]
        if len(set(statuses)) > 1:
            shown = " -> ".join(statuses)
            print(f"  [{case[0]}] truth {case[1]}: {shown}  ({results[names[-1]][i]['reason']})")
    last = names[-1]
    print(f"\ncases {last} does not score as a physicist does:")
    for i, case in enumerate(cases):
        found = results[last][i]
        if _score(case[1], found["status"]) != "right":
            print(f"  {i:>3} [{case[0]}] truth {case[1]}: {found['status']} ({found['reason']})")


if __name__ == "__main__":
    raise SystemExit(main())
