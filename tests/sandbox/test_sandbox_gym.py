"""The gym backend (critpt_grader/sandbox/gym.py) against a stand-in Gym sandbox provider
that runs each command for real in a local bubblewrap PID namespace (tests/support/gym_standin.py).

Where ``nemo_gym.sandbox`` imports (nemo-gym 0.4.0 on Python 3.12: ``.ci/gym-check``), the
stand-in is registered through Gym's own ``register_provider`` and the backend builds it with
Gym's ``create_provider``, ``SandboxSpec`` and ``SandboxResources``. Elsewhere (the project's
Python 3.11) it runs against the stand-in's faithful copy of that protocol. No real provider
(docker, Daytona, …) runs here.

The contract suite runs first, then every shape a provider's answer can take: each provider
fault is ``unavailable``, never a candidate fault; the sandbox is closed every time.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import uuid
from pathlib import Path

import pytest

from critpt_grader.errors import GraderError
from critpt_grader.sandbox.base import Job, Limits
from critpt_grader.sandbox.containment import bwrap_works
from critpt_grader.sandbox.gym import GymBackend, GymSettings, probe_rows, probe_source
from critpt_grader.sandbox.journal import OwnershipJournal
from critpt_grader.settings import Settings
from tests.support import gym_standin
from tests.support.backend_contract import VALUES, BackendContract, call, job, processes_mentioning
from tests.support.paths import REPO

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(
        shutil.which("bwrap") is None or not bwrap_works(),
        reason="the stand-in provider runs every command under bubblewrap",
    ),
]

# The interpreter "inside the image": this one, unless the runner's unprivileged uid cannot
# reach it (a pyenv Python under /root): .ci/gym-check then names the project's own venv.
SANDBOX_PYTHON = os.environ.get("CRITPT_GRADER_GYM_TEST_PYTHON") or sys.executable
SETTINGS = Settings(backend="gym", compare_in_process=True, max_concurrent_sandboxes=3)
API = gym_standin.register()  # None: Gym's own registry and types are in use


def gym_settings(key: str, journal: Path, **overrides) -> GymSettings:
    values = {
        "provider": gym_standin.NAME,
        "provider_config": {"lab": key},
        "python": SANDBOX_PYTHON,
        "pythonpath": str(REPO),
        "journal_dir": str(journal),
        "owner": "critpt-tests",
        "request_seconds": 10.0,
        "grace_seconds": 10.0,
        **overrides,
    }
    return GymSettings(**values)


def run_jobs(backend, *jobs):
    async def go():
        async with backend:
            return await asyncio.gather(*(backend.run(j) for j in jobs))

    return asyncio.run(go())


class TestGymContract(BackendContract):
    @pytest.fixture(autouse=True)
    def _lab(self, tmp_path):
        self.key = uuid.uuid4().hex
        self.lab = gym_standin.lab(self.key)
        self.journal = tmp_path / "journal"

    def make(self) -> GymBackend:
        return GymBackend(SETTINGS, gym=gym_settings(self.key, self.journal), api=API)

    def make_faulty(self) -> GymBackend:
        self.lab.faults.create_fails = 1000
        return self.make()

    def leftovers(self, marker: str) -> list[str]:
        return [*self.lab.live(), *processes_mentioning(marker)]


# --- the gym backend's own guarantees ------------------------------------------------------


@pytest.fixture
def lab_key():
    return uuid.uuid4().hex


def backend_for(key: str, tmp_path: Path, **overrides) -> GymBackend:
    return GymBackend(SETTINGS, gym=gym_settings(key, tmp_path / "journal", **overrides), api=API)


def test_the_runner_runs_unprivileged_with_its_limits(lab_key, tmp_path):
    """Inside the provider's sandbox the runner dropped root (this suite runs as root in CI)
    and the program's process carries the job's rlimits."""
    from critpt_grader import codec

    probe = Job(source=probe_source(), entrypoint="f", cases=({"args": []},))
    (outcome,) = run_jobs(backend_for(lab_key, tmp_path), probe)
    assert outcome.status == "ok", outcome.detail
    seen = codec.decode(outcome.cases[0].value)
    assert seen["uid"] != 0
    assert seen["rlimit_as"] == probe.limits.memory_mb * 1024 * 1024
    rows = {layer: status for layer, status, _ in probe_rows(seen)}
    assert rows["unprivileged uid"] == "held"
    assert rows["seccomp filter of ours"] == "missing"
    assert outcome.containment.startswith(f"gym:{gym_standin.NAME}")


def test_spec_carries_a_ttl_labels_and_resources(lab_key, tmp_path):
    lab = gym_standin.lab(lab_key)
    backend = backend_for(lab_key, tmp_path, ttl_seconds=600, image="critpt:test")
    (outcome,) = run_jobs(backend, job(VALUES, call(1), role="reference"))
    assert outcome.status == "ok"
    (spec,) = lab.specs
    assert spec.ttl_s == 600 and spec.image == "critpt:test" and spec.workdir == "/tmp"
    assert spec.metadata["critpt-grader-owner"] == "critpt-tests"
    assert spec.metadata["critpt-grader-role"] == "reference"
    assert spec.resources.memory_mib == 2048
    # One fresh provider per sandbox, closed with it; the job file is gone.
    assert lab.providers_made == lab.provider_acloses == 1
    assert lab.live() == [] and len(lab.closed) == 1
    (command,) = lab.commands
    assert "rm -f" in command and "head -c" in command


@pytest.mark.parametrize(
    "shape",
    ["sandbox", "timeout", "missing_exit", "raises", "crash"],
)
def test_every_provider_fault_is_unavailable(shape, lab_key, tmp_path):
    lab = gym_standin.lab(lab_key)
    lab.faults.exec_shape = shape
    (outcome,) = run_jobs(backend_for(lab_key, tmp_path), job(VALUES, call(1)))
    assert outcome.status == "unavailable", outcome
    assert outcome.cases == []
    assert lab.live() == []


def test_output_past_the_bound_is_output_limit(lab_key, tmp_path):
    lab = gym_standin.lab(lab_key)
    lab.faults.exec_shape = "huge"  # a provider that ignores the in-sandbox bound
    (outcome,) = run_jobs(backend_for(lab_key, tmp_path), job(VALUES, call(1)))
    assert outcome.status == "output_limit"
    assert outcome.cases == []


def test_create_and_upload_faults_are_unavailable(lab_key, tmp_path):
    lab = gym_standin.lab(lab_key)
    lab.faults.create_fails = 1
    lab.faults.upload_fails = 1
    first, second = run_jobs(
        backend_for(lab_key, tmp_path, sweep=False), *[job(VALUES, call(1))] * 2
    )
    assert {first.status, second.status} == {"unavailable"}
    assert lab.live() == []


def test_a_close_that_fails_once_is_retried(lab_key, tmp_path):
    lab = gym_standin.lab(lab_key)
    lab.faults.close_fails = 1
    (outcome,) = run_jobs(backend_for(lab_key, tmp_path), job(VALUES, call(1)))
    assert outcome.status == "ok"
    assert lab.live() == []


def test_an_unconfirmed_close_is_unavailable_and_stays_in_the_journal(lab_key, tmp_path):
    lab = gym_standin.lab(lab_key)
    lab.faults.close_fails = 100
    backend = backend_for(lab_key, tmp_path, close_attempts=2)
    (outcome,) = run_jobs(backend, job(VALUES, call(1)))
    assert outcome.status == "unavailable"
    assert "close" in outcome.detail
    pending = OwnershipJournal(tmp_path / "journal").entries(pending=True)
    assert [entry.provider for entry in pending] == [f"gym:{gym_standin.NAME}"]
    assert lab.live()[0] in (pending[0].sandbox_id or "")
    lab.faults.close_fails = 0
    provider = gym_standin.StandInProvider(lab=lab_key)
    for box_id in lab.live():  # the provider's TTL, in effect
        asyncio.run(provider.close(_h(box_id)))


def _h(box_id: str):
    return gym_standin.gym_types().SandboxHandle(
        sandbox_id=box_id, provider_name=gym_standin.NAME, raw=None
    )


def test_a_source_over_the_limit_never_reaches_a_sandbox(lab_key, tmp_path):
    lab = gym_standin.lab(lab_key)
    limits = Limits(source_bytes=16)
    (outcome,) = run_jobs(backend_for(lab_key, tmp_path), job(VALUES, call(1), limits=limits))
    assert outcome.status == "source_error"
    assert lab.specs == []


def test_without_nemo_gym_the_backend_says_what_to_install(monkeypatch):
    from critpt_grader.sandbox import make_backend

    monkeypatch.setitem(sys.modules, "nemo_gym", None)
    monkeypatch.setitem(sys.modules, "nemo_gym.sandbox", None)
    with pytest.raises(GraderError, match=r"critpt-grader\[gym\]"):
        make_backend("gym", Settings(backend="gym"))


def test_doctor_says_what_holds_inside_a_gym_sandbox(lab_key, tmp_path, monkeypatch, capsys):
    import json

    from critpt_grader import cli
    from critpt_grader.sandbox import gym as gym_module

    if API is not None:  # no nemo_gym here: the doctor's backend uses the stand-in protocol
        monkeypatch.setattr(gym_module, "gym_api", lambda: API)
    config = gym_settings(lab_key, tmp_path / "journal")
    for key, value in config.model_dump().items():
        text = json.dumps(value) if isinstance(value, dict) else str(value)
        monkeypatch.setenv(f"CRITPT_GRADER_GYM_{key.upper()}", text)
    assert cli.main(["doctor", "--backend", "gym", "--json"]) == 1  # ran; never "strong"
    document = json.loads(capsys.readouterr().out)
    rows = {row["name"]: row["status"] for row in document["rows"]}
    assert rows["unprivileged uid"] == "held" and document["strong"] is False
    assert gym_standin.lab(lab_key).live() == []


def test_a_create_that_never_returns_is_unavailable_and_journalled(lab_key, tmp_path):
    lab = gym_standin.lab(lab_key)
    lab.faults.create_hangs = True
    backend = backend_for(lab_key, tmp_path, ready_seconds=0.1, sweep=False)
    (outcome,) = run_jobs(backend, job(VALUES, call(1)))
    assert outcome.status == "unavailable" and "TTL" in outcome.detail
    (entry,) = OwnershipJournal(tmp_path / "journal").entries(pending=True)
    assert "unconfirmed" in (entry.sandbox_id or "")
    assert lab.provider_acloses == 1
