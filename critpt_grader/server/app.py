"""The FastAPI app: routes, the body cap, error bodies and client disconnects.

Routes (NeMo Gym's resources-server shape, plus two for operators):

* ``POST /verify``: a row in, the row echoed with its verdict out (see
  :mod:`critpt_grader.server.service`); 413 past ``server_max_body_bytes``, 422 for a malformed
  row or task (naming the field) or an ``Idempotency-Key`` that names another request, 404 for
  an unknown ``problem_id``;
* ``GET /verdict/{key}``: the journaled verdict of a request, by its key as the client sent it;
* ``POST /seed_session``: ``{}`` (a row needs no session state);
* ``POST /aggregate_metrics``: pass@k / majority@k over scored rows, and counts by category;
* ``GET /reverify_mode``: ``"stateless"``, a row re-grades from its own content;
* ``GET /healthz``: ``{"status": "ok", ...}`` once the grader is up;
* ``GET /metrics``: rows graded by category, in flight, queued, refused, p50/p99 latency, the
  comparison lanes (workers, busy, waiting).

**A client that disconnects** mid-grade cancels its own row only: the grade runs as a task
beside a watcher of the connection, and the first to finish wins. **Error bodies** are
:class:`~critpt_grader.rows.rejected.ErrorBody`: a category and a line, never a traceback
(logged on the server), the reference or the expected values.

    app = create_app(Settings(), task_paths=["tasks.jsonl"], journal_dir="journal/")
    uvicorn.run(app, host="127.0.0.1", port=8000)
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ValidationError
from starlette.exceptions import HTTPException

from critpt_grader.errors import GraderClosed
from critpt_grader.rows.intake import parse_object
from critpt_grader.rows.metrics import aggregate
from critpt_grader.rows.rejected import ErrorBody, RowRejected
from critpt_grader.rows.tasksets import TaskSets
from critpt_grader.sandbox.base import SandboxBackend
from critpt_grader.server.models import (
    AggregateMetrics,
    AggregateMetricsRequest,
    SeedSessionRequest,
    first_validation_error,
)
from critpt_grader.server.service import VerifyService
from critpt_grader.settings import Settings

log = logging.getLogger("critpt_grader.server")
ModelT = TypeVar("ModelT", bound=BaseModel)


class BodyTooLarge(Exception):
    def __init__(self, limit: int) -> None:
        super().__init__(f"the request body is larger than {limit} bytes")
        self.limit = limit


def create_app(
    settings: Settings | None = None,
    *,
    task_paths: Iterable[str | Path] = (),
    journal_dir: str | Path | None = None,
    backend: SandboxBackend | None = None,
    service: VerifyService | None = None,
) -> FastAPI:
    """Build the app. Task sets load (and fail, naming the file and field) here, before the
    server listens; the grader starts with the app's lifespan, on the serving loop."""
    settings = settings or Settings()
    if service is None:
        service = VerifyService(
            settings, tasks=TaskSets(task_paths), journal_dir=journal_dir, backend=backend
        )

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        await service.start()
        try:
            yield
        finally:
            await service.aclose()

    app = FastAPI(title="critpt-grader resources server", lifespan=lifespan)
    app.state.service = service
    limit = settings.server_max_body_bytes
    aggregate_limit = settings.server_max_aggregate_bytes
    _install_error_handlers(app, service)
    caps = {"/aggregate_metrics": aggregate_limit}
    app.add_middleware(DeclaredSize, limit=limit, caps=caps, service=service)

    @app.post("/verify")
    async def verify(request: Request) -> Response:
        raw = await _read_body(request, limit)
        peer = request.client.host if request.client else ""
        # The one intake batch and NeMo Gym use too: parse, contract, task, extraction, key.
        prepared = service.prepare(raw, request.headers.get("idempotency-key"), peer)
        grading = asyncio.ensure_future(service.verify(prepared))
        gone = asyncio.ensure_future(_disconnected(request))
        try:
            await asyncio.wait({grading, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not grading.done():
                grading.cancel()  # the client went away (or this handler was cancelled)
                with contextlib.suppress(asyncio.CancelledError):
                    await grading
            gone.cancel()
        if grading.cancelled():
            return Response(status_code=499)  # nobody is listening
        return JSONResponse(grading.result())

    @app.get("/verdict/{key:path}")
    async def verdict(key: str) -> dict[str, Any]:
        """A request's journaled verdict by its key (its ``Idempotency-Key`` as sent, else
        ``critpt_grader.request_key``): how a client fetches a verdict a restarted server or
        ``reverify`` graded after a crash."""
        stored = service.stored_verdict(key)
        if stored is None:
            raise RowRejected(404, "unknown_request", f"no journaled request has the key {key!r}")
        return stored

    @app.post("/seed_session")
    async def seed_session(request: Request) -> dict[str, Any]:
        _validated(SeedSessionRequest, await _json_object(request, limit))
        return {}

    @app.post("/aggregate_metrics")
    async def aggregate_metrics(request: Request) -> AggregateMetrics:
        raw = await _read_body(request, aggregate_limit)

        def compute() -> AggregateMetrics:
            body = parse_object(raw)
            request_body = _validated(AggregateMetricsRequest, body)
            return AggregateMetrics(**aggregate(request_body.verify_responses))

        # Parsing and counting a whole run's rows is CPU work: off the loop that serves
        # /verify and /healthz.
        return await asyncio.to_thread(compute)

    @app.get("/reverify_mode")
    async def reverify_mode() -> str:
        return "stateless"

    @app.get("/healthz")
    async def healthz() -> dict[str, Any]:
        up = service.grader is not None
        return {
            "status": "ok" if up else "starting",
            "backend": service.settings.backend,
            "tasks_loaded": len(service.tasks),
            "journal": str(service.journal.path) if service.journal else None,
        }

    @app.get("/metrics")
    async def metrics() -> dict[str, Any]:
        snapshot = service.metrics.snapshot()
        snapshot["limits"] = {
            "max_in_flight": service.settings.server_max_in_flight,
            "max_queue": service.settings.server_max_queue,
            "max_body_bytes": service.settings.server_max_body_bytes,
        }
        if service.grader is not None:
            snapshot["comparisons"] = service.grader.judging.lane_counts()
        if service.journal is not None:
            snapshot["journal"] = service.journal.counts()
        return snapshot

    return app


class DeclaredSize:
    """A declared ``Content-Length`` past the cap is refused (413) before a byte is read.
    A pure ASGI middleware: it leaves ``receive`` alone, so disconnects still reach /verify."""

    def __init__(
        self, app: Any, *, limit: int, caps: dict[str, int], service: VerifyService
    ) -> None:
        self.app, self.limit, self.caps, self.service = app, limit, caps, service

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            cap = self.caps.get(scope["path"], self.limit)
            declared = dict(scope["headers"]).get(b"content-length", b"")
            if declared.isdigit() and int(declared) > cap:
                self.service.metrics.rejected += 1
                response = _error(
                    413, "body_too_large", f"the request body is larger than {cap} bytes"
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


async def _read_body(request: Request, limit: int) -> bytes:
    """The body, counted as it streams in (a chunked body declares no length)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(limit)
        chunks.append(chunk)
    return b"".join(chunks)


async def _json_object(request: Request, limit: int) -> dict[str, Any]:
    """The body as a JSON object, parsed under the size and nesting limits every untrusted
    reader shares: anything else is 400 or 422."""
    return parse_object(await _read_body(request, limit))


def _validated(model: type[ModelT], body: dict[str, Any]) -> ModelT:
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        field, message = first_validation_error(exc)
        raise RowRejected(422, "request_invalid", message, field=field) from None


async def _disconnected(request: Request) -> None:
    """Return once the client has gone. With the body read, the server's next message for
    this request is ``http.disconnect``, sent when the connection closes."""
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


def _error(status: int, category: str, detail: str, **extra: Any) -> JSONResponse:
    body = ErrorBody(category=category, detail=detail, **extra)
    return JSONResponse(body.model_dump(exclude_none=True), status_code=status)


def _install_error_handlers(app: FastAPI, service: VerifyService) -> None:
    @app.exception_handler(RowRejected)
    async def rejected(request: Request, exc: RowRejected) -> JSONResponse:
        service.metrics.rejected += 1
        return JSONResponse(exc.body.model_dump(exclude_none=True), status_code=exc.status)

    @app.exception_handler(BodyTooLarge)
    async def too_large(request: Request, exc: BodyTooLarge) -> JSONResponse:
        service.metrics.rejected += 1
        return _error(413, "body_too_large", str(exc))

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        service.metrics.rejected += 1
        first = exc.errors()[0] if exc.errors() else {"loc": ("body",), "msg": "invalid"}
        field = ".".join(str(p) for p in first["loc"] if p != "body") or "body"
        return _error(422, "request_invalid", str(first["msg"]), field=field)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        categories = {400: "request_invalid", 404: "not_found", 405: "method_not_allowed"}
        category = categories.get(exc.status_code, "http_error")
        return _error(exc.status_code, category, str(exc.detail))

    @app.exception_handler(RecursionError)
    async def too_deep(request: Request, exc: RecursionError) -> JSONResponse:
        # Bodies are bounded before anything recurses; this is the last line.
        service.metrics.rejected += 1
        return _error(400, "request_invalid", "the body is nested too deep")

    @app.exception_handler(GraderClosed)
    async def closing(request: Request, exc: GraderClosed) -> JSONResponse:
        return _error(503, "shutting_down", "the server is shutting down; retry elsewhere")

    @app.exception_handler(Exception)
    async def internal(request: Request, exc: Exception) -> JSONResponse:
        # The traceback goes to the server's log only.
        log.error("internal error on %s", request.url.path, exc_info=exc)
        return _error(500, "internal_error", "an internal error; see the server's log")
