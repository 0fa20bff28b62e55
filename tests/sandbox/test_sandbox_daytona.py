"""The Daytona backend on the real ``daytona`` SDK, against a loopback stand-in of the HTTP
endpoints the SDK calls (tests/support/daytona_standin.py — not Daytona; commands run in local
bubblewrap PID namespaces). Skipped when the SDK (the ``daytona`` extra) is not installed.

The contract suite runs against it, then the provider's faults: each is ``unavailable``
(``provider_unavailable`` once graded), never a score, and a later sweep deletes what was
left behind. A live run against Daytona itself needs ``DAYTONA_API_KEY`` (see the end).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

import critpt_grader

pytest.importorskip("daytona", reason="the daytona extra is not installed")
pytest.importorskip("uvicorn", reason="the stand-in needs the server extra")
pytest.importorskip("fastapi", reason="the stand-in needs the server extra")

from critpt_grader.pipeline import Grader
from critpt_grader.sandbox import make_backend
from critpt_grader.sandbox.base import Limits
from critpt_grader.sandbox.containment import bwrap_works
from critpt_grader.sandbox.daytona import (
    LABEL_OWNER,
    LABEL_ROLE,
    LABEL_RUN,
    DaytonaBackend,
    DaytonaSettings,
)
from critpt_grader.sandbox.journal import OwnershipJournal
from critpt_grader.settings import Settings
from critpt_grader.verdict import DISPOSITIONS, Category
from tests.support.backend_contract import (
    VALUES,
    BackendContract,
    call,
    job,
    processes_mentioning,
)
from tests.support.daytona_standin import RUNS_AS_ROOT, Faults, StandIn, _runtime_under_tmp
from tests.support.grading import HALF, answer

pytestmark = [
    pytest.mark.sandbox,  # the stand-in runs every command under bubblewrap
    pytest.mark.slow,  # about a minute in all
    pytest.mark.skipif(
        shutil.which("bwrap") is None or not bwrap_works(),
        reason="the stand-in runs commands under bubblewrap",
    ),
    pytest.mark.skipif(
        not RUNS_AS_ROOT, reason="the stand-in runs commands as root, as Daytona does"
    ),
]
# The unprivileged user the runner drops to: Daytona images have "daytona"; this host the
# sandbox user.
USER = Settings().local.sandbox_user

SETTINGS = Settings(backend="daytona", compare_in_process=True, max_concurrent_sandboxes=4)


@pytest.fixture(scope="module")
def standin():
    with StandIn() as server:
        yield server


@pytest.fixture(autouse=True)
def fresh_faults(standin):
    standin.faults = Faults()
    yield
    standin.faults = Faults()


def daytona_settings(url: str, journal: Path, **overrides) -> DaytonaSettings:
    values = {
        "api_key": "stand-in",
        "api_url": url,
        "python": sys.executable,
        # This checkout's package, which the dropped user can read (not the venv's install).
        "pythonpath": str(Path(critpt_grader.__file__).resolve().parents[1]),
        "os_user": USER,
        "journal_dir": str(journal),
        "owner": "critpt-tests",
        "request_seconds": 2.0,
        "poll_seconds": 0.05,
        "grace_seconds": 5.0,
        **overrides,
    }
    return DaytonaSettings(**values)


def run_jobs(backend, *jobs):
    async def go():
        async with backend:
            return await asyncio.gather(*(backend.run(j) for j in jobs))

    return asyncio.run(go())


class TestDaytona(BackendContract):
    @pytest.fixture(autouse=True)
    def _server(self, standin, tmp_path):
        self.standin, self.journal = standin, tmp_path / "journal"

    def make(self) -> DaytonaBackend:
        return DaytonaBackend(SETTINGS, daytona=daytona_settings(self.standin.url, self.journal))

    def make_faulty(self) -> DaytonaBackend:
        # Nothing listens there: every call of the SDK fails to connect.
        config = daytona_settings("http://127.0.0.1:9", self.journal, create_seconds=2)
        return DaytonaBackend(SETTINGS, daytona=config)

    def leftovers(self, marker: str) -> list[str]:
        running = self.standin.running_commands()
        return [*self.standin.live(), *processes_mentioning(marker)] + (
            [f"{running} commands running"] if running else []
        )


# --- what a sandbox is made with ---------------------------------------------------------


def test_sandboxes_are_ephemeral_blocked_labelled_and_one_per_job(standin, tmp_path):
    backend = DaytonaBackend(SETTINGS, daytona=daytona_settings(standin.url, tmp_path))
    seen = []
    reference = job(VALUES, call(1), role="reference")
    candidate = job(VALUES, call(2))
    before = set(standin.deleted)
    outcomes = run_jobs(backend, reference, candidate)
    assert [o.status for o in outcomes] == ["ok", "ok"]
    created = [name for name in standin.deleted if name not in before]
    assert len(created) == 2  # a sandbox per job, each deleted
    assert standin.live() == []
    bodies = standin.created_bodies[-2:]
    for body in bodies:
        seen.append(body["labels"][LABEL_ROLE])
        assert body["networkBlockAll"] is True
        assert body["autoDeleteInterval"] == 0  # ephemeral
        assert body["autoStopInterval"] == 5 and body["ttlMinutes"] == 30
        assert body["user"] == USER  # Daytona still runs commands as root: see below
        assert body["labels"][LABEL_OWNER] == "critpt-tests"
        assert body["labels"][LABEL_RUN] == backend.run_id
        assert (body["cpu"], body["memory"], body["disk"]) == (1, 2, 3)
    assert sorted(seen) == ["candidate", "reference"]
    journal = OwnershipJournal(tmp_path)
    assert {e.state for e in journal.entries()} == {"deleted"}


def test_the_candidate_sandbox_holds_only_the_job_file_and_the_nonce_is_unreadable(
    standin, tmp_path
):
    source = "import os\ndef f(x):\n    return sorted(os.listdir('/tmp'))\n"
    (outcome,) = run_jobs(
        DaytonaBackend(SETTINGS, daytona=daytona_settings(standin.url, tmp_path)),
        job(source, call(0)),
    )
    from critpt_grader import codec

    assert outcome.status == "ok"
    # The job file was unlinked first. A checkout or venv under the host's /tmp (CI clones
    # there) is bound back into the stand-in's /tmp: the folder leading to it is all it shows.
    runtime = {part for bind in _runtime_under_tmp()[2::3] for part in Path(bind).parts[2:3]}
    assert set(codec.decode(outcome.cases[0].value)) == runtime


# --- never root, though Daytona runs every command as root ----------------------------------

IDS = "import os\ndef f(x):\n    return [*os.getresuid(), *os.getresgid()]\n"


def test_the_runner_drops_root_itself(standin, tmp_path):
    from critpt_grader import codec

    (outcome,) = run_jobs(
        DaytonaBackend(SETTINGS, daytona=daytona_settings(standin.url, tmp_path)), job(IDS, call(0))
    )
    assert outcome.status == "ok", outcome.detail
    ids = codec.decode(outcome.cases[0].value)
    assert 0 not in ids and len(set(ids[:3])) == 1, ids  # uids and gids, none of them root


@pytest.mark.parametrize("user", ["root", "no-such-user-critpt"])
def test_a_user_it_cannot_drop_to_is_unavailable_never_a_score(standin, tmp_path, user):
    (outcome,) = run_jobs(
        DaytonaBackend(SETTINGS, daytona=daytona_settings(standin.url, tmp_path, os_user=user)),
        job(IDS, call(0)),
    )
    assert outcome.status == "unavailable" and outcome.cases == [], outcome.detail


def test_a_runner_left_as_root_refuses_the_job_from_inside(standin, tmp_path, monkeypatch):
    """What the stand-in proves: without the drop the command runs as root (as Daytona's
    would), and the runner, checking from inside before the job, refuses."""
    from critpt_grader.sandbox import daytona as module

    drop = module.DROP_SCRIPT[module.DROP_SCRIPT.index("exec setpriv") :]
    monkeypatch.setattr(module, "DROP_SCRIPT", module.DROP_SCRIPT.replace(drop, 'exec "$@"\n'))
    backend = DaytonaBackend(SETTINGS, daytona=daytona_settings(standin.url, tmp_path))
    (outcome,) = run_jobs(backend, job(IDS, call(0)))
    assert outcome.status == "unavailable" and "uid/gid 0" in outcome.detail, outcome.detail
    assert outcome.cases == []


def test_made_by_name(tmp_path, monkeypatch):
    monkeypatch.setenv("CRITPT_GRADER_DAYTONA_JOURNAL_DIR", str(tmp_path))
    monkeypatch.setenv("CRITPT_GRADER_DAYTONA_SNAPSHOT", "critpt-runtime")
    backend = make_backend("daytona", SETTINGS)
    assert isinstance(backend, DaytonaBackend)
    assert backend.config.snapshot == "critpt-runtime"
    params = backend._params("n", "j", "candidate")
    assert params.snapshot == "critpt-runtime" and params.network_block_all is True


# --- the provider's faults ---------------------------------------------------------------


def fault_run(standin, tmp_path, limits: Limits | None = None, **config):
    backend = DaytonaBackend(SETTINGS, daytona=daytona_settings(standin.url, tmp_path, **config))
    kwargs = {"limits": limits} if limits else {}
    (outcome,) = run_jobs(backend, job(VALUES, call(1), **kwargs))
    return outcome, backend


def test_create_fails_is_unavailable(standin, tmp_path):
    standin.faults.create_fails = 1
    outcome, _ = fault_run(standin, tmp_path)
    assert outcome.status == "unavailable" and "create" in outcome.detail
    assert outcome.cases == []


@pytest.mark.parametrize("how", ["never", "missing"])
def test_no_exit_code_by_the_deadline_is_unavailable(standin, tmp_path, how):
    standin.faults.exit_code = how
    limits = Limits(wall_seconds=2, case_seconds=1)
    outcome, _ = fault_run(standin, tmp_path, limits, grace_seconds=1.0)
    assert outcome.status == "unavailable" and "no exit code" in outcome.detail
    assert standin.live() == []


def test_an_exit_code_that_is_not_an_integer_is_unavailable(standin, tmp_path):
    standin.faults.exit_code = "garbage"
    outcome, _ = fault_run(standin, tmp_path)
    assert outcome.status == "unavailable"
    assert outcome.cases == []


def test_a_poll_that_drops_or_fails_is_retried(standin, tmp_path):
    standin.faults.poll_stalls, standin.faults.poll_errors = 1, 2
    standin.faults.stall_seconds = 3.0  # past the 2 s bound of one poll
    outcome, _ = fault_run(standin, tmp_path)
    assert outcome.status == "ok"


def test_polls_failing_until_the_deadline_are_unavailable(standin, tmp_path):
    standin.faults.poll_errors = 10_000
    limits = Limits(wall_seconds=2, case_seconds=1)
    outcome, _ = fault_run(standin, tmp_path, limits, grace_seconds=1.0)
    assert outcome.status == "unavailable" and "bad gateway" in outcome.detail


def test_delete_fails_then_the_sweep_deletes_it(standin, tmp_path):
    standin.faults.delete_fails = 100
    outcome, _ = fault_run(standin, tmp_path, sweep=False)
    # Unconfirmed delete: infrastructure trouble, retried, never a score.
    assert outcome.status == "unavailable" and "delete" in outcome.detail
    assert not outcome.cases
    left = standin.live()
    assert len(left) == 1
    journal = OwnershipJournal(tmp_path)
    assert [e.name for e in journal.entries(pending=True)] == left
    standin.faults.delete_fails = 0
    # A later grader (another run) sweeps at start.
    later = DaytonaBackend(SETTINGS, daytona=daytona_settings(standin.url, tmp_path))
    run_jobs(later, job(VALUES, call(1)))
    assert standin.live() == []
    assert journal.entries(pending=True) == []


def test_the_sweep_spares_a_live_run_and_other_owners(standin, tmp_path):
    standin.faults.delete_fails = 100
    fault_run(standin, tmp_path, sweep=False)
    fault_run(standin, tmp_path, sweep=False, owner="someone-else")
    standin.faults.delete_fails = 0
    journal = OwnershipJournal(tmp_path)
    mine = [e for e in journal.entries(pending=True) if e.owner == "critpt-tests"]
    journal.start_run(mine[0].run)  # as if that grader were still running (this pid)

    async def sweep():
        async with DaytonaBackend(
            SETTINGS, daytona=daytona_settings(standin.url, tmp_path, sweep=False)
        ) as backend:
            return await backend.sweep()

    assert asyncio.run(sweep()) == []
    journal.end_run(mine[0].run)
    assert asyncio.run(sweep()) == [mine[0].name]
    others = [name for name in standin.live()]
    assert len(others) == 1  # someone else's is not ours to delete
    for box in list(standin.boxes.values()):
        standin._destroy(box)


# --- graded through the pipeline ---------------------------------------------------------


def grade(standin, tmp_path, response, **config):
    backend = DaytonaBackend(SETTINGS, daytona=daytona_settings(standin.url, tmp_path, **config))

    async def go():
        async with backend, Grader(SETTINGS, backend) as grader:
            return await grader.grade(HALF, response)

    return asyncio.run(go())


def test_graded_through_daytona(standin, tmp_path):
    assert grade(standin, tmp_path, answer("def half(n):\n    return n / 2")).reward == 1.0
    result = grade(standin, tmp_path, answer("def half(n):\n    return n / 3"))
    assert (result.category, result.reward) == (Category.CANDIDATE_MISMATCH, 0.0)
    assert result.containment == "daytona"


def test_a_provider_fault_is_provider_unavailable_never_a_score(standin, tmp_path):
    standin.faults.exit_code = "garbage"
    result = grade(standin, tmp_path, answer("def half(n):\n    return n / 2"))
    assert result.category == Category.PROVIDER_UNAVAILABLE
    assert result.reward == 0.0 and not DISPOSITIONS[result.category].terminal
    assert standin.live() == []


# --- live ----------------------------------------------------------------------------


def grade_example_rows(path, backend) -> list:
    """The five example rows, each answered with its own reference: all must pass."""
    from critpt_grader.tasks import load_tasks

    tasks = list(load_tasks(path))

    async def go():
        async with backend, Grader(SETTINGS, backend) as grader:
            return await asyncio.gather(
                *(grader.grade(task, answer(task.reference_source)) for task in tasks)
            )

    results = asyncio.run(go())
    assert len(results) == 5
    assert [(r.category, r.reward) for r in results] == [(Category.PASSED, 1.0)] * 5, [
        r.reason for r in results
    ]
    return results


def test_the_example_rows_grade_through_the_stand_in(standin, tmp_path, example_rows_path):
    backend = DaytonaBackend(SETTINGS, daytona=daytona_settings(standin.url, tmp_path))
    grade_example_rows(example_rows_path, backend)
    assert standin.live() == []


@pytest.mark.skipif(not os.environ.get("DAYTONA_API_KEY"), reason="DAYTONA_API_KEY is not set")
def test_live_daytona_grades_the_example_rows(example_rows_path):
    """Against Daytona itself: needs DAYTONA_API_KEY and a snapshot with the runtime and
    this package (CRITPT_GRADER_DAYTONA_SNAPSHOT; see critpt_grader.sandbox.daytona)."""
    grade_example_rows(example_rows_path, DaytonaBackend(SETTINGS))


def test_the_sandboxes_command_sweeps_on_demand(standin, tmp_path, monkeypatch, capsys):
    from critpt_grader.cli import main

    standin.faults.delete_fails = 100
    fault_run(standin, tmp_path, sweep=False)
    (left,) = standin.live()
    standin.faults.delete_fails = 0
    for name, value in {
        "API_URL": standin.url,
        "API_KEY": "stand-in",
        "JOURNAL_DIR": str(tmp_path),
        "OWNER": "critpt-tests",
    }.items():
        monkeypatch.setenv(f"CRITPT_GRADER_DAYTONA_{name}", value)
    assert main(["sandboxes", "--json"]) == 0
    assert [row["name"] for row in json.loads(capsys.readouterr().out)["pending"]] == [left]
    assert main(["sandboxes", "--sweep", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["swept"], shown["pending"]) == ([left], [])
    assert standin.live() == []


def test_without_the_sdk_the_backend_is_refused_by_name(monkeypatch):
    import importlib.util

    from critpt_grader.errors import GraderError

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "daytona" else real(name, *a)
    )
    with pytest.raises(GraderError, match=r"critpt-grader\[daytona\]"):
        make_backend("daytona", SETTINGS)
