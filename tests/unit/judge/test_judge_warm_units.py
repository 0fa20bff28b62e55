"""The comparison workers' zygote builds the pint unit registry once, after its first worker
and a moment idle: that worker starts without waiting for it, every later one starts with it."""

from __future__ import annotations

import time

from critpt_grader.judge.pool import Budget, WorkerPool
from critpt_grader.judge.row import WARMUP

REGISTRY_STATE = "tests.support.pool_jobs:registry_state"


def test_workers_after_the_first_find_the_unit_registry_built_and_no_stray_thread():
    budget = Budget(cpu_seconds=5.0, memory_mb=1024)
    with WorkerPool(budget, workers=2, warmup=WARMUP) as pool:
        first = pool.run(REGISTRY_STATE, ())
        assert first.finished, first
        assert first.value == (0, ["MainThread"])  # it did not wait for the registry
        pool._spawn().kill()
        # Polled with a generous deadline: each fork restarts the zygote's idle second, so
        # the polls are spaced wider than it; once built, every later worker has it.
        deadline = time.monotonic() + 120
        while True:
            time.sleep(1.5)
            worker = pool._spawn()
            try:
                worker.conn.send((REGISTRY_STATE, (), 5.0))
                kind, (value, _, _) = worker.conn.recv()
            finally:
                worker.kill()
            if value[0] == 1 or time.monotonic() > deadline:
                break
    assert (kind, value) == ("done", (1, ["MainThread"]))
