"""Verdict carriers: one :class:`LeafVerdict` per compared leaf, one :class:`CaseVerdict`
per test case."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import Any, Literal

from critpt_grader.codec.values import Legacy, Symbolic, WireSet
from critpt_grader.policy.tolerance import Tolerance

Status = Literal["equal", "mismatch", "uncertain", "invalid"]

# Aggregation order: a proven mismatch decides the case; then a defect on the expected side;
# then anything left unproved.
_RANK: dict[str, int] = {"equal": 0, "uncertain": 1, "invalid": 2, "mismatch": 3}
_RENDER_LIMIT = 200


@dataclass(frozen=True)
class LeafVerdict:
    """How one leaf compared. ``path`` is a JSON Pointer (``""`` = root, ``"/energies/2"``).

    ``kind`` is one of: int, bool, float, complex, str, symbolic, legacy, interval, set, map,
    sequence, nonfinite, exception, structure, none.
    """

    path: str
    kind: str
    status: Status
    reason: str
    tolerance: Tolerance | None = None
    expected: str | None = None
    observed: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if self.tolerance is not None:
            data["tolerance"] = {
                "rtol": str(self.tolerance.rtol),
                "atol": str(self.tolerance.atol),
                "source": self.tolerance.source,
                "text": self.tolerance.text,
            }
        return data


@dataclass(frozen=True)
class CaseVerdict:
    """The verdict for one case: any proven mismatch → mismatch; else any invalid → invalid;
    else any uncertain → uncertain; else equal."""

    status: Status
    leaves: tuple[LeafVerdict, ...]

    @classmethod
    def of(cls, leaves: tuple[LeafVerdict, ...] | list[LeafVerdict]) -> CaseVerdict:
        leaves = tuple(leaves)
        return cls(aggregate(leaf.status for leaf in leaves), leaves)

    def first_difference(self) -> LeafVerdict | None:
        """The first leaf whose status is the case's status, when the case is not equal."""
        if self.status == "equal":
            return None
        return next((leaf for leaf in self.leaves if leaf.status == self.status), None)

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "leaves": [leaf.to_dict() for leaf in self.leaves]}


def aggregate(statuses) -> Status:
    worst: Status = "equal"
    for status in statuses:
        if _RANK[status] > _RANK[worst]:
            worst = status
    return worst


def render(value: Any) -> str:
    """A short rendering for reports (≤200 characters)."""
    if isinstance(value, Symbolic | Legacy):
        text = value.text
    elif isinstance(value, WireSet):
        text = "{" + ", ".join(render(v) for v in value.items[:50]) + "}"
    elif isinstance(value, Fraction):
        text = str(value)
    else:
        text = repr(value)
    text = " ".join(text.split())
    if len(text) > _RENDER_LIMIT:
        text = text[: _RENDER_LIMIT - 1] + "…"
    return text
