"""Comparison workers start with the pint unit registry built (in their zygote's warm-up)."""

from __future__ import annotations

from critpt_grader.judge.pool import Budget, WorkerPool
from critpt_grader.judge.row import WARMUP


def registry_state() -> tuple[int, list[str]]:
    import threading

    from critpt_grader.policy.units import _registry

    return _registry.cache_info().currsize, [t.name for t in threading.enumerate()]


def test_a_worker_finds_the_unit_registry_built_and_no_stray_thread():
    with WorkerPool(Budget(cpu_seconds=5.0, memory_mb=1024), workers=1, warmup=WARMUP) as pool:
        outcome = pool.run("tests.test_judge_warm_units:registry_state", ())
    assert outcome.finished, outcome
    built, threads = outcome.value
    assert built == 1
    assert threads == ["MainThread"]
