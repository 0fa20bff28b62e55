"""Grader-side CPU per row: the server's path against batch's, with no sandbox cost.

    python benchmarks/row_cpu.py [--rows 300] [--repeat 3] [--json]

Every row is graded by the in-process backend with comparisons in process, so what is timed
(``time.process_time``) is the grader's own work per row: parsing, the input contract, the
task, extraction, job building, comparison, the echo. Two kinds of rows:

  inline      each row carries its task (``task_data``), as NeMo Gym rows do
  by id       each row carries only a ``problem_id`` of the public set, loaded at start; the
              answer is the task's own reference (so every row runs real code in process)

The server's path is ``VerifyService.prepare(body bytes)`` then ``verify`` (no HTTP, no
journal); batch's is ``grade_indexed`` over the same lines. Each path is warmed up first, so
preflights are cached and comparison workers are up. Rows are graded one at a time; each
figure is the least of ``--repeat`` runs (the machine's other load only ever adds).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path
from typing import Any

from critpt_grader.batch import LocalEngine, grade_indexed
from critpt_grader.rows.tasksets import TaskSets
from critpt_grader.server.service import VerifyService
from critpt_grader.settings import Settings

PUBLIC = Path(__file__).resolve().parents[1] / "fixtures" / "public" / "tasks.jsonl"
SETTINGS = Settings(backend="in-process", compare_in_process=True)
HALF = {
    "task_data": {
        "schema_version": 1,
        "problem_id": "half",
        "reference_source": "def half(n):\n    return n / 2\n",
        "entrypoint": "half",
        "test_cases": [
            {
                "args": [{"format": "critpt-value-v1", "value": ["int", str(n)]}],
                "expected": {
                    "kind": "value",
                    "value": {"format": "critpt-value-v1", "value": ["float", (n / 2).hex()]},
                },
            }
            for n in range(8)
        ],
    }
}


def inline_lines(rows: int) -> list[bytes]:
    answer = "Here it is.\n\n```python\ndef half(n):\n    return n / 2\n```\n"
    return [
        json.dumps({**HALF, "response": answer, "_ng_rollout_index": i}).encode()
        for i in range(rows)
    ]


def by_id_lines(rows: int) -> list[bytes]:
    tasks = [json.loads(line) for line in PUBLIC.read_text().splitlines() if line.strip()]
    lines = []
    for i in range(rows):
        data = tasks[i % len(tasks)]["task_data"]
        answer = f"```python\n{data['reference_source']}\n```"
        row = {"problem_id": data["problem_id"], "response": answer, "_ng_rollout_index": i}
        lines.append(json.dumps(row).encode())
    return lines


async def server_cpu(lines: list[bytes], sets: TaskSets, warm: list[bytes]) -> float:
    service = VerifyService(SETTINGS, tasks=sets)
    await service.start()
    try:
        for line in warm:
            await service.verify(service.prepare(line))
        started = time.process_time()
        for line in lines:
            await service.verify(service.prepare(line))
        return (time.process_time() - started) / len(lines)
    finally:
        await service.aclose()


async def batch_cpu(lines: list[bytes], sets: TaskSets, warm: list[bytes]) -> float:
    engine = LocalEngine(SETTINGS, 1)  # one engine for both passes: its preflights stay cached

    async def run(chunk: list[bytes]) -> None:
        pairs = list(enumerate(chunk))
        async for _ in grade_indexed(pairs, settings=SETTINGS, tasks=sets, engine=engine):
            pass

    try:
        await run(warm)
        started = time.process_time()
        await run(lines)
        return (time.process_time() - started) / len(lines)
    finally:
        await engine.aclose()


def measure(rows: int, repeat: int = 3) -> dict[str, Any]:
    public = TaskSets([PUBLIC])
    out = {}
    for name, lines, sets in (
        ("inline", inline_lines(rows), TaskSets()),
        ("by id", by_id_lines(rows), public),
    ):
        warm = lines[: min(len(lines), 120)]  # every public task once: preflights cached
        server = min(asyncio.run(server_cpu(lines, sets, warm)) for _ in range(repeat))
        batch = min(asyncio.run(batch_cpu(lines, sets, warm)) for _ in range(repeat))
        out[name] = {
            "server_ms": round(1000 * server, 3),
            "batch_ms": round(1000 * batch, 3),
            "ratio": round(server / batch, 3),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = measure(args.rows, args.repeat)
    if args.json:
        print(json.dumps(result))
        return
    for name, numbers in result.items():
        print(
            f"{name:7s} server {numbers['server_ms']:8.3f} ms/row  "
            f"batch {numbers['batch_ms']:8.3f} ms/row  ratio {numbers['ratio']:.2f}"
        )


if __name__ == "__main__":
    main()
