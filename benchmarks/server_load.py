"""Load on the resources server: many concurrent ``/verify`` rows over loopback.

    python benchmarks/server_load.py [--rows 200] [--tasks 20] [--backend local] [--json]

Starts ``critpt-grader serve`` (a subprocess on a free loopback port, with a journal in a
temporary folder), sends ``--rows`` rows **all at once** (one connection each), drawn from the
public fixture set: for the first ``--tasks`` tasks, their reference, equivalent and canary
candidates in turn, so every task's preflight runs once while its other rows wait on it. It
prints: rows answered (HTTP 200) and their verdicts against the set's expectations, rows lost
(accepted by the journal without a verdict, or never answered), latency p50/p99 as the client
sees it, rows/s over the whole burst, and peak RSS (the server process alone, and the server
with its sandboxes and comparison workers, sampled every 0.1 s). Then it stops the server; the
run is bounded (``--timeout``, default 600 s).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
from procstat import rss_kib  # benchmarks/ is the script's folder, first on sys.path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.server_harness import (  # noqa: E402
    RunningServer,
    completed,
    descendants,
)

PUBLIC = REPO / "fixtures" / "public"


def rows(count: int, tasks: int) -> list[tuple[dict, dict]]:
    """``count`` (row, expectation) pairs cycling over the first ``tasks`` tasks."""
    by_id = {}
    for line in (PUBLIC / "tasks.jsonl").read_text().splitlines():
        row = json.loads(line)
        by_id[row["task_data"]["problem_id"]] = row
    chosen = list(by_id)[:tasks]
    candidates = [
        json.loads(line) for line in (PUBLIC / "candidates.jsonl").read_text().splitlines()
    ]
    pool = [
        c
        for c in candidates
        if c["against"] in chosen and c["kind"] in ("reference", "equivalent", "canary")
    ]
    out = []
    for index in range(count):
        candidate = pool[index % len(pool)]
        body = {
            **by_id[candidate["against"]],
            "response": completed(candidate["response"]),
            "_ng_task_index": index,
        }
        out.append((body, candidate["expect"]))
    return out


def sample_rss(pid: int, stop: threading.Event, peak: dict) -> None:
    while not stop.is_set():
        tree = rss_kib(pid) + sum(rss_kib(child) for child in descendants(pid))
        peak["tree"] = max(peak.get("tree", 0), tree)
        stop.wait(0.1)


async def burst(url: str, work: list[tuple[dict, dict]], timeout: float):
    limits = httpx.Limits(max_connections=len(work), max_keepalive_connections=len(work))
    async with httpx.AsyncClient(base_url=url, timeout=timeout, limits=limits) as http:

        async def one(body):
            started = time.perf_counter()
            try:
                response = await http.post("/verify", json=body)
            except httpx.HTTPError as exc:
                return None, f"{type(exc).__name__}", time.perf_counter() - started
            return response.status_code, response.json(), time.perf_counter() - started

        return await asyncio.gather(*(one(body) for body, _ in work))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--backend", default="local")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    work = rows(args.rows, args.tasks)
    journal = Path(tempfile.mkdtemp(prefix="critpt-load-"))
    server = RunningServer("--backend", args.backend, "--journal", str(journal)).start()
    stop, peak = threading.Event(), {}
    sampler = threading.Thread(target=sample_rss, args=(server.pid, stop, peak), daemon=True)
    sampler.start()
    try:
        started = time.perf_counter()
        results = asyncio.run(burst(server.url, work, args.timeout))
        wall = time.perf_counter() - started
        server_peak = rss_kib(server.pid, "VmHWM")
    finally:
        stop.set()
        sampler.join(5)
        server.stop()
        server.log.unlink(missing_ok=True)

    answered = [r for r in results if r[0] == 200]
    categories = Counter(r[1]["category"] for r in answered)
    agree = sum(
        1
        for (status, out, _), (_, expect) in zip(results, work, strict=True)
        if status == 200
        and out["category"] == expect.get("category", out["category"])
        and out["reward"] == expect["reward"]
    )
    with sqlite3.connect(journal / "journal.sqlite3") as db:
        journaled = dict(db.execute("SELECT state, COUNT(*) FROM rows GROUP BY state").fetchall())
    shutil.rmtree(journal, ignore_errors=True)
    lost = (len(work) - len(answered)) + sum(n for s, n in journaled.items() if s != "done")
    latencies = sorted(r[2] for r in answered)

    def quantile(q: float) -> float:
        return latencies[min(len(latencies) - 1, max(0, round(q * len(latencies)) - 1))]

    report = {
        "rows": len(work),
        "tasks": args.tasks,
        "backend": args.backend,
        "cpus": len(os.sched_getaffinity(0)),
        "answered": len(answered),
        "agree_with_expectations": agree,
        "lost": lost,
        "journal": journaled,
        "by_category": dict(sorted(categories.items())),
        "p50_seconds": round(quantile(0.50), 3) if latencies else None,
        "p99_seconds": round(quantile(0.99), 3) if latencies else None,
        "rows_per_second": round(len(answered) / wall, 2),
        "wall_seconds": round(wall, 2),
        "peak_rss_server_mib": round(server_peak / 1024, 1),
        "peak_rss_with_sandboxes_mib": round(peak.get("tree", 0) / 1024, 1),
    }
    if args.json:
        print(json.dumps(report))
    else:
        width = max(len(k) for k in report)
        for key, value in report.items():
            print(f"{key:<{width}}  {value}")
    return 0 if lost == 0 and len(answered) == len(work) else 1


if __name__ == "__main__":
    sys.exit(main())
