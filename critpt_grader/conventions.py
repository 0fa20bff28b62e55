"""Conventions the statement grants for an output, read as per-leaf comparison policy.

Understood phrases (any case):

=============================================================  =========================
phrase                                                         convention
=============================================================  =========================
"up to an overall sign", "up to a global sign", "up to sign",  ``sign``: the candidate may
"up to a sign", "overall sign is arbitrary"                    equal ``-expected``; the
                                                               whole output (or the named
                                                               one) flips together
"up to a global phase", "up to an overall phase", "up to a     ``phase``: the candidate may
phase (factor)"                                                equal ``e^{iφ}·expected``
"in ascending order", "in increasing order", "sorted in        ``ascending``/``descending``:
ascending order"; "descending"/"decreasing" likewise           compared in order and the
                                                               candidate must be sorted
"in any order", "unordered", "order does not matter", "order   ``unordered``: the list is
is irrelevant", "regardless of order"                          compared as a set
=============================================================  =========================

Which output a phrase governs follows the same rules as precision promises
(:mod:`critpt_grader.promises`): a phrase in the Outputs docstring governs the entry it sits
in; one in the statement must be tied to the reported output and governs the output it
names, else the whole output. An unnamed ordering phrase governs each list among the
outputs when the function returns several (a tuple), otherwise the output itself. A phrase
in incidental prose ("the eigenvectors are defined up to a global phase") grants nothing, so
a convention never widens what passes unless the statement speaks of the answer.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any, Literal

from critpt_grader.promises import (
    clause_paths,
    find_phrases,
    normalize,
    output_paths,
    parse_outputs,
)

Convention = Literal["sign", "phase", "ascending", "descending", "unordered"]

_PATTERNS: tuple[tuple[Convention, re.Pattern[str]], ...] = tuple(
    (name, re.compile(rx, re.IGNORECASE))
    for name, rx in (
        (
            "sign",
            r"\bup\s+to\s+(?:an?\s+)?(?:overall\s+|global\s+)?(?:minus\s+)?sign\b"
            r"|\b(?:overall|global)\s+sign\s+(?:is\s+)?(?:arbitrary|irrelevant|does\s+not\s+matter)",
        ),
        (
            "phase",
            r"\bup\s+to\s+(?:an?\s+)?(?:overall\s+|global\s+)?phase(?:\s+factor)?\b"
            r"|\b(?:overall|global)\s+phase\s+(?:is\s+)?(?:arbitrary|irrelevant|does\s+not\s+matter)",
        ),
        (
            "ascending",
            r"\b(?:in|sorted\s+in|sorted\s+by|by)\s+(?:an?\s+)?(?:ascending|increasing)\s+order\b"
            r"|\bsorted\s+(?:in\s+)?ascending\b",
        ),
        (
            "descending",
            r"\b(?:in|sorted\s+in|sorted\s+by|by)\s+(?:an?\s+)?(?:descending|decreasing)\s+order\b"
            r"|\bsorted\s+(?:in\s+)?descending\b",
        ),
        (
            "unordered",
            r"\b(?:in\s+any\s+order|unordered|order\s+(?:does\s+not|doesn't)\s+matter"
            r"|order\s+is\s+(?:irrelevant|arbitrary|not\s+important)|regardless\s+of\s+(?:the\s+)?order)\b",
        ),
    )
)


@dataclass(frozen=True)
class ConventionPhrase:
    convention: Convention
    phrase: str
    source: Literal["statement", "outputs"]
    owners: tuple[str, ...]
    names_before: tuple[str, ...]
    names_after: tuple[str, ...]


@dataclass(frozen=True)
class ConventionReading:
    phrases: tuple[ConventionPhrase, ...]
    outputs_doc: str | None


@functools.lru_cache(maxsize=512)
def read_conventions(problem: str, output_doc: str | None) -> ConventionReading:
    """Every convention phrase tied to the reported output (cached per statement)."""
    kinds = [k for k, _ in _PATTERNS]
    patterns = tuple(p for _, p in _PATTERNS)
    found = []
    for match, phrase in find_phrases(patterns, problem, output_doc):
        if not phrase.tied:
            continue
        found.append(
            ConventionPhrase(
                kinds[patterns.index(match.re)],
                " ".join(phrase.text.split()),
                phrase.source,
                phrase.owners,
                phrase.names_before,
                phrase.names_after,
            )
        )
    return ConventionReading(tuple(found), output_doc)


@dataclass(frozen=True)
class AppliedConvention:
    convention: Convention
    phrase: str


@dataclass(frozen=True)
class BoundConventions:
    """Conventions placed on the paths of one expected value."""

    by_path: tuple[tuple[str, AppliedConvention], ...] = ()

    def at(self, path: str) -> tuple[AppliedConvention, ...]:
        return tuple(c for p, c in self.by_path if p == path)

    def __bool__(self) -> bool:
        return bool(self.by_path)


NO_CONVENTIONS = BoundConventions()


def bind_conventions(reading: ConventionReading, expected: Any) -> BoundConventions:
    """Place the phrases of ``reading`` on ``expected``'s outputs."""
    if not reading.phrases:
        return NO_CONVENTIONS

    entries = parse_outputs(normalize(reading.outputs_doc)) if reading.outputs_doc else ()
    names = output_paths(entries, expected)
    placed: list[tuple[str, AppliedConvention]] = []
    for item in reading.phrases:
        paths = clause_paths(item.owners, item.names_before, item.names_after, names, set())
        if paths is None:
            paths = _unnamed_targets(item.convention, expected)
        applied = AppliedConvention(item.convention, item.phrase)
        for path in paths:
            if (path, applied) not in placed:
                placed.append((path, applied))
    return BoundConventions(tuple(placed))


def _unnamed_targets(convention: Convention, expected: Any) -> tuple[str, ...]:
    # A function with several outputs returns a tuple; a single list output is a list
    # (the codec keeps the two apart), so only a tuple's list members are separate outputs.
    if convention in ("sign", "phase") or not isinstance(expected, tuple):
        return ("",)
    lists = tuple(f"/{i}" for i, v in enumerate(expected) if isinstance(v, list | tuple))
    return lists or ("",)
