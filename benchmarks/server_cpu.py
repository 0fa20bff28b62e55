"""The grader process's own CPU per row: ``critpt-grader serve`` over HTTP against ``batch``.

    python benchmarks/server_cpu.py [--rows N] [--concurrency 8] [--jobs 2] [--repeats 1] [--json]
    python benchmarks/server_cpu.py --against REV [--repeats 1] [--rows N]

Rows: the public set's candidates (hanging ones left out; the first ``--rows``), each a NeMo
Gym ``/verify`` body carrying its task (``task_data``) and a completed Responses API object.
Every pass sends them all; each pass gets its own ``_ng_task_index`` values, so no body is
the same as an earlier one (a journaled server would otherwise answer a repeated body from
the journal without grading it).

* **batch**: one real ``critpt-grader batch IN --out OUT --backend local --jobs J`` over IN =
  the warm pass's rows then the measured pass's rows. Its own CPU (``/proc/PID/stat`` utime +
  stime of that pid alone: no sandbox, no comparison worker) is read when OUT holds the warm
  pass and again when it holds both; the difference over the measured rows is its CPU per row.
* **serve**: one real ``critpt-grader serve --backend local`` on a free loopback port, without
  and with ``--journal DIR``. A warm pass (``--concurrency`` at once: preflights cached,
  sandboxes and comparison workers up), then two measured passes, each read before and after
  from the server pid's own ``/proc/PID/stat``: **sequential** (one request at a time, one
  kept-alive connection) and **concurrent** (``--concurrency`` requests at a time).

It prints CPU-ms per row for each, and server/batch (with ``--repeats``, medians, and each
ratio's spread over the runs: other load on the machine moves these figures by ~10%). Every
answered row's verdict (reward, category) must agree across batch and all the server passes
(checked and printed). The client (this process) is never counted. Serve runs at its default
``--log-level`` (info: uvicorn's access line per request) unless ``--log-level`` says.
With ``--against REV``, the same for this tree and for commit ``REV`` (a temporary
worktree), alternating ``--repeats`` times; medians side by side.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from baseline import baseline_tree  # benchmarks/ is first on sys.path
from procstat import TICK  # benchmarks/ is the script's folder, first on sys.path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE))

from tests.support.server_harness import completed, free_port  # noqa: E402

PUBLIC = HERE / "fixtures" / "public"
LOG_LEVEL = "info"  # serve's --log-level: its default (uvicorn logs each request at info)


def public_rows(limit: int | None) -> list[tuple[dict, str]]:
    """(row without its index, task id) for the public candidates that do not hang."""
    tasks = {}
    for line in (PUBLIC / "tasks.jsonl").read_text().splitlines():
        row = json.loads(line)
        tasks[row["task_data"]["problem_id"]] = row
    out = []
    for line in (PUBLIC / "candidates.jsonl").read_text().splitlines():
        candidate = json.loads(line)
        if candidate["expect"].get("category") == "candidate_timeout":
            continue  # a hang costs its case limit, in either process's children
        body = {**tasks[candidate["against"]], "response": completed(candidate["response"])}
        out.append((body, candidate["against"]))
    return out[:limit] if limit else out


def pass_bodies(rows: list[tuple[dict, str]], number: int) -> list[bytes]:
    """The rows of pass ``number``: their indices are this pass's own."""
    base = number * len(rows)
    return [
        json.dumps({**body, "_ng_task_index": base + i}).encode()
        for i, (body, _) in enumerate(rows)
    ]


def own_cpu(pid: int) -> float:
    """CPU seconds (user + system, every thread) of ``pid`` itself, not of its children."""
    rest = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(rest[11]) + int(rest[12])) / TICK


def verdict(out: dict) -> tuple[Any, Any]:
    return out.get("reward"), out.get("category")


def env_for(tree: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(tree), "PYTHONUNBUFFERED": "1"}


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM to the one process started here, SIGKILL after a grace period."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


# -- batch ------------------------------------------------------------------------------


def measure_batch(tree: Path, rows, jobs: int, work: Path) -> tuple[float, dict[int, tuple]]:
    warm, measured = pass_bodies(rows, 0), pass_bodies(rows, 1)
    n = len(rows)
    source, out = work / "in.jsonl", work / "out.jsonl"
    source.write_bytes(b"\n".join(warm + measured) + b"\n")
    out.unlink(missing_ok=True)
    command = [sys.executable, "-m", "critpt_grader.cli", "batch", str(source), "--out", str(out)]
    command += ["--backend", "local", "--jobs", str(jobs), "--quiet"]
    with (work / "batch.log").open("wb") as log:
        proc = subprocess.Popen(command, cwd=tree, env=env_for(tree), stdout=log, stderr=log)
    marks: dict[int, float] = {}
    try:
        while len(marks) < 2:
            lines = out.read_bytes().count(b"\n") if out.exists() else 0
            for goal in (n, 2 * n):
                if lines >= goal and goal not in marks:
                    marks[goal] = own_cpu(proc.pid)
            if proc.poll() is not None and len(marks) < 2:
                raise SystemExit(f"batch exited early:\n{(work / 'batch.log').read_text()[-3000:]}")
            time.sleep(0.005)
        proc.wait(120)
    finally:
        stop(proc)
    verdicts = {}
    for line in out.read_text().splitlines():
        answer = json.loads(line)
        if answer.get("row", -1) >= n:
            verdicts[answer["row"] - n] = verdict(answer)
    return (marks[2 * n] - marks[n]) / n, verdicts


# -- serve ------------------------------------------------------------------------------


async def send(url: str, bodies: list[bytes], concurrency: int) -> dict[int, tuple]:
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    headers = {"content-type": "application/json"}
    gate = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(base_url=url, timeout=600, limits=limits) as http:

        async def one(i: int, body: bytes) -> tuple[int, tuple]:
            async with gate:
                response = await http.post("/verify", content=body, headers=headers)
            if response.status_code != 200:
                raise SystemExit(f"row {i}: HTTP {response.status_code} {response.text[:300]}")
            return i, verdict(response.json())

        return dict(await asyncio.gather(*(one(i, b) for i, b in enumerate(bodies))))


def measure_server(
    tree: Path, rows, concurrency: int, jobs: int, journal: Path | None, work: Path
) -> dict[str, Any]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "critpt_grader.cli", "serve", "--host", "127.0.0.1"]
    command += ["--port", str(port), "--log-level", LOG_LEVEL, "--backend", "local"]
    if journal is not None:
        command += ["--journal", str(journal)]
    log_path = work / f"serve-{'journal' if journal else 'plain'}.log"
    with log_path.open("wb") as log:
        env = {**env_for(tree), "CRITPT_GRADER_MAX_CONCURRENT_SANDBOXES": str(jobs)}
        proc = subprocess.Popen(command, cwd=tree, env=env, stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the server did not start:\n{log_path.read_text()[-3000:]}")
            try:
                if httpx.get(f"{url}/healthz", timeout=2).json().get("status") == "ok":
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        asyncio.run(send(url, pass_bodies(rows, 0), concurrency))  # warm
        figures: dict[str, Any] = {}
        for name, number, width in (("sequential", 1, 1), ("concurrent", 2, concurrency)):
            before = own_cpu(proc.pid)
            verdicts = asyncio.run(send(url, pass_bodies(rows, number), width))
            figures[name] = (own_cpu(proc.pid) - before) / len(rows)
            figures[name + " verdicts"] = verdicts
        return figures
    finally:
        stop(proc)


def measure(tree: Path, rows, concurrency: int, jobs: int) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="critpt-server-cpu-"))
    try:
        batch, batch_verdicts = measure_batch(tree, rows, jobs, work)
        report: dict[str, Any] = {"rows": len(rows), "batch_ms": 1000 * batch}
        agree = True
        for label, journal in (("no journal", None), ("journal", work / "journal")):
            figures = measure_server(tree, rows, concurrency, jobs, journal, work)
            for mode in ("sequential", "concurrent"):
                report[f"{label}, {mode}_ms"] = 1000 * figures[mode]
                agree &= figures[mode + " verdicts"] == batch_verdicts
        report["same_verdicts"] = agree and len(batch_verdicts) == len(rows)
        return report
    finally:
        shutil.rmtree(work, ignore_errors=True)


def print_report(runs: list[dict[str, Any]], concurrency: int, jobs: int) -> None:
    """Medians over ``runs``; each ratio is the median of the runs' own ratios (a server
    pass against the batch of the same run), with their spread."""
    keys = [k for k in runs[0] if k.endswith("_ms")]
    med = {k: statistics.median(run[k] for run in runs) for k in keys}
    print(
        f"{runs[0]['rows']} public rows (task inline), backend local, --jobs {jobs}, serve "
        f"--log-level {LOG_LEVEL}; the grader process's own CPU in the measured pass "
        f"(preflights cached); medians of {len(runs)} run(s)"
    )
    print(f"{'':34}{'CPU-ms/row':>12}{'/ batch':>10}{'(min-max)':>14}")
    print(f"{'batch (--jobs ' + str(jobs) + ')':34}{med['batch_ms']:12.2f}{1.0:10.2f}")
    for label in ("no journal", "journal"):
        for mode, shown in (("sequential", "sequential"), ("concurrent", f"{concurrency} at once")):
            key = f"{label}, {mode}_ms"
            ratios = [run[key] / run["batch_ms"] for run in runs]
            spread = f"{min(ratios):.2f}-{max(ratios):.2f}"
            print(
                f"{'serve, ' + label + ', ' + shown:34}{med[key]:12.2f}"
                f"{statistics.median(ratios):10.2f}{spread:>14}"
            )
    same = all(run["same_verdicts"] for run in runs)
    print(f"same verdict on every row (batch and every server pass, every run): {same}")


def side_by_side(revision: str, rows, concurrency: int, jobs: int, repeats: int) -> None:
    with baseline_tree(revision) as baseline:
        runs: dict[str, list[dict[str, Any]]] = {"this": [], revision: []}
        for _ in range(repeats):  # alternate, so both see the same machine
            for label, tree in (("this", HERE), (revision, baseline)):
                runs[label].append(measure(tree, rows, concurrency, jobs))
    print(f"{len(rows)} public rows, --jobs {jobs}; CPU-ms/row, medians of {repeats} runs")
    print(f"{'':34}{'this tree':>12}{revision[:12]:>14}{'this/' + revision[:7]:>14}")
    for key in [k for k in runs["this"][0] if k.endswith("_ms")]:
        ours = statistics.median(run[key] for run in runs["this"])
        theirs = statistics.median(run[key] for run in runs[revision])
        print(f"{key[:-3]:34}{ours:12.2f}{theirs:14.2f}{ours / theirs:13.2f}x")
    for label in ("this", revision):
        ratios = [
            statistics.median(run[f"{j}, {m}_ms"] / run["batch_ms"] for run in runs[label])
            for j in ("no journal", "journal")
            for m in ("sequential", "concurrent")
        ]
        print(
            f"server/batch, {label[:12]} (no journal: sequential, concurrent; journal: "
            "sequential, concurrent): " + " ".join(f"{r:.2f}" for r in ratios)
        )
    same = all(run["same_verdicts"] for run in runs["this"] + runs[revision])
    print(f"same verdict on every row, every run: {same}")


def main() -> int:
    global LOG_LEVEL
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=None, help="first N public rows (default all)")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--against", metavar="REV", help="measure commit REV side by side")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--log-level", default=LOG_LEVEL, help="serve's (default: its own)")
    args = parser.parse_args()
    LOG_LEVEL = args.log_level
    rows = public_rows(args.rows)
    if args.against:
        side_by_side(args.against, rows, args.concurrency, args.jobs, args.repeats)
        return 0
    runs = [measure(HERE, rows, args.concurrency, args.jobs) for _ in range(args.repeats)]
    if args.json:
        print(json.dumps(runs))
    else:
        print_report(runs, args.concurrency, args.jobs)
    return 0 if all(run["same_verdicts"] for run in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
