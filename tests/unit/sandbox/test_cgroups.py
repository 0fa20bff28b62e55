"""Sandbox cgroups: pids, memory and a CPU quota, on cgroup v1 and v2.

The v1 tests use this machine's real v1 hierarchies and are skipped elsewhere. The v2 tests
never touch a real cgroup2 kernel: they run the v2 code path against a file tree in tmp_path
(:class:`FakeCgroup2` mimics what cgroupfs does on mkdir and on writes to ``cgroup.procs``,
``cgroup.subtree_control`` and ``cgroup.kill``, including the "no internal processes" rule),
so they show which files get which contents, not that a v2 kernel accepts them. On a real v2
host the path is exercised by ``critpt-grader doctor``, which runs a probe sandbox through it.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from critpt_grader.sandbox import containment
from critpt_grader.sandbox.containment import (
    Cgroup,
    cgroup_version,
    create_cgroup,
    launcher_prefix,
    own_cgroup,
    sweep_stale_cgroups,
)

# --- cgroup v1, for real ----------------------------------------------------------------


def _v1_usable() -> bool:
    if cgroup_version() != 1:
        return False
    probe = create_cgroup(f"critpt-probe-{uuid.uuid4().hex[:8]}", max_processes=8,
                          memory_bytes=1 << 26, cpus=1.0)  # fmt: skip
    if probe is None:
        return False
    probe.remove(wait_seconds=1.0)
    return True


needs_v1 = pytest.mark.skipif(not _v1_usable(), reason="no writable cgroup v1 pids hierarchy")


def _name() -> str:
    return f"critpt-test-{uuid.uuid4().hex[:8]}"


def _by_controller(cgroup: Cgroup) -> dict[str, Path]:
    """Each v1 directory under the name of the hierarchy (mount) it is in."""
    return {d.relative_to(containment.CGROUP_ROOT).parts[0]: d for d in cgroup.directories}


def _expected_v1() -> frozenset[str]:
    return frozenset(c for c in containment.CONTROLLERS if own_cgroup(c) is not None)


@pytest.fixture
def v1_cgroup():
    made: list[Cgroup] = []

    def make(**limits) -> Cgroup:
        limits = {"max_processes": 8, "memory_bytes": 1 << 30, "cpus": 0.5} | limits
        cgroup = create_cgroup(_name(), **limits)
        assert cgroup is not None
        made.append(cgroup)
        return cgroup

    yield make
    for cgroup in made:
        cgroup.kill_all()
        assert cgroup.remove()


@needs_v1
def test_v1_sandbox_cgroup_gets_pids_memory_and_cpu_limits(v1_cgroup):
    cgroup = v1_cgroup(max_processes=12, memory_bytes=1 << 30, cpus=0.5)
    assert cgroup.version == 1
    assert cgroup.controllers == _expected_v1()
    assert "pids" in cgroup.controllers
    dirs = _by_controller(cgroup)
    assert (dirs["pids"] / "pids.max").read_text().strip() == "12"
    if "memory" in cgroup.controllers:
        assert (dirs["memory"] / "memory.limit_in_bytes").read_text().strip() == str(1 << 30)
        memsw = dirs["memory"] / "memory.memsw.limit_in_bytes"
        if memsw.exists():
            assert memsw.read_text().strip() == str(1 << 30)
    if "cpu" in cgroup.controllers:
        assert (dirs["cpu"] / "cpu.cfs_period_us").read_text().strip() == "100000"
        assert (dirs["cpu"] / "cpu.cfs_quota_us").read_text().strip() == "50000"
        assert (dirs["cpu"] / "cpu.shares").read_text().strip() == "1024"
    shown = "+".join(c for c in ("pids", "memory", "cpu") if c in cgroup.controllers)
    assert cgroup.describe() == f"cgroup v1 {shown}"


@needs_v1
def test_v1_without_cpus_there_is_no_cpu_cgroup(v1_cgroup):
    cgroup = v1_cgroup(cpus=None)
    assert "cpu" not in cgroup.controllers
    assert "cpu" not in _by_controller(cgroup)


@needs_v1
def test_v1_launched_process_is_in_every_controller(v1_cgroup):
    cgroup = v1_cgroup()
    shown = subprocess.run(
        [*launcher_prefix(cgroup), "/bin/cat", "/proc/self/cgroup"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    lines = {line.split(":")[1]: line for line in shown.splitlines()}
    name = cgroup.directories[0].name
    for controller in cgroup.controllers:
        line = next(v for k, v in lines.items() if controller in k.split(","))
        assert line.endswith("/" + name), line


@needs_v1
def test_v1_cpu_quota_holds_many_busy_processes_to_it(v1_cgroup):
    """Four processes spinning for a second of wall time get a quarter core between them."""
    cgroup = v1_cgroup(cpus=0.25)
    if "cpu" not in cgroup.controllers:
        pytest.skip("no writable v1 cpu hierarchy")
    spin = (
        "import os, time\n"
        "for _ in range(4):\n"
        "    if os.fork() == 0:\n"
        "        end = time.monotonic() + 1.0\n"
        "        while time.monotonic() < end: pass\n"
        "        os._exit(0)\n"
        "for _ in range(4): os.wait()\n"
        "t = os.times(); print(t.children_user + t.children_system)\n"
    )
    used = subprocess.run(
        [*launcher_prefix(cgroup), sys.executable, "-c", spin],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout
    # Unthrottled, four spinners on two or more cores would use 2 s and more.
    assert float(used) < 0.6, used


@needs_v1
def test_v1_quota_is_capped_at_an_ancestor_s_quota(v1_cgroup, monkeypatch, tmp_path):
    """v1 refuses a child quota above its parent's: ask for 64 cores under a grader whose
    own cpu cgroup has half a core, and get half a core rather than no cpu cgroup."""
    cpu_root = own_cgroup("cpu")
    if cpu_root is None:
        pytest.skip("no writable v1 cpu hierarchy")
    grader = cpu_root / _name()
    grader.mkdir()
    try:
        (grader / "cpu.cfs_quota_us").write_text("50000")
        relative = "/" + str(grader.relative_to(containment.CGROUP_ROOT / "cpu"))
        real = Path("/proc/self/cgroup").read_text().splitlines()
        shown = [
            f"{h}:{c}:{relative}" if "cpu" in c.split(",") else f"{h}:{c}:{p}"
            for h, c, p in (line.split(":", 2) for line in real)
        ]
        (tmp_path / "self-cgroup").write_text("\n".join(shown) + "\n")
        monkeypatch.setattr(containment, "PROC_SELF_CGROUP", tmp_path / "self-cgroup")
        cgroup = v1_cgroup(cpus=64.0)
        assert "cpu" in cgroup.controllers
        cpu_dir = next(d for d in cgroup.directories if d.parent == grader)
        assert (cpu_dir / "cpu.cfs_quota_us").read_text().strip() == "50000"
    finally:
        for child in grader.glob("critpt-test-*"):
            child.rmdir()
        grader.rmdir()


@needs_v1
def test_v1_kill_all_and_remove_leave_no_process_and_no_directory(v1_cgroup):
    cgroup = v1_cgroup()
    shell = subprocess.Popen(
        [*launcher_prefix(cgroup), "/bin/sh", "-c", "sleep 60 & sleep 60 & sleep 60 & wait"]
    )
    try:
        deadline = time.monotonic() + 60  # the shell and its three sleeps, once all started
        while len(members := cgroup.pids()) < 4 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(members) == 4
        assert cgroup.kill_all()
        assert cgroup.pids() == set()
        assert shell.wait(timeout=5) == -signal.SIGKILL
        assert cgroup.remove()
        assert not any(d.exists() for d in cgroup.directories)
        deadline = time.monotonic() + 60  # killed; the kernel reaps them soon after
        while (alive := [p for p in members if _running(p)]) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert alive == []
    finally:
        if shell.poll() is None:
            shell.kill()
            shell.wait()


def _running(pid: int) -> bool:
    """Alive and not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


# --- cgroup v2, against a file tree ---------------------------------------------------


def _words(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


class FakeCgroup2:
    """Just enough of a cgroup2 filesystem on plain files: the files a new cgroup gets (the
    controllers its parent enabled), a pid written to ``cgroup.procs`` moving out of every
    other cgroup, ``+controller`` in ``cgroup.subtree_control`` refused when the controller
    is not available or (outside the root) the cgroup holds processes, ``cgroup.kill``
    emptying the cgroup, and rmdir refused while processes or child cgroups are in it.
    ``writes`` lists the successful writes in order, ``made`` the cgroups made by the code."""

    def __init__(self, root: Path, controllers=("cpu", "memory", "pids"), swap=True):
        self.root, self.swap = root, swap
        self.writes: list[tuple[str, str]] = []
        self.made: list[str] = []
        root.mkdir(exist_ok=True)
        # The root cgroup: no cgroup.type, no limits; like a systemd host, it gives its
        # children every controller it has.
        (root / "cgroup.controllers").write_text(" ".join(controllers) + "\n")
        (root / "cgroup.subtree_control").write_text(" ".join(controllers) + "\n")
        (root / "cgroup.procs").write_text("")

    def add(self, path: str, procs=()) -> Path:
        """A cgroup made by someone else (systemd, the operator), holding ``procs``."""
        directory = self.root / path
        directory.mkdir()
        self._populate(directory)
        (directory / "cgroup.procs").write_text("".join(f"{pid}\n" for pid in procs))
        return directory

    def _populate(self, directory: Path) -> None:
        enabled = _words(directory.parent / "cgroup.subtree_control")
        files = {
            "cgroup.procs": "",
            "cgroup.controllers": " ".join(enabled),
            "cgroup.subtree_control": "",
            "cgroup.type": "domain",
            "cgroup.kill": "",
            "cgroup.events": "populated 0\nfrozen 0\n",
        }
        if "pids" in enabled:
            files |= {"pids.max": "max", "pids.current": "0"}
        if "memory" in enabled:
            files |= {"memory.max": "max", "memory.events": "oom 0\noom_kill 0\n"}
            if self.swap:
                files["memory.swap.max"] = "max"
        if "cpu" in enabled:
            files |= {"cpu.max": "max 100000", "cpu.weight": "100"}
        for name, text in files.items():
            (directory / name).write_text(text)

    def relative(self, path: Path) -> str:
        return str(path.relative_to(self.root))

    def mkdir(self, path: Path) -> None:
        path.mkdir()  # FileExistsError as in cgroupfs
        self._populate(path)
        self.made.append(self.relative(path))

    def rmdir(self, path: Path) -> None:
        if not path.is_dir():
            raise FileNotFoundError(errno.ENOENT, "no such cgroup", str(path))
        if _words(path / "cgroup.procs") or any(p.is_dir() for p in path.iterdir()):
            raise OSError(errno.EBUSY, "cgroup busy", str(path))
        shutil.rmtree(path)

    def write(self, path: Path, text: str) -> None:
        if not path.is_file():  # cgroupfs never creates a file
            raise FileNotFoundError(errno.ENOENT, "no such control file", str(path))
        directory = path.parent
        if path.name == "cgroup.procs":
            if directory != self.root and _words(directory / "cgroup.subtree_control"):
                raise OSError(errno.EBUSY, "controllers enabled for children", str(path))
            for procs in self.root.rglob("cgroup.procs"):
                kept = [pid for pid in _words(procs) if pid != text.strip()]
                procs.write_text("".join(f"{pid}\n" for pid in kept))
            path.write_text(path.read_text() + text.strip() + "\n")
        elif path.name == "cgroup.subtree_control":
            enabled = _words(path)
            for token in text.split():
                controller = token[1:]
                if controller not in _words(directory / "cgroup.controllers"):
                    raise OSError(errno.ENOENT, "controller not available", str(path))
                internal = _words(directory / "cgroup.procs")
                if (directory / "cgroup.type").exists() and internal:
                    raise OSError(errno.EBUSY, "no internal processes", str(path))
                enabled.append(controller)
            path.write_text(" ".join(enabled))
        elif path.name == "cgroup.kill":
            (directory / "cgroup.procs").write_text("")
        else:
            path.write_text(text)
        self.writes.append((self.relative(path), text))


@pytest.fixture
def v2(tmp_path, monkeypatch):
    """Point the module at a fake cgroup2 tree; ``v2(...)`` builds it, ``v2.own`` says
    which cgroup /proc/self/cgroup shows."""

    class Host:
        fake: FakeCgroup2

        def __call__(self, **options) -> FakeCgroup2:
            self.fake = FakeCgroup2(tmp_path / "cgroup", **options)
            monkeypatch.setattr(containment, "CGROUP_ROOT", self.fake.root)
            monkeypatch.setattr(containment, "_write", self.fake.write)
            monkeypatch.setattr(containment, "_mkdir", self.fake.mkdir)
            monkeypatch.setattr(containment, "_rmdir", self.fake.rmdir)
            return self.fake

        def own(self, path: str) -> None:
            (tmp_path / "self-cgroup").write_text(f"0::{path}\n")

    monkeypatch.setattr(containment, "PROC_SELF_CGROUP", tmp_path / "self-cgroup")
    monkeypatch.delenv(containment.PARENT_VARIABLE, raising=False)
    return Host()


ME = str(os.getpid())


def _limits(path: str, *, swap=True, cpu: str | None = "150000 100000") -> list[tuple[str, str]]:
    writes = [(f"{path}/pids.max", "8"), (f"{path}/memory.max", str(1 << 26))]
    writes += [(f"{path}/memory.swap.max", "0")] if swap else []
    if cpu is not None:
        writes += [(f"{path}/cpu.max", cpu), (f"{path}/cpu.weight", "100")]
    return writes


def _create(name: str, cpus: float | None = 1.5, **options) -> Cgroup | None:
    return create_cgroup(name, max_processes=8, memory_bytes=1 << 26, cpus=cpus, **options)


def test_v2_is_detected_from_cgroup_controllers_at_the_top(v2, monkeypatch, tmp_path):
    monkeypatch.setattr(containment, "CGROUP_ROOT", tmp_path)  # v1 mounts would be here
    assert cgroup_version() == 1
    v2()
    assert cgroup_version() == 2


def test_v2_moves_the_grader_into_a_leaf_then_gives_sandboxes_every_limit(v2):
    fake = v2()
    service = fake.add("grader.service", procs=[ME])
    v2.own("/grader.service")

    cgroup = _create("critpt-1-aa")

    assert cgroup is not None
    assert fake.made == ["grader.service/critpt-grader", "grader.service/critpt-1-aa"]
    assert fake.writes == [
        ("grader.service/critpt-grader/cgroup.procs", ME),
        ("grader.service/cgroup.subtree_control", "+pids"),
        ("grader.service/cgroup.subtree_control", "+memory"),
        ("grader.service/cgroup.subtree_control", "+cpu"),
        *_limits("grader.service/critpt-1-aa"),
    ]
    assert _words(service / "cgroup.procs") == []
    assert _words(service / "critpt-grader" / "cgroup.procs") == [ME]
    assert cgroup.directories == (service / "critpt-1-aa",)
    assert cgroup.procs_files == (str(service / "critpt-1-aa" / "cgroup.procs"),)
    assert (cgroup.version, cgroup.controllers) == (2, frozenset({"pids", "memory", "cpu"}))
    assert cgroup.describe() == "cgroup v2 pids+memory+cpu"

    # The kernel now shows the leaf as our cgroup: sandboxes still go beside it, and the
    # parent, delegated already, is not touched again. Without cpus: no quota.
    v2.own("/grader.service/critpt-grader")
    assert own_cgroup("cpu") == service
    fake.writes.clear()
    second = _create("critpt-1-bb", cpus=None)
    assert second is not None and second.directories == (service / "critpt-1-bb",)
    assert fake.writes == _limits("grader.service/critpt-1-bb", cpu=None)
    assert second.describe() == "cgroup v2 pids+memory"


@pytest.mark.parametrize("given", ["argument", "environment"])
def test_v2_configured_parent_is_used_and_the_grader_stays_put(v2, monkeypatch, given):
    fake = v2()
    fake.add("grader.service", procs=[ME])
    delegated = fake.add("delegated")
    v2.own("/grader.service")
    if given == "argument":
        cgroup = _create("critpt-1-aa", parent="/delegated")
    else:
        monkeypatch.setenv(containment.PARENT_VARIABLE, str(delegated))  # a full path
        cgroup = _create("critpt-1-aa")
    assert cgroup is not None and cgroup.directories == (delegated / "critpt-1-aa",)
    assert fake.made == ["delegated/critpt-1-aa"]
    assert fake.writes == [
        ("delegated/cgroup.subtree_control", "+pids"),
        ("delegated/cgroup.subtree_control", "+memory"),
        ("delegated/cgroup.subtree_control", "+cpu"),
        *_limits("delegated/critpt-1-aa"),
    ]
    assert _words(fake.root / "grader.service" / "cgroup.procs") == [ME]


@pytest.mark.parametrize(
    ("controllers", "swap", "described"),
    [
        (("memory", "pids"), False, "cgroup v2 pids+memory"),
        (("cpu", "pids"), True, "cgroup v2 pids+cpu"),
        (("pids",), True, "cgroup v2 pids"),
    ],
)
def test_v2_missing_controllers_are_left_out_and_pids_is_enough(v2, controllers, swap, described):
    fake = v2(controllers=controllers, swap=swap)
    fake.add("grader.service", procs=[ME])
    v2.own("/grader.service")
    cgroup = _create("critpt-1-aa")
    assert cgroup is not None
    assert cgroup.controllers == frozenset(controllers)
    assert cgroup.describe() == described
    sandbox = "grader.service/critpt-1-aa"
    expected = [(f"{sandbox}/pids.max", "8")]
    if "memory" in controllers:
        expected += [(f"{sandbox}/memory.max", str(1 << 26))]
    if "cpu" in controllers:
        expected += [(f"{sandbox}/cpu.max", "150000 100000"), (f"{sandbox}/cpu.weight", "100")]
    assert [w for w in fake.writes if w[0].startswith(sandbox)] == expected
    assert ("grader.service/cgroup.subtree_control", "+pids") in fake.writes


def test_v2_without_pids_there_is_no_cgroup_and_nothing_moves(v2):
    fake = v2(controllers=("cpu", "memory"))
    service = fake.add("grader.service", procs=[ME])
    v2.own("/grader.service")
    assert _create("critpt-1-aa") is None
    assert (fake.writes, fake.made) == ([], [])
    assert _words(service / "cgroup.procs") == [ME]


def test_v2_never_moves_another_service_s_processes(v2):
    fake = v2()
    stranger = next(str(p) for p in _strangers())
    service = fake.add("grader.service", procs=[ME, stranger])
    v2.own("/grader.service")
    assert _create("critpt-1-aa") is None
    assert (fake.writes, fake.made) == ([], [])
    assert sorted(_words(service / "cgroup.procs")) == sorted([ME, stranger])


def test_v2_the_grader_s_parent_and_children_move_with_it(v2):
    fake = v2()
    child = subprocess.Popen(["/bin/sleep", "30"])
    try:
        family = [str(os.getppid()), ME, str(child.pid)]
        service = fake.add("grader.service", procs=family)
        v2.own("/grader.service")
        assert _create("critpt-1-aa") is not None
        assert sorted(_words(service / "critpt-grader" / "cgroup.procs")) == sorted(family)
    finally:
        child.kill()
        child.wait()


def test_v2_in_the_root_cgroup_controllers_are_enabled_without_moving_anyone(v2):
    fake = v2()
    (fake.root / "cgroup.subtree_control").write_text("")
    (fake.root / "cgroup.procs").write_text(f"1\n{ME}\n")
    v2.own("/")
    cgroup = _create("critpt-1-aa")
    assert cgroup is not None and cgroup.directories == (fake.root / "critpt-1-aa",)
    assert fake.made == ["critpt-1-aa"]
    assert fake.writes[:3] == [
        ("cgroup.subtree_control", "+pids"),
        ("cgroup.subtree_control", "+memory"),
        ("cgroup.subtree_control", "+cpu"),
    ]
    assert _words(fake.root / "cgroup.procs") == ["1", ME]


def test_v2_kill_all_writes_cgroup_kill_else_signals_each_member(v2, monkeypatch):
    fake = v2()
    fake.add("grader.service")
    v2.own("/grader.service")
    cgroup = _create("critpt-1-aa")
    assert cgroup is not None
    procs = cgroup.directories[0] / "cgroup.procs"
    signalled: list[tuple[int, int]] = []

    def kill(pid: int, signum: int) -> None:  # a fake member dies when signalled
        signalled.append((pid, signum))
        procs.write_text("".join(f"{p}\n" for p in _words(procs) if p != str(pid)))

    monkeypatch.setattr(containment.os, "kill", kill)
    procs.write_text("4000001\n4000002\n")
    assert cgroup.kill_all()
    assert fake.writes[-1] == ("grader.service/critpt-1-aa/cgroup.kill", "1")
    assert signalled == []

    (cgroup.directories[0] / "cgroup.kill").unlink()  # a kernel before 5.14
    procs.write_text("4000003\n")
    assert cgroup.kill_all()
    assert signalled == [(4000003, signal.SIGKILL)]
    assert cgroup.pids() == set()
    assert cgroup.remove()
    assert not cgroup.directories[0].exists()


def test_v2_oom_kills_come_from_memory_events(v2):
    fake = v2()
    fake.add("grader.service")
    v2.own("/grader.service")
    cgroup = _create("critpt-1-aa")
    assert cgroup is not None and cgroup.oom_kills() == 0
    (cgroup.directories[0] / "memory.events").write_text(
        "low 0\nhigh 0\nmax 4\noom 2\noom_kill 3\n"
    )
    assert cgroup.oom_kills() == 3


def test_v2_sweep_removes_only_stale_sandboxes(v2):
    fake = v2()
    service = fake.add("grader.service", procs=[ME])
    v2.own("/grader.service")
    dead = next(p for p in range(4_000_000, 3_000_000, -1) if not Path(f"/proc/{p}").exists())
    stale, live = _create(f"critpt-{dead}-aa"), _create(f"critpt-{ME}-bb")
    assert stale is not None and live is not None
    v2.own("/grader.service/critpt-grader")
    assert sweep_stale_cgroups() == [service / f"critpt-{dead}-aa"]
    kept = {p.name for p in service.iterdir() if p.is_dir()}
    assert kept == {"critpt-grader", f"critpt-{ME}-bb"}


def _strangers():
    """Pids of processes that are neither this one, its ancestors nor its descendants."""
    family = set()
    pid = os.getpid()
    while pid > 0:
        family.add(pid)
        pid = containment._parent_pid(pid)
    for entry in sorted(os.listdir("/proc"), key=lambda n: (len(n), n)):
        if entry.isdigit() and int(entry) not in family:
            chain, ours = int(entry), False
            while chain > 0:
                ours = ours or chain == os.getpid()
                chain = containment._parent_pid(chain)
            if not ours:
                yield int(entry)
