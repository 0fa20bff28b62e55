"""The doctor's probe module: it is the text shipped to the sandbox, it stays harmless, and
its pure helpers read sample ``/proc`` text right. Nothing here calls :func:`probe.answer`
or any probe that touches the host's PID 1, kernel settings or network."""

from __future__ import annotations

import ast
import errno
import inspect
import os
import sys
from pathlib import Path

import pytest

from critpt_grader.cli import main
from critpt_grader.runner.program import resolve_entrypoint, run_source
from critpt_grader.sandbox import doctor
from critpt_grader.sandbox.base import Limits
from critpt_grader.sandbox.doctor import probe

TREE = ast.parse(doctor.PROBE)


def calls(tree: ast.AST) -> list[ast.Call]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call)]


def dotted(node: ast.AST) -> str:
    """``os.open`` for ``os.open(...)``'s function, ``open`` for ``open(...)``'s."""
    if isinstance(node, ast.Attribute):
        return f"{dotted(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else "?"


def function(name: str) -> ast.FunctionDef:
    (found,) = (n for n in TREE.body if isinstance(n, ast.FunctionDef) and n.name == name)
    return found


# --- what is shipped ------------------------------------------------------------------------


def test_the_shipped_text_is_the_probe_module_source():
    source = Path(probe.__file__).read_text(encoding="utf-8")
    assert doctor.PROBE == source == doctor.probe_source()
    assert inspect.getsource(probe) == source
    job = doctor.probe_job(Limits())
    assert job.source == source and job.role == "candidate"
    assert job.entrypoint == "answer" and getattr(probe, job.entrypoint) is probe.answer


def test_examine_sends_the_probe_module_as_the_job(monkeypatch, capsys):
    from critpt_grader.sandbox.base import RunOutcome
    from critpt_grader.sandbox.local import LocalBackend

    jobs = []

    async def capture(self, job):
        jobs.append(job)
        return RunOutcome(status="unavailable", detail="captured, not run")

    monkeypatch.setattr(LocalBackend, "run", capture)
    assert main(["doctor"]) == 2
    assert "captured, not run" in capsys.readouterr().err
    (job,) = jobs
    assert job.source == Path(probe.__file__).read_text(encoding="utf-8")
    assert job.entrypoint == probe.answer.__name__


def test_the_runner_loads_the_probe_and_finds_its_entry_point():
    # Loading runs only imports and definitions; the entry point is resolved, not called.
    name = "critpt_doctor_probe_load_test"
    try:
        namespace = run_source(doctor.PROBE, "<probe>", name)
        entry = resolve_entrypoint(namespace, "answer", "<probe>", allow_fallback=False)
    finally:
        sys.modules.pop(name, None)
    assert entry.__name__ == "answer" and entry.__code__.co_filename == "<probe>"


def test_the_probe_imports_only_the_standard_library():
    imported = set()
    for node in ast.walk(TREE):
        if isinstance(node, ast.Import):
            imported |= {alias.name.partition(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "no relative imports: the probe is not a package module"
            imported.add((node.module or "").partition(".")[0])
    assert imported, "the walk found the imports"
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}, imported


def test_importing_the_probe_only_defines():
    allowed = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.Assign, ast.AnnAssign)
    for node in TREE.body:
        docstring = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        assert docstring or isinstance(node, allowed), ast.dump(node)[:200]
        if isinstance(node, ast.Assign | ast.AnnAssign):
            assert not calls(node), f"a call at import time, line {node.lineno}"


# --- harmless by construction ---------------------------------------------------------------


def test_the_probe_never_writes_kills_or_removes_except_its_own_file():
    text = doctor.PROBE
    assert "O_TRUNC" not in text and "O_APPEND" not in text and "O_RDWR" not in text
    forbidden = {
        "write", "writelines", "truncate", "ftruncate", "kill", "killpg", "remove", "rmdir",
        "rename", "chmod", "chown", "symlink", "link", "mkdir", "makedirs", "system",
        "popen", "sysctl", "setrlimit", "setuid", "setgid",
    }  # fmt: skip
    used = {dotted(call.func).rpartition(".")[2] for call in calls(TREE)}
    assert not used & forbidden, used & forbidden
    unlinks = [call for call in calls(function("create")) if dotted(call.func) == "os.unlink"]
    assert len(unlinks) == 1
    everywhere = [call for call in calls(TREE) if dotted(call.func) == "os.unlink"]
    assert len(everywhere) == 1, "only create() removes, and only the file it made"


def test_files_are_opened_read_only_or_opened_and_closed_at_once():
    for call in calls(TREE):
        name = dotted(call.func)
        if name == "open":  # the builtin: read mode only
            assert len(call.args) == 1, ast.unparse(call)
            assert {k.arg for k in call.keywords} <= {"encoding", "errors"}, ast.unparse(call)
        if name == "os.close":
            (inner,) = call.args
            assert isinstance(inner, ast.Call) and dotted(inner.func) == "os.open"
    closed = {
        id(call.args[0]) for call in calls(TREE) if dotted(call.func) == "os.close" and call.args
    }
    for call in calls(TREE):
        if dotted(call.func) == "os.open":
            assert id(call) in closed, f"os.open not closed at once: {ast.unparse(call)}"
            flags = {dotted(n) for n in ast.walk(call.args[1]) if isinstance(n, ast.Attribute)}
            assert flags <= {"os.O_WRONLY", "os.O_CREAT", "os.O_EXCL"}, flags
            assert ("os.O_CREAT" in flags) == ("os.O_EXCL" in flags), "only new files"


def test_creating_files_and_touching_pid1_happen_only_inside_a_sandbox():
    answer = function("answer")
    guarded = set()
    for node in ast.walk(answer):
        if isinstance(node, ast.IfExp) and ast.unparse(node.test) == "inside":
            guarded |= {id(call) for call in calls(node.body)}
    risky = [c for c in calls(answer) if dotted(c.func) in ("create", "pid1_calls")]
    assert {dotted(c.func) for c in risky} == {"create", "pid1_calls"}
    assert all(id(call) in guarded for call in risky), [ast.unparse(c) for c in risky]
    # and nothing else in the probe calls them
    for node in TREE.body:
        if isinstance(node, ast.FunctionDef) and node.name != "answer":
            assert not [c for c in calls(node) if dotted(c.func) in ("create", "pid1_calls")]


# --- the pure helpers, on sample input ------------------------------------------------------

STATUS = """Name:\tpython
Umask:\t0022
CapEff:\t0000000000000000
NoNewPrivs:\t1
Seccomp:\t2
Seccomp_filters:\t1
"""
NET_DEV = """Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets
    lo:       0       0    0    0    0     0          0         0        0       0
  eth0: 1234567    1000    0    0    0     0          0         0   654321     900
"""


def test_status_field_reads_proc_self_status():
    assert probe.status_field(STATUS, "CapEff") == "0000000000000000"
    assert probe.status_field(STATUS, "Seccomp") == "2"  # not Seccomp_filters
    assert probe.status_field(STATUS, "NoNewPrivs") == "1"
    assert probe.status_field(STATUS, "CapBnd") == ""
    assert probe.status_field("unreadable: EACCES", "Seccomp") == ""


def test_maps_command_lines_and_the_overflow_uid():
    assert probe.one_line("         999          0          1\n") == "999 0 1"
    assert probe.one_line("0 0 4294967295\n1 2 3\n") == "0 0 4294967295 1 2 3"
    assert probe.overflow_uid("65534\n") == 65534
    assert probe.overflow_uid("1000\n") == 1000
    assert probe.overflow_uid("unreadable: EACCES") == probe.OVERFLOW_UID
    runner = "/opt/critpt/bin/python\0-s\0-B\0-m\0critpt_grader.runner\0"
    assert probe.command_line(runner) == "/opt/critpt/bin/python -s -B -m critpt_grader.runner"


@pytest.mark.parametrize(
    ("pid1", "inside"),
    [
        ("/opt/critpt/bin/python -s -B -m critpt_grader.runner", True),
        ("/usr/bin/bwrap --unshare-all --die-with-parent", True),
        ("bwrap --as-pid-1", True),
        ("critpt-job-init infinity", True),
        ("/usr/bin/critpt-job-init", False),
        ("/sbin/init splash", False),
        ("/lib/systemd/systemd --system", False),
        ("/usr/bin/bwrapper", False),
        ("unreadable: EACCES", False),
        ("", False),
    ],
)
def test_inside_a_sandbox_only_when_pid1_is_the_runner_or_bubblewrap(pid1, inside):
    assert probe.inside_sandbox(pid1) is inside


def test_listings_and_interfaces():
    assert probe.interfaces(NET_DEV) == "lo,eth0"
    assert probe.interfaces("header\nheader\n") == ""
    assert probe.interfaces("unreadable: ENOENT") == ""
    assert probe.listing(["fs", "block", "bus"]) == "block,bus,fs"
    assert probe.listing(f"d{i:02}" for i in range(20)).count(",") == probe.LISTED_ENTRIES - 1
    assert probe.listing([]) == ""


def test_errno_names_and_the_unshare_child_code():
    assert probe.why(PermissionError(errno.EACCES, "denied")) == "EACCES"
    assert probe.why(OSError(errno.EROFS, "read-only")) == "EROFS"
    assert probe.why(OSError("no errno")) == "OSError"
    assert probe.unshare_result(0) == "allowed"
    assert probe.unshare_result(100 + errno.EPERM) == "EPERM"
    assert probe.unshare_result(100 + errno.ENOSPC) == "ENOSPC"
    assert probe.unshare_result(1) == "child ended with 1"
    assert probe.unshare_result(-9) == "child ended with -9"
    assert probe.shadow_state(False, False) == "absent"
    assert probe.shadow_state(True, True) == "readable"
    assert probe.shadow_state(True, False) == "present"


# --- the harmless file helpers, on this test's own temporary folder -------------------------


def test_create_makes_and_removes_one_new_file(tmp_path):
    assert probe.create(str(tmp_path)) == "created"
    assert list(tmp_path.iterdir()) == []
    assert probe.create(str(tmp_path / "absent")) == "absent"


def test_open_for_write_never_writes(tmp_path):
    target = tmp_path / "setting"
    target.write_text("kept\n")
    before = target.stat()
    assert probe.open_for_write(str(target)) == "open"
    assert target.read_text() == "kept\n" and target.stat().st_size == before.st_size
    assert probe.open_for_write(str(tmp_path / "absent")) == "absent"
    if os.geteuid() != 0:
        target.chmod(0o400)
        assert probe.open_for_write(str(target)) == "EACCES"


def test_reading_and_sizes(tmp_path):
    (tmp_path / "text").write_text("a\nb\n")
    assert probe.read(str(tmp_path / "text")) == "a\nb\n"
    assert probe.read(str(tmp_path / "absent")) == "unreadable: ENOENT"
    assert probe.size(str(tmp_path)) > 0
    assert probe.size(str(tmp_path / "absent")) == -1
    assert probe.owner(str(tmp_path)) == os.geteuid()
    assert probe.owner(str(tmp_path / "absent")) == -1
