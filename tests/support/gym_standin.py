"""A stand-in NeMo Gym sandbox provider that runs commands for real, on this machine.

This is NOT a Gym provider of Gym's. It implements Gym's ``SandboxProvider`` protocol
(``name``; async ``create``, ``exec``, ``upload_file``, ``download_file``, ``status``,
``close``, ``aclose``) so that the gym backend's contract suite runs the real runner through
it: a "sandbox" is a folder whose ``tmp`` is the sandbox's ``/tmp``; ``exec`` runs
``sh -c COMMAND`` as a local subprocess in a bubblewrap PID namespace (``--unshare-pid
--die-with-parent``), so everything a job starts ends with it, and ``close`` kills it.

Where ``nemo_gym.sandbox`` imports, the tests register :class:`StandInProvider` with Gym's own
``register_provider`` and the backend builds it through Gym's ``create_provider`` and spec
types. Elsewhere :data:`PROTOCOL` stands in for that module: a small, faithful copy (in our own
words) of the data types and registry functions the backend uses, as summarized in
``../shared/reference/gym-sandbox.md``.

Faults (``lab(key).faults``) give every shape a real provider returns: the create fails; the
upload raises; exec returns a real exit code, ``error_type="timeout"`` (124),
``error_type="sandbox"`` (125), ``return_code=0`` with no output (Gym's Daytona provider on a
missing exit code), a huge stdout, or raises; close fails n times.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import tempfile
import uuid
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from tests.support.daytona_standin import _runtime_under_tmp

NAME = "critpt-standin"

# --- a faithful copy of the protocol's types, for where nemo_gym.sandbox does not import ----


@dataclass(frozen=True)
class SandboxResources:
    cpu: float | None = None
    memory_mib: int | None = None
    disk_gib: int | None = None
    gpu: int | None = None
    gpu_type: str | None = None


@dataclass(frozen=True)
class SandboxSpec:
    image: str | None = None
    ttl_s: float | None = None
    ready_timeout_s: float | None = None
    workdir: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    metadata: dict[str, str] = field(default_factory=dict)
    resources: SandboxResources | None = None
    entrypoint: list[str] | None = None
    provider_options: dict[str, Any] = field(default_factory=dict)


@dataclass
class SandboxHandle:
    sandbox_id: str
    provider_name: str
    raw: Any = None


@dataclass
class SandboxExecResult:
    stdout: str | None
    stderr: str | None
    return_code: int
    error_type: str | None = None


class SandboxStatus(StrEnum):
    STARTING = "starting"
    RUNNING = "running"
    STOPPED = "stopped"
    ERROR = "error"
    UNKNOWN = "unknown"


class SandboxCreateError(RuntimeError):
    pass


_REGISTRY: dict[str, type] = {}


def register_provider(name: str, cls: type, *, override: bool = False) -> None:
    if name in _REGISTRY and not override:
        raise ValueError(f"provider {name!r} is registered already")
    _REGISTRY[name] = cls


def create_provider(config: dict[str, dict[str, Any]]) -> Any:
    if len(config) != 1:
        raise ValueError("a provider config has exactly one key")
    ((name, kwargs),) = config.items()
    return _REGISTRY[name](**(kwargs or {}))


PROTOCOL = SimpleNamespace(
    create_provider=create_provider,
    SandboxSpec=SandboxSpec,
    SandboxResources=SandboxResources,
)


def gym_types() -> Any:
    """Gym's own types where ``nemo_gym.sandbox`` imports, else this module's copies."""
    try:
        import nemo_gym.sandbox as sandbox
    except ImportError:
        return SimpleNamespace(
            SandboxHandle=SandboxHandle,
            SandboxExecResult=SandboxExecResult,
            SandboxStatus=SandboxStatus,
            SandboxCreateError=SandboxCreateError,
        )
    return SimpleNamespace(
        SandboxHandle=sandbox.SandboxHandle,
        SandboxExecResult=getattr(sandbox, "SandboxExecResult", None) or sandbox.ExecResult,
        SandboxStatus=sandbox.SandboxStatus,
        SandboxCreateError=sandbox.SandboxCreateError,
    )


# --- the stand-in provider ----------------------------------------------------------------


@dataclass
class Faults:
    create_fails: int = 0  # the next n creates raise SandboxCreateError
    upload_fails: int = 0  # the next n uploads raise OSError
    exec_shape: str = "real"  # real, timeout, sandbox, missing_exit, huge, raises, crash
    close_fails: int = 0  # the next n closes raise
    create_hangs: bool = False  # create never returns (a provider that stalls)


@dataclass
class Box:
    id: str
    root: Path
    spec: Any
    processes: list[asyncio.subprocess.Process] = field(default_factory=list)


@dataclass
class Lab:
    """What the tests see of every sandbox the stand-in made under one key."""

    faults: Faults = field(default_factory=Faults)
    boxes: dict[str, Box] = field(default_factory=dict)
    specs: list[Any] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    closed: list[str] = field(default_factory=list)
    provider_acloses: int = 0
    providers_made: int = 0

    def live(self) -> list[str]:
        return list(self.boxes)


_LABS: dict[str, Lab] = {}


def lab(key: str) -> Lab:
    return _LABS.setdefault(key, Lab())


class StandInProvider:
    """``{"critpt-standin": {"lab": KEY}}``: sandboxes as local folders, commands for real."""

    name = NAME

    def __init__(self, lab: str = "default", **_: Any) -> None:
        self.lab = globals()["lab"](lab)
        self.lab.providers_made += 1
        self.types = gym_types()
        self.folder = Path(tempfile.gettempdir())

    async def create(self, spec: Any) -> Any:
        faults = self.lab.faults
        self.lab.specs.append(spec)
        if faults.create_fails > 0:
            faults.create_fails -= 1
            raise self.types.SandboxCreateError("the stand-in refuses to create")
        if faults.create_hangs:
            await asyncio.Event().wait()
        box_id = uuid.uuid4().hex
        root = Path(tempfile.mkdtemp(prefix="gym-standin-"))
        (root / "tmp").mkdir()
        self.lab.boxes[box_id] = Box(box_id, root, spec)
        return self.types.SandboxHandle(sandbox_id=box_id, provider_name=NAME, raw=None)

    def _box(self, handle: Any) -> Box:
        box = self.lab.boxes.get(handle.sandbox_id)
        if box is None:
            raise RuntimeError(f"sandbox {handle.sandbox_id} is gone")
        return box

    def _inside(self, box: Box, path: str) -> Path:
        if not path.startswith("/tmp/"):
            raise PermissionError("the stand-in holds files only under /tmp")
        return box.root / path.lstrip("/")

    async def upload_file(self, handle: Any, source_path: Path, target_path: str) -> None:
        box = self._box(handle)
        if self.lab.faults.upload_fails > 0:
            self.lab.faults.upload_fails -= 1
            raise OSError("the stand-in's upload failed")
        target = self._inside(box, target_path)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source_path, target)

    async def download_file(self, handle: Any, source_path: str, target_path: Path) -> None:
        shutil.copyfile(self._inside(self._box(handle), source_path), target_path)

    async def exec(
        self,
        handle: Any,
        command: str,
        *,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout_s: float | None = None,
        user: str | None = None,
    ) -> Any:
        box = self._box(handle)
        self.lab.commands.append(command)
        result = self.types.SandboxExecResult
        shape = self.lab.faults.exec_shape
        if user is not None:
            raise ValueError("the stand-in runs commands as it is (no user)")
        if shape == "raises":
            raise ConnectionError("the stand-in lost its connection")
        if shape == "sandbox":
            return result(stdout="", stderr="runtime gone", return_code=125, error_type="sandbox")
        if shape == "missing_exit":
            return result(stdout="", stderr="", return_code=0, error_type=None)
        if shape == "huge":
            return result(stdout="x" * 3_000_000, stderr="", return_code=0, error_type=None)
        process = await asyncio.create_subprocess_exec(
            *("bwrap", "--dev-bind", "/", "/", "--bind", str(box.root / "tmp"), "/tmp"),
            *_runtime_under_tmp(),
            *("--unshare-pid", "--proc", "/proc", "--die-with-parent"),
            *("--chdir", cwd or "/tmp"),
            *("sh", "-c", command),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            env={**os.environ, **(env or {})},
        )
        box.processes.append(process)
        if shape == "timeout":  # the provider's clock ran out, however fast the command is
            _kill(process)
            await process.wait()
            return result(stdout="", stderr="timed out", return_code=124, error_type="timeout")
        try:
            stdout, stderr = await asyncio.wait_for(process.communicate(), timeout_s)
        except TimeoutError:
            _kill(process)
            await process.wait()
            return result(stdout="", stderr="timed out", return_code=124, error_type="timeout")
        if shape == "crash":  # the runner's frame lost on the way (a killed container)
            stdout = b""
        return result(
            stdout=stdout.decode("utf-8", "replace"),
            stderr=stderr.decode("utf-8", "replace"),
            return_code=process.returncode,
            error_type=None,
        )

    async def status(self, handle: Any) -> Any:
        running = handle.sandbox_id in self.lab.boxes
        return self.types.SandboxStatus.RUNNING if running else self.types.SandboxStatus.STOPPED

    async def close(self, handle: Any) -> None:
        if self.lab.faults.close_fails > 0:
            self.lab.faults.close_fails -= 1
            raise ConnectionError("the stand-in's close failed")
        box = self.lab.boxes.pop(handle.sandbox_id, None)
        if box is None:
            return
        for process in box.processes:
            _kill(process)
            with contextlib.suppress(ProcessLookupError):
                await process.wait()
        shutil.rmtree(box.root, ignore_errors=True)
        self.lab.closed.append(box.id)

    async def aclose(self) -> None:
        self.lab.provider_acloses += 1


def _kill(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)


def register() -> Any:
    """Register the stand-in with Gym's own registry where ``nemo_gym.sandbox`` imports and
    return None (the backend then uses Gym itself); else register it with :data:`PROTOCOL`'s
    registry and return that."""
    try:
        from nemo_gym.sandbox import register_provider as gym_register
    except ImportError:
        register_provider(NAME, StandInProvider, override=True)
        return PROTOCOL
    gym_register(NAME, StandInProvider, override=True)
    return None
