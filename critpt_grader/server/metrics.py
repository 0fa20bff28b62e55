"""Counters for ``GET /metrics``: rows graded by category, in flight, queued, refused, and
latency quantiles. (The pass@k / majority@k family of ``POST /aggregate_metrics`` is
:mod:`critpt_grader.rows.metrics`, shared with batch reports.)
"""

from __future__ import annotations

import time
from collections import Counter, deque
from typing import Any

from critpt_grader.rows.metrics import quantile

_LATENCIES = 10_000  # the window p50/p99 are read over


class LiveMetrics:
    """Rows graded by category, in flight, queued, refused, and latency quantiles."""

    def __init__(self) -> None:
        self.started = time.time()
        self.categories: Counter[str] = Counter()
        self.in_flight = 0  # holding a grading slot
        self.queued = 0  # accepted, waiting for a slot
        self.refused = 0  # answered provider_unavailable at once: queue full
        self.rejected = 0  # 4xx: malformed request, unknown problem_id, too large
        self.cancelled = 0  # the client went away mid-grade
        self.errors = 0  # internal faults (5xx)
        self._latencies: deque[float] = deque(maxlen=_LATENCIES)

    def graded(self, category: str, seconds: float) -> None:
        self.categories[category] += 1
        self._latencies.append(seconds)

    def snapshot(self) -> dict[str, Any]:
        ordered = sorted(self._latencies)
        return {
            "uptime_seconds": round(time.time() - self.started, 3),
            "rows_graded": sum(self.categories.values()),
            "by_category": dict(sorted(self.categories.items())),
            "in_flight": self.in_flight,
            "queued": self.queued,
            "refused_busy": self.refused,
            "rejected": self.rejected,
            "cancelled": self.cancelled,
            "internal_errors": self.errors,
            "latency_seconds": {
                "p50": _quantile(ordered, 0.50),
                "p99": _quantile(ordered, 0.99),
                "window": len(ordered),
            },
        }


def _quantile(ordered: list[float], q: float) -> float | None:
    value = quantile(ordered, q)
    return None if value is None else round(value, 6)
