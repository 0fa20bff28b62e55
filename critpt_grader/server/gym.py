"""NeMo Gym integration: a ``SimpleResourcesServer`` that grades with this grader.

Needs ``nemo-gym`` (Python ≥ 3.12; 0.4.0 is tested), an optional extra: this module imports it,
the rest of the package never does. The server calls the same code as ``critpt-grader serve``
(:class:`~critpt_grader.server.service.VerifyService`): the task comes in the row or by
``problem_id`` from the configured task sets, each rollout gets its own verdict, ``_ng_*`` keys
are echoed, rows that are not a clean score carry ``mask_sample`` and the ``_ng_failure_*``
keys, and every accepted row can be journaled for ``critpt-grader reverify``.

Config (``integrations/nemo_gym/resources_servers/critpt_grader/configs/critpt_grader.yaml``)::

    critpt_grader_resources_server:
      resources_servers:
        critpt_grader:
          entrypoint: app.py
          domain: other
          tasks: [/data/critpt/challenges]   # for problem_id-only rows
          journal_dir: /var/lib/critpt-grader/journal      # optional
          settings: {max_concurrent_sandboxes: 8}           # CRITPT_GRADER_* settings

The ``app.py`` beside it is two lines: import :class:`CritPtGraderResourcesServer` and call its
``run_webserver()``. As the stock server, it never refuses a row: a bad one (a task typo, an
unknown ``problem_id``) comes back as a masked ``verifier_error`` row (reward 0,
``mask_sample``, the :class:`~critpt_grader.rows.rejected.ErrorBody` under ``critpt_grader``)
unless ``strict_refusals: true`` asks for the HTTP error ``serve`` gives. Each response also
carries the stock server's ``accuracy`` (the reward of a scored row, else 0) and
``timeout_rate`` (1 when the candidate ran out of time), and echoes every key the request
sent, null ones included. The grader is closed when the web server shuts down.

The grader binds to the event loop of the first ``/verify`` (NeMo Gym's uvicorn loop).
"""

from __future__ import annotations

import contextlib
from typing import Any

from fastapi import HTTPException
from nemo_gym.base_resources_server import (
    BaseResourcesServerConfig,
    BaseVerifyRequest,
    BaseVerifyResponse,
    SimpleResourcesServer,
)
from pydantic import ConfigDict, Field

from critpt_grader.rows.metrics import aggregate, key_metrics
from critpt_grader.rows.rejected import RowRejected
from critpt_grader.rows.tasksets import TaskSets
from critpt_grader.server.service import VerifyService
from critpt_grader.settings import Settings


class CritPtGraderConfig(BaseResourcesServerConfig):
    tasks: list[str] = Field(default_factory=list)  # CritPt challenge JSON, task_data JSONL
    journal_dir: str | None = None
    settings: dict[str, Any] = Field(default_factory=dict)  # Settings fields, e.g. backend
    strict_refusals: bool = False  # a bad row is an HTTP error, not a masked row


class CritPtGraderVerifyRequest(BaseVerifyRequest):
    # The task (task_data, verifier_metadata, top-level fields or problem_id) and _ng_ keys.
    model_config = ConfigDict(extra="allow")


class CritPtGraderVerifyResponse(BaseVerifyResponse):
    model_config = ConfigDict(extra="allow")

    category: str
    outcome: str
    failure_kind: str | None = None
    terminal: bool
    mask_sample: bool
    accuracy: float = 0.0  # the stock server's: the reward of a scored row
    timeout_rate: float = 0.0  # 1 when the candidate ran out of time


class CritPtGraderResourcesServer(SimpleResourcesServer):
    config: CritPtGraderConfig

    def model_post_init(self, context: Any) -> None:
        super().model_post_init(context)
        self._service = VerifyService(
            Settings(**self.config.settings),
            tasks=TaskSets(self.config.tasks),
            journal_dir=self.config.journal_dir,
        )
        self._started = False

    async def verify(self, body: CritPtGraderVerifyRequest) -> CritPtGraderVerifyResponse:
        if not self._started:
            await self._service.start()
            self._started = True
        row = body.model_dump(mode="json", exclude_unset=True)  # every key sent, nulls too
        try:
            prepared = self._service.prepare(row)
        except RowRejected as exc:
            if self.config.strict_refusals:
                detail = exc.body.model_dump(exclude_none=True)
                raise HTTPException(exc.status, detail=detail) from None
            return CritPtGraderVerifyResponse.model_validate(verifier_error(row, exc))
        out = await self._service.verify(prepared)
        return CritPtGraderVerifyResponse.model_validate(with_stock_fields(out))

    def setup_webserver(self):
        app = super().setup_webserver()
        inner = app.router.lifespan_context
        service = self._service

        @contextlib.asynccontextmanager
        async def lifespan(running):
            async with inner(running) as state:
                try:
                    yield state
                finally:
                    await service.aclose()  # the Grader, its sandboxes and workers

        app.router.lifespan_context = lifespan
        return app

    def compute_metrics(self, tasks: list[list[dict[str, Any]]]) -> dict[str, Any]:
        """pass@k / majority@k over scored rows, and counts by category (as ``serve``)."""
        return aggregate([row for rollouts in tasks for row in rollouts])["agent_metrics"]

    def get_key_metrics(self, agent_metrics: dict[str, Any]) -> dict[str, Any]:
        return key_metrics(agent_metrics)


def with_stock_fields(out: dict[str, Any]) -> dict[str, Any]:
    """The stock server's per-row ``accuracy`` and ``timeout_rate`` beside the reward."""
    scored = out.get("outcome") == "scored"
    return {
        **out,
        "accuracy": float(out.get("reward") or 0.0) if scored else 0.0,
        "timeout_rate": 1.0 if out.get("category") == "candidate_timeout" else 0.0,
    }


def verifier_error(row: dict[str, Any], exc: RowRejected) -> dict[str, Any]:
    """A row the grader cannot take, as a masked row: never a refused request."""
    return {
        **row,
        "reward": 0.0,
        "category": exc.body.category,
        "outcome": "failure",
        "failure_kind": "verifier_error",
        "terminal": True,
        "mask_sample": True,
        "_ng_failure_class": "verifier_error",
        "_ng_failure_subcategory": exc.body.category,
        "_ng_failure_terminal": True,
        "accuracy": 0.0,
        "timeout_rate": 0.0,
        "critpt_grader": {"error": exc.body.model_dump(exclude_none=True), "status": exc.status},
    }
