"""Operator settings, read from the environment (prefix ``CRITPT_GRADER_``) or given directly.

Example: ``CRITPT_GRADER_CASE_SECONDS=10 CRITPT_GRADER_REQUIRE_STRONG_CONTAINMENT=1``.
The command line maps its flags onto the same object; :meth:`Settings.limits` turns it into
the plain :class:`~critpt_grader.limits.Limits` a sandbox job carries.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Literal

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from critpt_grader.limits import Limits

_LIMITS = Limits()  # the one source of the limits' defaults


def _cpu_count() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


class LocalSettings(BaseSettings):
    """The local (bubblewrap) backend's own settings. Same environment names as ever
    (``CRITPT_GRADER_WARM_SANDBOXES``...); read as ``settings.local.warm_sandboxes``. Given at
    the top level (``Settings(warm_sandboxes=False)``, as the CLI's sandbox flags do) they go
    to ``local``."""

    model_config = SettingsConfigDict(env_prefix="CRITPT_GRADER_", frozen=True, extra="forbid")

    sandbox_cpus: float = Field(
        1.0,
        gt=0,
        description="CPU time per sandbox, in cores; a candidate with many busy processes "
        "cannot take more (cgroup cpu quota)",
    )
    cgroup_parent: str | None = Field(
        None,
        description="cgroup v2: a delegated cgroup to create sandbox cgroups under, as a path "
        "(/sys/fs/cgroup/grader.slice) or as /proc/self/cgroup shows it (/grader.slice); "
        "default: the grader's own cgroup, whose processes then move into a critpt-grader leaf",
    )
    require_strong_containment: bool = Field(
        False, description="refuse to run without bubblewrap plus a pids cgroup or non-root uid"
    )
    allow_weak_containment: bool = Field(
        False,
        description="let a root grader run code without the strong containment (bubblewrap, "
        "a cgroup and an unprivileged sandbox user); every result's containment then carries "
        "a WARNING. Off: such runs are refused (unavailable)",
    )
    sandbox_user: str = Field(
        "critpt-sandbox",
        description="host user (name or uid) that a root grader runs sandboxed code as; "
        "'nobody' when it does not exist. A grader that is not root runs it as itself",
    )
    sandbox_python: str = Field(sys.executable, description="interpreter run in the sandbox")
    warm_sandboxes: bool = Field(
        True,
        description="keep sandboxes with warm imports and reuse them, reset, job after job "
        "(per role and concurrent slot; needs the seccomp filter); off: a fresh sandbox for "
        "every job",
    )
    seccomp: bool = Field(
        True,
        description="load a seccomp filter into bubblewrap sandboxes that refuses keyrings, "
        "ptrace, new namespaces, mounts and other calls no job needs (x86-64)",
    )
    expose_host_filesystem: bool = Field(
        False,
        description="show the sandbox the whole host filesystem read-only (less /tmp) instead "
        "of only the system folders, the interpreter and this package",
    )


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CRITPT_GRADER_", frozen=True, extra="forbid")

    local: LocalSettings = Field(
        default_factory=LocalSettings, description="the local backend's settings"
    )

    backend: str = Field("local", description="sandbox backend: local, in-process, ...")
    wall_seconds: float = Field(
        _LIMITS.wall_seconds, gt=0, description="whole sandbox run, start included"
    )
    case_seconds: float = Field(
        _LIMITS.case_seconds, gt=0, description="one call of the entry point"
    )
    memory_mb: int = Field(
        _LIMITS.memory_mb, ge=256, description="address space per sandboxed process"
    )
    output_bytes: int = Field(
        _LIMITS.output_bytes, ge=4096, description="returned values and each stream"
    )
    source_bytes: int = Field(
        _LIMITS.source_bytes, ge=1, description="largest candidate source (UTF-8)"
    )
    fence: Literal["last-defining", "last", "first"] = Field(
        "last-defining",
        description="which fenced block of a response is graded: the last one that defines "
        "the entry point (else the last); 'last' as CritPt's harness; 'first' as PR #3430",
    )
    max_processes: int = Field(
        _LIMITS.max_processes, ge=4, description="processes per sandbox (pids cgroup)"
    )
    max_open_files: int = Field(
        _LIMITS.max_open_files, ge=16, description="open files per sandboxed process (rlimit)"
    )
    max_file_bytes: int = Field(
        _LIMITS.max_file_bytes, ge=0, description="largest file a sandboxed process writes (rlimit)"
    )
    max_concurrent_sandboxes: int = Field(
        default_factory=_cpu_count,
        ge=1,
        description="sandboxes running at once (default: the CPUs this process may use)",
    )
    compare_seconds: float = Field(
        10.0,
        gt=0,
        description="CPU seconds one row's comparison may use on the host (in a killable "
        "worker); past it the row is 0 when the candidate's value alone is too costly, else "
        "unscorable",
    )
    compare_memory_mb: int = Field(
        1024, ge=256, description="address space of a comparison worker process"
    )
    compare_workers: int = Field(
        default_factory=lambda: min(_cpu_count(), 8),
        ge=1,
        description="comparison worker processes of the fast lane (started on demand, kept "
        "warm); default: the CPUs this process may use, at most 8",
    )
    compare_first_pass_seconds: float = Field(
        0.5,
        ge=0,
        description="CPU seconds of a comparison's first pass, in the fast lane of "
        "compare_workers workers; a comparison that needs more goes on in the slow lane, so "
        "costly rows never hold up cheap ones. 0: one lane for everything",
    )
    compare_slow_workers: int | None = Field(
        None,
        ge=1,
        description="comparison workers of the slow lane, for comparisons past their first "
        "pass (at a lower CPU priority); default: half of compare_workers, at least 1",
    )
    compare_in_process: bool = Field(
        False,
        description="compare in the grader's own process, with the size checks but without "
        "the CPU and memory budget (unit tests only)",
    )

    preflight_cache_size: int = Field(
        1024, ge=1, description="reference preflights a Grader keeps (least recently used out)"
    )
    server_max_in_flight: int = Field(
        64,
        ge=1,
        description="resources server: rows graded at once (their sandboxes still queue for "
        "max_concurrent_sandboxes)",
    )
    server_max_queue: int = Field(
        1024,
        ge=0,
        description="resources server: rows waiting for a grading slot; past it (or past "
        "server_queue_seconds of waiting) /verify answers at once with a retryable "
        "provider_unavailable row",
    )
    server_queue_seconds: float = Field(
        600.0, gt=0, description="resources server: longest wait for a grading slot"
    )
    server_max_body_bytes: int = Field(
        16 << 20, ge=1024, description="resources server: largest request body (413 past it)"
    )
    server_regrade_orphans: bool = Field(
        True,
        description="resources server with a journal: at start, re-grade in the background "
        "the rows a dead server left unfinished (else leave them to critpt-grader reverify)",
    )
    server_reveal: Literal["verdict", "rules", "full"] = Field(
        "rules",
        description="resources server: what a client sees of a verdict. 'rules': the reward, "
        "the category and per leaf its path, kind, status and the rule it was judged by, "
        "nothing measured against the expected value; 'verdict': the reward and the "
        "category only; 'full': everything, expected values included (a trusted training "
        "loop). The journal and the command line keep full detail",
    )
    server_max_aggregate_bytes: int = Field(
        8 << 20,
        ge=1024,
        description="resources server: largest /aggregate_metrics body (a run's stripped "
        "rows; 413 past it). Parsed and counted off the event loop",
    )

    @model_validator(mode="before")
    @classmethod
    def _local_fields_at_the_top(cls, data: Any) -> Any:
        """A local backend's setting given at the top level (CLI flags, older callers) goes
        to ``local``; the environment fills the rest there."""
        if not isinstance(data, dict):
            return data
        flat = {k: data[k] for k in data if k in LocalSettings.model_fields}
        if not flat:
            return data
        data = {k: v for k, v in data.items() if k not in flat}
        given = data.get("local")
        base = given.model_dump() if isinstance(given, LocalSettings) else dict(given or {})
        data["local"] = LocalSettings(**{**base, **flat})
        return data

    def limits(self) -> Limits:
        return Limits(
            wall_seconds=self.wall_seconds,
            case_seconds=self.case_seconds,
            memory_mb=self.memory_mb,
            output_bytes=self.output_bytes,
            source_bytes=self.source_bytes,
            max_processes=self.max_processes,
            max_open_files=self.max_open_files,
            max_file_bytes=self.max_file_bytes,
        )
