"""What crosses HTTP, validated at the boundary (pydantic); inside, plain dicts and dataclasses.

A ``/verify`` body follows the one row contract of :mod:`critpt_grader.rows.envelope` (the
same as ``batch``): ``response`` (text or a Responses API object), optional
``responses_create_params``, and the task, either in the row (``task_data``,
``verifier_metadata`` or top-level task fields) or only a ``problem_id`` of a task set loaded
at start. Every other key is kept and echoed, ``_ng_*`` framework bookkeeping included. The
task itself is validated by :mod:`critpt_grader.tasks` (strictly, naming the field) and the
response by :mod:`critpt_grader.extract`.

Error bodies have one shape, :class:`~critpt_grader.rows.rejected.ErrorBody`: a ``category`` a
client can route on, a one-line ``detail``, and the ``field`` or ``problem_id`` at fault when
there is one. They never carry a traceback, the reference or the expected values.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class SeedSessionRequest(BaseModel):
    model_config = ConfigDict(extra="allow")


class AggregateMetricsRequest(BaseModel):
    """NeMo Gym's ``/aggregate_metrics`` body: stripped verify responses."""

    model_config = ConfigDict(extra="allow")

    verify_responses: list[dict[str, Any]]


class AggregateMetrics(BaseModel):
    group_level_metrics: list[dict[str, Any]] = Field(default_factory=list)
    agent_metrics: dict[str, Any] = Field(default_factory=dict)
    key_metrics: dict[str, Any] = Field(default_factory=dict)


def first_validation_error(exc: Any) -> tuple[str, str]:
    """``(field, message)`` of a pydantic ValidationError's first error, without the input
    value (which could be anything the client sent)."""
    first = exc.errors(include_input=False, include_url=False)[0]
    field = ".".join(str(part) for part in first["loc"] if part != "body") or "body"
    return field, first["msg"]
