"""Typed errors. Each names where the problem is, so a caller can report it in one line."""

from __future__ import annotations


class GraderError(Exception):
    """Base class for every error the grader raises on purpose."""


class CodecError(GraderError):
    """A value cannot be encoded, or wire input cannot be decoded.

    ``code`` is a stable machine-readable reason (``invalid_arity``, ``depth_limit``, ...);
    ``path`` points at the offending node, e.g. ``$.value[2].re``.
    """

    def __init__(self, code: str, path: str, detail: str = "") -> None:
        self.code = code
        self.path = path
        self.detail = detail
        super().__init__(f"{code} at {path}" + (f": {detail}" if detail else ""))


class TaskError(GraderError):
    """A task row or challenge file is malformed. Names the task and the field."""

    def __init__(self, task_id: str | None, field: str, detail: str) -> None:
        self.task_id = task_id
        self.field = field
        self.detail = detail
        who = f"task {task_id!r}" if task_id else "task (no id)"
        super().__init__(f"{who}: field {field!r}: {detail}")


class GrammarError(GraderError):
    """Symbolic text is outside the restricted grammar or over one of its limits."""

    def __init__(self, code: str, detail: str = "") -> None:
        self.code = code
        self.detail = detail
        super().__init__(f"{code}" + (f": {detail}" if detail else ""))


class InputError(GraderError):
    """Unusable command-line or request input (a file that cannot be read, bad JSON...)."""


class GraderClosed(GraderError, RuntimeError):
    """``grade()`` on a :class:`~critpt_grader.pipeline.Grader` after ``aclose()``: a caller's
    bug, raised rather than returned as a retryable row (a loop would retry it forever)."""
