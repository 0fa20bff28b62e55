"""The verifier of an exported Harbor dataset: grade the agent's answer through ``grade()``.

``verify(workspace, task_data, response=None)`` runs inside the task's verifier sandbox (the
task image has this package installed). The answer is ``answer.md`` in the workspace when it
holds text, else ``response`` when the runner passes one (a Responses API object or its
text), else empty (scored 0): see :mod:`critpt_grader.harbor.answer`. It never raises for a
bad answer: every answer gets a verdict. Of ``answer.md`` at most :data:`ANSWER_BYTES`
(1 MiB) are read: a longer file (a 7 GiB sparse one made ``verify`` raise ``MemoryError``) is
a scored 0 with its reason, and whatever else an agent can leave there — a folder, a link, a
FIFO, a device, a file it cannot read — is read as no answer, never as an exception.

The candidate's code never runs in this process: ``grade()`` runs it in the local sandbox
backend, with the strongest containment the container allows — bubblewrap, a cgroup and an
unprivileged user where they work; in a container without user namespaces another uid,
rlimits and a fresh process (``allow_weak_containment``). The metric ``strong_containment``
says which (1 or 0); the full description goes to stderr with the verdict.

Returned metrics (numbers only, as the runner requires): ``reward`` (1.0 only for a scored
pass), ``passed``, ``scored`` (a reward that means something), ``unscorable`` (the task's or
the grader's fault: masked, never a 0 to train on), ``failure`` (infrastructure; retry),
``timeout`` (the candidate ran out of time), ``strong_containment``.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import Any

from critpt_grader.harbor.answer import chosen_answer
from critpt_grader.pipeline import grade
from critpt_grader.settings import Settings
from critpt_grader.verdict import Category

ANSWER_FILE = "answer.md"
ANSWER_BYTES = 1 << 20  # of answer.md, read at most; a longer one is a scored 0
METRICS = ("reward", "passed", "scored", "unscorable", "failure", "timeout", "strong_containment")
# Keys the exporter adds to each row for the templates; not part of the task itself.
DERIVED_KEYS = ("instruction", "solution", "task_b64")


def verify(workspace: Path, task_data: dict, response: Any = None) -> dict[str, float]:
    task = task_document(task_data)
    answer, channel = chosen_answer(response, lambda: read_answer(Path(workspace)))
    if isinstance(answer, Oversized):
        # The agent's own doing, like any wrong answer: a 0 that counts. Nothing ran.
        print(f"critpt-grader: candidate_source_error (reward 0): {answer}", file=sys.stderr)
        return {**dict.fromkeys(METRICS, 0.0), "scored": 1.0, "strong_containment": 1.0}
    result = grade(task, answer, settings=Settings(allow_weak_containment=True))
    print(
        f"critpt-grader: {result.category} (reward {result.reward:g}): {result.reason}\n"
        f"answer from: {channel}; containment: {result.containment}",
        file=sys.stderr,
    )
    return {
        "reward": float(result.reward),
        "passed": float(result.category == Category.PASSED),
        "scored": float(result.outcome == "scored"),
        "unscorable": float(result.outcome == "unscorable"),
        "failure": float(result.outcome == "failure"),
        "timeout": float(result.category == Category.CANDIDATE_TIMEOUT),
        "strong_containment": float(_strong(result.containment)),
    }


def _strong(containment: str) -> bool:
    """Bubblewrap held the code (nothing ran: nothing needed holding)."""
    if not containment:
        return True
    return containment.startswith("bwrap") and "WARNING" not in containment


def task_document(task_data: dict) -> dict:
    """The task as ``grade()`` reads it: a ``task_data`` v1 row, or a CritPt challenge file
    holding the one problem the row carries."""
    fields = {k: v for k, v in task_data.items() if k not in DERIVED_KEYS}
    if "answer_code" in fields:  # a CritPt challenge problem
        return {"problems": [fields]}
    return fields


class Oversized(str):
    """``answer.md`` was longer than :data:`ANSWER_BYTES`; the text says so."""


def read_answer(workspace: Path) -> str:
    """The text of ``answer.md`` in the workspace: "" when there is none or it is no regular
    file of its own (a link, a folder, a FIFO, a device) or cannot be read; an
    :class:`Oversized` reason when it holds more than :data:`ANSWER_BYTES`. Never raises."""
    path = Path(workspace) / ANSWER_FILE
    try:
        # O_NONBLOCK: opening a FIFO for reading would wait for a writer that never comes.
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except (OSError, ValueError):
        return ""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        data = bytearray()
        while len(data) <= ANSWER_BYTES:  # one byte past the limit tells "over" from "at"
            chunk = os.read(fd, ANSWER_BYTES + 1 - len(data))
            if not chunk:
                break
            data += chunk
    except (OSError, ValueError, MemoryError):
        return ""
    finally:
        os.close(fd)
    if len(data) > ANSWER_BYTES:
        return Oversized(f"{ANSWER_FILE} is longer than {ANSWER_BYTES} bytes: not read")
    return data.decode("utf-8", errors="replace")
