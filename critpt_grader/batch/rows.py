"""One batch row from an IN line to its OUT row: the ``/verify`` logic, without HTTP.

An IN row is shaped like a ``/verify`` body: the task (``task_data``, ``verifier_metadata``,
top-level task fields, or a ``problem_id`` of a task set given with ``--tasks``) and a
``response`` (text or a Responses API object). Its OUT row is exactly what ``/verify`` would
answer (:func:`critpt_grader.rows.resolve.echo`) plus ``"row"``, the 0-based line of the IN
row (and, added by :func:`~critpt_grader.batch.grade_indexed` and the OUT writer, its
``input_hash`` and the IN file's ``in_fingerprint``: :mod:`critpt_grader.batch.fingerprint`).
The row goes through the server's own intake (:func:`~critpt_grader.rows.intake.prepare_row`).

A row the server would refuse (not JSON, no response, a malformed task, an unknown
``problem_id``) becomes an OUT row too, never a crash or a gap: the server's error body
(``category`` ``request_invalid``, ``task_invalid`` or ``unknown_problem_id``, ``detail``,
``field``, ``problem_id``) with ``"rejected": true``, ``reward: null`` and
``mask_sample: true``. A grader bug on one row is likewise an OUT row, ``grader_error``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from critpt_grader.extract import Extraction
from critpt_grader.rows.intake import PreparedRow, prepare_row
from critpt_grader.rows.rejected import RowRejected
from critpt_grader.rows.resolve import echo
from critpt_grader.rows.tasksets import TaskSets
from critpt_grader.settings import Settings
from critpt_grader.tasks import Task
from critpt_grader.verdict import GRADER_ERROR_CATEGORY


@dataclass(frozen=True, slots=True)
class Ready:
    """A row that will be graded: its IN index and the row as the intake prepared it."""

    index: int
    row: PreparedRow

    @property
    def body(self) -> dict[str, Any]:
        return self.row.body

    @property
    def task(self) -> Task:
        return self.row.task

    @property
    def extraction(self) -> Extraction:
        return self.row.extraction


def prepare(
    index: int, item: Any, sets: TaskSets, settings: Settings | None = None
) -> Ready | dict[str, Any]:
    """The row ready to grade, or its finished OUT row when it cannot be graded."""
    try:
        row = prepare_row(item, sets, settings or Settings())
    except RowRejected as exc:
        return rejected(index, exc)
    return Ready(index, row)


def rejected(index: int, exc: RowRejected) -> dict[str, Any]:
    return {
        "row": index,
        **exc.body.model_dump(),
        "rejected": True,
        "reward": None,
        "mask_sample": True,
    }


def graded(index: int, body: dict[str, Any], result: Any) -> dict[str, Any]:
    """The ``/verify`` response for ``body`` with ``result``, plus the row index (which an
    IN row's own ``"row"`` key never overrides: resume reads it)."""
    return {**echo(body, result, None), "row": index}


def grader_error(index: int, ready: Ready | None, detail: str) -> dict[str, Any]:
    return {
        "row": index,
        "category": GRADER_ERROR_CATEGORY,
        "detail": detail,
        "field": None,
        "problem_id": ready.task.problem_id if ready is not None else None,
        "rejected": True,
        "reward": None,
        "mask_sample": True,
    }
