"""Where a row's task comes from, and the row echoed with its verdict: one rule for the
server, batch, reverify and NeMo Gym.

**The task** is in the row when it holds ``task_data`` or ``verifier_metadata`` (only those
and ``responses_create_params`` are read; other keys are echoed) or task fields at the top
level (then the whole row is the task, strictly); otherwise it is looked up by the row's
``problem_id`` in the loaded :class:`~critpt_grader.rows.tasksets.TaskSets`. A malformed task
is refused (422) naming the field; an unknown ``problem_id`` (404) naming it.

**The echo** is the request with the verdict added, NeMo Gym's ``_ng_failure_*`` keys on
rows that are not a clean score.
"""

from __future__ import annotations

from typing import Any

from critpt_grader.errors import CodecError, GraderError, TaskError
from critpt_grader.result import GradeResult
from critpt_grader.rows.rejected import RowRejected
from critpt_grader.rows.tasksets import TaskSets
from critpt_grader.tasks import Task, load_task

_CONTAINERS = ("task_data", "verifier_metadata")
# Top-level keys that make the row itself the task (canonical names and their aliases).
_TASK_FIELDS = frozenset(
    {
        "schema_version",
        "reference_source",
        "reference_code",
        "reference_entrypoint",
        "entrypoint",
        "entry",
        "test_cases",
        "testcases",
    }
)
_FAILURE_KEYS = ("_ng_failure_class", "_ng_failure_subcategory", "_ng_failure_terminal")


def resolve_task(
    row: dict[str, Any], sets: TaskSets
) -> tuple[Task, dict[str, Any] | None, str | None]:
    """The row's task: ``(task, task_row, task_key)``. Raises :class:`RowRejected`."""
    containers = [name for name in _CONTAINERS if name in row]
    if containers or _TASK_FIELDS & row.keys():
        if containers:
            task_row = {k: row[k] for k in ("responses_create_params", *containers) if k in row}
            where = containers[0]
        else:
            task_row = {k: v for k, v in row.items() if k != "response"}
            where = ""
        try:
            task = load_task(task_row)
        except TaskError as exc:
            field = f"{where}.{exc.field}" if where else exc.field
            raise RowRejected(422, "task_invalid", str(exc), field=field) from None
        except CodecError as exc:
            raise RowRejected(422, "task_invalid", str(exc), field=where or exc.path) from None
        except GraderError as exc:
            raise RowRejected(422, "task_invalid", str(exc), field=where or None) from None
        return task, task_row, None
    problem_id = row.get("problem_id")
    if problem_id is None:
        raise RowRejected(
            422,
            "request_invalid",
            "no task: give task_data, verifier_metadata, top-level task fields, or the "
            "problem_id of a task set loaded with serve --tasks",
            field="task_data",
        )
    if not isinstance(problem_id, str):
        raise RowRejected(422, "request_invalid", "must be a string", field="problem_id")
    task = sets.get(problem_id)
    if task is None:
        loaded = f"{len(sets)} loaded tasks" if len(sets) else "no task sets loaded (--tasks)"
        raise RowRejected(
            404,
            "unknown_problem_id",
            f"problem_id {problem_id!r} is not in the loaded task sets ({loaded})",
            field="problem_id",
            problem_id=problem_id,
        )
    return task, None, problem_id


def as_response(source: str) -> str:
    """A journaled source as a response that extracts back to exactly it: one fence longer
    than any backtick run inside."""
    longest = run = 0
    for char in source:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    return f"{fence}python\n{source}\n{fence}\n"


def echo(body: dict[str, Any], result: GradeResult, row_id: str | None) -> dict[str, Any]:
    """The request echoed plus the verdict. The ``_ng_failure_*`` keys appear only on rows
    that are not a clean score (``mask_sample``); a clean score drops any the request carried."""
    out = {k: v for k, v in body.items() if k not in _FAILURE_KEYS}
    out.update(
        reward=result.reward,
        category=result.category.value,
        outcome=result.outcome,
        failure_kind=result.failure_kind,
        terminal=result.terminal,
        mask_sample=result.mask_sample,
    )
    if result.mask_sample:
        out["_ng_failure_class"] = result.failure_kind
        out["_ng_failure_subcategory"] = result.category.value
        out["_ng_failure_terminal"] = result.terminal
    if result.problem_id is not None:
        out.setdefault("problem_id", result.problem_id)
    out["critpt_grader"] = {
        "row_id": row_id,
        "reason": result.reason,
        "preflight": result.preflight,
        "containment": result.containment,
        "seconds": round(result.timings.get("total", 0.0), 6),
        "timings": phases(result.timings),
    }
    return out


# Where a row's time went, by phase: waiting for a grading slot (server only), the task's
# reference preflight (absent when cached), the candidate's run, the comparison, and ``total``:
# the grader's span of the row, from Grader.grade to its verdict, the same on the server and
# in batch (the slot wait is not in it).
PHASES = (
    ("queue", "queue"),
    ("preflight", "preflight"),
    ("run", "candidate_run"),
    ("compare", "compare"),
    ("total", "total"),
)


def phases(timings: dict[str, float]) -> dict[str, float]:
    """The per-phase seconds of a result's timings (the phases it went through)."""
    return {name: round(timings[key], 6) for name, key in PHASES if key in timings}
