"""Fair comparison under hostile load (issue 30, item 3): a first pass in a fast lane, costly
comparisons on in a slow lane of fewer, lower-priority workers, waiters served round-robin by
client (judge.lanes, judge.row, judge.pool). Ordered by events, never by sleeps or timings."""

from __future__ import annotations

import asyncio
import os

import pytest

from critpt_grader.judge.lanes import FairSlots, client
from critpt_grader.judge.pool import Budget, WorkerPool
from critpt_grader.judge.row import SLOW_NICE
from critpt_grader.pipeline import Grader
from critpt_grader.settings import Settings
from tests.support.wire import HALF, UNDECIDED, WireBackend, response, task


def test_waiters_are_served_round_robin_by_client_then_by_task():
    async def go():
        slots = FairSlots(1)
        order: list[str] = []
        await slots.acquire("a", "t1")  # held: everyone below waits

        async def one(who: str, task: str, name: str):
            async with slots.slot(who, task):
                order.append(name)

        waiting = [("a", "t1", "a0"), ("a", "t1", "a1"), ("a", "t2", "a2")]
        waiting += [("b", "t1", "b0"), ("c", "", "c0"), ("b", "t1", "b1")]
        waiters = [asyncio.ensure_future(one(*w)) for w in waiting]
        while slots.waiting < len(waiting):
            await asyncio.sleep(0)
        slots.release("a", "t1")
        await asyncio.gather(*waiters)
        return order

    # a, b, c, then a's other task, b again, then a's first task again
    assert asyncio.run(go()) == ["a0", "b0", "c0", "a2", "b1", "a1"]


def test_a_cancelled_waiter_leaves_and_a_slot_is_never_lost():
    async def go():
        slots = FairSlots(1)
        await slots.acquire("a")
        gone = asyncio.ensure_future(slots.acquire("a"))
        kept = asyncio.ensure_future(slots.acquire("b"))
        while slots.waiting < 2:
            await asyncio.sleep(0)
        gone.cancel()
        slots.release("a")
        await kept
        slots.release("b")
        assert (slots.busy, slots.waiting) == (0, 0)
        with pytest.raises(asyncio.CancelledError):
            await gone

    asyncio.run(go())


def test_one_clients_task_never_holds_every_slot_of_a_capped_lane():
    async def go():
        slots = FairSlots(2, per_group=1)
        await slots.acquire("a", "costly")
        second = asyncio.ensure_future(slots.acquire("a", "costly"))
        while slots.waiting < 1:
            await asyncio.sleep(0)
        assert slots.busy == 1 and not second.done()  # a free slot, kept for other tasks
        await slots.acquire("a", "honest")  # at once
        slots.release("a", "costly")
        await second  # its turn once the first of its task is done
        assert slots.busy == 2

    asyncio.run(go())


def niceness() -> int:
    return os.nice(0)


def test_a_job_runs_in_a_worker_of_its_niceness():
    with WorkerPool(Budget(cpu_seconds=5.0, memory_mb=400), workers=2) as pool:
        base = os.nice(0)
        assert pool.run(f"{__name__}:niceness", ()).value == base
        slow = Budget(cpu_seconds=5.0, memory_mb=400, nice=SLOW_NICE)
        assert pool.run(f"{__name__}:niceness", (), slow).value == min(base + SLOW_NICE, 19)
        assert pool.run(f"{__name__}:niceness", ()).value == base  # not the slow worker
        # Full (two workers, one of each): a third niceness takes an idle worker's place.
        other = Budget(cpu_seconds=5.0, memory_mb=400, nice=3)
        assert pool.run(f"{__name__}:niceness", (), other).value == min(base + 3, 19)


# Five cases of three undecidable leaves (> 1 s each): far past a 1.5 s row budget.
COSTLY = (
    task(["tuple", [["symbolic", "20"]] * 3], cases=5),
    response(["tuple", [["symbolic", UNDECIDED]] * 3]),
)


def lanes(first: float) -> Settings:
    return Settings(
        backend="in-process",
        compare_seconds=1.5,
        compare_workers=1,
        compare_slow_workers=1,
        compare_first_pass_seconds=first,
    )


def test_an_honest_row_is_not_held_up_by_a_costly_one():
    """With one fast and one slow worker: while a costly row spends its budget in the slow
    lane, honest rows (their own and another client's) are judged in the fast lane."""

    async def go():
        async with Grader(lanes(0.3), backend=WireBackend()) as grader:
            honest = task(HALF)
            assert (await grader.grade(honest, response(HALF))).reward == 1.0  # warm
            await grader.grade(COSTLY[0], response(["tuple", [["symbolic", "20"]] * 3]))
            client.set("hostile")
            costly = asyncio.ensure_future(grader.grade(*COSTLY))
            slow = grader.judging._lane(True)
            while slow.busy == 0:  # past its first pass, in the slow lane
                assert not costly.done()
                await asyncio.sleep(0.01)
            answers = []
            for who in ("hostile", "honest"):
                client.set(who)
                answers.append(await grader.grade(honest, response(HALF)))
                assert not costly.done(), "the honest row waited for the costly one"
            return answers, await costly

    answers, costly = asyncio.run(asyncio.wait_for(go(), 300))
    assert [a.category for a in answers] == ["passed", "passed"]
    assert costly.category == "comparator_uncertain", costly.reason
    assert "needed more than the row's budget" in costly.reason


def test_lanes_never_change_a_verdict():
    """The same rows graded in one lane and in two (a costly row, a right one, a wrong one):
    the same categories and case statuses; the costly row's case has, in the slow lane, the
    budget it would have had in one."""
    mixed = task(["tuple", [["symbolic", "20"]] * 3], cases=5)
    rows = [
        COSTLY,
        (task(HALF), response(HALF)),
        (mixed, response(["tuple", [["symbolic", "21"]] * 3])),
    ]

    async def grade_all(settings: Settings):
        async with Grader(settings, backend=WireBackend()) as grader:
            return [await grader.grade(*row) for row in rows]

    one = asyncio.run(grade_all(lanes(0)))
    two = asyncio.run(grade_all(lanes(0.3)))
    assert [r.category for r in one] == [r.category for r in two]
    assert [[c.status for c in r.cases] for r in one] == [[c.status for c in r.cases] for r in two]
