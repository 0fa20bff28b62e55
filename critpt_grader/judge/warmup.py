"""Imported once by the comparison workers' forkserver, never by the grader itself.

It loads SymPy, mpmath and the comparator and compiles the grammar, so that every worker forked
from the forkserver starts warm (:mod:`critpt_grader.judge.pool`, which is handed this
module's name by :class:`critpt_grader.judge.row.RowJudge`). Nothing here may start a
thread (the comparator's time box starts one on first use): a thread does not survive a fork,
and a forked worker would inherit a time box whose watchdog is gone. So only imports, a parse
and a plain evaluation run here, then ``gc.freeze()`` keeps the warm heap shared
copy-on-write between the workers.
"""

from __future__ import annotations

import gc

import sympy

import critpt_grader.compare.walk
import critpt_grader.judge.row
import critpt_grader.symbolic.prove  # noqa: F401
from critpt_grader.symbolic.parse import parse

parse("sqrt(2)*x**2/3 + sin(pi/6) - exp(-1/2)", {"x": {"positive": True}})
sympy.sqrt(2).evalf(60, strict=True)
gc.freeze()


def after_first_worker() -> None:
    """Run by the zygote once, after it forked its first worker and then sat idle a moment:
    build the pint unit registry (0.3-0.5 s of CPU), so that every later worker,
    replacements included, starts with it instead of building it on its first unit. Not
    before: on a cold start the first worker is on the way to the first verdict and the
    sandboxes are starting, and few rows need units (a worker forked earlier builds the
    registry itself if its rows do). pint starts no thread."""
    from critpt_grader.policy.units import warm_registry

    warm_registry()
    gc.freeze()
