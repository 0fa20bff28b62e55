"""``critpt-grader doctor``: the pure rules on synthetic probes, and real runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from critpt_grader.cli import main
from critpt_grader.sandbox.doctor import (
    PROBE,
    HostFacts,
    assess,
    host_root_inside,
    label_tokens,
    outside_uid,
    publicly_runnable,
)
from tests.support.doctor_facts import GOOD, HOST
from tests.support.paths import REPO

ESSENTIAL = {
    "bubblewrap",
    "host uid",
    "capabilities",
    "kernel settings",
    "sysrq-trigger",
    "read-only system",
    "network",
    "process count",
}


def rows_of(host: HostFacts = HOST, **probe_changes):
    report = assess(host, {**GOOD, **probe_changes})
    return report, {row.name: row for row in report.rows}


def test_a_well_contained_sandbox_is_strong_and_every_layer_holds():
    report, rows = rows_of()
    assert report.strong
    assert {name for name, row in rows.items() if row.essential} == ESSENTIAL
    assert all(row.status == "held" and row.fix == "" for row in rows.values()), [
        (row.name, row.status, row.seen) for row in rows.values() if row.status != "held"
    ]
    assert all(row.stops for row in rows.values())


# Each essential layer missing: (row, probe changes, host changes, words of the fix).
MISSING = {
    "host root, host namespace": (
        "host uid",
        {"uid": 0, "uid_map": "0 0 4294967295", "usr_owner": 0},
        {},
        "critpt-sandbox",
    ),
    "host root, bubblewrap's own namespace": (
        "host uid",
        {"uid": 0, "uid_map": "0 0 1", "usr_owner": 0, "open_core_pattern": "open"},
        {},
        "non-root",
    ),
    "capabilities": ("capabilities", {"cap_eff": "000001ffffffffff"}, {}, "--cap-drop ALL"),
    "core_pattern": ("kernel settings", {"open_core_pattern": "open"}, {}, "/proc/sys"),
    "drop_caches": ("kernel settings", {"open_drop_caches": "open"}, {}, "/proc/sys"),
    "sysrq": ("sysrq-trigger", {"open_sysrq_trigger": "open"}, {}, "sysrq-trigger"),
    "/ writable": ("read-only system", {"create_root": "created"}, {}, "read-only"),
    "/etc writable": ("read-only system", {"create_etc": "created"}, {}, "read-only"),
    "/dev writable": ("read-only system", {"create_dev": "created"}, {}, "read-only"),
    "/root writable": ("read-only system", {"create_root_home": "created"}, {}, "read-only"),
    "network reachable": ("network", {"net_connect": "connected"}, {}, "network namespace"),
    "an outward interface": ("network", {"net_interfaces": "lo,eth0"}, {}, "--unshare-net"),
    "no cgroup, host root": (
        "process count",
        {"uid": 0, "uid_map": "0 0 4294967295", "rlimit_nproc": 200},
        {"containment": "bwrap+rlimits+seccomp"},
        "pids cgroup",
    ),
    "no cgroup, no RLIMIT_NPROC": (
        "process count",
        {"rlimit_nproc": -1},
        {"containment": "bwrap+rlimits+seccomp+user:critpt-sandbox"},
        "RLIMIT_NPROC",
    ),
    "no cgroup, only the host's default RLIMIT_NPROC": (
        "process count",
        {"rlimit_nproc": 96365},
        {"containment": "bwrap+rlimits+seccomp+user:critpt-sandbox", "nproc": 96365},
        "pids cgroup",
    ),
    "no bubblewrap": (
        "bubblewrap",
        {},
        {"containment": "cgroup+rlimits", "bwrap": ""},
        "install bubblewrap",
    ),
}


@pytest.mark.parametrize("case", MISSING.values(), ids=MISSING.keys())
def test_an_essential_layer_missing_means_not_strong_with_its_fix(case):
    name, probe_changes, host_changes, fix_words = case
    report, rows = rows_of(replace(HOST, **host_changes), **probe_changes)
    assert not report.strong
    row = rows[name]
    assert row.status == "missing" and row.essential
    assert fix_words in row.fix, row.fix
    assert report.to_json()["strong"] is False


def test_uid_maps_name_the_host_uid_only_one_namespace_up():
    assert outside_uid(0, "0 0 4294967295") == 0
    assert outside_uid(1000, "0 0 4294967295") == 1000
    assert outside_uid(999, "999 999 1") == 999
    assert outside_uid(5, "0 1000 10") == 1005
    assert outside_uid(5, "0 1000 1") is None
    assert outside_uid(5, "garbled") is None
    # bubblewrap nests a namespace: "999 0 1" maps to the intermediate root, not host root
    assert host_root_inside(GOOD) is False
    assert host_root_inside({**GOOD, "uid_map": "999 999 1"}) is False
    # nobody inside, every host root file shows as the overflow uid too: the kernel decides
    nobody = {**GOOD, "uid": 65534, "uid_map": "65534 0 1", "usr_owner": 65534}
    assert host_root_inside(nobody) is False
    assert host_root_inside({**nobody, "open_core_pattern": "open"}) is True
    # host root mapped in under the sandbox's uid
    assert host_root_inside({**GOOD, "usr_owner": 999, "open_core_pattern": "?"}) is True
    assert host_root_inside({**GOOD, "uid": "?"}) is None


def test_a_non_root_grader_bounds_processes_with_rlimit_nproc():
    host = replace(HOST, euid=1000, containment="bwrap+rlimits+seccomp", sandbox_user_exists=False)
    report, rows = rows_of(host, uid=1000, uid_map="1000 1000 1", usr_owner=65534, rlimit_nproc=300)
    assert report.strong
    assert rows["process count"].status == "held"
    assert rows["cgroup"].status == "weak"  # not essential: RLIMIT_NPROC counts for the user
    assert rows["sandbox user"].status == "held"  # not needed when the grader is not root


@pytest.mark.parametrize(
    ("name", "changes", "status"),
    [
        ("PID 1 (the runner)", {"pid1_prlimit": "allowed"}, "missing"),
        ("PID 1 (the runner)", {"pid1_setpriority": "allowed"}, "missing"),
        ("PID 1 (the runner)", {"pid1_setaffinity": "allowed"}, "missing"),
        ("PID 1 (the runner)", {"open_pid1_oom_score_adj": "open"}, "weak"),
        ("new namespaces", {"unshare_user": "allowed"}, "missing"),
        ("seccomp", {"seccomp": "0"}, "weak"),
        ("no_new_privs", {"no_new_privs": "0"}, "weak"),
        ("private /tmp", {"create_tmp": "EROFS"}, "weak"),
        ("private /tmp", {"tmp_bytes": 8 << 30}, "weak"),
        ("/dev/shm", {"dev_shm_bytes": 8 << 30}, "weak"),
        ("/dev/shm", {"create_dev_shm": "absent"}, "held"),
        ("memory and CPU", {"rlimit_as": -1}, "weak"),
        ("host files hidden", {"sys_present": True, "sys_entries": "block,fs"}, "weak"),
        ("host files hidden", {"shadow": "readable"}, "missing"),
        ("interpreter", {"executable": "/root/venv/bin/python"}, "weak"),
    ],
)
def test_other_layers_are_reported_without_deciding_the_verdict(name, changes, status):
    report, rows = rows_of(**changes)
    assert rows[name].status == status
    assert bool(rows[name].fix) == (status != "held")
    assert not rows[name].essential
    assert report.strong


def test_a_probe_outside_any_sandbox_tests_no_writes_and_is_not_strong():
    skipped = {
        key: "skipped" for key in GOOD if key.startswith(("create_", "pid1_set", "pid1_prlimit"))
    }
    host = replace(HOST, containment="rlimits-only")
    report, rows = rows_of(host, inside=False, pid1_cmdline="/sbin/init", **skipped)
    assert not report.strong
    assert rows["read-only system"].status == "weak"  # untested, not held
    assert rows["PID 1 (the runner)"].status == "missing"
    assert rows["private /tmp"].status == "weak"


def test_settings_row_flags_opt_outs_and_a_missing_requirement():
    _, rows = rows_of()
    assert rows["settings"].status == "held"  # a root grader refuses weak containment
    waived = replace(HOST, settings={"allow_weak_containment": True, "seccomp": True})
    _, rows = rows_of(waived)
    assert rows["settings"].status == "weak"
    assert "allow_weak_containment" in rows["settings"].fix
    user = replace(HOST, euid=1000)
    _, rows = rows_of(user, uid=1000, uid_map="1000 1000 1")
    assert "REQUIRE_STRONG_CONTAINMENT" in rows["settings"].fix
    _, rows = rows_of(replace(user, require_strong=True), uid=1000, uid_map="1000 1000 1")
    assert rows["settings"].status == "held"


def test_label_tokens_ignore_the_warning():
    assert label_tokens("bwrap+cgroup+seccomp+user:x WARNING: a+b") == [
        "bwrap",
        "cgroup",
        "seccomp",
        "user:x",
    ]
    assert label_tokens("") == []
    _, rows = rows_of(replace(HOST, containment="bwrap+rlimits+HOST-ROOT WARNING: w: why"))
    assert "(weak: why)" in rows["bubblewrap"].seen


def test_the_probe_opens_kernel_settings_without_writing():
    compile(PROBE, "<probe>", "exec")
    assert "O_TRUNC" not in PROBE and ".write(" not in PROBE
    assert "os.O_WRONLY))" in PROBE  # opened write-only and closed at once
    assert "O_CREAT | os.O_EXCL" in PROBE  # create tests only make new files


def test_publicly_runnable(tmp_path):
    program = tmp_path / "prog"
    program.write_text("")
    program.chmod(0o700)
    assert not publicly_runnable(str(program))
    assert not publicly_runnable(str(tmp_path / "absent"))
    assert publicly_runnable("/bin/sh")


def test_no_sandbox_at_all_exits_2_with_the_reason(monkeypatch, capsys):
    from critpt_grader.sandbox.base import RunOutcome
    from critpt_grader.sandbox.local import LocalBackend

    async def refuse(self, job):
        return RunOutcome(status="unavailable", detail="cannot start the sandbox: no bwrap")

    monkeypatch.setattr(LocalBackend, "run", refuse)
    assert main(["doctor"]) == 2
    assert "cannot start the sandbox: no bwrap" in capsys.readouterr().err
    assert main(["doctor", "--json"]) == 2
    document = json.loads(capsys.readouterr().out)
    assert document["strong"] is False and "no bwrap" in document["error"]


def test_other_backends_are_refused(capsys):
    assert main(["doctor", "--backend", "in-process"]) == 2
    assert "local" in capsys.readouterr().err


# --- real sandboxes -------------------------------------------------------------------------


def _bwrap_runs() -> bool:
    from critpt_grader.sandbox.containment import bwrap_works

    return shutil.which("bwrap") is not None and bwrap_works()


needs_bwrap = pytest.mark.skipif(
    not _bwrap_runs(), reason="bubblewrap (bwrap) is not installed or cannot run here"
)


def check_document(document: dict) -> dict:
    assert set(document) >= {"strong", "containment", "rows", "host", "probe", "error"}
    assert document["error"] is None
    rows = {row["name"]: row for row in document["rows"]}
    for row in rows.values():
        assert set(row) == {"name", "status", "seen", "fix", "stops", "essential"}
        assert row["status"] in ("held", "missing", "weak")
    assert set(rows) >= ESSENTIAL
    assert {"kernel settings", "sysrq-trigger"} <= set(rows)
    assert "core_pattern" in rows["kernel settings"]["seen"]
    # the probe ran inside a sandbox: its private /tmp took a file
    assert document["probe"]["inside"] is True
    assert document["probe"]["create_tmp"] == "created"
    assert rows["private /tmp"]["status"] == "held"
    assert rows["network"]["status"] == "held"
    assert rows["own world"]["status"] == "held", rows["own world"]["seen"]
    assert document["strong"] == (
        not any(r["essential"] and r["status"] == "missing" for r in rows.values())
    )
    return rows


@pytest.mark.sandbox
@needs_bwrap
def test_doctor_json_on_this_machine(capsys):
    code = main(["doctor", "--json"])
    document = json.loads(capsys.readouterr().out)
    assert code == (0 if document["strong"] else 1)
    check_document(document)


@pytest.mark.sandbox
@needs_bwrap
def test_doctor_table_on_this_machine():
    completed = subprocess.run(
        [sys.executable, "-m", "critpt_grader.cli", "doctor"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
        check=False,
    )
    assert completed.returncode in (0, 1), completed.stderr
    assert "kernel settings" in completed.stdout
    assert "strong containment:" in completed.stdout


def _venv_command() -> list[str]:
    script = Path(sys.prefix) / "bin" / "critpt-grader"
    return [str(script)] if script.exists() else [sys.executable, "-m", "critpt_grader.cli"]


@pytest.mark.sandbox
@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to become nobody")
def test_doctor_as_an_unprivileged_user():
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("setpriv is not installed")
    drop = [setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"]
    # This checkout's package, not whatever the venv's script would import from elsewhere.
    checkout = str(REPO)
    env = {"PATH": "/usr/bin:/bin", "COLUMNS": "200", "PYTHONPATH": checkout}
    trial = subprocess.run(
        [*drop, sys.executable, "-c", "import critpt_grader"],
        capture_output=True,
        cwd="/",
        env=env,
        timeout=60,
        check=False,
    )
    if trial.returncode != 0:
        pytest.skip(f"nobody cannot run this interpreter: {trial.stderr[-200:]!r}")
    completed = subprocess.run(
        [*drop, *_venv_command(), "doctor", "--json"],
        capture_output=True,
        text=True,
        cwd="/",
        env=env,
        timeout=120,
        check=False,
    )
    assert completed.returncode in (0, 1), completed.stderr
    document = json.loads(completed.stdout)
    rows = check_document(document)
    assert document["host"]["euid"] != 0
    # a grader that is not root cannot hand its sandbox host root
    assert rows["host uid"]["status"] == "held"
    assert rows["kernel settings"]["status"] == "held"
