"""Shared test fixtures, and the suite's two lanes.

The fast lane is every test marked neither ``sandbox`` nor ``slow``; the slow lane is the
rest. A run orders itself fast lane first (each lane keeps its collection order), and when a
fast-lane test has failed it stops before the slow lane, saying so: a broken core is reported
in minutes, not after the sandbox tests. ``--slow-lane-anyway`` runs the slow lane regardless.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.paths import CRITPT_PUBLIC, EXAMPLE_ROWS

SLOW_MARKS = ("sandbox", "slow")
STOP_MESSAGE = (
    "{failed} fast-lane test(s) failed: the slow lane (sandbox/slow, {slow} tests) was not run"
    " (--slow-lane-anyway runs it regardless)"
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--slow-lane-anyway",
        action="store_true",
        help="run the slow lane (sandbox/slow tests) even after a fast-lane test failed",
    )


def in_slow_lane(item: pytest.Item) -> bool:
    return any(item.get_closest_marker(mark) is not None for mark in SLOW_MARKS)


@pytest.hookimpl(trylast=True)  # after -m, -k and other plugins have deselected
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # A stable partition: each lane keeps the order it was collected in.
    items[:] = [i for i in items if not in_slow_lane(i)] + [i for i in items if in_slow_lane(i)]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    result = yield
    session = item.session
    # The last fast-lane test has run and the slow lane is next: every failure so far is the
    # fast lane's (the lanes are not interleaved).
    crossing = not in_slow_lane(item) and nextitem is not None and in_slow_lane(nextitem)
    if crossing and session.testsfailed and not item.config.getoption("--slow-lane-anyway"):
        slow = sum(1 for each in session.items if in_slow_lane(each))
        session.shouldstop = STOP_MESSAGE.format(failed=session.testsfailed, slow=slow)
    return result


@pytest.fixture
def example_rows_path() -> Path:
    if not EXAMPLE_ROWS.exists():
        pytest.skip(f"shared reference rows absent ({EXAMPLE_ROWS})")
    return EXAMPLE_ROWS


@pytest.fixture
def critpt_public() -> Path:
    if not CRITPT_PUBLIC.exists():
        pytest.skip(f"CritPt public data absent ({CRITPT_PUBLIC})")
    return CRITPT_PUBLIC
