"""Signals a job could send the runner's own processes: ignored, and given back to the job.

Every process of a sandbox is the same uid, so a job may signal the supervisor (PID 1) and the
zygote. The kernel delivers a signal to a namespace's init from inside only when the init has
a handler for it — and Python installs one for SIGINT — so the supervisor and the zygote set
every catchable signal to ``SIG_IGN`` (:func:`ignore_all`). SIGCHLD stays as it was: both wait
for their children. SIGKILL and SIGSTOP cannot be ignored: the kernel never delivers them to
an init from inside its namespace, and the supervisor undoes a stopped zygote with SIGCONT and
retires a sandbox whose zygote was killed (:mod:`critpt_grader.runner.zygote`).

Ignored dispositions survive ``fork``: a job's process puts back what the interpreter had at
start (:func:`restore_defaults`), so a program sees the usual KeyboardInterrupt and SIGPIPE.
"""

from __future__ import annotations

import contextlib
import signal
from typing import Any

_NEEDED = frozenset({signal.SIGKILL, signal.SIGSTOP, signal.SIGCHLD})
_defaults: dict[int, Any] = {}


def catchable() -> list[signal.Signals | int]:
    """The signals a process may ignore, SIGCHLD excepted."""
    return sorted(sig for sig in signal.valid_signals() if sig not in _NEEDED)


def ignore_all() -> None:
    """Ignore every catchable signal (the first call records the interpreter's dispositions)."""
    for sig in catchable():
        with contextlib.suppress(OSError, ValueError, RuntimeError):
            previous = signal.signal(sig, signal.SIG_IGN)
            _defaults.setdefault(int(sig), previous)


def restore_defaults() -> None:
    """Put back the dispositions :func:`ignore_all` replaced (in a job's process)."""
    for sig, previous in _defaults.items():
        with contextlib.suppress(OSError, ValueError, RuntimeError, TypeError):
            signal.signal(sig, previous if previous is not None else signal.SIG_DFL)
