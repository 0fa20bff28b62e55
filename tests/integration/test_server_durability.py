"""No row lost (issue 11, item 5): 40 rows in flight on a real server with real sandboxes,
``kill -9``, restart, ``critpt-grader reverify``: every accepted row ends with a verdict, and no
sandbox process or cgroup of the killed server is left behind."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.support.grading import task_row, value_case
from tests.support.paths import REPO
from tests.support.server_harness import RunningServer, descendants, fenced

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

ROWS = 40
TASK = task_row(
    "def triple(n):\n    return 3 * n\n",
    "triple",
    [value_case([["int", "2"]], ["int", "6"])],
)
# Slow enough that the 40 rows are still grading when the server is killed.
ANSWER = fenced("import time\n\ndef triple(n):\n    time.sleep(0.5)\n    return n * 3")


def alive(pids: set[int]) -> set[int]:
    return {p for p in pids if Path(f"/proc/{p}").exists()}


def cgroups_of(pid: int) -> list[str]:
    """Sandbox cgroups created by process ``pid`` (``critpt-<pid>-...``), v1 or v2."""
    found = []
    for root, dirs, _ in os.walk("/sys/fs/cgroup"):
        if root.count("/") > 7:
            dirs[:] = []
            continue
        found += [f"{root}/{d}" for d in dirs if d.startswith(f"critpt-{pid}-")]
    return found


def journal_states(folder: Path) -> dict[str, int]:
    with sqlite3.connect(folder / "journal.sqlite3") as db:
        return dict(db.execute("SELECT state, COUNT(*) FROM rows GROUP BY state").fetchall())


def send_rows(url: str, stop: threading.Event) -> None:
    async def go():
        async with httpx.AsyncClient(base_url=url, timeout=120) as http:
            sent = [
                http.post("/verify", json={**TASK, "response": ANSWER, "_ng_task_index": i})
                for i in range(ROWS)
            ]
            await asyncio.gather(*sent, return_exceptions=True)  # the server dies under them

    asyncio.run(go())
    stop.set()


def kill_with_rows_in_flight(journal: Path) -> tuple[RunningServer, set[int]]:
    """Start a server on ``journal``, send :data:`ROWS` rows, and ``kill -9`` it once every
    row is journaled and most are still grading; the killed server and its children."""
    server = RunningServer("--journal", str(journal)).start()
    try:
        done = threading.Event()
        clients = threading.Thread(target=send_rows, args=(server.url, done), daemon=True)
        clients.start()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if journal.exists() and sum(journal_states(journal).values()) == ROWS:
                break
            time.sleep(0.05)
        states = journal_states(journal)
        assert sum(states.values()) == ROWS, states  # every row accepted (journaled)
        assert states.get("accepted", 0) > ROWS // 2, states  # most still grading
        children = descendants(server.pid)
        assert children, "the server runs sandboxes and comparison workers"
        server.kill()
    finally:
        server.stop()
    clients.join(60)
    assert done.is_set()
    return server, children


def test_kill_9_with_40_rows_in_flight_then_restart_and_reverify_loses_none(tmp_path):
    journal = tmp_path / "journal"
    server, children = kill_with_rows_in_flight(journal)

    # kill -9 leaves no process behind: sandboxes die with their parent, workers with theirs.
    deadline = time.monotonic() + 20
    while alive(children) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(children), alive(children)

    # Restart on the same journal, leaving the orphans to reverify: it starts, says rows
    # wait, and takes new rows.
    no_regrade = {"CRITPT_GRADER_SERVER_REGRADE_ORPHANS": "0"}
    with RunningServer("--journal", str(journal), env=no_regrade) as again:
        fresh = httpx.post(
            f"{again.url}/verify", json={**TASK, "response": ANSWER}, timeout=120
        ).json()
        assert fresh["reward"] == 1.0
        assert "need re-verification" in again.output()
    unfinished_before = sum(n for state, n in journal_states(journal).items() if state != "done")
    assert unfinished_before > 0

    reverify = subprocess.run(
        [sys.executable, "-m", "critpt_grader.cli", "reverify", str(journal), "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert reverify.returncode == 0, reverify.stderr
    summary = json.loads(reverify.stdout)
    assert summary["rows"] == ROWS + 1
    assert summary["regraded"] == unfinished_before == summary["pending"]
    assert summary["unfinished"] == 0 and summary["by_category"] == {"passed": unfinished_before}
    with sqlite3.connect(journal / "journal.sqlite3") as db:
        verdicts = db.execute("SELECT state, category, COUNT(*) FROM rows GROUP BY 1, 2").fetchall()
    assert verdicts == [("done", "passed", ROWS + 1)]  # none lost

    # The killed server's cgroups were swept by the next grader to start a sandbox.
    assert cgroups_of(server.pid) == []
    server.log.unlink(missing_ok=True)
    # A second reverify finds nothing to do.
    again = subprocess.run(
        [sys.executable, "-m", "critpt_grader.cli", "reverify", str(journal), "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert json.loads(again.stdout) == {
        "rows": ROWS + 1,
        "pending": 0,
        "regraded": 0,
        "unfinished": 0,
        "in_flight": 0,
        "by_category": {},
        "missing_tasks": [],
    }


def test_a_restarted_server_regrades_what_a_killed_one_left(tmp_path):
    """kill -9 with rows in flight, then a plain restart: the new server takes the orphaned
    rows itself (each claimed, same row ids); nothing is left for reverify."""
    journal = tmp_path / "journal"
    kill_with_rows_in_flight(journal)
    with RunningServer("--journal", str(journal)) as again:
        deadline = time.monotonic() + 240
        while journal_states(journal) != {"done": ROWS} and time.monotonic() < deadline:
            time.sleep(0.1)
        assert journal_states(journal) == {"done": ROWS}  # none lost, none doubled
        assert "re-grading" in again.output()
    with sqlite3.connect(journal / "journal.sqlite3") as db:
        categories = db.execute("SELECT category, COUNT(*) FROM rows GROUP BY 1").fetchall()
    assert categories == [("passed", ROWS)]
    left = subprocess.run(
        [sys.executable, "-m", "critpt_grader.cli", "reverify", str(journal), "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert json.loads(left.stdout)["pending"] == 0
