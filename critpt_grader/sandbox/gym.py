"""Run jobs in sandboxes of any NeMo Gym sandbox provider (optional extra ``gym``).

``make_backend("gym")`` runs each job through ``nemo_gym.sandbox`` (imported lazily) on the
provider named in :class:`GymSettings` — docker, apptainer, opensandbox, e2b, ecs_fargate,
daytona, or one registered with Gym's ``register_provider`` or its entry points. The backend
talks to the provider through Gym's ``SandboxProvider`` protocol (create, upload_file, exec,
close, aclose), which has not changed from 0.4.0 to 0.7.0, rather than through the
``AsyncSandbox`` facade, so that it sees the handle before anything else happens (to
journal it), can retry a failed close and knows whether it held.

How a job travels:

1. The sandbox is written in the :mod:`ownership journal <critpt_grader.sandbox.journal>`
   *before* the create call; a fresh provider instance is made for it (``create_provider``)
   and ``create`` gets a spec with ``ttl_s`` always set, the labels (owner, run, job, role),
   the image and the resources. The handle's id goes to the journal.
2. The job (``encode_job_input``: inputs and this run's nonce) is uploaded as one file.
3. One ``exec`` runs ``env -i … sh -c SCRIPT``: the script opens the job file as stdin and
   unlinks it, drops root if it has it (``setpriv`` to ``sandbox_uid``, no groups, no
   capabilities, no new privileges; no ``setpriv`` → refuses, exit 97), runs
   ``python -m critpt_grader.runner`` with its output in files, then prints at most
   ``frame_limit`` + 1 bytes of stdout and the last 64 KiB of stderr. The runner applies the
   job's rlimits to each process that runs the program, exactly as in the other backends.
4. A result counts only with ``error_type`` None, exit status 0 *and* a frame carrying the
   nonce. Any provider error (``error_type`` "sandbox"/"timeout"/…), any exception, an exit
   without a frame (Gym's Daytona provider reports a missing exit code as 0) is
   ``unavailable``: retryable, never a candidate fault. Stdout past the bound is
   ``output_limit``.
5. ``close`` (retried, each try bounded) then ``aclose`` run in ``finally``, shielded from
   cancellation. The journal marks the sandbox deleted only after ``close`` returned; an
   unconfirmed close makes the run ``unavailable`` and leaves the entry for :meth:`sweep`
   (which reconnects where the provider can: Gym's ``ConnectableProvider``) and, meanwhile,
   the provider's TTL.

**A provider is not containment.** What holds inside its sandbox is the provider's
isolation (docker with operator hardening, a remote VM…; Gym's ``local`` provider holds
nothing) plus what the runner does itself: an unprivileged uid, rlimits, one process tree
per job, the nonce-framed channel. No seccomp filter, cgroup or user namespace of ours.
``critpt-grader doctor --backend gym`` runs a probe job and says which of these held.

Usage::

    async with GymBackend(Settings(backend="gym"), gym=GymSettings(provider="docker")) as b:
        outcome = await b.run(job)
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import tempfile
import time
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from critpt_grader.errors import GraderError
from critpt_grader.runner import protocol
from critpt_grader.sandbox.base import Job, RunOutcome, SandboxBackend
from critpt_grader.sandbox.daytona import (
    LABEL_JOB,
    LABEL_OWNER,
    LABEL_ROLE,
    LABEL_RUN,
    _default_owner,
    _why,
)
from critpt_grader.sandbox.journal import OwnershipJournal
from critpt_grader.sandbox.outcomes import frame_limit, interpret, unavailable

STDERR_TAIL = 65536
EXIT_CANNOT_DROP = 97  # the script found itself root with no way to drop it
EXIT_NO_JOB = 98  # the job file could not be opened


class GymSettings(BaseSettings):
    """The gym backend's own settings: environment ``CRITPT_GRADER_GYM_*`` (mappings as
    JSON). The limits of a job come from the global settings."""

    model_config = SettingsConfigDict(env_prefix="CRITPT_GRADER_GYM_", frozen=True, extra="forbid")

    provider: str = Field("docker", description="the Gym sandbox provider's registered name")
    provider_config: dict[str, Any] = Field(
        default_factory=dict, description="the provider's constructor keyword arguments"
    )
    image: str | None = Field(
        None,
        description="image with python3, numpy, scipy, sympy, mpmath and critpt-grader "
        "(and util-linux's setpriv if it runs as root)",
    )
    provider_options: dict[str, Any] = Field(
        default_factory=dict, description="spec.provider_options (e.g. a snapshot)"
    )
    python: str = Field("python3", description="interpreter inside the sandbox")
    pythonpath: str = Field("/opt/critpt", description="PYTHONPATH of the runner")
    workdir: str = Field("/tmp", description="where the job file is written")
    sandbox_uid: int = Field(
        65534, ge=1, description="uid (and gid) the runner drops to when it starts as root"
    )
    cpu: float | None = Field(1.0, description="spec.resources.cpu (None: provider default)")
    memory_mib: int | None = Field(2048, description="spec.resources.memory_mib")
    ttl_seconds: int = Field(1800, ge=60, description="spec.ttl_s: the provider's backstop")
    ready_seconds: float = Field(120.0, gt=0, description="longest wait for a new sandbox")
    request_seconds: float = Field(30.0, gt=0, description="bound of one upload or close")
    grace_seconds: float = Field(20.0, ge=0, description="exec deadline past the wall clock")
    close_attempts: int = Field(3, ge=1, description="tries to close a sandbox before giving up")
    owner: str = Field(
        default_factory=_default_owner,
        description="the owner label; default: user@host of the grader",
    )
    journal_dir: str = Field(
        "~/.cache/critpt-grader/gym", description="folder of the ownership journal"
    )
    sweep: bool = Field(True, description="sweep leftovers at start and at close")


def gym_api() -> Any:
    """``nemo_gym.sandbox`` as this backend uses it (GraderError when it is not installed)."""
    try:
        import nemo_gym.sandbox as sandbox
    except ImportError as exc:
        raise GraderError(
            "the gym backend needs nemo_gym.sandbox (nemo-gym >= 0.4, Python >= 3.12): "
            f"pip install 'critpt-grader[gym]' ({exc})"
        ) from None
    from nemo_gym.sandbox.providers import registry

    create_provider = getattr(sandbox, "create_provider", None) or registry.create_provider
    return SimpleNamespace(
        create_provider=create_provider,
        SandboxSpec=sandbox.SandboxSpec,
        SandboxResources=sandbox.SandboxResources,
    )


class GymBackend(SandboxBackend):
    """A :class:`~critpt_grader.sandbox.base.SandboxBackend` over Gym's sandbox providers.

    ``api``: what provides ``create_provider``, ``SandboxSpec`` and ``SandboxResources``
    (default: ``nemo_gym.sandbox``; tests pass a faithful stand-in where Gym is absent)."""

    name = "gym"

    def __init__(
        self, settings: Any = None, *, gym: GymSettings | None = None, api: Any = None
    ) -> None:
        from critpt_grader.settings import Settings

        self.settings = settings or Settings()
        self.config = gym or GymSettings()
        self.api = api or gym_api()
        self.run_id = uuid.uuid4().hex[:16]
        self.journal = OwnershipJournal(self.config.journal_dir)
        self.containment = f"gym:{self.config.provider}+runner(uid,rlimits)"
        self._slots: asyncio.Semaphore | None = None
        self._started: asyncio.Lock | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready_done = False
        self._running: set[asyncio.Task[RunOutcome]] = set()
        self._closing = False
        self._closed = False

    async def _ready(self) -> None:
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
            self._slots = asyncio.Semaphore(self.settings.max_concurrent_sandboxes)
            self._started = asyncio.Lock()
        elif self._loop is not asyncio.get_running_loop():
            raise RuntimeError("a GymBackend belongs to the event loop it was first used on")
        assert self._started is not None
        async with self._started:
            if not self._ready_done:
                await asyncio.to_thread(self.journal.start_run, self.run_id)
                self._ready_done = True
                if self.config.sweep:
                    with contextlib.suppress(Exception):
                        await self.sweep()

    async def run(self, job: Job) -> RunOutcome:
        if self._closing:
            return unavailable("the sandbox backend is closed", self.containment)
        if len(job.source.encode("utf-8", "replace")) > job.limits.source_bytes:
            return RunOutcome(
                status="source_error",
                detail=f"the source is over the limit of {job.limits.source_bytes} bytes",
                containment=self.containment,
            )
        return await self._run_owned(self._run_in_slot(job), self.containment)

    async def _run_in_slot(self, job: Job) -> RunOutcome:
        try:
            await self._ready()
        except Exception as exc:
            return unavailable(f"the gym backend cannot start: {_why(exc)}", self.containment)
        assert self._slots is not None
        async with self._slots:
            outcome = await self._run_once(job)
        outcome.containment = outcome.containment or self.containment
        return outcome

    async def aclose(self) -> None:
        """Stop taking jobs, cancel running ones (their sandboxes are closed), sweep."""
        if self._closed:
            return
        await self._cancel_runs()
        self._closed = True
        if self._ready_done:
            if self.config.sweep:
                with contextlib.suppress(Exception):
                    await self.sweep()
            await asyncio.to_thread(self.journal.end_run, self.run_id)

    # --- one job ----------------------------------------------------------------------

    def _labels(self, job_id: str, role: str) -> dict[str, str]:
        return {
            LABEL_OWNER: self.config.owner,
            LABEL_RUN: self.run_id,
            LABEL_JOB: job_id,
            LABEL_ROLE: role,
        }

    def _spec(self, job_id: str, role: str) -> Any:
        config = self.config
        resources = None
        if config.cpu is not None or config.memory_mib is not None:
            wanted = {"cpu": config.cpu, "memory_mib": config.memory_mib}
            resources = self.api.SandboxResources(
                **{k: v for k, v in wanted.items() if v is not None}
            )
        return self.api.SandboxSpec(
            image=config.image,
            ttl_s=config.ttl_seconds,
            ready_timeout_s=config.ready_seconds,
            workdir=config.workdir,
            metadata=self._labels(job_id, role),
            resources=resources,
            provider_options=dict(config.provider_options),
        )

    async def _run_once(self, job: Job) -> RunOutcome:
        job_id = uuid.uuid4().hex[:12]
        name = f"critpt-{self.run_id[:8]}-{job_id}"
        await asyncio.to_thread(
            self.journal.creating,
            name,
            provider=f"gym:{self.config.provider}",
            owner=self.config.owner,
            run=self.run_id,
            job=job_id,
            role=job.role,
        )
        provider: Any = None
        handle: Any = None
        closed = False
        try:
            try:
                provider = self.api.create_provider(
                    {self.config.provider: dict(self.config.provider_config)}
                )
                handle = await asyncio.wait_for(
                    provider.create(self._spec(job_id, job.role)), self.config.ready_seconds + 5
                )
            except Exception as exc:
                if isinstance(exc, TimeoutError) and provider is not None:
                    # Our bound cut the create short: a sandbox may exist that no handle
                    # names. The journal keeps it (see `leftovers`); the provider's TTL ends it.
                    record = json.dumps({"id": "", "unconfirmed": True})
                    await asyncio.to_thread(self.journal.created, name, record)
                    left, provider = provider, None
                    with contextlib.suppress(Exception):
                        await asyncio.wait_for(left.aclose(), self.config.request_seconds)
                    return unavailable(
                        f"the {self.config.provider} provider did not create a sandbox within "
                        f"{self.config.ready_seconds:g} s (any made is left to its TTL)",
                        self.containment,
                    )
                return unavailable(
                    f"the {self.config.provider} provider could not create a sandbox: {_why(exc)}",
                    self.containment,
                )
            await asyncio.to_thread(self.journal.created, name, self._record(provider, handle))
            outcome = await self._execute(provider, handle, job, job_id)
        finally:
            # Shielded: a cancelled run still closes its sandbox before it goes.
            closed = await asyncio.shield(self._close(name, provider, handle))
        if not closed:
            return unavailable(
                f"the {self.config.provider} provider did not confirm the sandbox's close "
                "(left for the sweep and the provider's TTL)",
                self.containment,
            )
        return outcome

    def _record(self, provider: Any, handle: Any) -> str:
        """What the journal keeps of a sandbox: its id, and the provider's descriptor where
        the provider can reconnect to it after a crash (Gym's ``ConnectableProvider``)."""
        record: dict[str, Any] = {"id": str(getattr(handle, "sandbox_id", ""))}
        serialize = getattr(provider, "serialize_handle", None)
        if callable(serialize):
            with contextlib.suppress(Exception):
                descriptor = serialize(handle)
                json.dumps(descriptor)
                record["descriptor"] = descriptor
        return json.dumps(record, sort_keys=True)

    async def _execute(self, provider: Any, handle: Any, job: Job, job_id: str) -> RunOutcome:
        config = self.config
        nonce = protocol.new_nonce()
        path = f"{config.workdir.rstrip('/')}/critpt-{job_id}.job"
        limit = frame_limit(job.limits)
        with tempfile.TemporaryDirectory(prefix="critpt-gym-") as scratch:
            local = Path(scratch) / "job"
            local.write_bytes(job.encoded(nonce))
            local.chmod(0o600)
            try:
                await asyncio.wait_for(
                    provider.upload_file(handle, local, path), config.request_seconds
                )
            except Exception as exc:
                return unavailable(
                    f"the {config.provider} provider could not upload the job: {_why(exc)}",
                    self.containment,
                )
        started = time.time()
        budget = job.limits.wall_seconds + config.grace_seconds
        try:
            result = await asyncio.wait_for(
                provider.exec(
                    handle,
                    self._command(path, job, limit),
                    cwd=config.workdir,
                    env=None,
                    timeout_s=budget,
                    user=None,
                ),
                budget + 10,
            )
        except Exception as exc:
            return unavailable(
                f"the {config.provider} provider failed to run the runner: {_why(exc)}",
                self.containment,
            )
        return self._interpret(result, job, nonce, started, limit)

    def _interpret(
        self, result: Any, job: Job, nonce: str, started: float, limit: int
    ) -> RunOutcome:
        provider = self.config.provider
        error_type = getattr(result, "error_type", None)
        code = getattr(result, "return_code", None)
        if error_type is not None:
            return unavailable(
                f"the {provider} provider reported a {str(error_type)[:40]} failure "
                f"(exit code {code!r})",
                self.containment,
            )
        if isinstance(code, bool) or not isinstance(code, int):
            return unavailable(
                f"the {provider} provider's exit code is not an integer: {code!r}",
                self.containment,
            )
        stdout_text = getattr(result, "stdout", None) or ""
        stderr_text = getattr(result, "stderr", None) or ""
        if not isinstance(stdout_text, str) or not isinstance(stderr_text, str):
            return unavailable(f"the {provider} provider's output is not text", self.containment)
        stdout = stdout_text.encode("utf-8", "replace")
        stderr = stderr_text.encode("utf-8", "replace")[-STDERR_TAIL:]
        if len(stdout) > limit:
            return interpret(None, "overflow", job, started, returncode=code, stderr=b"")
        payload = protocol.find_frame(stdout, nonce) if code == 0 else None
        if payload is None:
            # The runner always writes its frame before it exits 0; no frame is the sandbox's
            # or the provider's fault (a missing exit code read as 0, a killed container).
            last = stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
            why = {
                EXIT_CANNOT_DROP: "the sandbox runs as root and has no setpriv to drop it",
                EXIT_NO_JOB: "the job file could not be opened in the sandbox",
                126: "the sandbox cannot run the interpreter",
                127: "the sandbox has no interpreter or runner",
            }.get(code, "the runner's result did not come back")
            return unavailable(
                f"{why} (provider {provider}, exit code {code})"
                + (f": {last[0][:300]}" if last[0] else ""),
                self.containment,
            )
        return interpret(payload, "exited", job, started, returncode=code, stderr=stderr)

    def _command(self, path: str, job: Job, limit: int) -> str:
        """Job file → the runner's stdin (unlinked first); root dropped; output bounded."""
        config = self.config
        uid = config.sandbox_uid
        drop = (
            f"setpriv --reuid={uid} --regid={uid} --clear-groups --inh-caps=-all "
            "--bounding-set=-all --no-new-privs --"
        )
        script = "\n".join(
            [
                "umask 077",
                f'exec 0<"$0" || exit {EXIT_NO_JOB}',
                'rm -f -- "$0"',
                'out="$0.out"; err="$0.err"',
                "set --",
                'if [ "$(id -u)" = 0 ]; then',
                f"  command -v setpriv >/dev/null 2>&1 || exit {EXIT_CANNOT_DROP}",
                f"  set -- {drop}",
                "fi",
                f'"$@" {shlex.quote(config.python)} -s -B -m critpt_grader.runner >"$out" 2>"$err"',
                "code=$?",
                f'head -c {limit + 1} "$out"',
                f'tail -c {STDERR_TAIL} "$err" >&2',
                'rm -f -- "$out" "$err"',
                'exit "$code"',
            ]
        )
        processes = str(job.limits.max_processes)
        env = ["env", "-i", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]
        env += [f"HOME={config.workdir}", "LANG=C.UTF-8", "PYTHONDONTWRITEBYTECODE=1"]
        env += ["OPENBLAS_NUM_THREADS=1", f"PYTHONPATH={config.pythonpath}"]
        env += [f"{protocol.NPROC_VARIABLE}={processes}"]
        return shlex.join([*env, "sh", "-c", script, path])

    async def _close(self, name: str, provider: Any, handle: Any) -> bool:
        """Close the sandbox (retried, each try bounded), then the provider; the journal
        learns of the close only once it returned. No handle: nothing was made."""
        if provider is None:  # nothing made, or an unconfirmed create the journal keeps
            if not await asyncio.to_thread(self._unconfirmed, name):
                await asyncio.to_thread(self.journal.deleted, name)
            return True
        closed = handle is None
        if handle is not None:
            for attempt in range(self.config.close_attempts):
                try:
                    await asyncio.wait_for(provider.close(handle), self.config.request_seconds)
                except Exception:
                    await asyncio.sleep(0.2 * (attempt + 1))
                    continue
                closed = True
                break
        with contextlib.suppress(Exception):
            await asyncio.wait_for(provider.aclose(), self.config.request_seconds)
        if closed:
            await asyncio.to_thread(self.journal.deleted, name)
        return closed

    def _unconfirmed(self, name: str) -> bool:
        for entry in self.journal.entries(owner=self.config.owner, pending=True):
            if entry.name == name:
                return bool(_parse_record(entry.sandbox_id).get("unconfirmed"))
        return False

    # --- the sweep --------------------------------------------------------------------

    async def sweep(self) -> list[str]:
        """Close what this owner's dead runs left open, where the provider can reconnect to
        it (a descriptor in the journal); return the names closed. The rest is listed by
        :meth:`leftovers` and ends with the provider's TTL."""
        swept = []
        for entry in await self.leftovers():
            record = _parse_record(entry.sandbox_id)
            if entry.sandbox_id is None:
                # Never created (the create call did not return): nothing to close.
                await asyncio.to_thread(self.journal.deleted, entry.name)
                continue
            if "descriptor" not in record:
                continue
            provider = None
            try:
                provider = self.api.create_provider(
                    {self.config.provider: dict(self.config.provider_config)}
                )
                handle = await asyncio.wait_for(
                    provider.connect(record["descriptor"]), self.config.request_seconds
                )
                await asyncio.wait_for(provider.close(handle), self.config.request_seconds)
            except Exception:
                continue
            finally:
                if provider is not None:
                    with contextlib.suppress(Exception):
                        await asyncio.wait_for(provider.aclose(), self.config.request_seconds)
            await asyncio.to_thread(self.journal.deleted, entry.name)
            swept.append(entry.name)
        return swept

    async def leftovers(self) -> list[Any]:
        """Journal entries of this owner and provider, not closed, of runs no longer alive."""
        live = await asyncio.to_thread(self.journal.live_runs)
        if not self._closed:
            live.add(self.run_id)
        else:
            live.discard(self.run_id)
        entries = await asyncio.to_thread(
            self.journal.entries, owner=self.config.owner, pending=True
        )
        wanted = f"gym:{self.config.provider}"
        return [e for e in entries if e.provider == wanted and e.run not in live]


def _parse_record(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    try:
        record = json.loads(text)
    except ValueError:
        return {"id": text}
    return record if isinstance(record, dict) else {"id": text}


def probe_source() -> str:
    """A job that reports, from inside the sandbox, what the runner's process holds."""
    return (
        "import os, resource\n"
        "def f():\n"
        "    status = {}\n"
        "    try:\n"
        "        with open('/proc/self/status') as handle:\n"
        "            for line in handle:\n"
        "                key, _, value = line.partition(':')\n"
        "                status[key] = value.strip()\n"
        "    except OSError:\n"
        "        pass\n"
        "    return {\n"
        "        'uid': os.getuid(), 'euid': os.geteuid(), 'groups': len(os.getgroups()),\n"
        "        'rlimit_as': resource.getrlimit(resource.RLIMIT_AS)[0],\n"
        "        'rlimit_nproc': resource.getrlimit(resource.RLIMIT_NPROC)[0],\n"
        "        'no_new_privs': status.get('NoNewPrivs', '?'),\n"
        "        'cap_eff': status.get('CapEff', '?'),\n"
        "        'seccomp': status.get('Seccomp', '?'),\n"
        "    }\n"
    )


def probe_rows(seen: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(layer, held/weak/missing, what was seen) from :func:`probe_source`'s answer."""
    uid = seen.get("uid")
    caps = str(seen.get("cap_eff", "?"))
    rows = [
        ("unprivileged uid", "held" if uid not in (0, None) else "missing", f"uid {uid}"),
        (
            "no capabilities",
            "held" if caps.strip("0") == "" and caps != "?" else "missing",
            f"CapEff {caps}",
        ),
        (
            "no new privileges",
            "held" if seen.get("no_new_privs") == "1" else "weak",
            f"NoNewPrivs {seen.get('no_new_privs')}",
        ),
        (
            "rlimits (memory, processes)",
            "held" if seen.get("rlimit_as", -1) not in (-1, None) else "missing",
            f"RLIMIT_AS {seen.get('rlimit_as')}, RLIMIT_NPROC {seen.get('rlimit_nproc')}",
        ),
        (
            "seccomp filter of ours",
            "missing",
            f"Seccomp {seen.get('seccomp')} (whatever the provider set)",
        ),
        ("user namespace, cgroup, read-only view of ours", "missing", "the provider's own only"),
    ]
    return rows


def read_gym_settings(path: str | os.PathLike[str] | None = None) -> GymSettings:
    """:class:`GymSettings` from the environment, or from a JSON file when given."""
    if path is None:
        return GymSettings()
    return GymSettings(**json.loads(Path(path).read_text(encoding="utf-8")))
