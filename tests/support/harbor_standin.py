"""A local stand-in for two documented NeMo Gym pieces: Harbor dataset "prepare" and the
Python verifier runner.

Released ``nemo-gym`` packages do not ship these yet, so this module implements them from the
contract summarized in ``/work/shared/reference/harbor-dataset.md`` (no Gym or Harbor code is
used). Tests use it to check the datasets ``critpt-grader export-harbor`` writes.

``prepare(dataset, out)`` renders one plain task folder ``out/<task_id>`` per row of
``dataset/tasks.jsonl`` (rows are ``{"task_id": str, "task_data": object}``, nothing else):

* a file named ``<stem>.template<suffix>`` (e.g. ``solution/answer.template.md``) is rendered
  to ``<stem><suffix>``: each ``{{ task_data.<key> }}`` or ``{{ <key> }}`` (spaces inside the
  braces optional) is replaced by the row's value, a string as it is, any other value as
  ``json.dumps(value)``; every other file is copied byte for byte. File modes are kept;
* the row's ``task_data`` becomes the task's ``task_data.json``;
* if ``task.toml`` sets ``[task].name``, it must be ``"<org>/<name>"``, and each task's
  ``task.toml`` gets ``name = "<org>/<task_id>"`` (only that value is rewritten); otherwise
  ``task.toml`` is copied as is;
* a task id starts with an ASCII letter or digit, then ASCII letters, digits, ``.``, ``_``,
  ``-``;
* ``PrepareError`` (naming the task or file) on: a placeholder naming no field of the row; any
  other ``{{ … }}`` left in a rendered template; a duplicate or invalid task id; a row that is
  not ``{"task_id": str, "task_data": object}``; a ``task_data`` key starting with ``_ng_``
  (reserved for Gym); a row the dataset's ``task_data.py`` ``TaskData`` model rejects
  (``TaskData.model_validate(task_data)``; no ``TaskData`` in the module, no check); a
  symlink anywhere in the template folder; a ``task_data.json`` at the template root; two
  files rendering to one name.

``run_verifier(task_dir, workspace, reward_dir, response)`` emulates the runner in a separate
Python process: it removes any ``reward.txt``/``reward.json`` in ``reward_dir`` (file, symlink
or folder), imports ``task_dir/tests/verifier.py`` (``tests/`` first on ``sys.path``), calls
``verify`` with only the arguments it declares (by name, or by position when positional-only)
from ``workspace`` (Path), ``task_data`` (dict from ``task_data.json``), ``response`` (only if
one was given), ``state`` (``{"workspace": Path}``), awaits the result if it is awaitable, and
writes ``reward.txt`` for a number or ``reward.json`` for a dict of numbers holding
``reward``. Exit codes: 0 reward written; 1 ``verify`` raised; 2 shim or contract problem.
No reward file is left on 1 or 2.

Choices where the contract is silent:

* ``dataset.toml``, ``tasks.jsonl`` and ``task_data.py`` at the dataset root describe the
  dataset, not a task: they are not copied into the tasks (the same names in a subfolder are
  ordinary task files). ``task_data.py`` is imported under a fresh module name, without
  writing bytecode, and removed from ``sys.modules`` afterwards.
* ``<suffix>`` is one extension: ``a.template.md`` is a template, ``a.template`` and
  ``a.template.tar.gz`` are copied as they are. A placeholder key is a Python identifier.
* The leftover check reads the rendered text, so a string value that itself holds
  ``{{ … }}`` fails too (the contract says "left after rendering"). A lone ``{{`` with no
  ``}}`` after it is not a placeholder and passes. Values are not rendered again.
* A template rendering to ``task_data.json`` at the root counts as "a task_data.json at the
  template root". Sockets and FIFOs in the template fail like symlinks do.
* Blank lines in ``tasks.jsonl`` are skipped; ``NaN``/``Infinity`` in a row fail.
* ``out`` must be absent or empty. Everything is checked and rendered before anything is
  written, so a failing prepare writes no task.
* The ``TaskData`` check just calls the model: the strictness the contract describes
  (unknown keys fail, ``"3"`` is no int) is the model's own configuration.
* Runner: ``verify`` runs with the workspace as its working directory; ``*args``/``**kwargs``
  receive nothing; a non-finite number is a bad return value (exit 2); a ``verifier.py`` that
  is missing or raises on import is a shim problem (exit 2: ``verify`` never ran); the reward
  file written holds the return value alone (a reward file ``verify`` wrote itself is
  replaced); a timeout kills the process group and raises ``subprocess.TimeoutExpired``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import tomllib
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel

DATASET_FILES = frozenset({"dataset.toml", "tasks.jsonl", "task_data.py"})
TASK_DATA_FILE = "task_data.json"
TASK_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*", re.ASCII)
TEMPLATE_NAME = re.compile(r"(?P<stem>.+)\.template(?P<suffix>\.[^.]+)", re.DOTALL)
PLACEHOLDER = re.compile(r"\{\{\s*(?:task_data\.)?(?P<key>[A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
LEFTOVER = re.compile(r"\{\{.*?\}\}", re.DOTALL)
RESERVED_PREFIX = "_ng_"


class PrepareError(Exception):
    """The dataset cannot be prepared; the message names the task or file at fault."""


# --------------------------------------------------------------------------- prepare


@dataclass(frozen=True)
class _Entry:
    """One file or folder of the template, and where it lands in each task."""

    source: Path
    rel: str  # path in the template, for messages
    target: PurePosixPath  # path in each task
    is_dir: bool = False
    template: bool = False
    mode: int = 0o644


@dataclass(frozen=True)
class _Row:
    task_id: str
    task_data: dict[str, Any]


def prepare(dataset: Path, out: Path) -> list[Path]:
    """Render one task folder ``out/<task_id>`` per row; return them in row order."""
    dataset, out = Path(dataset), Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise PrepareError(f"{out}: the output folder must be absent or empty")
    entries = _scan_template(dataset)
    rows = _read_rows(dataset / "tasks.jsonl")
    _check_task_data(dataset, rows)
    plans = [(row, _render_task(entries, row)) for row in rows]
    out.mkdir(parents=True, exist_ok=True)
    return [_write_task(out / row.task_id, row, plan) for row, plan in plans]


def _scan_template(dataset: Path) -> list[_Entry]:
    """Every file and folder of the template, checked, with its name in the tasks."""
    if not dataset.is_dir():
        raise PrepareError(f"{dataset}: not a dataset folder")
    entries: list[_Entry] = []
    claimed: dict[PurePosixPath, str] = {}
    for root, dirs, files in os.walk(dataset, onerror=_raise):
        dirs.sort()
        base = PurePosixPath(Path(root).relative_to(dataset).as_posix())
        for name in sorted(dirs + files):
            source = Path(root, name)
            rel = (base / name).as_posix()
            info = os.lstat(source)
            if stat.S_ISLNK(info.st_mode):
                raise PrepareError(f"{rel}: a symlink in the template")
            if base == PurePosixPath(".") and name in DATASET_FILES and name in files:
                continue
            entry = _entry(source, rel, base, name, info)
            _claim(claimed, entry)
            entries.append(entry)
    return entries


def _raise(error: OSError) -> None:
    raise PrepareError(f"{error.filename}: cannot be read ({error.strerror})") from error


def _entry(source: Path, rel: str, base: PurePosixPath, name: str, info: os.stat_result) -> _Entry:
    if stat.S_ISDIR(info.st_mode):
        return _Entry(source, rel, base / name, is_dir=True)
    if not stat.S_ISREG(info.st_mode):
        raise PrepareError(f"{rel}: neither a file nor a folder")
    mode = stat.S_IMODE(info.st_mode)
    match = TEMPLATE_NAME.fullmatch(name)
    if match is None:
        return _Entry(source, rel, base / name, mode=mode)
    rendered = match["stem"] + match["suffix"]
    return _Entry(source, rel, base / rendered, template=True, mode=mode)


def _claim(claimed: dict[PurePosixPath, str], entry: _Entry) -> None:
    if entry.target == PurePosixPath(TASK_DATA_FILE):
        raise PrepareError(
            f"{entry.rel}: a {TASK_DATA_FILE} at the template root (prepare writes it per task)"
        )
    if entry.target in claimed:
        raise PrepareError(
            f"{claimed[entry.target]} and {entry.rel} both render to {entry.target.as_posix()}"
        )
    claimed[entry.target] = entry.rel


def _read_rows(path: Path) -> list[_Row]:
    if not path.is_file():
        raise PrepareError(f"{path.name}: missing")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise PrepareError(f"{path.name}: not UTF-8 ({exc})") from exc
    rows: list[_Row] = []
    seen: set[str] = set()
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        row = _parse_row(line, f"{path.name} line {number}")
        if row.task_id in seen:
            raise PrepareError(
                f"task {row.task_id!r}: duplicate task id ({path.name} line {number})"
            )
        seen.add(row.task_id)
        rows.append(row)
    return rows


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _parse_row(line: str, where: str) -> _Row:
    try:
        row = json.loads(line, parse_constant=_reject_constant)
    except ValueError as exc:
        raise PrepareError(f"{where}: not a JSON row ({exc})") from exc
    shape = '{"task_id": str, "task_data": object}'
    if not isinstance(row, dict) or set(row) != {"task_id", "task_data"}:
        got = sorted(row) if isinstance(row, dict) else type(row).__name__
        raise PrepareError(f"{where}: a row must be {shape}, got {got}")
    task_id, task_data = row["task_id"], row["task_data"]
    if not isinstance(task_id, str):
        raise PrepareError(f"{where}: a row must be {shape}, task_id is {task_id!r}")
    if not isinstance(task_data, dict):
        raise PrepareError(f"{where}: task {task_id!r}: task_data must be an object")
    if not TASK_ID.fullmatch(task_id):
        raise PrepareError(
            f"{where}: invalid task id {task_id!r} (a letter or digit, then letters, digits,"
            " '.', '_', '-')"
        )
    reserved = sorted(key for key in task_data if key.startswith(RESERVED_PREFIX))
    if reserved:
        raise PrepareError(f"task {task_id!r}: task_data keys {reserved} are reserved for Gym")
    return _Row(task_id, task_data)


def _check_task_data(dataset: Path, rows: list[_Row]) -> None:
    """Validate each row with the dataset's ``TaskData`` model, if it defines one."""
    path = dataset / "task_data.py"
    if not path.is_file():
        return
    name = f"_harbor_standin_task_data_{uuid.uuid4().hex}"
    try:
        model = _load_task_data_model(path, name)
        if model is None:
            return
        for row in rows:
            try:
                model.model_validate(row.task_data)
            except Exception as exc:
                raise PrepareError(
                    f"task {row.task_id!r}: TaskData rejects the row: {exc}"
                ) from exc
    finally:
        sys.modules.pop(name, None)


def _load_task_data_model(path: Path, name: str) -> type[BaseModel] | None:
    """Import ``task_data.py`` by path as module ``name`` (the caller drops it after)."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise PrepareError(f"{path.name}: cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # Pydantic resolves annotations through sys.modules
    wrote_bytecode = sys.dont_write_bytecode
    sys.dont_write_bytecode = True  # no __pycache__ in the dataset
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise PrepareError(f"{path.name}: importing it raised {exc!r}") from exc
    finally:
        sys.dont_write_bytecode = wrote_bytecode
    model = getattr(module, "TaskData", None)
    if model is None:
        return None
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise PrepareError(f"{path.name}: TaskData is not a Pydantic model")
    return model


def _render_task(entries: list[_Entry], row: _Row) -> list[tuple[_Entry, bytes | None]]:
    """Each entry with its new content for this row (None: copy the file as it is)."""
    plan: list[tuple[_Entry, bytes | None]] = []
    for entry in entries:
        content = None
        where = f"task {row.task_id!r}: {entry.rel}"
        if entry.template:
            content = _encode(render(_decode(entry.source, where), row.task_data, where), where)
        if entry.target == PurePosixPath("task.toml"):
            text = _decode(entry.source, where) if content is None else content.decode("utf-8")
            renamed = rename_task(text, row.task_id, where)
            if renamed != text:
                content = _encode(renamed, where)
        plan.append((entry, content))
    return plan


def _decode(path: Path, where: str) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PrepareError(f"{where}: not UTF-8 ({exc})") from exc


def _encode(text: str, where: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise PrepareError(f"{where}: the rendered text is not UTF-8 ({exc})") from exc


def render(text: str, task_data: Mapping[str, Any], where: str = "template") -> str:
    """Fill the placeholders of one template; fail on an unknown key or a ``{{ … }}`` left."""

    def fill(match: re.Match[str]) -> str:
        key = match["key"]
        if key not in task_data:
            raise PrepareError(f"{where}: placeholder {match[0]!r} names no field of task_data")
        value = task_data[key]
        return value if isinstance(value, str) else json.dumps(value)

    rendered = PLACEHOLDER.sub(fill, text)
    left = LEFTOVER.search(rendered)
    if left is not None:
        snippet = left[0] if len(left[0]) <= 60 else left[0][:57] + "..."
        raise PrepareError(f"{where}: {snippet!r} left after rendering")
    return rendered


_TABLE = re.compile(r"\s*\[\s*(?P<table>[^\[\]]*?)\s*\]\s*(?:#.*)?")
_NAME = re.compile(
    r"(?P<head>\s*name\s*=\s*)(?P<value>\"(?:[^\"\\]|\\.)*\"|'[^']*')(?P<tail>\s*(?:#.*)?)"
)


def rename_task(text: str, task_id: str, where: str = "task.toml") -> str:
    """``task.toml`` with ``[task].name`` set to ``<org>/<task_id>`` if it names a task."""
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PrepareError(f"{where}: not TOML ({exc})") from exc
    task = document.get("task")
    if not isinstance(task, dict) or "name" not in task:
        return text
    name = task["name"]
    if not isinstance(name, str) or not re.fullmatch(r"[^/\s]+/[^/\s]+", name):
        raise PrepareError(f'{where}: [task].name {name!r} is not "<org>/<name>"')
    new_name = f"{name.split('/')[0]}/{task_id}"
    renamed = _replace_task_name(text, new_name)
    if renamed is None or tomllib.loads(renamed).get("task", {}).get("name") != new_name:
        raise PrepareError(
            f'{where}: cannot rewrite [task].name in place (write it as name = "..." on its'
            " own line under a [task] header)"
        )
    return renamed


def _replace_task_name(text: str, new_name: str) -> str | None:
    """Replace the value of the first ``name = "..."`` line under ``[task]``; keep the rest."""
    lines = text.splitlines(keepends=True)
    table = ""
    for index, line in enumerate(lines):
        body = line.rstrip("\r\n")
        header = _TABLE.fullmatch(body)
        if header is not None:
            table = header["table"]
            continue
        if body.lstrip().startswith("[["):
            table = ""  # an array of tables: not [task]
            continue
        match = _NAME.fullmatch(body) if table == "task" else None
        if match is not None:
            newline = line[len(body) :]
            lines[index] = match["head"] + _toml_string(new_name) + match["tail"] + newline
            return "".join(lines)
    return None


def _toml_string(value: str) -> str:
    """A TOML basic string holding ``value``."""
    escaped = []
    for char in value:
        if char in '"\\':
            escaped.append("\\" + char)
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            escaped.append(f"\\u{ord(char):04X}")
        else:
            escaped.append(char)
    return '"' + "".join(escaped) + '"'


def _write_task(task_dir: Path, row: _Row, plan: list[tuple[_Entry, bytes | None]]) -> Path:
    task_dir.mkdir()
    for entry, content in plan:
        target = task_dir.joinpath(*entry.target.parts)
        if entry.is_dir:
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if content is None:
            shutil.copyfile(entry.source, target)
        else:
            target.write_bytes(content)
        os.chmod(target, entry.mode)
    data = json.dumps(row.task_data, indent=2) + "\n"
    (task_dir / TASK_DATA_FILE).write_text(data, encoding="utf-8")
    return task_dir


# --------------------------------------------------------------------------- runner


class _Missing:
    """No response given: ``verify`` gets no ``response`` argument."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()

REWARD_FILES = ("reward.txt", "reward.json")


@dataclass(frozen=True)
class RunResult:
    """What one runner process did: its exit code, the reward it left, its output."""

    exit_code: int
    reward: float | None
    metrics: dict[str, Any] = field(default_factory=dict)
    stdout: str = ""
    stderr: str = ""


# The runner, run as its own Python process:
#   python -B shim.py TASK_DIR WORKSPACE REWARD_DIR [RESPONSE_JSON_FILE]
_SHIM = r'''
"""Harbor verifier runner shim (written by tests/support/harbor_standin.py)."""
import asyncio
import importlib.util
import inspect
import json
import math
import os
import shutil
import stat
import sys
import traceback
from pathlib import Path

REWARD_FILES = ("reward.txt", "reward.json")


class ContractProblem(Exception):
    """Exit 2: the shim cannot call verify, or verify returned no reward."""


def clear_rewards(reward_dir):
    """Remove reward files already there: file, symlink (not its target) or folder."""
    for name in REWARD_FILES:
        path = reward_dir / name
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            continue
        if stat.S_ISDIR(mode):
            shutil.rmtree(path)  # a real folder (lstat): rmtree follows no link inside
        else:
            os.unlink(path)


def load_verify(tests):
    path = tests / "verifier.py"
    if not path.is_file():
        raise ContractProblem(f"no verifier module at {path}")
    sys.path[0] = str(tests)  # in place of the shim's own folder
    spec = importlib.util.spec_from_file_location("verifier", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["verifier"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        raise ContractProblem(f"importing {path} raised:\n{traceback.format_exc()}")
    verify = getattr(module, "verify", None)
    if not callable(verify):
        raise ContractProblem(f"{path} defines no verify function")
    return verify


def available_arguments(task_dir, workspace, response_file):
    available = {"workspace": workspace, "state": {"workspace": workspace}}
    task_data = task_dir / "task_data.json"
    if task_data.is_file():
        try:
            available["task_data"] = json.loads(task_data.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise ContractProblem(f"{task_data}: not JSON ({exc})")
    if response_file is not None:
        available["response"] = json.loads(Path(response_file).read_text(encoding="utf-8"))
    return available


def arguments(verify, available):
    """The arguments verify declares, by name (or position when positional-only)."""
    try:
        parameters = inspect.signature(verify).parameters.values()
    except (TypeError, ValueError) as exc:
        raise ContractProblem(f"cannot read the signature of verify: {exc}")
    args, kwargs, skipped = [], {}, None
    for param in parameters:
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if param.name not in available:
            if param.default is param.empty:
                raise ContractProblem(
                    f"verify asks for {param.name!r}, which is not available"
                    f" (available: {', '.join(sorted(available))})"
                )
            skipped = param.name
        elif param.kind is param.POSITIONAL_ONLY:
            if skipped is not None:
                raise ContractProblem(
                    f"cannot pass {param.name!r} by position after leaving out {skipped!r}"
                )
            args.append(available[param.name])
        else:
            kwargs[param.name] = available[param.name]
    return args, kwargs


async def wait_for(awaitable):
    return await awaitable


def is_number(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return isinstance(value, int) or math.isfinite(value)


def write_reward(reward_dir, result):
    if is_number(result):
        name, text = "reward.txt", repr(result)
    elif (
        isinstance(result, dict)
        and "reward" in result
        and all(isinstance(k, str) and is_number(v) for k, v in result.items())
    ):
        name, text = "reward.json", json.dumps(result)
    else:
        shown = repr(result)
        shown = shown if len(shown) <= 200 else shown[:197] + "..."
        raise ContractProblem(
            f"verify returned {shown}: not a number, nor a dict of numbers with 'reward'"
        )
    clear_rewards(reward_dir)  # the reward file holds the return value alone
    (reward_dir / name).write_text(text, encoding="utf-8")


def run(argv):
    task_dir, workspace, reward_dir = (Path(arg) for arg in argv[1:4])
    response_file = argv[4] if len(argv) > 4 else None
    try:
        reward_dir.mkdir(parents=True, exist_ok=True)
        clear_rewards(reward_dir)
        verify = load_verify(task_dir / "tests")
        args, kwargs = arguments(verify, available_arguments(task_dir, workspace, response_file))
    except ContractProblem as exc:
        print(f"runner: {exc}", file=sys.stderr)
        return 2
    try:
        result = verify(*args, **kwargs)
        if inspect.isawaitable(result):
            result = asyncio.run(wait_for(result))
    except BaseException:
        print("runner: verify raised:", file=sys.stderr)
        traceback.print_exc()
        return 1
    try:
        write_reward(reward_dir, result)
    except ContractProblem as exc:
        print(f"runner: {exc}", file=sys.stderr)
        return 2
    return 0


def main(argv):
    try:
        code = run(argv)
    except BaseException:
        print("runner: the shim failed:", file=sys.stderr)
        traceback.print_exc()
        code = 2
    if code != 0:
        try:
            clear_rewards(Path(argv[3]))  # no reward file on 1 or 2
        except OSError:
            traceback.print_exc()
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
'''


def run_verifier(
    task_dir: Path,
    workspace: Path,
    reward_dir: Path,
    response: object = MISSING,
    *,
    python: str = sys.executable,
    env: dict[str, str] | None = None,
    timeout: float = 600,
) -> RunResult:
    """Run ``task_dir/tests/verifier.py`` as the runner does, in a separate process.

    ``env`` replaces the process environment (None: inherit it). The working directory is
    ``workspace``. On timeout the process group is killed and ``TimeoutExpired`` raised.
    """
    paths = [Path(p).absolute() for p in (task_dir, workspace, reward_dir)]
    with tempfile.TemporaryDirectory(prefix="harbor-runner-") as scratch:
        shim = Path(scratch) / "runner_shim.py"
        shim.write_text(_SHIM, encoding="utf-8")
        argv = [python, "-B", str(shim), *map(str, paths)]
        if response is not MISSING:
            response_file = Path(scratch) / "response.json"
            response_file.write_text(json.dumps(_jsonable(response)), encoding="utf-8")
            argv.append(str(response_file))
        exit_code, stdout, stderr = _run(argv, cwd=paths[1], env=env, timeout=timeout)
    reward, metrics = read_reward(paths[2])
    return RunResult(exit_code, reward, metrics, stdout, stderr)


def _jsonable(response: object) -> object:
    dump = getattr(response, "model_dump", None)  # a Pydantic Responses API object
    return dump(mode="json") if callable(dump) else response


def _run(
    argv: list[str], *, cwd: Path, env: dict[str, str] | None, timeout: float
) -> tuple[int, str, str]:
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        encoding="utf-8",
        errors="replace",
        start_new_session=True,  # its own process group, killed whole on timeout
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise
    return process.returncode, stdout, stderr


def read_reward(reward_dir: Path) -> tuple[float | None, dict[str, Any]]:
    """The reward as Harbor reads it: ``reward.json``'s ``reward`` first, else ``reward.txt``."""
    reward_dir = Path(reward_dir)
    metrics: dict[str, Any] = {}
    reward_json, reward_txt = reward_dir / "reward.json", reward_dir / "reward.txt"
    if reward_json.is_file():
        metrics = json.loads(reward_json.read_text(encoding="utf-8"))
        if "reward" in metrics:
            return float(metrics["reward"]), metrics
    if reward_txt.is_file():
        return float(reward_txt.read_text(encoding="utf-8").strip()), metrics
    return None, metrics
