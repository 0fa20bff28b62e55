"""What an audit found, as plain data with one JSON shape (``to_dict``)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class CaseEvidence:
    """How one of the task's cases failed to tell a survivor from the reference."""

    case: int
    inputs: str
    reference: str
    mutant: str
    how: str  # "identical", "within rtol=0.01 (promise: '1% accuracy')", …


@dataclass(frozen=True, slots=True)
class TellingInput:
    """A probe input at which the task's own rules reject the survivor: the case to add."""

    inputs: str
    from_case: int
    reference: str
    mutant: str
    detail: str


@dataclass(frozen=True, slots=True)
class TighterTolerance:
    """The tolerance that would have rejected the survivor at its largest difference."""

    case: int
    path: str
    relative: str | None  # "1e-3"; None where the expected leaf is 0
    absolute: str
    allowed: str  # the tolerance that let it pass, with its source
    # Where that tolerance comes from: "promise" (the statement's: the statement is what to
    # edit), "leaf" or "task" (stored on the task), "default"; None when no leaf says.
    source: str | None = None
    # What of it is in force at that leaf: "rtol", "atol", "rtol+atol" or "exact".
    in_force: str = "rtol"


@dataclass(frozen=True, slots=True)
class Survivor:
    """A mutant that differs from the reference somewhere yet scores 1 on the task."""

    id: str
    operator: str
    description: str
    line: int
    diff: str
    # "inputs": a probe input tells it apart (the cases are too few or too alike);
    # "tolerance": it passes everywhere within a width the task allows (see tighter_tolerance)
    passed_by: str
    cases: list[CaseEvidence]
    tells_apart: TellingInput | None
    tighter_tolerance: TighterTolerance | None
    advice: str


@dataclass(frozen=True, slots=True)
class Undecided:
    """A mutant the pipeline did not score (comparator uncertain, no sandbox)."""

    id: str
    description: str
    category: str
    reason: str


@dataclass(frozen=True, slots=True)
class UnreachedBranch:
    line: int
    what: str


@dataclass(frozen=True, slots=True)
class LooserPromise:
    """A statement promise wider than the tolerance the task stores, at one leaf."""

    case: int
    path: str
    promise: str
    stored: str


@dataclass(frozen=True, slots=True)
class IndistinctInputs:
    """Two inputs equal in every case: the cases cannot tell an answer that swaps them."""

    first: str
    second: str
    cases: int
    message: str


@dataclass
class TaskAudit:
    problem_id: str
    origin: str
    weak: bool = False
    preflight: str = "passed"  # or the category that made the task unscorable
    preflight_reason: str = ""
    cases: int = 0
    distinct_inputs: int = 0
    probes: int = 0  # probe inputs at which the reference stayed in its domain
    mutants: int = 0
    equivalent: int = 0
    killed: int = 0
    survivors: list[Survivor] = field(default_factory=list)
    undecided: list[Undecided] = field(default_factory=list)
    branches: int = 0
    unreached_branches: list[UnreachedBranch] = field(default_factory=list)
    promises: list[dict[str, Any]] = field(default_factory=list)  # per output, as explain reads
    looser_promises: list[LooserPromise] = field(default_factory=list)
    indistinct_inputs: list[IndistinctInputs] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0  # open to done, waits for a run slot included
    run_seconds: float = 0.0  # the time its runs held a run slot, summed

    @property
    def mutation_score(self) -> float | None:
        """Killed among the mutants that are not equivalent (None when there is none)."""
        counted = self.mutants - self.equivalent
        return self.killed / counted if counted else None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["mutation_score"] = self.mutation_score
        data["seconds"] = round(self.seconds, 3)
        data["run_seconds"] = round(self.run_seconds, 3)
        return data


@dataclass
class AuditReport:
    tasks: list[TaskAudit]
    containment: str = ""
    seconds: float = 0.0  # the whole audit, start-up included
    sources: list[str] = field(default_factory=list)
    startup_seconds: float = 0.0  # starting the sandboxes, before any task was timed

    def totals(self) -> dict[str, Any]:
        done = [t for t in self.tasks if t.preflight == "passed"]
        return {
            "tasks": len(self.tasks),
            "weak": sum(t.weak for t in self.tasks),
            "preflight_failed": len(self.tasks) - len(done),
            "mutants": sum(t.mutants for t in done),
            "equivalent": sum(t.equivalent for t in done),
            "killed": sum(t.killed for t in done),
            "survivors": sum(len(t.survivors) for t in done),
            "undecided": sum(len(t.undecided) for t in done),
            "unreached_branches": sum(len(t.unreached_branches) for t in done),
            "looser_promises": sum(bool(t.looser_promises) for t in done),
            "indistinct_inputs": sum(bool(t.indistinct_inputs) for t in done),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "tasks": [t.to_dict() for t in self.tasks],
            "totals": self.totals(),
            "containment": self.containment,
            "seconds": round(self.seconds, 3),
            "startup_seconds": round(self.startup_seconds, 3),
            "sources": self.sources,
        }
