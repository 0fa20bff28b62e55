"""A sandbox's OOM kill count is one file read: v1 the memory directory's oom_control."""

from __future__ import annotations

from pathlib import Path

from critpt_grader.sandbox import containment
from critpt_grader.sandbox.containment import Cgroup


def test_v1_oom_kills_read_only_the_memory_directory(tmp_path, monkeypatch):
    monkeypatch.setattr(containment, "CGROUP_ROOT", tmp_path)
    dirs = [tmp_path / mount / "critpt-1" for mount in ("pids", "memory", "cpu,cpuacct")]
    for directory in dirs:
        directory.mkdir(parents=True)
    cgroup = Cgroup(tuple(dirs), frozenset({"pids", "memory", "cpu"}), version=1)
    assert cgroup.oom_kills() == 0  # no file yet
    (dirs[1] / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 2\n")
    opened: list[Path] = []
    real = Path.read_text

    def read_text(self, *args, **kwargs):
        opened.append(self)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", read_text)
    assert cgroup.oom_kills() == 2
    assert opened == [dirs[1] / "memory.oom_control"]


def test_without_a_memory_directory_there_is_nothing_to_read(tmp_path, monkeypatch):
    monkeypatch.setattr(containment, "CGROUP_ROOT", tmp_path)
    cgroup = Cgroup((tmp_path / "pids" / "critpt-1",), frozenset({"pids"}), version=1)
    assert cgroup.oom_kills() == 0
