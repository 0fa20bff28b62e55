"""The one way in for a row: bytes, text or a dict to a :class:`PreparedRow`, for ``/verify``,
``batch`` and NeMo Gym alike.

    item ─► parse ─► input contract ─► task ─► extract ─► request key ─► PreparedRow
            bounded   (envelope)        (resolve) once      (hash once)

Each step is done here once per row, and never again downstream: the grader takes the
extraction it is given (:meth:`~critpt_grader.pipeline.Grader.grade`), the server and batch
take the content hash computed here (the request key and the OUT row's ``input_hash``).
Every refusal is a :class:`~critpt_grader.rows.rejected.RowRejected` naming the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from critpt_grader.extract import Extraction, extract
from critpt_grader.jsonlimits import loads_strict
from critpt_grader.rows.canonical import content_hash
from critpt_grader.rows.envelope import check_row
from critpt_grader.rows.rejected import RowRejected
from critpt_grader.rows.request_key import checked_key, request_key
from critpt_grader.rows.resolve import resolve_task
from critpt_grader.rows.tasksets import TaskSets
from critpt_grader.settings import Settings
from critpt_grader.tasks import Task


@dataclass(frozen=True, slots=True)
class PreparedRow:
    """A row that will be graded: its task resolved, its code extracted, its identity hashed."""

    body: dict[str, Any]
    task: Task
    task_row: dict[str, Any] | None  # the task as it came in the row (journaled)
    task_key: str | None  # or its problem_id in a loaded set
    extraction: Extraction
    request_hash: str  # the SHA-256 of the canonical body (batch's input_hash)
    request_key: str  # the client's Idempotency-Key, else "sha256:" + request_hash
    client: str = ""  # who sent it: comparison workers are shared fairly by it

    @property
    def response(self) -> Any:
        return self.body["response"]


def parse_object(raw: bytes | str, what: str = "body") -> dict[str, Any]:
    """Untrusted JSON text as an object, parsed strictly under the nesting limit every
    untrusted reader shares (:mod:`critpt_grader.jsonlimits`): 400 when it is not JSON, 422
    when it is not an object. ``what`` names it in the refusal."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    try:  # utf-8-sig: a file saved with a byte-order mark starts its first line with one
        parsed = loads_strict(data.decode("utf-8-sig"))
    except ValueError as exc:  # UnicodeDecodeError and TooDeep are ValueErrors
        raise RowRejected(400, "request_invalid", f"the {what} is not valid JSON: {exc}") from None
    if not isinstance(parsed, dict):
        raise RowRejected(422, "request_invalid", f"the {what} must be a JSON object")
    return parsed


def parse_row(raw: bytes | str) -> dict[str, Any]:
    """A row's JSON text (a request body or an IN line) as a row of the input contract."""
    return check_row(parse_object(raw, "row"))


def prepare_row(
    item: bytes | str | dict[str, Any],
    sets: TaskSets,
    settings: Settings,
    *,
    key: str | None = None,
    client: str = "",
) -> PreparedRow:
    """``item`` ready to grade; :class:`RowRejected` when it cannot be. ``key``: the client's
    ``Idempotency-Key``, if it gave one."""
    body = parse_row(item) if isinstance(item, bytes | str) else check_row(item)
    task, task_row, task_key = resolve_task(body, sets)
    extraction = extract(
        body["response"],
        max_bytes=settings.source_bytes,
        entrypoint=task.entrypoint,
        fence=settings.fence,
    )
    body_hash = content_hash(body)
    return PreparedRow(
        body,
        task,
        task_row,
        task_key,
        extraction,
        body_hash,
        request_key(body_hash, checked_key(key)),
        client,
    )
