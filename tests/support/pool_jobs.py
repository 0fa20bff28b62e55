"""Jobs for the comparison worker pool's tests (each run as "tests.support.pool_jobs:NAME")."""

from __future__ import annotations

import os


def echo(value):
    return value


def spin():
    while True:
        pass


def streams_then_spins():
    yield 1
    yield 2
    spin()


def eat_memory():
    hoard = []
    while True:
        hoard.append(bytearray(64 << 20))


def die():
    os._exit(3)


def registry_state() -> tuple[int, list[str]]:
    """Whether this worker found the pint unit registry built, and its threads."""
    import threading

    from critpt_grader.policy.units import _registry

    return _registry.cache_info().currsize, [t.name for t in threading.enumerate()]
