"""What the benchmarks read about processes from /proc (Linux only)."""

from __future__ import annotations

import os
from pathlib import Path


def rss_kib(pid: int, field: str = "VmRSS") -> int:
    """A process's resident memory (or another ``/proc/PID/status`` size field) in KiB; 0
    when the process is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


TICK = os.sysconf("SC_CLK_TCK")
ROLES = ("grader", "comparison workers", "sandbox main", "zygote", "jobs", "other")


def _processes() -> dict[int, tuple[int, str, list[int]]]:
    """pid -> (ppid, command line, [utime, stime, cutime, cstime] in ticks)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        rest = stat.rsplit(")", 1)[1].split()
        found[int(entry.name)] = (int(rest[1]), cmdline, [int(v) for v in rest[11:15]])
    return found


def cpu_by_role(root: int | None = None) -> dict[str, float]:
    """CPU seconds used so far by the processes under ``root`` (this process), by role:
    the grader itself, the comparison workers (live ones and those their zygote reaped),
    each warm sandbox's main process (its init), its zygote, and the job processes the
    zygote forked and reaped (and the live ones). Subtract two snapshots for a pass; a
    process that ended between them and was reaped by no process counted here is lost."""
    root = os.getpid() if root is None else root
    procs = _processes()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in procs.items():
        children.setdefault(ppid, []).append(pid)
    self_times = os.times()
    totals = dict.fromkeys(ROLES, 0.0)
    totals["grader"] = self_times.user + self_times.system

    def own(pid: int) -> float:
        return sum(procs[pid][2][:2]) / TICK

    def reaped(pid: int) -> float:
        return sum(procs[pid][2][2:]) / TICK

    def subtree(pid: int) -> float:
        return own(pid) + reaped(pid) + sum(subtree(c) for c in children.get(pid, []))

    def walk(pid: int) -> None:
        for child in children.get(pid, []):
            command = procs[child][1]
            if "zygote_main" in command:  # the comparison workers' zygote and its workers
                totals["comparison workers"] += subtree(child)
            elif "critpt_grader.runner" in command and "bwrap" not in command.split(" ")[0]:
                # a sandbox's init (bubblewrap's own command line names the runner too)
                totals["sandbox main"] += own(child)
                for zygote in children.get(child, []):
                    totals["zygote"] += own(zygote)
                    totals["jobs"] += reaped(zygote)
                    totals["jobs"] += sum(subtree(j) for j in children.get(zygote, []))
                totals["other"] += reaped(child)  # orphans the init reaped
            else:  # launchers, bubblewrap: look inside
                totals["other"] += own(child)
                walk(child)

    walk(root)
    return totals
