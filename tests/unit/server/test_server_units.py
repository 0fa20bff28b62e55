"""The resources server's pieces without HTTP: aggregate metrics, the journal, reverify."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap

import pytest

from critpt_grader.commands.reverify import reverify
from critpt_grader.extract import extract
from critpt_grader.rows.metrics import aggregate, pass_majority
from critpt_grader.rows.rejected import RowRejected
from critpt_grader.rows.resolve import as_response, resolve_task
from critpt_grader.rows.tasksets import TaskSets
from critpt_grader.server.journal import Journal
from critpt_grader.server.service import VerifyService
from critpt_grader.settings import Settings
from tests.support.grading import HALF
from tests.support.paths import PUBLIC_FIXTURES
from tests.support.server_harness import completed, fenced

FAST = {"compare_in_process": True} if "compare_in_process" in Settings.model_fields else {}
SETTINGS = Settings(backend="in-process", **FAST)


def test_pass_at_k_is_the_unbiased_estimate_and_majority_votes_per_task():
    # Task A: 1 of 3 right; task B: 3 of 3 right.
    metrics = pass_majority([[1.0, 0.0, 0.0], [1.0, 1.0, 1.0]], [["a"] * 3, ["b"] * 3])
    assert metrics["pass@1/accuracy"] == pytest.approx(100 * (1 / 3 + 1) / 2)
    assert metrics["pass@2/accuracy"] == pytest.approx(100 * (2 / 3 + 1) / 2)  # 1 - C(2,2)/C(3,2)
    assert metrics["pass@3/accuracy"] == 100.0
    assert metrics["pass@1[avg-of-2]/accuracy"] == pytest.approx(100 * (0.5 + 1) / 2)
    assert metrics["majority@3/accuracy"] == pytest.approx(100 * (0.0 + 1) / 2)


def test_aggregate_counts_every_row_but_scores_only_scored_ones():
    rows = [
        {"problem_id": "p", "_ng_task_index": 0, "reward": 1.0, "category": "passed"},
        {"problem_id": "p", "_ng_task_index": 0, "reward": 0.0, "category": "provider_unavailable"},
        {"problem_id": "q", "_ng_task_index": 1, "reward": 0.0, "category": "comparator_uncertain"},
        {"problem_id": "r", "_ng_task_index": 2, "reward": 0.0, "category": "candidate_timeout"},
    ]
    out = aggregate(rows)
    agent = out["agent_metrics"]
    assert (agent["attempted"], agent["scored"], agent["unscorable"], agent["failure"]) == (
        4,
        2,
        1,
        1,
    )
    # Task q has no scored row: it sits out, it is not a 0.
    assert agent["pass@1/accuracy"] == 50.0
    assert out["key_metrics"]["pass@1/accuracy"] == 50.0
    assert [g["_ng_task_index"] for g in out["group_level_metrics"]] == [0, 1, 2]


def test_a_journaled_source_extracts_back_to_exactly_itself():
    for source in ("def f():\n    return 1", "s = '''\n```python\nx\n```\n'''\ndef f(): return s"):
        assert extract(as_response(source), entrypoint="f").source.strip() == source.strip()


def test_resolve_task_reads_containers_or_problem_id_and_names_faults():
    sets = TaskSets()
    task, task_row, key = resolve_task({**HALF, "_ng_task_index": 1, "extra": "x"}, sets)
    assert task.problem_id == "test-half" and key is None and "extra" not in task_row
    with pytest.raises(RowRejected) as bare:
        resolve_task({"reference_source": "def f(): pass", "entrypoint": "f", "oops": 1}, sets)
    assert bare.value.status == 422
    with pytest.raises(RowRejected) as unknown:
        resolve_task({"problem_id": "nope"}, sets)
    assert (unknown.value.status, unknown.value.body.problem_id) == (404, "nope")


def test_reverify_regrades_what_a_crash_left_and_nothing_else(tmp_path):
    journal = Journal(tmp_path)
    service = VerifyService(SETTINGS)
    right = service.prepare({**HALF, "response": fenced("def half(n):\n    return n / 2")})
    empty = service.prepare({**HALF, "response": completed("I do not know.")})
    # Left by a crash: accepted, never finished; and one the machine failed.
    crashed = journal.accept(
        problem_id="test-half",
        task_row=right.task_row,
        task_key=None,
        source=right.extraction.source,
    )
    outage = journal.accept(
        problem_id="test-half",
        task_row=right.task_row,
        task_key=None,
        source=right.extraction.source,
    )
    journal.finish(outage, "provider_unavailable", {})
    nothing = journal.accept(
        problem_id="test-half",
        task_row=empty.task_row,
        task_key=None,
        source=None,
        response=empty.body["response"],
    )
    done = journal.accept(
        problem_id="test-half", task_row=right.task_row, task_key=None, source="x"
    )
    journal.finish(done, "passed", {})
    assert journal.pending() == []  # this process owns them, and it is alive
    # The server that accepted them crashed: their owner is gone.
    journal._db.execute("UPDATE rows SET owner = ?", (f"another-boot:{os.getpid()}:1",))
    assert {row.id for row in journal.pending()} == {crashed, outage, nothing}

    summary = asyncio.run(reverify(journal, SETTINGS, None, jobs=2))
    assert summary["pending"] == summary["regraded"] == 3 and summary["unfinished"] == 0
    assert summary["by_category"] == {"passed": 2, "candidate_source_missing": 1}
    assert journal.verdict(crashed)["reward"] == 1.0
    assert journal.counts()["states"] == {"done": 4}
    journal.close()


def test_metrics_follow_input_order_not_completion_order():
    """The same verdicts in completion order and in input order give the same numbers."""
    import random

    rows = [
        {"problem_id": f"p{p}", "row": 10 * p + r, "reward": float((p + r) % 2), "category": c}
        for p in range(5)
        for r, c in enumerate(["passed", "candidate_mismatch", "passed", "candidate_mismatch"])
    ]
    for row in rows:
        row["category"] = "passed" if row["reward"] else "candidate_mismatch"
    shuffled = rows[:]
    random.Random(7).shuffle(shuffled)
    assert aggregate(shuffled)["agent_metrics"] == aggregate(rows)["agent_metrics"]
    gym = [{**r, "_ng_rollout_index": r["row"] % 10, "row": None} for r in rows]
    assert aggregate(gym[::-1])["agent_metrics"] == aggregate(rows)["agent_metrics"]


def test_k_stops_at_what_every_problem_supports():
    rows = [{"problem_id": "a", "reward": 1.0, "category": "passed"}] * 4 + [
        {"problem_id": "b", "reward": 0.0, "category": "candidate_mismatch"},
        {"problem_id": "b", "reward": 1.0, "category": "passed"},
    ]
    agent = aggregate(rows)["agent_metrics"]
    assert "pass@3/accuracy" not in agent  # b has two scored rollouts: k stops at 2
    assert agent["problems@2"] == 2 and agent["pass@2/accuracy"] == 100.0
    assert aggregate(rows)["key_metrics"]["problems@2"] == 2


OWNER = textwrap.dedent(
    """
    import sys
    from critpt_grader.server.journal import Journal
    journal = Journal(sys.argv[1])
    row = journal.accept(problem_id="test-half", task_row=None, task_key="k", source="x")
    print(row, flush=True)
    sys.stdin.readline()  # alive, "grading", until the test lets it go
    """
)


def test_reverify_beside_a_live_owner_takes_only_orphans(tmp_path):
    """A row accepted by a live process is left to it; once that process is gone, it is an
    orphan, and a claimed row is not taken twice."""
    live = subprocess.Popen(
        [sys.executable, "-c", OWNER, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        live_row = live.stdout.readline().strip()
        journal = Journal(tmp_path)
        orphan = journal.accept(problem_id="test-half", task_row=None, task_key="k", source="x")
        journal._db.execute("UPDATE rows SET owner = 'another-boot:1:1' WHERE id = ?", (orphan,))
        assert [row.id for row in journal.pending()] == [orphan]
        assert journal.in_flight() == 1  # the live process's row
        (row,) = journal.pending()
        assert journal.claim(row) and not journal.claim(row)  # the second claim loses
        assert journal.pending() == []
    finally:
        live.communicate("\n", timeout=60)
    assert [row.id for row in journal.pending()] == [live_row]  # its owner is gone now
    journal.close()


def test_the_accuracy_interval_is_clustered_by_problem():
    """Rollouts of one problem are not independent: ten problems each solved always or never
    give a wider interval than 100 independent rollouts with the same mean."""
    from critpt_grader.rows.metrics import clustered_interval

    solid = [[1.0] * 10 if p % 2 else [0.0] * 10 for p in range(10)]
    mixed = [[1.0, 0.0] * 5 for _ in range(10)]
    low, high = clustered_interval(solid)
    assert low < 0.5 < high and high - low > 0.6
    narrow = clustered_interval(mixed)
    assert narrow == (0.5, 0.5)  # every problem sits at the mean: no spread between problems
    assert clustered_interval([[1.0, 0.0]]) is None  # one problem: no interval
    rows = [
        {"problem_id": f"p{p}", "reward": r, "category": "passed" if r else "candidate_mismatch"}
        for p, rewards in enumerate(solid)
        for r in rewards
    ]
    agent = aggregate(rows)["agent_metrics"]
    assert agent["accuracy/ci95_low"] == pytest.approx(100 * low)


def test_an_acceptance_set_folder_is_its_tasks_not_its_candidates(tmp_path):
    from critpt_grader.rows.tasksets import TaskSets, task_files

    public = PUBLIC_FIXTURES
    assert task_files(public) == [public / "tasks.jsonl"]
    assert len(TaskSets([public])) == 104
    (tmp_path / "a.jsonl").write_text((public / "tasks.jsonl").read_text().splitlines()[0] + "\n")
    assert task_files(tmp_path) == [tmp_path / "a.jsonl"]


def test_a_key_left_unfinished_by_a_dead_server_is_bound_to_its_body(tmp_path):
    """Issue 30, item 1, after a restart: the row a dead server left under a key is taken back
    by the same body only; another body is refused, naming where the first stands, and a row
    journaled before bodies were bound (no hash) is never handed to anyone."""
    settings = Settings(backend="in-process", server_regrade_orphans=False, **FAST)
    right_body = {**HALF, "response": fenced("def half(n):\n    return n / 2")}
    wrong_body = {**HALF, "response": fenced("def half(n):\n    return n / 3")}

    async def go():
        service = VerifyService(settings, journal_dir=tmp_path)
        await service.start()
        try:
            right = service.prepare(right_body, "k-1")
            left = service.journal.accept(
                problem_id="test-half",
                task_row=right.task_row,
                task_key=None,
                source=right.extraction.source,
                request_key="k-1",
                request_hash=right.request_hash,
            )
            legacy = service.journal.accept(
                problem_id="test-half", task_row=right.task_row, task_key=None, source="x"
            )
            db = service.journal._db
            db.execute("UPDATE rows SET request_key = 'k-2' WHERE id = ?", (legacy,))
            db.execute("UPDATE rows SET owner = 'another-boot:1:1'")
            with pytest.raises(RowRejected) as reused:
                await service.verify(service.prepare(wrong_body, "k-1"))
            with pytest.raises(RowRejected) as old:
                await service.verify(service.prepare(right_body, "k-2"))
            out = await service.verify(right)
            return reused.value, old.value, out, left, service.journal.counts()
        finally:
            await service.aclose()

    reused, old, out, left, counts = asyncio.run(go())
    assert (reused.status, reused.body.category) == (422, "idempotency_key_reused")
    assert reused.body.first_request == "from_before_restart"
    assert old.body.first_request == "from_before_restart"
    assert out["critpt_grader"]["row_id"] == left and out["reward"] == 1.0
    assert counts["rows"] == 2  # the refused requests wrote nothing


def test_without_a_journal_a_key_is_bound_for_the_servers_life():
    async def go():
        service = VerifyService(SETTINGS)
        await service.start()
        try:
            body = {**HALF, "response": fenced("def half(n):\n    return n / 2")}
            first = await service.verify(service.prepare(body, "k"))
            wrong = {**HALF, "response": fenced("def half(n):\n    return n / 3")}
            with pytest.raises(RowRejected) as reused:
                await service.verify(service.prepare(wrong, "k"))
            again = await service.verify(service.prepare(body, "k"))  # graded again: no journal
            return first, reused.value, again
        finally:
            await service.aclose()

    first, reused, again = asyncio.run(go())
    assert first["reward"] == again["reward"] == 1.0
    assert reused.body.first_request == "graded"
