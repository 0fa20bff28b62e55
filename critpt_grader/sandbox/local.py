"""Run jobs on this machine inside bubblewrap sandboxes, each bounded by its own cgroup.

A sandbox: a cgroup (``pids.max``, memory) is created and joined before bubblewrap starts;
bubblewrap gives the runner no network, fresh ``/proc`` and ``/dev``, no capabilities, a
seccomp filter (:mod:`critpt_grader.sandbox.seccomp`: no keyrings, namespaces, ptrace...), a
clean environment, the runner as the namespace's PID 1, and a read-only view of only the
system folders (``/usr``, ``/etc``, ...), the interpreter with its libraries and this
package — no task file, repository or home folder is in sight (``expose_host_filesystem``
shows all of ``/`` instead). The working folder is a private, size-limited ``/tmp`` tmpfs
(charged to the sandbox's memory cgroup), so the host has no work folder to create or clean
up; the host writes nothing but the job, on stdin.

Warm sandboxes (``warm_sandboxes``, the default): up to ``max_concurrent_sandboxes``
sandboxes per role (reference, candidate) and kind (SciPy preloaded for jobs whose text
names it, or not: see ``_uses_scipy``) stay up with their imports done and serve one job
at a time; between jobs the runner kills every process of the last job and empties ``/tmp``
(see :mod:`critpt_grader.runner.warm`), which makes a job cost milliseconds instead of the
half second of a fresh interpreter. A job whose process-wide limits differ from the
settings', and every job when warm sandboxes are off, gets a fresh sandbox of its own.

When a job runs past its wall clock, its sandbox's process group and every process in the
cgroup are killed, and the cgroup is removed. Where bubblewrap does not work the runner
runs under rlimits (and the cgroup) only, unless ``require_strong_containment`` is set, in
which case the run is ``unavailable``. Every outcome records which containment was used.

Usage::

    async with LocalBackend(Settings()) as backend:
        outcome = await backend.run(job)
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import shutil
import signal
import tempfile
import time
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any, TypeVar

from critpt_grader.runner import protocol
from critpt_grader.sandbox.base import Job, Limits, RunOutcome, SandboxBackend
from critpt_grader.sandbox.bwrap import (
    bwrap_command,
    filesystem_view,
    never_started,
    sandbox_environment,
    worlds_work,
)
from critpt_grader.sandbox.containment import (
    Cgroup,
    Containment,
    bwrap_seccomp_works,
    bwrap_works,
    cgroups_available,
    create_cgroup,
    launcher_prefix,
    process_budget,
)
from critpt_grader.sandbox.identity import SandboxIdentity, drop_prefix, sandbox_identity
from critpt_grader.sandbox.outcomes import (
    attribute_kills_to_memory,
    frame_limit,
    interpret,
    unavailable,
)
from critpt_grader.sandbox.seccomp import filter_fd, seccomp_filter
from critpt_grader.sandbox.warm import WarmSandbox
from critpt_grader.settings import Settings

RUNNER_STDERR_BYTES = 64 * 1024  # the runner's own diagnostics (not the program's output)
T = TypeVar("T")


class LocalBackend(SandboxBackend):
    """A :class:`~critpt_grader.sandbox.base.SandboxBackend` using bubblewrap and cgroups."""

    name = "local"

    def __init__(self, settings: Settings | None = None, *, bwrap: str = "bwrap") -> None:
        self.settings = settings or Settings()
        self.local = self.settings.local  # this backend's own settings
        self._bwrap = bwrap
        self._running: set[asyncio.Task[RunOutcome]] = set()
        self._closing = False
        self._probe: Containment | None = None
        self._identity: SandboxIdentity | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        # Idle warm sandboxes, one pool per role: a sandbox that ran a reference never runs
        # a candidate, even though the reset between jobs leaves nothing behind.
        self._idle: dict[str, list[WarmSandbox]] = {"reference": [], "candidate": []}
        # Sandboxes starting ahead of their job (prepare), one at most per role: a run that
        # finds no idle sandbox of its role waits for that one rather than start another.
        self._warming: dict[str, asyncio.Task[None]] = {}
        self._busy: dict[str, int] = {}  # warm sandboxes running a job, per role
        # Warm sandboxes are driven from threads; one each, plus room for teardowns.
        self._threads = ThreadPoolExecutor(
            max_workers=self.settings.max_concurrent_sandboxes + 2,
            thread_name_prefix="critpt-sandbox",
        )
        # A backend dropped without aclose() still takes its idle sandboxes down with it.
        weakref.finalize(self, _close_sandboxes, self._idle)

    def _bind_loop(self) -> None:
        """asyncio primitives belong to one event loop; a backend reused across
        ``asyncio.run`` calls (the synchronous ``grade``) gets fresh ones for each loop."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            self._loop = loop
            self._slots = asyncio.Semaphore(self.settings.max_concurrent_sandboxes)
            self._probe_lock = asyncio.Lock()

    async def aclose(self) -> None:
        """Stop accepting jobs, cancel the running ones and wait until each is torn down."""
        await self._cancel_runs()
        idle = [sandbox for pool in self._idle.values() for sandbox in pool]
        for pool in self._idle.values():
            pool.clear()  # the same lists the finalizer holds
        await asyncio.gather(*(self._in_thread(s.close) for s in idle), return_exceptions=True)
        self._threads.shutdown(wait=True)

    async def containment(self) -> Containment:
        """What this machine allows, probed once: who sandboxed code runs as, whether
        bubblewrap runs as that user, whether a cgroup can be made."""
        self._bind_loop()
        async with self._probe_lock:
            if self._probe is None:
                root = os.geteuid() == 0
                self._identity = sandbox_identity(self.local.sandbox_user)
                try:
                    prefix = tuple(drop_prefix(self._identity))
                except FileNotFoundError:  # no setpriv: root cannot drop, so never runs bwrap
                    self._identity, prefix = None, ()
                bwrap, cgroup = await asyncio.gather(
                    asyncio.to_thread(bwrap_works, self._bwrap, prefix),
                    asyncio.to_thread(cgroups_available, self.local.cgroup_parent),
                )
                seccomp = (
                    bwrap
                    and self.local.seccomp
                    and await asyncio.to_thread(bwrap_seccomp_works, self._bwrap, prefix)
                )
                worlds = bwrap and await asyncio.to_thread(
                    functools.partial(
                        worlds_work,
                        self._bwrap,
                        prefix,
                        self.local.sandbox_python,
                        seccomp=seccomp,
                    )
                )
                user = self._identity.name if root and self._identity is not None else None
                self._probe = Containment(
                    bwrap=bwrap,
                    cgroup=cgroup,
                    root=root,
                    seccomp=seccomp,
                    user=user,
                    worlds=worlds,
                )
            return self._probe

    def prepare(self, job: Job) -> None:
        """Start a warm sandbox for ``job``'s role in the background when none is idle or
        starting (the candidate's, while the reference runs: a cold row then waits for one
        sandbox start instead of two in a row). Nothing runs in it until ``run`` hands it a
        job; unused, it waits in the idle pool, and :meth:`aclose` takes it down (a start
        still under way is cancelled, and the sandbox closed once it is up)."""
        if self._closing or not self.local.warm_sandboxes:
            return
        self._bind_loop()
        key = _pool_key(job)
        if self._idle.get(key) or self._busy.get(key) or key in self._warming:
            return  # a sandbox of the kind is up or coming: a run would not start one either
        task = asyncio.get_running_loop().create_task(self._prepare(job, key))
        self._warming[key] = task
        self._running.add(task)  # type: ignore[arg-type]  # aclose cancels it with the runs
        task.add_done_callback(self._running.discard)  # type: ignore[arg-type]

    async def _prepare(self, job: Job, key: str) -> None:
        try:
            probe = await self.containment()
            if not self._warm_fits(job, probe):
                return
            started = await self._start_warm(job.limits, probe, scipy=_uses_scipy(job))
            if isinstance(started, RunOutcome):
                return  # the run will say why, when it tries itself
            if self._closing:
                await asyncio.shield(self._in_thread(started.close))
            else:
                self._idle.setdefault(key, []).append(started)
        except Exception:  # a hint: the run that follows starts its own sandbox and reports
            return
        finally:
            if self._warming.get(key) is asyncio.current_task():
                del self._warming[key]

    async def run(self, job: Job) -> RunOutcome:
        if self._closing:
            return unavailable("the sandbox backend is closed")
        return await self._run_owned(self._run_in_slot(job))

    async def _run_in_slot(self, job: Job) -> RunOutcome:
        self._bind_loop()
        async with self._slots:
            return await self._run_once(job)

    async def _run_once(self, job: Job) -> RunOutcome:
        probe = await self.containment()
        if len(job.source.encode("utf-8", "replace")) > job.limits.source_bytes:
            return RunOutcome(
                status="source_error",
                detail=f"the source is over the limit of {job.limits.source_bytes} bytes",
                containment=probe.label,
            )
        if self._warm_fits(job, probe):
            return await self._run_warm(job, probe)
        cgroup = await self._new_cgroup(job.limits, probe)
        used = self._checked(replace(probe, cgroup=cgroup is not None))
        if isinstance(used, RunOutcome):
            await _teardown_dirs(cgroup, None)
            return used
        workdir = None if used.bwrap else self._workdir()
        try:
            outcome = await self._execute(job, used, cgroup, workdir)
        finally:
            # Shielded so a cancelled caller still waits for the teardown to finish.
            await asyncio.shield(_teardown_dirs(cgroup, workdir))
        outcome.containment = used.label
        return outcome

    def _checked(self, used: Containment) -> Containment | RunOutcome:
        """The containment a run may go ahead with, or the refusal.

        A root grader runs code only with the strong containment (bubblewrap as an
        unprivileged sandbox user, under a cgroup) unless the operator waived it with
        ``allow_weak_containment``, and then every result says so loudly. A grader that is not
        root is an ordinary user already: it is refused only under
        ``require_strong_containment``."""
        if used.strong:
            return used
        why = used.weakness() or "strong containment is not available"
        if used.root and self.local.allow_weak_containment:
            return replace(used, waived=f"weak containment allowed by the operator: {why}")
        if used.root or self.local.require_strong_containment:
            return unavailable(
                f"refusing to run code: {why} (run `critpt-grader doctor` for the fix; "
                "CRITPT_GRADER_ALLOW_WEAK_CONTAINMENT=1 waives this for a root grader)",
                used.label,
            )
        return used

    def _workdir(self) -> str:
        """A private working folder for a run without bubblewrap, owned by the sandbox user."""
        workdir = tempfile.mkdtemp(prefix="critpt-sandbox-")
        if os.geteuid() == 0 and self._identity is not None:
            os.chown(workdir, self._identity.uid, self._identity.gid)
        return workdir

    def _launch_prefix(self, cgroup: Cgroup | None) -> list[str]:
        """Join the cgroup (as the grader), then drop to the sandbox user, then the rest."""
        return [*launcher_prefix(cgroup), *drop_prefix(self._identity)]

    async def _new_cgroup(self, limits: Limits, probe: Containment) -> Cgroup | None:
        if not probe.cgroup:
            return None
        return await asyncio.to_thread(
            create_cgroup,
            f"critpt-{os.getpid()}-{protocol.new_nonce()[:12]}",
            max_processes=limits.max_processes,
            # The supervisor and its child each have memory_mb of address space.
            memory_bytes=2 * (limits.memory_mb << 20),
            cpus=self.local.sandbox_cpus,
            parent=self.local.cgroup_parent,
        )

    async def _sandbox_command(
        self, limits: Limits, env: dict[str, str], seccomp_fd: int | None, *, worlds: bool
    ) -> list[str]:
        view = await asyncio.to_thread(
            filesystem_view,
            self.local.sandbox_python,
            host_root=self.local.expose_host_filesystem,
        )
        command = bwrap_command(self._bwrap, view, env, limits.max_file_bytes, worlds=worlds)
        if seccomp_fd is not None:
            command[1:1] = ["--seccomp", str(seccomp_fd)]
        return command

    # --- warm sandboxes ---------------------------------------------------------------

    def _warm_fits(self, job: Job, probe: Containment) -> bool:
        """Warm sandboxes need bubblewrap, the seccomp filter and a world of its own for
        every job (runner/world.py), and are made for the settings' limits; a job with other
        process-wide limits (memory, processes, file size) gets a fresh sandbox instead."""
        if not (self.local.warm_sandboxes and probe.bwrap and probe.seccomp and probe.worlds):
            return False  # the filter refuses message queues; worlds close the counters
        ours, theirs = self.settings.limits(), job.limits
        return (ours.memory_mb, ours.max_processes, ours.max_file_bytes) == (
            theirs.memory_mb,
            theirs.max_processes,
            theirs.max_file_bytes,
        )

    async def _run_warm(self, job: Job, probe: Containment) -> RunOutcome:
        sandbox = None
        key = _pool_key(job)
        pool = self._idle.setdefault(key, [])
        while sandbox is None:
            if pool:
                sandbox = pool.pop()
                if not sandbox.alive:
                    await self._in_thread(sandbox.close)
                    sandbox = None
            elif (warming := self._warming.get(key)) is not None:
                # A sandbox of this role is starting ahead (prepare): take it when it is up.
                await asyncio.shield(warming)
            else:
                break
        if sandbox is None:
            started = await self._start_warm(job.limits, probe, scipy=_uses_scipy(job))
            if isinstance(started, RunOutcome):
                return started
            sandbox = started
        reusable = False
        self._busy[key] = self._busy.get(key, 0) + 1
        try:
            oom_before = sandbox.oom_kills()
            nonce = protocol.new_nonce()
            started_at = time.time()
            job_input = job.encoded(nonce)
            exchange = await self._in_thread(
                sandbox.run, job_input, nonce, job.limits.wall_seconds, frame_limit(job.limits)
            )
            reusable = exchange.reusable
            returncode, stderr = sandbox.process.poll(), sandbox.stderr_tail()
            outcome = interpret(
                exchange.payload,
                exchange.ended,
                job,
                started_at,
                returncode=returncode,
                stderr=stderr,
                never_started=never_started(returncode, stderr),
            )
            if sandbox.oom_kills() > oom_before:
                attribute_kills_to_memory(outcome)
            outcome.containment = sandbox.containment
            return outcome
        finally:
            self._busy[key] -= 1
            if reusable and sandbox.alive and not self._closing:
                pool.append(sandbox)
            else:
                # Shielded: a cancelled run still waits until its sandbox is gone.
                await asyncio.shield(self._in_thread(sandbox.close))

    async def _start_warm(
        self, limits: Limits, probe: Containment, *, scipy: bool = False
    ) -> WarmSandbox | RunOutcome:
        """A warm sandbox, its imports done (SciPy's too when ``scipy``)."""
        cgroup = await self._new_cgroup(limits, probe)
        used = self._checked(replace(probe, cgroup=cgroup is not None))
        if isinstance(used, RunOutcome):
            await _teardown_dirs(cgroup, None)
            return used
        python = self.local.sandbox_python
        env = sandbox_environment(python, home="/tmp")
        env[protocol.NPROC_VARIABLE] = self._process_budget(cgroup, limits)
        seccomp_fd = _seccomp_fd(used)
        try:
            command = [
                *self._launch_prefix(cgroup),
                *await self._sandbox_command(limits, env, seccomp_fd, worlds=True),
                *(python, "-s", "-B", "-m", "critpt_grader.runner", "--serve"),
                *(("--scipy",) if scipy else ()),
            ]
            pass_fds = () if seccomp_fd is None else (seccomp_fd,)
            starting = asyncio.get_running_loop().run_in_executor(
                self._threads, WarmSandbox.start, command, env, cgroup, used.label, pass_fds
            )
            try:
                return await asyncio.shield(starting)
            except asyncio.CancelledError:
                # The caller gave up while the sandbox warms up: let the start finish in its
                # thread (it holds the filter's descriptor), then take the sandbox down.
                with contextlib.suppress(Exception):
                    await self._in_thread((await starting).close)
                raise
        except OSError as exc:
            await _teardown_dirs(cgroup, None)
            return unavailable(f"cannot start the sandbox: {exc}")
        finally:
            if seccomp_fd is not None:
                os.close(seccomp_fd)

    def _process_budget(self, cgroup: Cgroup | None, limits: Limits) -> str:
        # Warm sandboxes of both roles and both kinds plus fresh ones may run side by side.
        sandboxes = 5 * self.settings.max_concurrent_sandboxes
        uid = self._identity.uid if self._identity is not None else None
        return process_budget(cgroup, limits.max_processes, sandboxes, uid)

    async def _in_thread(self, function: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._threads, function, *args)

    # --- fresh sandboxes --------------------------------------------------------------

    async def _execute(
        self, job: Job, used: Containment, cgroup: Cgroup | None, workdir: str | None
    ) -> RunOutcome:
        nonce = protocol.new_nonce()
        python = self.local.sandbox_python
        env = sandbox_environment(python, home="/tmp" if used.bwrap else str(workdir))
        env[protocol.NPROC_VARIABLE] = self._process_budget(cgroup, job.limits)
        command = [python, "-s", "-B", "-m", "critpt_grader.runner"]
        seccomp_fd = _seccomp_fd(used)
        started = time.time()
        try:
            if used.bwrap:
                command = (
                    await self._sandbox_command(job.limits, env, seccomp_fd, worlds=used.worlds)
                    + command
                )
            process = await asyncio.create_subprocess_exec(
                *self._launch_prefix(cgroup),
                *command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=env,
                cwd=workdir or "/",
                start_new_session=True,
                pass_fds=() if seccomp_fd is None else (seccomp_fd,),
            )
        except OSError as exc:
            return unavailable(f"cannot start the sandbox: {exc}")
        finally:
            if seccomp_fd is not None:
                os.close(seccomp_fd)
        job_input = job.encoded(nonce)
        try:
            stdout, stderr, ended = await _communicate(
                process, job_input, job.limits.wall_seconds, frame_limit(job.limits)
            )
        finally:
            await asyncio.shield(_kill_process(process, cgroup))
        payload = protocol.find_frame(stdout, nonce) if ended == "exited" else None
        outcome = interpret(
            payload,
            ended,
            job,
            started,
            returncode=process.returncode,
            stderr=stderr,
            never_started=never_started(process.returncode, stderr),
        )
        if cgroup is not None and cgroup.oom_kills():
            attribute_kills_to_memory(outcome)
        return outcome


def _uses_scipy(job: Job) -> bool:
    """Whether the job's own text names SciPy: it then runs in a sandbox warmed with SciPy.

    SciPy's modules cost about half a second of CPU to import, as much as everything else the
    runner preloads, and they make every fork of the warm image dearer (about 1.4 ms of a
    4 ms fork-and-exit); few programs use them. So a sandbox preloads SciPy only for jobs that
    mention it, and jobs that do not run in sandboxes that never load it. The choice is the
    host's, made from this job's own text, so a sandbox's warm image says nothing about any
    other job. (A program that imports it under a computed name pays the import itself.)"""
    return "scipy" in job.source or "scipy" in (job.setup_source or "")


def _pool_key(job: Job) -> str:
    """The idle pool a job's warm sandbox comes from: one per role and warm-up kind."""
    return f"{job.role}+scipy" if _uses_scipy(job) else job.role


def _seccomp_fd(used: Containment) -> int | None:
    program = seccomp_filter(worlds=used.worlds) if used.seccomp else None
    return filter_fd(program) if program is not None else None


def _close_sandboxes(pools: dict[str, list[WarmSandbox]]) -> None:
    for pool in pools.values():
        while pool:
            pool.pop().close()


async def _communicate(
    process: asyncio.subprocess.Process, job_input: bytes, wall_seconds: float, frame_limit: int
) -> tuple[bytes, bytes, str]:
    """Feed the job, collect bounded output; ``ended`` is exited, timeout or overflow."""
    overflow = asyncio.Event()

    async def feed() -> None:
        assert process.stdin is not None
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            process.stdin.write(job_input)
            await process.stdin.drain()
            process.stdin.close()

    async def collect(stream: asyncio.StreamReader | None, limit: int) -> bytes:
        assert stream is not None
        data = bytearray()
        while chunk := await stream.read(1 << 16):
            if len(data) + len(chunk) > limit:
                overflow.set()
                break
            data += chunk
        return bytes(data)

    async def until_exit() -> tuple[bytes, bytes]:
        _, out, err = await asyncio.gather(
            feed(), collect(process.stdout, frame_limit), collect(process.stderr, frame_limit)
        )
        await process.wait()
        return out, err

    work = asyncio.ensure_future(until_exit())
    watch = asyncio.ensure_future(overflow.wait())
    try:
        done, _ = await asyncio.wait(
            {work, watch}, timeout=wall_seconds, return_when=asyncio.FIRST_COMPLETED
        )
    finally:
        watch.cancel()
    if work in done:
        out, err = work.result()
        return out, err[:RUNNER_STDERR_BYTES], "overflow" if overflow.is_set() else "exited"
    work.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await work
    return b"", b"", "overflow" if overflow.is_set() else "timeout"


async def _kill_process(process: asyncio.subprocess.Process, cgroup: Cgroup | None) -> None:
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        await process.wait()
    if cgroup is not None:
        await asyncio.to_thread(cgroup.kill_all)


async def _teardown_dirs(cgroup: Cgroup | None, workdir: str | None) -> None:
    if cgroup is not None:
        await asyncio.to_thread(cgroup.kill_all)
        await asyncio.to_thread(cgroup.remove)
    if workdir is not None:
        await asyncio.to_thread(shutil.rmtree, workdir, True)
