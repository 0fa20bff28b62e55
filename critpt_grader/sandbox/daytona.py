"""Run jobs in Daytona sandboxes (optional extra ``daytona``; the SDK is imported lazily).

One job, one sandbox: a reference and a candidate never share one, and a candidate's holds
only what its job carries (its source, the inputs, the limits) and the runner, which the
image provides. Each sandbox is created ephemeral (deleted once stopped), with the network
blocked, an auto-stop interval and a TTL as a backstop, the resources and user from
:class:`DaytonaSettings`, and labels naming its owner, run and job.

**Never root.** Daytona's toolbox runs every command as root, whatever the sandbox's
``os_user`` says, so the command drops to that unprivileged user itself (setpriv) before the
runner starts, and the runner checks from inside, before the job, that it is neither uid
nor gid 0 (else the run is ``unavailable``, never scored).

The job goes in as one uploaded file that the command opens as the runner's stdin and
unlinks before the runner starts, so no program in the sandbox can read the run's nonce.
The command runs through the **session API** asynchronously (a blocking exec can be cut by
the provider); the host polls its exit code, each poll bounded by ``request_seconds`` and
retried on transient errors, until a client-side deadline (the job's wall clock plus
``grace_seconds``; the runner inside stops itself before the wall clock). A result counts
only with exit status 0 *and* a frame carrying the run's nonce. No exit code by the
deadline, an exit code that is not an integer, or any provider error is ``unavailable``
(retryable, never scored).

Every sandbox is written in the :mod:`ownership journal <critpt_grader.sandbox.journal>`
before it is created and marked deleted only after a confirmed delete (done in ``finally``);
a sweep at start and at ``aclose()`` deletes what this owner left behind.

Usage::

    async with DaytonaBackend(Settings(backend="daytona")) as backend:
        outcome = await backend.run(job)
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import os
import shlex
import socket
import time
import uuid
import weakref
from typing import Any

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from critpt_grader.errors import GraderError
from critpt_grader.runner import protocol
from critpt_grader.sandbox.base import Job, RunOutcome, SandboxBackend
from critpt_grader.sandbox.journal import OwnershipJournal
from critpt_grader.sandbox.outcomes import frame_limit, interpret, unavailable

CONTAINMENT = "daytona"
LABEL_OWNER = "critpt-grader-owner"
LABEL_RUN = "critpt-grader-run"
LABEL_JOB = "critpt-grader-job"
LABEL_ROLE = "critpt-grader-role"
# Run by the session as root: $0 the job file, $1 the user to drop to, then the runner.
DROP_SCRIPT = """\
exec 0<"$0" && rm -f -- "$0" || exit 126
user=$1; shift
uid=$(id -u -- "$user") && gid=$(id -g -- "$user") || exit 126
[ "$uid" -ne 0 ] && [ "$gid" -ne 0 ] || exit 126
exec setpriv --reuid="$uid" --regid="$gid" --clear-groups --inh-caps=-all \
    --bounding-set=-all --no-new-privs -- "$@" || exit 126
"""
# What the sandbox runtime must hold (the image or snapshot): python3 with these, setpriv
# (util-linux), the unprivileged user, and this package (for ``python -m
# critpt_grader.runner``).
RUNTIME_PACKAGES = ("numpy", "scipy", "sympy", "mpmath")


def _default_owner() -> str:
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = str(os.getuid())
    return f"{user}@{socket.gethostname()}"


class DaytonaSettings(BaseSettings):
    """The Daytona backend's own settings: environment ``CRITPT_GRADER_DAYTONA_*``.

    The API key may also come from ``DAYTONA_API_KEY`` (the SDK's own variable), as may the
    API URL and target. The limits of a job come from the global settings."""

    model_config = SettingsConfigDict(
        env_prefix="CRITPT_GRADER_DAYTONA_", frozen=True, extra="forbid"
    )

    api_key: SecretStr | None = Field(None, description="else DAYTONA_API_KEY")
    api_url: str | None = Field(None, description="else DAYTONA_API_URL or Daytona's cloud")
    target: str | None = Field(None, description="region; else DAYTONA_TARGET")
    snapshot: str | None = Field(
        None,
        description="snapshot with python3, numpy, scipy, sympy, mpmath and critpt-grader; "
        "when unset, `image` is built instead",
    )
    image: str = Field(
        "python:3.11-slim",
        description="base image when no snapshot is given (the runtime must be installed in "
        "it: see critpt_grader.sandbox.daytona.runtime_image)",
    )
    os_user: str = Field(
        "daytona",
        description="the unprivileged user the runner drops to inside the sandbox (Daytona "
        "runs every command as root, whatever the sandbox's user)",
    )
    python: str = Field("python3", description="interpreter inside the sandbox")
    pythonpath: str = Field("/opt/critpt", description="PYTHONPATH of the runner")
    workdir: str = Field("/tmp", description="where the job file is written")
    cpu: int = Field(1, ge=1, description="vCPUs per sandbox (image sandboxes only)")
    memory_gb: int = Field(2, ge=1, description="memory per sandbox, GiB (image sandboxes)")
    disk_gb: int = Field(3, ge=1, description="disk per sandbox, GiB (image sandboxes)")
    auto_stop_minutes: int = Field(5, ge=1, description="idle minutes before auto-stop")
    ttl_minutes: int = Field(30, ge=1, description="hard lifetime of a sandbox")
    create_seconds: float = Field(120.0, gt=0, description="longest wait for a new sandbox")
    request_seconds: float = Field(10.0, gt=0, description="bound of one API call or poll")
    poll_seconds: float = Field(0.25, gt=0, description="pause between exit-code polls")
    grace_seconds: float = Field(20.0, ge=0, description="deadline past the job's wall clock")
    delete_attempts: int = Field(3, ge=1, description="tries to delete a sandbox before giving up")
    owner: str = Field(
        default_factory=_default_owner,
        description="the owner label; default: user@host of the grader",
    )
    journal_dir: str = Field(
        "~/.cache/critpt-grader/daytona", description="folder of the ownership journal"
    )
    sweep: bool = Field(True, description="sweep leftovers at start and at close")


def runtime_image(python: str = "3.11") -> Any:
    """A Daytona ``Image`` with the sandbox runtime and this package, readable by every
    user (build a snapshot from it once: ``daytona.snapshot.create``)."""
    from pathlib import Path

    from daytona import Image

    package = Path(__file__).resolve().parents[1]
    user = DaytonaSettings.model_fields["os_user"].default
    return (
        Image.debian_slim(python)
        .pip_install(list(RUNTIME_PACKAGES))
        .run_commands(f"id -u {user} >/dev/null 2>&1 || useradd --system --user-group {user}")
        .add_local_dir(str(package), "/opt/critpt/critpt_grader")
        .env({"PYTHONPATH": "/opt/critpt"})
    )


# --- one client per process (and event loop) ------------------------------------------

_CLIENTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple, list[Any]]] = (
    weakref.WeakKeyDictionary()
)


def _client_key(settings: DaytonaSettings) -> tuple:
    key = settings.api_key.get_secret_value() if settings.api_key else None
    return (settings.api_url, key, settings.target)


def _acquire_client(settings: DaytonaSettings) -> Any:
    """The process's client for these credentials on the running loop (refcounted): an
    aiohttp session belongs to the loop it was made on."""
    from daytona import AsyncDaytona, DaytonaConfig

    loop = asyncio.get_running_loop()
    clients = _CLIENTS.setdefault(loop, {})
    key = _client_key(settings)
    if key not in clients:
        config = DaytonaConfig(
            api_key=key[1] or os.environ.get("DAYTONA_API_KEY"),
            api_url=settings.api_url or os.environ.get("DAYTONA_API_URL"),
            target=settings.target or os.environ.get("DAYTONA_TARGET"),
        )
        clients[key] = [AsyncDaytona(config), 0]
    clients[key][1] += 1
    return clients[key][0]


async def _release_client(settings: DaytonaSettings, loop: asyncio.AbstractEventLoop) -> None:
    clients = _CLIENTS.get(loop, {})
    key = _client_key(settings)
    if key in clients:
        clients[key][1] -= 1
        if clients[key][1] <= 0:
            client = clients.pop(key)[0]
            with contextlib.suppress(Exception):
                await client.close()


class DaytonaBackend(SandboxBackend):
    """A :class:`~critpt_grader.sandbox.base.SandboxBackend` on Daytona (see above).

    ``settings`` are the global settings (limits, ``max_concurrent_sandboxes``);
    ``daytona`` the backend's own (default: read from the environment). One instance per
    event loop; ``aclose()`` waits for every sandbox it created to be deleted (or left to
    the journal's sweep when the provider does not confirm)."""

    name = "daytona"

    def __init__(self, settings: Any = None, *, daytona: DaytonaSettings | None = None) -> None:
        import importlib.util

        from critpt_grader.settings import Settings

        if importlib.util.find_spec("daytona") is None:
            raise GraderError(
                "the daytona backend needs the SDK: pip install 'critpt-grader[daytona]'"
            )
        self.settings = settings or Settings()
        self.config = daytona or DaytonaSettings()
        self.run_id = uuid.uuid4().hex[:16]
        self.journal = OwnershipJournal(self.config.journal_dir)
        self._client: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._slots: asyncio.Semaphore | None = None
        self._started: asyncio.Lock | None = None
        self._running: set[asyncio.Task[RunOutcome]] = set()
        self._closing = False
        self._closed = False

    async def _ready(self) -> Any:
        """The client, made on first use; the start-up sweep runs once."""
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
            self._slots = asyncio.Semaphore(self.settings.max_concurrent_sandboxes)
            self._started = asyncio.Lock()
        elif self._loop is not asyncio.get_running_loop():
            raise RuntimeError("a DaytonaBackend belongs to the event loop it was first used on")
        assert self._started is not None
        async with self._started:
            if self._client is None:
                self._client = _acquire_client(self.config)
                await asyncio.to_thread(self.journal.start_run, self.run_id)
                if self.config.sweep:
                    with contextlib.suppress(Exception):
                        await self.sweep()
        return self._client

    async def run(self, job: Job) -> RunOutcome:
        if self._closing:
            return unavailable("the sandbox backend is closed", CONTAINMENT)
        if len(job.source.encode("utf-8", "replace")) > job.limits.source_bytes:
            return RunOutcome(
                status="source_error",
                detail=f"the source is over the limit of {job.limits.source_bytes} bytes",
                containment=CONTAINMENT,
            )
        return await self._run_owned(self._run_in_slot(job), CONTAINMENT)

    async def _run_in_slot(self, job: Job) -> RunOutcome:
        try:
            client = await self._ready()
        except Exception as exc:
            return unavailable(f"the Daytona client cannot start: {exc}", CONTAINMENT)
        assert self._slots is not None
        async with self._slots:
            outcome = await self._run_once(client, job)
        outcome.containment = outcome.containment or CONTAINMENT
        return outcome

    async def aclose(self) -> None:
        """Stop taking jobs, cancel running ones (their sandboxes are deleted), sweep."""
        if self._closed:
            return
        await self._cancel_runs()
        self._closed = True
        if self._client is not None and self._loop is not None:
            if self.config.sweep:
                with contextlib.suppress(Exception):
                    await self.sweep()
            await asyncio.to_thread(self.journal.end_run, self.run_id)
            await _release_client(self.config, self._loop)
            self._client = None

    # --- one job ----------------------------------------------------------------------

    async def _run_once(self, client: Any, job: Job) -> RunOutcome:
        job_id = uuid.uuid4().hex[:12]
        name = f"critpt-{self.run_id[:8]}-{job_id}"
        await asyncio.to_thread(
            self.journal.creating,
            name,
            provider="daytona",
            owner=self.config.owner,
            run=self.run_id,
            job=job_id,
            role=job.role,
        )
        sandbox = None
        try:
            try:
                sandbox = await client.create(
                    self._params(name, job_id, job.role), timeout=self.config.create_seconds
                )
            except Exception as exc:
                return unavailable(f"Daytona could not create a sandbox: {_why(exc)}", CONTAINMENT)
            await asyncio.to_thread(self.journal.created, name, str(sandbox.id))
            outcome = await self._execute(sandbox, job, job_id)
        finally:
            # Shielded: a cancelled run still deletes its sandbox before it goes.
            deleted = await asyncio.shield(self._delete(client, name, sandbox))
        if not deleted:
            # Infrastructure trouble, never a score: the row is retried, and the sweep deletes
            # what was left once the provider answers again.
            return unavailable(
                "Daytona did not confirm the sandbox's delete (left for the sweep)", CONTAINMENT
            )
        return outcome

    def _params(self, name: str, job_id: str, role: str) -> Any:
        from daytona import CreateSandboxFromImageParams, CreateSandboxFromSnapshotParams, Resources

        config = self.config
        common: dict[str, Any] = {
            "name": name,
            "language": "python",
            "os_user": config.os_user,
            "env_vars": {},
            "labels": {
                LABEL_OWNER: config.owner,
                LABEL_RUN: self.run_id,
                LABEL_JOB: job_id,
                LABEL_ROLE: role,
            },
            "public": False,
            "network_block_all": True,
            "ephemeral": True,  # deleted as soon as it stops
            "auto_stop_interval": config.auto_stop_minutes,
            "ttl_minutes": config.ttl_minutes,
        }
        if config.snapshot:
            return CreateSandboxFromSnapshotParams(snapshot=config.snapshot, **common)
        resources = Resources(cpu=config.cpu, memory=config.memory_gb, disk=config.disk_gb)
        return CreateSandboxFromImageParams(image=config.image, resources=resources, **common)

    async def _execute(self, sandbox: Any, job: Job, job_id: str) -> RunOutcome:
        from daytona import SessionExecuteRequest

        config = self.config
        nonce = protocol.new_nonce()
        path = f"{config.workdir.rstrip('/')}/critpt-{job_id}.job"
        session = f"critpt-{job_id}"
        bound = config.request_seconds
        try:
            await asyncio.wait_for(
                sandbox.fs.upload_file(job.encoded(nonce), path),
                bound * 3,
            )
            await asyncio.wait_for(
                sandbox.process.create_session(session, request_timeout=bound), bound
            )
            started = time.time()
            response = await asyncio.wait_for(
                sandbox.process.execute_session_command(
                    session,
                    SessionExecuteRequest(command=self._command(path), run_async=True),
                    timeout=int(bound),
                ),
                bound + 5,
            )
            command_id = response.cmd_id
        except Exception as exc:
            return unavailable(f"Daytona could not start the runner: {_why(exc)}", CONTAINMENT)
        if not isinstance(command_id, str) or not command_id:
            return unavailable("Daytona gave no command id", CONTAINMENT)
        deadline = time.monotonic() + job.limits.wall_seconds + config.grace_seconds
        exit_code = await self._poll_exit_code(sandbox, session, command_id, deadline)
        if isinstance(exit_code, RunOutcome):
            return exit_code
        logs = await self._logs(sandbox, session, command_id)
        if isinstance(logs, RunOutcome):
            return logs
        stdout, stderr = logs
        limit = frame_limit(job.limits)
        if len(stdout) > limit:
            return interpret(None, "overflow", job, started, returncode=exit_code, stderr=b"")
        # Only the exit status the runner gives after writing its frame, and that frame with
        # this run's nonce, make a result.
        payload = protocol.find_frame(stdout, nonce) if exit_code == 0 else None
        return interpret(
            payload,
            "exited",
            job,
            started,
            returncode=exit_code,
            stderr=stderr[-65536:],
            # 126/127: the image cannot run the interpreter or the runner at all.
            never_started=exit_code in (126, 127),
        )

    def _command(self, path: str) -> str:
        """The command the session runs (as root: Daytona's toolbox runs every command as
        root, whatever the sandbox's ``os_user``). Still root, the shell opens the job file
        as the runner's stdin and unlinks it; then it drops for good to ``os_user`` (setpriv:
        uid, gid, no groups, no capabilities, no new privileges) and runs the runner, which
        checks from inside, before the job, that it is neither uid nor gid 0
        (:data:`~critpt_grader.runner.protocol.UNPRIVILEGED_VARIABLE`). A user that does not
        exist or is root exits 126: the sandbox never ran the runner, ``unavailable``."""
        config = self.config
        env = ["env", "-i", "PATH=/usr/local/bin:/usr/bin:/bin", f"HOME={config.workdir}"]
        env += ["LANG=C.UTF-8", "PYTHONDONTWRITEBYTECODE=1", "OPENBLAS_NUM_THREADS=1"]
        env += [f"PYTHONPATH={config.pythonpath}", f"{protocol.UNPRIVILEGED_VARIABLE}=1"]
        runner = [*env, config.python, "-s", "-B", "-m", "critpt_grader.runner"]
        return shlex.join(["sh", "-c", DROP_SCRIPT, path, config.os_user, *runner])

    async def _poll_exit_code(
        self, sandbox: Any, session: str, command_id: str, deadline: float
    ) -> int | RunOutcome:
        """The command's exit code, polled under the client-side deadline."""
        bound = self.config.request_seconds
        last_error = ""
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                why = f" (last error: {last_error})" if last_error else ""
                return unavailable(
                    f"Daytona reported no exit code by the deadline{why}", CONTAINMENT
                )
            try:
                command = await asyncio.wait_for(
                    sandbox.process.get_session_command(
                        session, command_id, request_timeout=min(bound, remaining)
                    ),
                    min(bound, remaining) + 1,
                )
            except Exception as exc:
                if _malformed(exc):  # an answer that does not parse is no answer: stop
                    return unavailable(
                        f"Daytona's command status is malformed: {_why(exc)}", CONTAINMENT
                    )
                last_error = _why(exc)  # transient: a dropped connection, a 5xx, a slow poll
            else:
                code = getattr(command, "exit_code", None)
                if code is not None:
                    if isinstance(code, bool) or not isinstance(code, int):
                        return unavailable(
                            f"Daytona's exit code is not an integer: {code!r}", CONTAINMENT
                        )
                    return code
            await asyncio.sleep(min(self.config.poll_seconds, max(deadline - time.monotonic(), 0)))

    async def _logs(self, sandbox: Any, session: str, command_id: str) -> Any:
        bound = self.config.request_seconds
        last = ""
        for _ in range(3):
            try:
                logs = await asyncio.wait_for(
                    sandbox.process.get_session_command_logs(
                        session, command_id, request_timeout=bound
                    ),
                    bound + 1,
                )
            except Exception as exc:
                last = _why(exc)
                await asyncio.sleep(self.config.poll_seconds)
                continue
            stdout, stderr = logs.stdout or "", logs.stderr or ""
            return stdout.encode("utf-8", "replace"), stderr.encode("utf-8", "replace")
        return unavailable(f"Daytona could not return the runner's output: {last}", CONTAINMENT)

    async def _delete(self, client: Any, name: str, sandbox: Any) -> bool:
        """Delete, retried; the journal is told only once the provider accepted the delete
        (2xx) or answered that the sandbox is gone. A sandbox whose create failed half-way is
        looked up by name first. Unconfirmed: the journal keeps it for the sweep (and the
        sandbox's auto-stop, ephemeral flag and TTL bound what it costs meanwhile)."""
        for attempt in range(self.config.delete_attempts):
            try:
                if sandbox is None:
                    sandbox = await asyncio.wait_for(
                        client.get(name, request_timeout=self.config.request_seconds),
                        self.config.request_seconds + 1,
                    )
                await asyncio.wait_for(
                    sandbox.delete(timeout=self.config.request_seconds),
                    self.config.request_seconds + 1,
                )
            except Exception as exc:
                if _not_found(exc):
                    break
                await asyncio.sleep(0.2 * (attempt + 1))
                continue
            break
        else:
            return False  # unconfirmed: the journal keeps it for the sweep
        await asyncio.to_thread(self.journal.deleted, name)
        return True

    # --- the sweep --------------------------------------------------------------------

    async def sweep(self) -> list[str]:
        """Delete this owner's sandboxes that the journal does not show as deleted (those of
        a run still alive on this machine excepted); return their names."""
        from daytona import ListSandboxesQuery

        client = self._client or await self._ready()
        live = await asyncio.to_thread(self.journal.live_runs)
        if not self._closed:
            live.add(self.run_id)
        else:
            live.discard(self.run_id)
        swept = []
        query = ListSandboxesQuery(labels={LABEL_OWNER: self.config.owner})
        found = [sandbox async for sandbox in client.list(query)]
        for sandbox in found:
            name = str(sandbox.name)
            if sandbox.labels.get(LABEL_RUN) in live or self.journal.is_deleted(name):
                continue
            try:
                await asyncio.wait_for(
                    sandbox.delete(timeout=self.config.request_seconds),
                    self.config.request_seconds + 1,
                )
            except Exception as exc:
                if not _not_found(exc):
                    continue
            await asyncio.to_thread(self.journal.deleted, name)
            swept.append(name)
        # Journalled sandboxes the provider no longer knows are gone.
        listed = {str(sandbox.name) for sandbox in found}
        for entry in await asyncio.to_thread(
            self.journal.entries, owner=self.config.owner, pending=True
        ):
            if entry.name not in listed and entry.run not in live:
                await asyncio.to_thread(self.journal.deleted, entry.name)
        return swept


def _why(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:300]}" if text else type(exc).__name__


def _malformed(exc: BaseException) -> bool:
    """The SDK could not read the provider's answer (it wraps the validation error)."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return False
        if isinstance(seen, ValueError | TypeError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _not_found(exc: BaseException) -> bool:
    try:
        from daytona import DaytonaNotFoundError
    except ImportError:  # pragma: no cover
        return False
    return isinstance(exc, DaytonaNotFoundError)
