"""Sandbox backends: where untrusted code runs (see :mod:`critpt_grader.sandbox.base`).

``make_backend(name, settings)`` builds one by name: a built-in — ``local`` (bubblewrap +
cgroup on this machine), ``in-process`` (no containment; fast pipeline tests only),
``scripted`` (no code runs; outcomes given by a test), ``daytona`` (remote sandboxes; the
``daytona`` extra), ``gym`` (any NeMo Gym sandbox provider; the ``gym`` extra) — or one that
an installed distribution registers under the entry-point group ``critpt_grader.backends``::

    [project.entry-points."critpt_grader.backends"]
    my-cloud = "my_package.backend:MyCloudBackend"

Adding a backend is new files only. Backend modules are imported on first use so that
importing the seam stays cheap; a built-in name cannot be taken over by an entry point.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from critpt_grader.errors import GraderError
from critpt_grader.sandbox.base import CaseOutcome, Job, Limits, RunOutcome, SandboxBackend

if TYPE_CHECKING:
    from critpt_grader.sandbox.inprocess import InProcessBackend
    from critpt_grader.sandbox.local import LocalBackend
    from critpt_grader.sandbox.scripted import ScriptedBackend
    from critpt_grader.settings import Settings

__all__ = [
    "BACKENDS",
    "CaseOutcome",
    "InProcessBackend",
    "Job",
    "Limits",
    "LocalBackend",
    "RunOutcome",
    "SandboxBackend",
    "ScriptedBackend",
    "available_backends",
    "make_backend",
]

ENTRY_POINT_GROUP = "critpt_grader.backends"
BACKENDS = {
    "local": ("critpt_grader.sandbox.local", "LocalBackend"),
    "in-process": ("critpt_grader.sandbox.inprocess", "InProcessBackend"),
    "scripted": ("critpt_grader.sandbox.scripted", "ScriptedBackend"),
    "daytona": ("critpt_grader.sandbox.daytona", "DaytonaBackend"),  # extra: daytona
    "gym": ("critpt_grader.sandbox.gym", "GymBackend"),  # extra: gym (NeMo Gym's providers)
}


def available_backends() -> list[str]:
    """Every backend name: the built-ins and those registered as entry points."""
    return sorted(set(BACKENDS) | {entry.name for entry in _entry_points()})


def make_backend(name: str, settings: Settings | None = None) -> SandboxBackend:
    """The backend called ``name``, configured by ``settings``; GraderError if unknown."""
    return _backend_class(name)(settings)


def _entry_points() -> Any:
    from importlib.metadata import entry_points

    return entry_points(group=ENTRY_POINT_GROUP)


def _backend_class(name: str) -> Any:
    import importlib

    if name in BACKENDS:
        module, attribute = BACKENDS[name]
        return getattr(importlib.import_module(module), attribute)
    for entry in _entry_points():
        if entry.name == name:
            backend = entry.load()
            if not (isinstance(backend, type) and issubclass(backend, SandboxBackend)):
                raise GraderError(
                    f"sandbox backend {name!r} ({entry.value}) is not a SandboxBackend"
                )
            return backend
    known = ", ".join(available_backends())
    raise GraderError(f"unknown sandbox backend {name!r} (known: {known})")


def __getattr__(attribute: str) -> Any:
    for name, (_, class_name) in BACKENDS.items():
        if attribute == class_name:
            return _backend_class(name)
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")
