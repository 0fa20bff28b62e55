"""Who owns a journal row: a process named so that it cannot be mistaken for another.

An owner is ``<boot id>:<pid>:<start time>`` — the kernel's boot id
(``/proc/sys/kernel/random/boot_id``, read only), the process id, and the process's start
time in clock ticks since boot (``/proc/<pid>/stat``, field 22). A pid alone is reused; a
pid with its start time is not, within one boot. An owner is **alive** when it is this boot
and a process with that pid and that start time exists; anything else (another boot, no such
process, a reused pid, an unreadable name) is gone, and its unfinished rows are orphans.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


@functools.lru_cache(maxsize=1)
def boot_id() -> str:
    try:
        return _BOOT_ID.read_text().strip()
    except OSError:
        return "unknown-boot"


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot, or None when there is none."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    try:
        return int(fields[19])  # field 22 of the whole line: after pid and (comm)
    except (IndexError, ValueError):
        return None


def this_process() -> str:
    pid = os.getpid()
    return f"{boot_id()}:{pid}:{start_time(pid)}"


def alive(owner: str | None) -> bool:
    if not owner:
        return False
    boot, _, rest = owner.partition(":")
    pid_text, _, started = rest.partition(":")
    if boot != boot_id() or not pid_text.isdigit() or not started.isdigit():
        return False
    return start_time(int(pid_text)) == int(started)
