"""The one input contract of a row, for ``/verify``, ``batch`` and ``grade_many`` alike.

A row is a JSON object with ``response`` — the model's answer as text, or a Responses API
object — and its task (in the row, or a ``problem_id`` of a loaded set: :mod:`.resolve`).
``responses_create_params`` is optional (NeMo Gym sends it; it is echoed, never read); when
present it must be an object. Every other key is echoed. A row that breaks the contract is a
:class:`~critpt_grader.rows.rejected.RowRejected` naming the field, in the same words
everywhere.
"""

from __future__ import annotations

from typing import Any

from critpt_grader.rows.rejected import RowRejected


def check_row(item: Any) -> dict[str, Any]:
    """``item`` when it is a row of the contract; :class:`RowRejected` otherwise."""
    if not isinstance(item, dict):
        raise RowRejected(422, "request_invalid", "the row must be a JSON object")
    if "response" not in item:
        raise RowRejected(
            422,
            "request_invalid",
            "the row has no response: give the model's answer as text or a Responses API object",
            field="response",
        )
    if not isinstance(item["response"], str | dict):
        raise RowRejected(
            422,
            "request_invalid",
            "the response must be text or a Responses API object, not "
            f"{type(item['response']).__name__}",
            field="response",
        )
    params = item.get("responses_create_params")
    if params is not None and not isinstance(params, dict):
        raise RowRejected(
            422,
            "request_invalid",
            "responses_create_params must be an object when given",
            field="responses_create_params",
        )
    return item
