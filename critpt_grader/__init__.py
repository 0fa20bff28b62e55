"""critpt-grader: a strict, sandboxed grader for CritPt-style physics problems.

    from critpt_grader import grade
    result = grade(task, response)
    result.outcome, result.reward, result.category, result.failure_kind, result.terminal

Names are imported on first use, so the in-sandbox runner (which only needs the codec)
does not pay for the host-side pipeline.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["GradeResult", "Grader", "agrade", "grade", "grade_many"]

_EXPORTS = {
    "grade": "critpt_grader.pipeline",
    "agrade": "critpt_grader.pipeline",
    "Grader": "critpt_grader.pipeline",
    "GradeResult": "critpt_grader.result",
    "grade_many": "critpt_grader.batch",
}

if TYPE_CHECKING:
    from critpt_grader.batch import grade_many
    from critpt_grader.pipeline import Grader, agrade, grade
    from critpt_grader.result import GradeResult


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'critpt_grader' has no attribute {name!r}")
