"""The doctor's plain data: what the host says (:class:`HostFacts`) and what is concluded
(:class:`Layer` rows, one :class:`Report`).

What it assumes: nothing; these are frozen values with no behaviour beyond ``to_json``.

What it guarantees: :mod:`.host` only produces :class:`HostFacts`, :mod:`.rules` only reads
them (with the probe's dict) and produces a :class:`Report`, so the rules never look at the
machine and are unit-tested on synthetic facts. A :class:`Layer`'s ``fix`` is empty exactly
when it is ``held`` (:func:`.rules.assess` builds every row that way).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Status = Literal["held", "missing", "weak"]
SANDBOX_USER = "critpt-sandbox"


@dataclass(frozen=True, slots=True)
class HostFacts:
    """What the host says about itself, and the containment label of the probe's run."""

    euid: int
    bwrap: str = ""  # path, "" when absent
    bwrap_version: str = ""
    setpriv: str = ""
    sandbox_user: str = SANDBOX_USER  # whom a root grader runs sandboxed code as
    sandbox_user_exists: bool = False
    cgroup_mode: str = "none"  # v1, v2, hybrid (v1 plus a v2 mount), none
    containment: str = ""  # the RunOutcome's label, opaque
    python: str = ""  # the interpreter the sandbox runs (settings.local.sandbox_python)
    python_public: bool | None = None  # every user can reach and run it (None: unknown)
    nproc: int = -1  # the grader's own soft RLIMIT_NPROC (-1: unlimited)
    userns: str = ""  # unprivileged user namespaces: "allowed", or why not
    require_strong: bool = False
    settings: dict[str, Any] = field(default_factory=dict)  # containment-related settings


@dataclass(frozen=True, slots=True)
class Layer:
    name: str
    status: Status
    seen: str
    fix: str
    stops: str
    essential: bool = False  # missing here means the containment is not strong


@dataclass(frozen=True, slots=True)
class Report:
    rows: tuple[Layer, ...]
    strong: bool

    def to_json(self) -> dict[str, Any]:
        return {"strong": self.strong, "rows": [asdict(row) for row in self.rows]}
