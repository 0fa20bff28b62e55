"""Host-side pieces of the local backend: cgroups, the filesystem view, result checking."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from critpt_grader.runner import protocol
from critpt_grader.sandbox.base import CaseOutcome, RunOutcome
from critpt_grader.sandbox.bwrap import filesystem_view, view_arguments
from critpt_grader.sandbox.containment import (
    cgroups_available,
    create_cgroup,
    launcher_prefix,
    sweep_stale_cgroups,
)
from critpt_grader.sandbox.outcomes import attribute_kills_to_memory, outcome_from_payload

needs_cgroups = pytest.mark.skipif(not cgroups_available(), reason="no writable v1 pids cgroup")


@needs_cgroups
def test_launcher_joins_the_cgroup_before_exec_and_the_cgroup_goes_away():
    cgroup = create_cgroup(
        f"critpt-test-{uuid.uuid4().hex[:8]}", max_processes=8, memory_bytes=1 << 30
    )
    assert cgroup is not None
    try:
        pids_dir = next(d for d in cgroup.directories if "pids" in str(d))
        assert (pids_dir / "pids.max").read_text().strip() == "8"
        shown = subprocess.run(
            [*launcher_prefix(cgroup), "/bin/cat", "/proc/self/cgroup"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        pids_line = next(line for line in shown.splitlines() if ":pids:" in line)
        assert pids_line.endswith("/" + pids_dir.name)
        assert cgroup.oom_kills() == 0
    finally:
        assert cgroup.kill_all()
        assert cgroup.remove()
    assert not any(d.exists() for d in cgroup.directories)


@needs_cgroups
def test_kill_all_ends_every_member():
    cgroup = create_cgroup(
        f"critpt-test-{uuid.uuid4().hex[:8]}", max_processes=8, memory_bytes=1 << 30
    )
    assert cgroup is not None
    sleeper = subprocess.Popen([*launcher_prefix(cgroup), "/bin/sleep", "60"])
    try:
        deadline = time.monotonic() + 60  # the launcher joins the cgroup, then execs
        while not cgroup.pids() and time.monotonic() < deadline and sleeper.poll() is None:
            time.sleep(0.01)
        assert cgroup.pids()
        assert cgroup.kill_all()
        assert sleeper.wait(timeout=5) != 0
    finally:
        cgroup.remove()


def test_default_view_is_system_folders_interpreter_and_package():
    import critpt_grader

    view = filesystem_view(os.path.realpath(sys.executable), host_root=False)
    package = Path(critpt_grader.__file__).resolve().parent
    assert "/" not in view
    assert str(package) in view
    assert str(package.parent) not in view  # never the whole checkout
    assert filesystem_view(sys.executable, host_root=True)[0] == "/"


def test_folders_under_tmp_are_bound_after_the_private_tmp():
    arguments = view_arguments(["/usr", "/tmp/venv"], tmp_bytes=1 << 20)
    tmpfs = arguments.index("--tmpfs")
    assert arguments.index("/usr") < tmpfs < arguments.index("/tmp/venv")


def payload(**overrides) -> dict:
    base = {
        "status": "ok",
        "detail": "",
        "cases": [{"kind": "value", "value": {"format": "critpt-value-v1"}, "seconds": 0.1}],
        "stdout": "",
        "stderr": "",
        "symbols": {"m": {"positive": True}},
    }
    return base | overrides


def test_a_well_formed_result_becomes_an_outcome():
    outcome = outcome_from_payload(payload(), case_count=1)
    assert outcome.status == "ok"
    assert outcome.cases[0].kind == "value"
    assert outcome.symbols == {"m": {"positive": True}}


@pytest.mark.parametrize(
    "overrides",
    [
        {"status": "passed"},
        {"cases": []},
        {"cases": [None]},
        {"cases": [{"kind": "value"}]},
        {"symbols": {"m": {"positive": "yes"}}},
        {"stdout": 5},
    ],
)
def test_a_malformed_result_is_no_result(overrides):
    outcome = outcome_from_payload(payload(**overrides), case_count=1)
    assert outcome.status == "no_result"


def test_a_frame_is_found_only_with_the_nonce_even_amid_noise():
    nonce = protocol.new_nonce()
    frame = protocol.format_frame(nonce, payload())
    assert protocol.find_frame(b"x" * 1000 + b"\n" + frame, nonce) == payload()


def test_kills_by_the_memory_cgroup_count_as_memory():
    outcome = RunOutcome(
        status="ok",
        cases=[
            CaseOutcome(kind="crashed", message="the process ...; it was ended by SIGKILL"),
            CaseOutcome(kind="crashed", message="the process ...; it exited with code 0"),
        ],
    )
    attribute_kills_to_memory(outcome)
    assert [case.kind for case in outcome.cases] == ["memory", "crashed"]


@needs_cgroups
def test_stale_cgroups_of_ended_processes_are_swept_and_live_ones_kept():
    dead = next(pid for pid in range(4_000_000, 3_000_000, -1) if not Path(f"/proc/{pid}").exists())
    stale = create_cgroup(
        f"critpt-{dead}-{uuid.uuid4().hex[:8]}", max_processes=8, memory_bytes=1 << 30
    )
    live = create_cgroup(f"critpt-{os.getpid()}-{uuid.uuid4().hex[:8]}", max_processes=8,
                         memory_bytes=1 << 30)  # fmt: skip
    assert stale is not None and live is not None
    try:
        removed = sweep_stale_cgroups()
        assert set(stale.directories) <= set(removed)
        assert not any(d.exists() for d in stale.directories)
        assert all(d.exists() for d in live.directories)
    finally:
        live.remove()
        stale.remove()


def test_warm_sandboxes_only_with_the_filter_worlds_and_the_settings_limits():
    from critpt_grader.sandbox.base import Job, Limits
    from critpt_grader.sandbox.containment import Containment
    from critpt_grader.sandbox.local import LocalBackend
    from critpt_grader.settings import Settings

    backend = LocalBackend(Settings())
    job = Job(source="", entrypoint="f", cases=(), limits=Settings().limits())
    filtered = Containment(bwrap=True, cgroup=True, root=True, seccomp=True, worlds=True)
    assert backend._warm_fits(job, filtered)
    assert not backend._warm_fits(job, Containment(bwrap=True, cgroup=True, root=True))
    # Without a world per job, jobs one after another could leave each other notes.
    shared = Containment(bwrap=True, cgroup=True, root=True, seccomp=True)
    assert not backend._warm_fits(job, shared)
    other_memory = Job(source="", entrypoint="f", cases=(), limits=Limits(memory_mb=512))
    assert not backend._warm_fits(other_memory, filtered)
    assert filtered.label == "bwrap+cgroup+seccomp+HOST-ROOT" and not filtered.strong
    dropped = Containment(bwrap=True, cgroup=True, root=True, seccomp=True, user="critpt-sandbox")
    assert dropped.label == "bwrap+cgroup+seccomp+user:critpt-sandbox" and dropped.strong
    assert not Containment(bwrap=False, cgroup=True, root=True, user="critpt-sandbox").strong


@pytest.mark.parametrize(
    ("containment", "strong", "weakness"),
    [
        (dict(bwrap=True, cgroup=True, root=False), True, ""),
        (dict(bwrap=True, cgroup=False, root=False), True, ""),  # RLIMIT_NPROC binds
        (dict(bwrap=True, cgroup=True, root=True, user="u"), True, ""),
        (dict(bwrap=True, cgroup=False, root=True, user="u"), False, "without a usable cgroup"),
        (dict(bwrap=True, cgroup=True, root=True), False, "host root"),
        (dict(bwrap=False, cgroup=True, root=True, user="u"), False, "bubblewrap"),
    ],
)
def test_strong_containment_rules(containment, strong, weakness):
    from critpt_grader.sandbox.containment import Containment

    used = Containment(**containment)
    assert used.strong is strong
    assert (weakness in used.weakness()) if weakness else used.weakness() == ""


def test_a_waived_containment_shouts_in_its_label():
    from critpt_grader.sandbox.containment import Containment

    used = Containment(bwrap=True, cgroup=False, root=True, user="u", waived="no cgroup")
    assert used.label == "bwrap+rlimits+user:u WARNING: no cgroup"


def test_process_budget_is_none_under_a_cgroup_or_as_root_else_counts_the_user():
    from critpt_grader.sandbox.containment import Cgroup, process_budget, user_task_count

    assert process_budget(Cgroup(()), max_processes=32, sandboxes=4) == "none"
    if os.geteuid() == 0:
        assert process_budget(None, max_processes=32, sandboxes=4) == "none"
    else:
        assert int(process_budget(None, max_processes=32, sandboxes=4)) >= 128
    assert user_task_count() >= 1  # this very process at least


def test_warm_reset_keeps_binds_under_scratch_and_clears_around_them(tmp_path, monkeypatch):
    """Regression: a checkout under /tmp is bound read-only inside the sandbox's /tmp; the
    warm reset used to try to delete it, failed, and replaced every sandbox (exit 4)."""
    import os

    from critpt_grader.runner.warm import _empty

    bind = tmp_path / "clone" / "p" / "critpt_grader"
    bind.mkdir(parents=True)
    (bind / "module.py").write_text("kept")
    (tmp_path / "clone" / "p" / "planted").write_text("x")
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "file").write_text("x")
    kept = frozenset(str(p) for p in (bind, bind.parent, bind.parent.parent))
    real_ismount = os.path.ismount
    monkeypatch.setattr(os.path, "ismount", lambda path: path == str(bind) or real_ismount(path))
    _empty(str(tmp_path), kept)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clone"]
    assert (bind / "module.py").read_text() == "kept"
    assert not (tmp_path / "clone" / "p" / "planted").exists()


def test_the_runtime_view_is_the_interpreter_prefixes_and_this_package_only(tmp_path, monkeypatch):
    """No other import-path entry (an editable install's repository, the folder the grader
    was started from) is bound into the sandbox."""
    import critpt_grader
    from critpt_grader.sandbox.bwrap import runtime_paths

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    paths = runtime_paths.__wrapped__(sys.executable)
    package = Path(critpt_grader.__file__).resolve().parent
    prefixes = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    allowed = prefixes | {package, package.parent / "grammar"}
    allowed |= {Path(sys.executable).parent, Path(sys.executable).resolve().parent.parent}
    assert {Path(p) for p in paths} <= allowed
    assert str(package) in paths and str(tmp_path) not in paths
    assert str(package.parent) not in paths  # never the checkout itself
