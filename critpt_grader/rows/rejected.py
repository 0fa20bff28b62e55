"""A row that will not be graded: its one error shape, shared by the server and batch.

A refused row is answered (HTTP) or written (an OUT row) with a status and an
:class:`ErrorBody` — a category and a line naming the field — never a traceback, the
reference or the expected values.
"""

from __future__ import annotations

from pydantic import BaseModel


class ErrorBody(BaseModel):
    """The one shape of every error response."""

    category: str  # request_invalid, task_invalid, unknown_problem_id, body_too_large, ...
    detail: str
    field: str | None = None
    problem_id: str | None = None
    # idempotency_key_reused: the key, and where the request that first used it stands
    # (in_flight, graded, unfinished, from_before_restart)
    request_key: str | None = None
    first_request: str | None = None


class RowRejected(Exception):
    """A request the server will not grade: answered with ``status`` and an
    :class:`ErrorBody`, before anything is journaled."""

    def __init__(
        self,
        status: int,
        category: str,
        detail: str,
        *,
        field: str | None = None,
        problem_id: str | None = None,
        **more: str,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.body = ErrorBody(
            category=category, detail=detail, field=field, problem_id=problem_id, **more
        )
