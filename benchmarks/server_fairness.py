"""An honest row's latency beside hostile rows that are costly to compare, over loopback.

    python benchmarks/server_fairness.py [--hostile 4] [--samples 8] [--backend local] [--json]

For each comparison layout — **one lane** (``compare_first_pass_seconds=0``: every
comparison waits for one of ``compare_workers``, as before issue 30) and **two lanes** (the
default: a fast first pass, costly comparisons on in a slow lane) — it starts ``critpt-grader
serve`` (a subprocess on a free loopback port, a journal in a temporary folder), warms it
(the tasks' preflights, warm sandboxes), and measures:

* **alone**: an honest row graded ``--samples`` times in turn, nothing else in flight. The
  honest row is a public fixture task's reference answer (``pub-sm-fermi-chemical-potential``,
  by ``problem_id``): its own comparison takes milliseconds;
* **beside N hostile rows**: ``--hostile`` rows sent at once, each a candidate whose values
  are costly to compare (five cases of three leaves, each a sum over k = 1..20 of
  ``sin(k*x)**2 + cos(k*x)**2``: 20 at every point, proved nowhere, over a second a leaf; it
  spends the row's whole budget, 10 s of CPU); once the server's ``/metrics`` shows all of
  them comparing or waiting to, the honest row is sent again and again, one at a time, as
  long as every hostile row is still in flight when it is sent (and it is counted whether
  they all still were when its answer came, or it had to wait for one of them);
* **in the burst**: the honest row sent in the same instant as the hostile rows (they then
  compete for the first passes and the sandboxes too);
* the hostile rows' own verdicts and latencies (they must still get theirs).

The server is stopped by its pid (SIGTERM) after each layout; every request is bounded
(``--timeout``). The figures are wall-clock seconds on whatever machine runs it: read the
layouts side by side, since they run minutes apart on the same machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from critpt_grader import codec  # noqa: E402
from tests.support.server_harness import RunningServer, completed, fenced  # noqa: E402

PUBLIC = REPO / "fixtures" / "public"
HONEST_TASK = "pub-sm-fermi-chemical-potential"
HOSTILE_TASK = "fairness-undecidable"
UNDECIDED = " + ".join(f"sp.sin({k}*x)**2 + sp.cos({k}*x)**2" for k in range(1, 21))
HOSTILE_SOURCE = (
    f"import sympy as sp\n\ndef f(n):\n    x = sp.Symbol('x')\n    return ({UNDECIDED},) * 3\n"
)
RIGHT_SOURCE = "import sympy as sp\n\ndef f(n):\n    return (sp.Integer(20),) * 3\n"
LAYOUTS = {
    "one lane (before)": {"CRITPT_GRADER_COMPARE_FIRST_PASS_SECONDS": "0"},
    "two lanes (after)": {},
}


def hostile_task() -> dict:
    import sympy

    expected = codec.encode((sympy.Integer(20),) * 3)
    cases = [
        {"args": [codec.encode(n)], "expected": {"kind": "value", "value": expected}}
        for n in range(5)
    ]
    return {
        "responses_create_params": {"input": []},
        "task_data": {
            "schema_version": 1,
            "problem_id": HOSTILE_TASK,
            "reference_source": RIGHT_SOURCE,
            "entrypoint": "f",
            "test_cases": cases,
        },
    }


def honest_row(number: int) -> dict:
    reference = next(
        json.loads(line)
        for line in (PUBLIC / "candidates.jsonl").read_text().splitlines()
        if json.loads(line)["task_id"] == HONEST_TASK and json.loads(line)["kind"] == "reference"
    )
    return {
        "problem_id": HONEST_TASK,
        "response": completed(reference["response"]),
        "_ng_rollout_index": number,  # another rollout: never the same request twice
    }


def hostile_row(number: int, source: str = HOSTILE_SOURCE) -> dict:
    return {"problem_id": HOSTILE_TASK, "response": fenced(source), "_ng_rollout_index": number}


async def post(http: httpx.AsyncClient, body: dict) -> tuple[float, dict]:
    started = time.perf_counter()
    response = await http.post("/verify", json=body)
    return time.perf_counter() - started, response.json()


def comparing(metrics: dict) -> int:
    """Comparisons running or waiting for a worker, over the lanes."""
    return sum(lane["busy"] + lane["waiting"] for lane in metrics["comparisons"].values())


async def measure(url: str, hostile: int, samples: int, timeout: float) -> dict:
    limits = httpx.Limits(max_connections=hostile + 8)
    async with httpx.AsyncClient(base_url=url, timeout=timeout, limits=limits) as http:
        counter = iter(range(10**6))
        for _ in range(3):  # warm: the honest task's preflight, warm sandboxes
            _, out = await post(http, honest_row(next(counter)))
            assert out["reward"] == 1.0, out
        _, out = await post(http, hostile_row(0, RIGHT_SOURCE))  # the hostile task's preflight
        assert out["reward"] == 1.0, out

        alone = []
        for _ in range(samples):
            seconds, out = await post(http, honest_row(next(counter)))
            assert out["reward"] == 1.0, out
            alone.append(seconds)

        # Beside the hostile rows, once all of them are comparing or waiting to.
        started = time.perf_counter()
        sent = [asyncio.ensure_future(post(http, hostile_row(1000 + i))) for i in range(hostile)]
        burst = asyncio.ensure_future(post(http, honest_row(next(counter))))
        while comparing((await http.get("/metrics")).json()) < hostile:
            assert not any(task.done() for task in sent), "a hostile row finished early"
            await asyncio.sleep(0.05)
        beside, phases, overlapped = [], [], 0
        while len(beside) < samples and not any(task.done() for task in sent):
            seconds, out = await post(http, honest_row(next(counter)))
            assert out["reward"] == 1.0, out
            beside.append(seconds)
            phases.append(out["critpt_grader"]["timings"])
            overlapped += not any(task.done() for task in sent)  # all still in flight
        burst_seconds, burst_out = await burst
        assert burst_out["reward"] == 1.0, burst_out
        results = await asyncio.gather(*sent)
        hostile_seconds = [seconds for seconds, _ in results]
        return {
            "alone_seconds": alone,
            "beside_seconds": beside,
            "beside_phases": phases,
            "beside_answered_with_all_hostile_in_flight": overlapped,
            "burst_seconds": burst_seconds,
            "burst_phases": burst_out["critpt_grader"]["timings"],
            "hostile_seconds": hostile_seconds,
            "hostile_categories": [out["category"] for _, out in results],
            "hostile_compare_seconds": [
                out["critpt_grader"]["timings"].get("compare") for _, out in results
            ],
            "all_hostile_answered_after_seconds": time.perf_counter() - started,
        }


def summary(values: list[float]) -> str:
    if not values:
        return "-"
    return f"p50 {statistics.median(values):.2f} s, max {max(values):.2f} s (n={len(values)})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hostile", type=int, default=4, help="hostile rows in flight")
    parser.add_argument("--samples", type=int, default=8, help="honest rows per measurement")
    parser.add_argument("--backend", default="local")
    parser.add_argument("--timeout", type=float, default=600.0, help="per request, seconds")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="critpt-fairness-"))
    (folder / "hostile.jsonl").write_text(json.dumps(hostile_task()) + "\n")
    report: dict = {"cpus": len(os.sched_getaffinity(0)), "hostile_rows": args.hostile}
    try:
        for name, env in LAYOUTS.items():
            journal = folder / f"journal-{len(report)}"
            tasks = ["--tasks", str(PUBLIC), str(folder / "hostile.jsonl")]
            server = RunningServer(
                "--backend", args.backend, "--journal", str(journal), *tasks, env=env
            )
            server.start()
            try:
                load = os.getloadavg()[0]
                report[name] = asyncio.run(
                    measure(server.url, args.hostile, args.samples, args.timeout)
                )
                report[name]["load_average_at_start"] = load
                lanes = httpx.get(f"{server.url}/metrics", timeout=60).json()["comparisons"]
                report[name]["lanes"] = {k: v["workers"] for k, v in lanes.items()}
            finally:
                server.stop()  # SIGTERM to its pid, SIGKILL after a grace period
                server.log.unlink(missing_ok=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{report['cpus']} CPUs; {args.hostile} hostile rows (10 s of comparison CPU each)")
    for name in LAYOUTS:
        row = report[name]
        print(f"\n{name}: lanes {row['lanes']}, load average {row['load_average_at_start']:.1f}")
        print(f"  honest row alone                  {summary(row['alone_seconds'])}")
        print(
            f"  honest row beside {args.hostile} hostile rows   {summary(row['beside_seconds'])}, "
            f"{row['beside_answered_with_all_hostile_in_flight']} answered before any hostile one"
        )
        print(f"  honest row sent with the burst    {row['burst_seconds']:.2f} s")
        print(
            f"  hostile rows                      {summary(row['hostile_seconds'])}; "
            f"{sorted(set(row['hostile_categories']))}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
