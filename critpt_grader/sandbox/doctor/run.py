"""Running the probe: one fresh candidate sandbox, the probe's source as its job, assessed.

:func:`examine` starts one real, fresh sandbox with the local backend, runs
:mod:`.probe` in it as an ordinary candidate job (entry point :func:`.probe.answer`),
decodes what it returned and hands it, with :func:`.host.host_facts`, to
:func:`.rules.assess`.

What it assumes: the local (bubblewrap) backend; ``settings`` is the grader's ``Settings``
or the local backend's own, with pydantic's ``model_copy`` and ``model_fields``.

What it guarantees:
  * what runs inside is exactly the linted file ``probe.py``: :func:`probe_source` reads its
    text from the installed package (:data:`PROBE` is that text), nothing is generated;
  * the operator's settings are used except that a weak sandbox is let run (the probe is
    this trusted program, and the point is to see what is missing) and the sandbox is fresh
    (a warm one would retire itself after a probe that touched its PID 1); the settings row
    reports what the operator's own settings would do;
  * a sandbox that cannot run the probe, or a probe that does not return a dict, is an
    :class:`Examination` with no report and the reason, never an exception.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from importlib import resources
from typing import TYPE_CHECKING, Any

from critpt_grader.sandbox.doctor import probe
from critpt_grader.sandbox.doctor.facts import HostFacts, Report
from critpt_grader.sandbox.doctor.host import host_facts
from critpt_grader.sandbox.doctor.rules import assess

if TYPE_CHECKING:
    from critpt_grader.sandbox.base import Job, Limits


def probe_source() -> str:
    """The text of :mod:`.probe`, as shipped to the sandbox."""
    return resources.files(__package__).joinpath("probe.py").read_text(encoding="utf-8")


PROBE = probe_source()
PROBE_ENTRYPOINT = probe.answer.__name__


@dataclass(frozen=True, slots=True)
class Examination:
    """What :func:`examine` found: a report, or (no sandbox could run the probe) why not."""

    report: Report | None
    host: HostFacts
    failure: str = ""
    probe: dict[str, Any] = field(default_factory=dict)


def probing_settings(settings: Any) -> Any:
    """``settings`` with a fresh sandbox that may be weak (see the module docstring)."""
    update: dict[str, Any] = {"warm_sandboxes": False, "require_strong_containment": False}
    local = getattr(settings, "local", settings)  # the local backend's own settings
    if "allow_weak_containment" in type(local).model_fields:
        update["allow_weak_containment"] = True
    if local is settings:
        return settings.model_copy(update=update)
    return settings.model_copy(update={"local": local.model_copy(update=update)})


def probe_job(limits: Limits) -> Job:
    """The candidate job that runs :data:`PROBE` once, with no arguments."""
    from critpt_grader.sandbox.base import Job

    return Job(
        source=PROBE,
        entrypoint=PROBE_ENTRYPOINT,
        cases=({"args": [], "kwargs": {}},),
        limits=limits,
        role="candidate",
    )


def examine(settings: Any) -> Examination:
    """Start one fresh candidate sandbox, run :data:`PROBE` in it and assess the result."""
    from critpt_grader import codec
    from critpt_grader.sandbox.local import LocalBackend

    probing = probing_settings(settings)
    job = probe_job(probing.limits())

    async def go():
        async with LocalBackend(probing) as backend:
            return await backend.run(job)

    outcome = asyncio.run(go())
    host = host_facts(settings, outcome.containment)
    if outcome.status != "ok":
        detail = outcome.detail or outcome.stderr.strip()[-500:]
        return Examination(
            None, host, f"no sandbox could run the probe: {outcome.status}: {detail}"
        )
    case = outcome.cases[0] if outcome.cases else None
    if case is None or case.kind != "value" or case.value is None:
        why = f"{case.kind}: {case.error_type} {case.message}" if case else "no case outcome"
        return Examination(None, host, f"the probe did not return: {why}")
    found = codec.decode(case.value)
    if not isinstance(found, dict):
        return Examination(None, host, f"the probe returned {type(found).__name__}")
    found = {str(k): v for k, v in found.items()}
    return Examination(assess(host, found), host, probe=found)
