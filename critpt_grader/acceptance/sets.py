"""Load an acceptance set: a folder of tasks, candidates with expected verdicts, and labels.

Layout of a set folder::

    tasks.jsonl        task rows (task_data v1), unless set.json names another source
    candidates.jsonl   one candidate a line: task_id, kind, response, against?, expect
    labels.json        optional: {task_id: [output-type label, ...]} for the coverage summary
    set.json           optional: {"name", "description", "tasks_from"}

``tasks_from`` is a file or folder, relative to the set folder or to the repository that
holds it. When it does not exist (shared data that is not checked out here) the set is
*skipped* with a reason instead of failing the run; every other defect is an
:class:`InputError` naming the file and line, because an acceptance run must not quietly
check less than it claims.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, ValidationError

from critpt_grader.errors import InputError
from critpt_grader.jsonlimits import loads_strict
from critpt_grader.tasks.model import Task
from critpt_grader.verdict import Category

KINDS = ("reference", "equivalent", "alternate", "canary", "fault")
Kind = Literal["reference", "equivalent", "alternate", "canary", "fault"]

TaskLoader = Callable[[Path], list[Task]]


@dataclass(frozen=True, slots=True)
class Expected:
    """The verdict a candidate must receive. ``category`` is checked only when given."""

    outcome: str
    reward: float
    category: str | None = None


@dataclass(frozen=True, slots=True)
class Candidate:
    set_name: str
    line: int  # 1-based line in candidates.jsonl, so a reader can open the exact row
    task_id: str  # the task the answer was written for
    against: str  # the task it is graded against (differs for alternates)
    kind: str
    response: str | dict[str, Any]
    expect: Expected
    label: str | None = None  # e.g. the canary's flaw ("sign", "factor 2")


@dataclass(frozen=True, slots=True)
class AcceptanceSet:
    name: str
    path: Path
    description: str
    tasks: dict[str, Task]
    candidates: tuple[Candidate, ...]
    labels: dict[str, tuple[str, ...]]  # task id → output-type labels; empty when absent


@dataclass(frozen=True, slots=True)
class SkippedSet:
    name: str
    path: Path
    reason: str


class _ExpectRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    outcome: Literal["scored", "unscorable", "failure"]
    reward: StrictInt | StrictFloat
    category: Category | None = None


class _CandidateRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(min_length=1)
    kind: Kind
    response: str | dict[str, Any]
    against: str | None = None
    expect: _ExpectRow
    label: str | None = None


class _SetManifest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    description: str = ""
    tasks_from: str | None = None


def load_set(folder: Path, *, load_tasks: TaskLoader | None = None) -> AcceptanceSet | SkippedSet:
    """Read one set folder. ``load_tasks`` defaults to :func:`critpt_grader.tasks.load_tasks`."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"acceptance set {str(folder)!r} is not a folder")
    manifest = _read_manifest(folder)
    name = manifest.name or folder.resolve().name
    if manifest.tasks_from is None:
        task_source = folder / "tasks.jsonl"
    else:
        found = _resolve_tasks_from(folder, manifest.tasks_from)
        if found is None:
            return SkippedSet(
                name, folder, f"tasks_from {manifest.tasks_from!r} not found (data not present)"
            )
        task_source = found
    tasks = _index_tasks(_load_task_source(task_source, load_tasks or _default_loader()))
    candidates = _read_candidates(folder / "candidates.jsonl", name, tasks)
    labels = _read_labels(folder / "labels.json", tasks)
    return AcceptanceSet(name, folder, manifest.description, tasks, candidates, labels)


def _default_loader() -> TaskLoader:
    from critpt_grader.tasks import load_tasks  # imported late: a loader can be injected

    return load_tasks


def _read_manifest(folder: Path) -> _SetManifest:
    path = folder / "set.json"
    if not path.exists():
        return _SetManifest()
    try:
        return _SetManifest.model_validate(_read_json(path))
    except ValidationError as exc:
        raise InputError(f"{path}: {_first_error(exc)}") from None


def _resolve_tasks_from(folder: Path, relative: str) -> Path | None:
    bases = [folder]
    repo = _repository_root(folder)
    if repo is not None:
        bases.append(repo)
    for base in bases:
        candidate = (base / relative).resolve()
        if candidate.exists():
            return candidate
    return None


def _repository_root(start: Path) -> Path | None:
    for parent in [start.resolve(), *start.resolve().parents]:
        if (parent / "pyproject.toml").exists() or (parent / ".git").exists():
            return parent
    return None


def _load_task_source(source: Path, load_tasks: TaskLoader) -> list[Task]:
    if not source.exists():
        raise InputError(f"{source}: missing (a set needs tasks.jsonl or set.json tasks_from)")
    if source.is_file():
        return list(load_tasks(source))
    files = sorted(p for p in source.iterdir() if p.suffix in (".json", ".jsonl") and p.is_file())
    if not files:
        raise InputError(f"{source}: no .json or .jsonl task files in the folder")
    return [task for path in files for task in load_tasks(path)]


def _index_tasks(tasks: Sequence[Task]) -> dict[str, Task]:
    index: dict[str, Task] = {}
    for task in tasks:
        if task.problem_id in index:
            raise InputError(f"task id {task.problem_id!r} appears twice in the set")
        index[task.problem_id] = task
    return index


def _read_candidates(path: Path, set_name: str, tasks: dict[str, Task]) -> tuple[Candidate, ...]:
    if not path.is_file():
        raise InputError(f"{path}: missing (every set needs candidates.jsonl)")
    candidates = []
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not text.strip():
            continue
        where = f"{path}:{number}"
        try:
            row = _CandidateRow.model_validate(_parse_json(text, where))
        except ValidationError as exc:
            raise InputError(f"{where}: {_first_error(exc)}") from None
        against = row.against or row.task_id
        for field, task_id in (("task_id", row.task_id), ("against", against)):
            if task_id not in tasks:
                raise InputError(f"{where}: {field} {task_id!r} is not a task of the set")
        expect = Expected(row.expect.outcome, float(row.expect.reward), row.expect.category)
        candidates.append(
            Candidate(
                set_name, number, row.task_id, against, row.kind, row.response, expect, row.label
            )
        )
    if not candidates:
        raise InputError(f"{path}: no candidates")
    return tuple(candidates)


def _read_labels(path: Path, tasks: dict[str, Task]) -> dict[str, tuple[str, ...]]:
    if not path.exists():
        return {}
    data = _read_json(path)
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected an object {{task_id: [label, ...]}}")
    labels = {}
    for task_id, names in data.items():
        if task_id not in tasks:
            raise InputError(f"{path}: labels for {task_id!r}, which is not a task of the set")
        if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
            raise InputError(f"{path}: labels of {task_id!r} must be a list of non-empty strings")
        labels[task_id] = tuple(names)
    return labels


def _read_json(path: Path) -> Any:
    return _parse_json(path.read_text(encoding="utf-8"), str(path))


def _parse_json(text: str, where: str) -> Any:
    try:
        return loads_strict(text)  # the task files' own strictness: no duplicate keys, no NaN
    except ValueError as exc:
        raise InputError(f"{where}: not JSON ({exc})") from None


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    location = ".".join(str(part) for part in error["loc"]) or "row"
    return f"{location}: {error['msg']}"
