"""Write a task set as one parameterized NeMo Gym Harbor dataset.

One template for every task, one row per task (``tasks.jsonl``: ``{"task_id", "task_data"}``)::

    DIR/dataset.toml  task.toml  tasks.jsonl  task_data.py  instruction.template.md
    DIR/environment/Dockerfile + the grader's wheel
    DIR/tests/verifier.py  DIR/solution/answer.template.md

A row's ``task_data`` is the task exactly as this grader reads it (a ``task_data`` v1 row's
fields, or a CritPt challenge's problem), plus two derived, brace-safe texts the templates
insert whole: ``instruction`` (the statement, the entry point and its signature, how to
answer) and ``solution`` (the reference as a fenced block). Every task is loaded by the
grader's own loader first, so a task the grader would refuse is refused here, naming the task
and the field; so is a task set whose rows one ``TaskData`` model cannot type (both formats
in one set), a duplicate or invalid task id, and a reference a template cannot carry.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from critpt_grader.errors import InputError, TaskError
from critpt_grader.harbor import files
from critpt_grader.harbor.braces import BracesError, safe_prose, safe_source
from critpt_grader.harbor.verifier import ANSWER_FILE
from critpt_grader.rows.tasksets import task_files
from critpt_grader.tasks import load_document, read_documents
from critpt_grader.tasks.model import Task

_TASK_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_ORG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
# Harbor's manifest wants "<org>/<name>"; without --org the dataset is published under this.
DEFAULT_ORG = "critpt-grader"
_WHEEL_NAME = re.compile(r"^critpt_grader-[^-]+-[^-]+-[^-]+-[^-]+\.whl$")
# One TaskData model per format, as strict as the grader's own loader (tasks/task_data.py,
# tasks/critpt.py) on everything the row's shape decides; the model also runs the grader's
# loader itself wherever critpt-grader is importable (the task image; the exporting host).
ROW_FIELDS = {
    "task_data": {
        "schema_version": "Literal[1]",
        "problem_id": "str = Field(min_length=1, max_length=256)",
        "reference_source": "str = Field(min_length=1, max_length=262_144)",
        "entrypoint": "str = Field(pattern=IDENTIFIER)",
        "reference_entrypoint": "str | None = Field(None, pattern=IDENTIFIER)",
        "test_cases": "list[Case] = Field(min_length=1, max_length=64)",
        "problem": "str | None = Field(None, max_length=131_072)",
        "code_template": "str | None = None",
        "uuid": "str | None = None",
        "rtol": "str | int | float | None = None",
        "atol": "str | int | float | None = None",
        "tolerances": "list[LeafTolerance] | None = None",
        "input_conversions": (
            'list[Literal["symbol", "function"] | None] | None = Field(None, max_length=128)'
        ),
    },
    "critpt": {
        "problem_id": "str = Field(min_length=1)",
        "problem_type": "str | None = None",
        "problem_index": "int | str | None = None",
        "problem_description": "str",
        "code_template": "str = Field(min_length=1)",
        "answer_code": "str = Field(min_length=1)",
        "answer_only_code": "str | None = None",
        "testcases": "None = None",
        "metadata": "dict[str, Any] | None = None",
    },
}


@dataclass(frozen=True)
class Exported:
    """What was written."""

    out: Path
    tasks: int
    task_format: str
    wheel: str


@dataclass(frozen=True)
class _Row:
    task_id: str
    task_data: dict[str, Any]
    task_format: str


def export(
    sources: list[Path],
    out: Path,
    *,
    org: str | None = None,
    wheel: Path | None = None,
    name: str | None = None,
) -> Exported:
    """Write the dataset for every task in ``sources`` (task files, or folders of them as
    every command takes: an acceptance set's ``tasks.jsonl``, else its ``*.json``/``*.jsonl``)
    to ``out`` (which must not exist or be empty). ``wheel``: the grader's wheel to ship
    (built from this source tree when None). The dataset is named ``<org>/<name>``
    (``--org``, else ``critpt-grader``; ``name``, else the folder's name made valid)."""
    if org is not None and not _ORG.match(org):
        raise InputError(f"--org {org!r}: letters, digits, '.', '_', '-' only")
    paths = [path for source in sources for path in task_files(Path(source))]
    rows = [row for path in paths for row in _rows(path)]
    if not rows:
        raise InputError("the task set holds no task")
    formats = {row.task_format for row in rows}
    if len(formats) > 1:
        raise InputError(
            "the task set mixes task_data rows and CritPt challenges; one dataset carries one "
            "format (export them separately)"
        )
    _check_ids(rows)
    _prepare_out(out)
    task_format = rows[0].task_format
    wheel_path = _wheel(wheel, out / "environment")
    _write(out / "task_data.py", _task_data_module(task_format))
    _check_rows(out / "task_data.py", rows)
    _write(out / "tasks.jsonl", "".join(_jsonl(row) for row in rows))
    _write(out / "instruction.template.md", files.INSTRUCTION_TEMPLATE)
    _write(out / "solution" / "answer.template.md", files.ANSWER_TEMPLATE)
    _write(out / "tests" / "verifier.py", files.VERIFIER)
    _write(out / "tests" / "test.sh", files.TEST_SH)
    (out / "tests" / "test.sh").chmod(0o755)
    _write(out / "tests" / "task_data.template.b64", "{{ task_data.task_b64 }}\n")
    _write(out / "environment" / "Dockerfile", files.DOCKERFILE.format(wheel=wheel_path.name))
    version = _version()
    dataset_name = _dataset_name(name or out.resolve().name)
    name_line = f'\n[task]\nname = "{org}/{dataset_name}"\n' if org else ""
    _write(
        out / "task.toml",
        files.TASK_TOML.format(
            name_line=name_line, version=version, verifier_timeout=900, agent_timeout=3600
        ),
    )
    _write(
        out / "dataset.toml",
        files.DATASET_TOML.format(
            name=f"{org or DEFAULT_ORG}/{dataset_name}",
            description="CritPt-style physics tasks, graded by critpt-grader",
            count=len(rows),
            task_format=task_format,
            version=version,
        ),
    )
    return Exported(out, len(rows), task_format, wheel_path.name)


def _dataset_name(name: str) -> str:
    """``name`` as a Harbor package name: lower case, letters, digits, '.', '_', '-', starting
    with a letter or digit ("critpt" when nothing is left)."""
    cleaned = re.sub(r"[^a-z0-9._-]+", "-", name.lower()).lstrip("._-").rstrip(".-")
    return cleaned or "critpt"


# --- rows -----------------------------------------------------------------------------------


def _rows(source: Path) -> list[_Row]:
    documents = read_documents(source)
    rows: list[_Row] = []
    for document, where in documents:
        tasks = load_document(document, where=where)  # refuses what the grader refuses
        if isinstance(document, dict) and "problems" in document:
            for task, problem in zip(tasks, document["problems"], strict=True):
                rows.append(_critpt_row(task, problem))
        else:
            (task,) = tasks
            rows.append(_task_data_row(task, document))
    return rows


def _task_data_row(task: Task, document: dict[str, Any]) -> _Row:
    spec = document.get("task_data", document.get("verifier_metadata", document))
    fields = {
        k: v for k, v in spec.items() if k != "responses_create_params" and not k.startswith("_ng_")
    }
    fields["instruction"] = _instruction(task, fields.get("problem") or "", None)
    fields["solution"] = _solution(task, task.reference_source, "reference_source")
    fields["task_b64"] = _task_b64(fields)
    return _Row(task.problem_id, fields, "task_data")


def _critpt_row(task: Task, problem: dict[str, Any]) -> _Row:
    fields = {k: v for k, v in problem.items() if not k.startswith("_ng_")}
    statement = fields.get("problem_description", "")
    fields["instruction"] = _instruction(task, statement, fields.get("code_template"))
    fields["solution"] = _solution(task, fields["answer_code"], "answer_code")
    fields["task_b64"] = _task_b64(fields)
    return _Row(task.problem_id, fields, "critpt")


def _task_b64(fields: dict[str, Any]) -> str:
    """The row's task fields as base64 JSON: ``tests/task_data.b64`` of a prepared task, which
    plain Harbor's ``tests/test.sh`` reads (Harbor ships only ``tests/`` to the verifier)."""
    import base64

    task = {k: v for k, v in fields.items() if k not in ("instruction", "solution")}
    text = json.dumps(task, ensure_ascii=True, sort_keys=True)
    return base64.b64encode(text.encode("ascii")).decode("ascii")


def _instruction(task: Task, statement: str, template: str | None) -> str:
    signature = _signature(task)
    parts = [f"# {task.problem_id}", "", safe_prose(statement.strip())]
    if template:
        parts += ["", "Complete this code template:", "", "```python", safe_prose(template), "```"]
    parts += [
        "",
        "## How to answer",
        "",
        f"Write a Python function `{signature}`. Put your answer in a file named "
        f"`{ANSWER_FILE}` in the working directory: a fenced ```python block that defines "
        f"`{task.entrypoint}` with any imports it needs (numpy, scipy, sympy and mpmath are "
        "available). Only that block is graded: it runs in a sandbox against the task's test "
        "cases; no input reading, printing or top-level calls.",
    ]
    return "\n".join(parts)


def _signature(task: Task) -> str:
    """``name(a, b=2)`` of the entry point, read from the template or the reference."""
    for source in (task.code_template, task.reference_source):
        if not source:
            continue
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in (
                task.entrypoint,
                task.reference_entrypoint,
            ):
                return f"{task.entrypoint}({ast.unparse(node.args)})"
    return f"{task.entrypoint}(...)"


def _solution(task: Task, source: str, field: str) -> str:
    try:
        code = safe_source(source.rstrip() + "\n")
    except BracesError as exc:
        raise TaskError(task.problem_id, field, f"cannot be carried in a template: {exc}") from None
    if task.reference_entrypoint and task.reference_entrypoint != task.entrypoint:
        code += f"\n{task.entrypoint} = {task.reference_entrypoint}\n"
    return f"```python\n{code}```"


def _check_ids(rows: list[_Row]) -> None:
    seen: set[str] = set()
    for row in rows:
        if not _TASK_ID.match(row.task_id):
            raise TaskError(
                row.task_id,
                "problem_id",
                "not a Harbor task id (a letter or digit, then letters, digits, '.', '_', '-')",
            )
        if row.task_id in seen:
            raise TaskError(row.task_id, "problem_id", "two tasks have this id")
        seen.add(row.task_id)


def _task_data_module(task_format: str) -> str:
    lines = [f"    {key}: {kind}" for key, kind in ROW_FIELDS[task_format].items()]
    lines += ["    instruction: str", "    solution: str", "    task_b64: str"]
    return files.TASK_DATA_HEADER + "\n".join(lines) + "\n" + files.TASK_DATA_FOOTER


def _check_rows(module_path: Path, rows: list[_Row]) -> None:
    """Every row is accepted by the written ``TaskData`` (Gym validates with it)."""
    spec = importlib.util.spec_from_file_location("_critpt_harbor_task_data", module_path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    from pydantic import ValidationError

    for row in rows:
        try:
            module.TaskData.model_validate(row.task_data)
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(str(p) for p in error["loc"]) or "task_data"
            raise TaskError(row.task_id, where, f"TaskData refuses it: {error['msg']}") from None


def _jsonl(row: _Row) -> str:
    return (
        json.dumps({"task_id": row.task_id, "task_data": row.task_data}, ensure_ascii=False) + "\n"
    )


# --- files ------------------------------------------------------------------------------------


def _prepare_out(out: Path) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise InputError(f"--out {out}: exists and is not an empty folder")
    out.mkdir(parents=True, exist_ok=True)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("critpt-grader")
    except PackageNotFoundError:
        return "unknown"


def _wheel(wheel: Path | None, into: Path) -> Path:
    """Copy ``wheel`` beside the Dockerfile, or build one from this source tree."""
    into.mkdir(parents=True, exist_ok=True)
    if wheel is not None:
        if not wheel.is_file() or not _WHEEL_NAME.match(wheel.name):
            raise InputError(f"--wheel {wheel}: not a wheel of critpt-grader")
        return Path(shutil.copy2(wheel, into / wheel.name))
    root = Path(__file__).resolve().parents[2]
    if not (root / "pyproject.toml").is_file():
        raise InputError("no source tree to build the grader's wheel from; pass --wheel PATH")
    with tempfile.TemporaryDirectory() as scratch:
        built = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", scratch, str(root)],
            capture_output=True,
            text=True,
        )
        found = sorted(Path(scratch).glob("*.whl"))
        if built.returncode != 0 or not found:
            detail = (built.stderr or built.stdout).strip().splitlines()[-1:] or ["no wheel"]
            raise InputError(f"building the grader's wheel failed: {detail[0]}")
        return Path(shutil.copy2(found[0], into / found[0].name))
