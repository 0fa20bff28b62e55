"""The seccomp filter a sandbox's bubblewrap loads (the filters themselves:
:mod:`critpt_grader.runner.seccomp`, where a job's process installs its own on top).

Without a world per job bubblewrap loads the job filter, the whole of it; with one
(:mod:`critpt_grader.runner.world`) it loads the runner's filter, which leaves ``unshare``,
``setns`` and ``mount`` to the runner's own processes, and each job's process adds the job
filter before it runs a line of the program.
"""

from __future__ import annotations

import os

from critpt_grader.runner.seccomp import job_filter, runner_filter


def seccomp_filter(*, worlds: bool = False) -> bytes | None:
    """The program for bubblewrap's ``--seccomp``: the runner's when it builds a world per job
    (``worlds``), else the job's; None where no filter is written for this machine."""
    return runner_filter() if worlds else job_filter()


def filter_fd(program: bytes) -> int:
    """An inheritable descriptor positioned at the start of ``program``, for ``--seccomp``."""
    fd = os.memfd_create("critpt-seccomp", 0)  # no close-on-exec: bubblewrap reads it
    os.write(fd, program)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
