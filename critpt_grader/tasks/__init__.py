"""Task formats in: NeMo Gym ``task_data`` v1 rows and CritPt challenge JSON, both loaded into
the internal :class:`~critpt_grader.tasks.model.Task`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from critpt_grader.errors import InputError, TaskError
from critpt_grader.jsonlimits import loads_strict
from critpt_grader.tasks.critpt import declared_outputs, is_challenge, load_challenge
from critpt_grader.tasks.model import Case, Expectation, LeafTolerance, Task
from critpt_grader.tasks.task_data import load_row

__all__ = [
    "Case",
    "Expectation",
    "LeafTolerance",
    "Task",
    "declared_outputs",
    "load_document",
    "load_row",
    "load_task",
    "load_tasks",
    "loads_strict",
    "read_json",
]


def read_json(text: str, where: str = "input") -> Any:
    """Parse JSON strictly (:func:`loads_strict`), as :class:`InputError` naming ``where``."""
    try:
        return loads_strict(text)
    except ValueError as exc:
        raise InputError(f"{where}: not valid JSON: {exc}") from None


def load_document(document: Any, *, where: str = "row") -> list[Task]:
    """Tasks from one parsed JSON document: a challenge file or a single task row."""
    if is_challenge(document):
        return load_challenge(document)
    return [load_row(document, where=where)]


def load_task(task: Any) -> Task:
    """Accept what ``grade()`` is given: a :class:`Task`, or a row/challenge dict holding
    exactly one task."""
    if isinstance(task, Task):
        return task
    tasks = load_document(task)
    if len(tasks) != 1:
        ids = ", ".join(t.problem_id for t in tasks)
        raise TaskError(None, "problems", f"holds {len(tasks)} tasks ({ids}); pick one")
    return tasks[0]


def read_documents(path: str | Path) -> list[tuple[Any, str]]:
    """The parsed JSON documents of a task file, each with where it came from
    (``tasks.jsonl:3``): one per line of a ``.jsonl``, else the whole file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {path}: {exc}") from None
    if path.suffix == ".jsonl":
        return [
            (read_json(line, f"{path.name}:{number}"), f"{path.name}:{number}")
            for number, line in enumerate(text.splitlines(), start=1)
            if line.strip()
        ]
    return [(read_json(text, path.name), path.name)]


def load_tasks(path: str | Path) -> list[Task]:
    """Every task in a file: ``.jsonl`` of rows, one row ``.json``, or a CritPt challenge."""
    return [
        task
        for document, where in read_documents(path)
        for task in load_document(document, where=where)
    ]
