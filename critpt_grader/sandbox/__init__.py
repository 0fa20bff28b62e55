"""Sandbox backends: where untrusted code runs (see :mod:`critpt_grader.sandbox.base`).

``make_backend(name, settings)`` builds one by name: ``local`` (bubblewrap + cgroup on this
machine) or ``in-process`` (no containment; fast pipeline tests only). Backend modules are
imported on first use so that importing the seam stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from critpt_grader.errors import GraderError
from critpt_grader.sandbox.base import CaseOutcome, Job, Limits, RunOutcome, SandboxBackend

if TYPE_CHECKING:
    from critpt_grader.sandbox.inprocess import InProcessBackend
    from critpt_grader.sandbox.local import LocalBackend
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
    "make_backend",
]

BACKENDS = {
    "local": ("critpt_grader.sandbox.local", "LocalBackend"),
    "in-process": ("critpt_grader.sandbox.inprocess", "InProcessBackend"),
}


def make_backend(name: str, settings: Settings | None = None) -> SandboxBackend:
    """The backend called ``name``, configured by ``settings``; GraderError if unknown."""
    if name not in BACKENDS:
        known = ", ".join(sorted(BACKENDS))
        raise GraderError(f"unknown sandbox backend {name!r} (known: {known})")
    return _backend_class(name)(settings)


def _backend_class(name: str) -> Any:
    import importlib

    module, attribute = BACKENDS[name]
    return getattr(importlib.import_module(module), attribute)


def __getattr__(attribute: str) -> Any:
    for name, (_, class_name) in BACKENDS.items():
        if attribute == class_name:
            return _backend_class(name)
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")
