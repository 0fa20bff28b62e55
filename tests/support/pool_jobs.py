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
