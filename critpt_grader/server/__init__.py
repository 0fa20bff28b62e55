"""The resources server: NeMo Gym's ``/verify`` on this grader, one rollout graded on its own.

A drop-in for NeMo Gym's stock ``critpt`` resources server, which buffers rows until it holds
all 70 CritPt problems, sends them to a hosted, rate-limited grading service and hands every
rollout the batch's average. Here each row is graded locally by the same
:class:`~critpt_grader.pipeline.Grader` that ``grade()`` uses, and answered with its own verdict.

The package is a thin imperative shell over the pure core, in one module per job:

* :mod:`~critpt_grader.server.models`: pydantic models of what crosses HTTP (validated once,
  at the boundary), and the one shape of an error body (a category, never a traceback);
* :mod:`~critpt_grader.rows.tasksets`: the task sets loaded at start (``--tasks``), so rows
  that carry only a ``problem_id`` (as the stock CritPt data rows do) grade unchanged;
* :mod:`~critpt_grader.server.journal`: the SQLite journal; every accepted row is written
  before any sandbox starts, and ``critpt-grader reverify`` re-grades what a crash left;
* :mod:`~critpt_grader.server.metrics`: live counters (``/metrics``); the pass@k /
  majority@k family of ``/aggregate_metrics`` is :mod:`critpt_grader.rows.metrics`;
* :mod:`~critpt_grader.server.service`: one row from request to verdict: resolve the task,
  extract the code, admit (bounded concurrency and queue), journal, grade, echo;
* :mod:`~critpt_grader.server.app`: the FastAPI app factory (routes, body cap, disconnects).

Run it with ``critpt-grader serve`` (``critpt_grader/commands/serve.py``); in NeMo Gym, through
:mod:`critpt_grader.server.gym`.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__all__ = ["VerifyService", "create_app"]

# Imported on first use: ``critpt-grader batch`` reuses the service's row resolution and
# response building without the ``server`` extra (FastAPI) installed.
_EXPORTS = {
    "create_app": "critpt_grader.server.app",
    "VerifyService": "critpt_grader.server.service",
}

if TYPE_CHECKING:
    from critpt_grader.server.app import create_app
    from critpt_grader.server.service import VerifyService


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'critpt_grader.server' has no attribute {name!r}")
