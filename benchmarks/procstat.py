"""What the benchmarks read about processes from /proc (Linux only)."""

from __future__ import annotations

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
