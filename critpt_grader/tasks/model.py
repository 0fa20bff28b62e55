"""The internal task model every loader produces and the pipeline consumes (plain data).

Both task formats (NeMo Gym ``task_data`` v1 rows and CritPt challenge JSON) load into
:class:`Task`. Wire values inside stay as ``critpt-value-v1`` envelopes (JSON dicts) so a
task can be handed to a sandbox or serialized again without loss.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

Derived = TypeVar("Derived")


@dataclass(frozen=True, slots=True)
class LeafTolerance:
    """A per-leaf tolerance entry. ``path`` is a normalized JSON Pointer ("" is the root).
    Tolerances stay exact decimal text; ``None`` means "not given"."""

    path: str
    rtol: str | None = None
    atol: str | None = None
    quantity: str | None = None


@dataclass(frozen=True, slots=True)
class Expectation:
    """``kind="value"`` with an envelope, or ``kind="exception"`` (message: provenance only).

    ``error_type`` (exceptions only) names the builtin exception class a raise must be or
    derive from (``"ValueError"``; see :mod:`critpt_grader.raised`). A task row may state
    it; when it does not, the reference preflight fills in the type the reference raised.
    """

    kind: Literal["value", "exception"]
    value: dict[str, Any] | None = None
    message: str | None = None
    error_type: str | None = None


@dataclass(frozen=True, slots=True)
class Case:
    """One call of the entry point. ``args``/``kwargs`` hold envelopes; ``names`` (CritPt
    challenges) lists module-level names of the template to pass positionally instead.
    ``expected`` is ``None`` when the reference preflight supplies it."""

    args: tuple[dict[str, Any], ...] = ()
    kwargs: dict[str, dict[str, Any]] = field(default_factory=dict)
    names: tuple[str, ...] | None = None
    expected: Expectation | None = None
    tolerances: tuple[LeafTolerance, ...] = ()

    def job_inputs(self) -> dict[str, Any]:
        """The case as a sandbox job carries it: ``{"names"}`` or ``{"args", "kwargs"}``."""
        if self.names is not None:
            return {"names": list(self.names)}
        return {"args": list(self.args), "kwargs": dict(self.kwargs)}


@dataclass(frozen=True, slots=True)
class Task:
    problem_id: str
    entrypoint: str
    reference_source: str
    reference_entrypoint: str
    cases: tuple[Case, ...]
    problem: str = ""  # statement text; statement promises and conventions are read here
    code_template: str | None = None
    setup_source: str | None = None  # CritPt: template preamble that defines the inputs
    output_doc: str | None = None  # CritPt: the docstring's Outputs section
    unresolved_inputs: tuple[str, ...] = ()  # CritPt: parameters the template gives no value
    rtol: str | None = None
    atol: str | None = None
    tolerances: tuple[LeafTolerance, ...] = ()
    input_conversions: tuple[str | None, ...] = ()
    uuid: str | None = None
    origin: Literal["task_data", "critpt"] = "task_data"
    prompt: Any = None  # responses_create_params, kept for the server's echo
    # What the grader derives from the task alone (its sandbox wire form, its preflight key),
    # kept with it: the first row of a task builds it, the others reuse it (:meth:`derived`).
    _derived: dict[str, Any] = field(default_factory=dict, init=False, compare=False, repr=False)

    def derived(self, name: str, build: Callable[[Task], Derived]) -> Derived:
        """``build(self)``, built once per task object and kept under ``name``."""
        try:
            return self._derived[name]
        except KeyError:
            value = self._derived[name] = build(self)
            return value
