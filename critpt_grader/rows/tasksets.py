"""Task sets loaded at start (``serve --tasks PATH ...``): rows that carry only a
``problem_id`` are graded against them.

A path is a CritPt challenge JSON, a ``.jsonl`` of ``task_data`` rows, a single row ``.json``,
or a folder: an acceptance set's ``tasks.jsonl`` when it holds one (not its candidates), else
its ``*.json`` and ``*.jsonl`` files, not recursive, in name order (:func:`task_files`). Every
file is loaded strictly at start, so a malformed set stops the server before it accepts a row,
naming the file and the field. Two files may hold the same ``problem_id`` only with identical
tasks; otherwise the start fails naming both.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from critpt_grader.errors import InputError
from critpt_grader.tasks import Task, load_tasks


class TaskSets:
    """``problem_id`` → :class:`Task`, and where each came from. Read-only once built."""

    def __init__(self, paths: Iterable[str | Path] = ()) -> None:
        self.paths: list[Path] = [Path(p).resolve() for p in paths]
        self._tasks: dict[str, Task] = {}
        self._origin: dict[str, Path] = {}
        for path in self.paths:
            for file in task_files(path):
                for task in load_tasks(file):
                    self._add(task, file)

    def _add(self, task: Task, file: Path) -> None:
        known = self._tasks.get(task.problem_id)
        if known is not None and known != task:
            raise InputError(
                f"problem_id {task.problem_id!r} is defined differently in "
                f"{self._origin[task.problem_id]} and {file}"
            )
        self._tasks.setdefault(task.problem_id, task)
        self._origin.setdefault(task.problem_id, file)

    def get(self, problem_id: str) -> Task | None:
        return self._tasks.get(problem_id)

    def __len__(self) -> int:
        return len(self._tasks)

    def __contains__(self, problem_id: object) -> bool:
        return problem_id in self._tasks

    def ids(self) -> list[str]:
        return sorted(self._tasks)


def task_files(path: Path) -> list[Path]:
    """The task files a task-set path names (see the module docstring)."""
    if path.is_dir():
        if (path / "tasks.jsonl").is_file():  # an acceptance set: its tasks, not its candidates
            return [path / "tasks.jsonl"]
        files = sorted(p for p in path.iterdir() if p.suffix in (".json", ".jsonl") and p.is_file())
        if not files:
            raise InputError(f"{path}: no .json or .jsonl task files")
        return files
    if not path.is_file():
        raise InputError(f"{path}: no such task file or folder")
    return [path]
