"""The comparison workers' zygote builds the pint unit registry once, after its first worker
and a moment idle: that worker starts without waiting for it, every later one starts with it."""

from __future__ import annotations

import time

from critpt_grader.judge.pool import Budget, WorkerPool
from critpt_grader.judge.row import WARMUP


def registry_state() -> tuple[int, list[str]]:
    import threading

    from critpt_grader.policy.units import _registry

    return _registry.cache_info().currsize, [t.name for t in threading.enumerate()]


def test_workers_after_the_first_find_the_unit_registry_built_and_no_stray_thread():
    budget = Budget(cpu_seconds=5.0, memory_mb=1024)
    with WorkerPool(budget, workers=2, warmup=WARMUP) as pool:
        first = pool.run("tests.test_judge_warm_units:registry_state", ())
        assert first.finished, first
        assert first.value == (0, ["MainThread"])  # it did not wait for the registry
        time.sleep(2.0)  # idle past _LATER_AFTER_IDLE: the zygote builds the registry
        pool._spawn().kill()
        second = pool._spawn()
        try:
            second.conn.send(("tests.test_judge_warm_units:registry_state", (), 5.0))
            reply = second.conn.recv()
        finally:
            second.kill()
    kind, (value, _, _) = reply
    assert (kind, value) == ("done", (1, ["MainThread"]))
