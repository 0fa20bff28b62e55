"""Tallies of graded candidates: per kind and per output type, expected against observed.

A *verdict key* folds outcome and reward into one short label ("scored 1", "scored 0",
"unscorable", "failure"); distributions count candidates per key, which is what a reader
scans first to see whether canaries were rejected and references accepted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from critpt_grader.acceptance.run import Graded
from critpt_grader.acceptance.sets import KINDS
from critpt_grader.verdict import GRADER_ERROR, VERDICT_LABELS, verdict_key

UNLABELLED = "(unlabelled)"


def observed_key(graded: Graded) -> str:
    if graded.result is None:
        return GRADER_ERROR
    return verdict_key(graded.result.outcome, graded.result.reward)


@dataclass
class Tally:
    candidates: int = 0
    met: int = 0
    expected: Counter[str] = field(default_factory=Counter)
    observed: Counter[str] = field(default_factory=Counter)

    @property
    def not_met(self) -> int:
        return self.candidates - self.met

    def add(self, graded: Graded) -> None:
        self.candidates += 1
        self.met += graded.met
        expect = graded.candidate.expect
        self.expected[verdict_key(expect.outcome, expect.reward)] += 1
        self.observed[observed_key(graded)] += 1

    def to_json(self) -> dict:
        return {
            "candidates": self.candidates,
            "met": self.met,
            "not_met": self.not_met,
            "expected": ordered_counts(self.expected),
            "observed": ordered_counts(self.observed),
        }


def ordered_counts(counts: Counter[str]) -> dict[str, int]:
    rank = {key: i for i, key in enumerate(VERDICT_LABELS)}
    return {key: counts[key] for key in sorted(counts, key=lambda k: (rank.get(k, len(rank)), k))}


def tally_by(graded: Iterable[Graded], keys: Callable[[Graded], Iterable[str]]) -> dict[str, Tally]:
    tallies: dict[str, Tally] = {}
    for item in graded:
        for key in keys(item):
            tallies.setdefault(key, Tally()).add(item)
    return tallies


def tally_by_kind(graded: Sequence[Graded]) -> dict[str, Tally]:
    tallies = tally_by(graded, lambda g: (g.candidate.kind,))
    rank = {kind: i for i, kind in enumerate(KINDS)}
    return {k: tallies[k] for k in sorted(tallies, key=lambda k: (rank.get(k, len(rank)), k))}


def tally_by_output_type(graded: Sequence[Graded]) -> dict[str, Tally]:
    """Per label; a candidate counts once under each label of its task. Empty without labels."""
    if not any(g.labels for g in graded):
        return {}
    tallies = tally_by(graded, lambda g: g.labels or (UNLABELLED,))
    return {k: tallies[k] for k in sorted(tallies, key=lambda k: (k == UNLABELLED, k))}


def total(graded: Sequence[Graded]) -> Tally:
    tally = Tally()
    for item in graded:
        tally.add(item)
    return tally
