"""Conventions a statement grants for an output, read as per-leaf comparison policy.

Understood phrases (any case):

=============================================================  =========================
phrase                                                         convention
=============================================================  =========================
"up to an overall sign", "up to a global sign", "up to sign",  ``sign``: the candidate may
"up to a sign", "overall sign is arbitrary"                    equal ``-expected``; the
                                                               output flips as a whole
"up to a global phase", "up to an overall phase", "up to a     ``phase``: the candidate may
phase (factor)", "global phase is arbitrary"                   equal ``e^{iφ}·expected``
"in ascending order", "in increasing order", "sorted in        ``ascending``/``descending``:
ascending order"; "descending"/"decreasing" likewise           compared in order and the
                                                               candidate must be sorted
"in any order", "unordered", "order does not matter", "order   ``unordered``: the list is
is irrelevant", "regardless of order", "in arbitrary order"    compared as a set
"up to normalization", "up to a normalization factor          ``normalization``: the
(constant)", "up to (an overall/arbitrary) normalization",     candidate may equal
"up to a (constant/overall) scale factor", "up to an overall   ``c·expected`` for one
scale", "up to (a/an overall) rescaling", "up to a             positive real ``c``
multiplicative constant", "up to an overall (multiplicative)
constant factor", "up to an overall factor", "normalization
is arbitrary" ("normalisation" too)
"up to normalization and an overall sign", "up to a sign and   ``normalization`` and
normalization"; likewise with "a global phase" and with any    ``sign`` (``phase``)
of the phrases above in place of "normalization"
=============================================================  =========================

Normalization frees the size of a collection (a vector, an array, a function sampled at
points), not its sign or its phase, which are conventions of their own: ``c`` is a positive
real. With an overall sign on the same output ``c`` is any nonzero real, with a global phase
any nonzero complex number. Every phrase of the family is read so, strictly: "up to a
multiplicative constant" gives a positive ``c`` unless a sign or a phase is granted too.
``c`` is read from the data as the global phase is — candidate over expected at the expected
component of largest modulus — keeping its real part when the factor must be real, and is
never 0 (:func:`critpt_grader.compare.convention_rules.normalization_factor`). Only a list or
tuple (nested or not) of finite numbers whose expectation is not all zeros gets it: a rescaled
scalar could be anything. Not read: "unnormalized" ("return the unnormalized eigenvector" asks
for one vector), "need not be normalized" (said of inputs: "the coefficient matrix … need not
be normalized"), "up to an overall constant" (it may be additive), "up to a factor of 2".

Which output a phrase governs is the statement reader's decision
(:mod:`critpt_grader.statement`), with these consequences:

* a phrase about an intermediate object ("the eigenvector is defined up to an overall sign",
  "the state is given up to a global phase") grants nothing for a returned scalar derived from
  it, nor for the other outputs of a tuple: a freedom holds only for an output the clause
  names, describes, calls the answer ("the returned state is defined only up to a global
  phase") or asks for ("Return the vector up to an overall sign");
* "in any order" holds only after a verb that places the output ("return", "list", "report",
  "may come"): "the basis states may be enumerated in any order" grants nothing;
* a phrase about the answer as a whole governs the whole output for a sign, a phase or a
  normalization, and each list among a tuple's members for an ordering;
* when two clauses govern one output, the tighter wins: an order requirement over "in any
  order", an overall sign over a global phase (so a normalization with both is real).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any, Literal

from critpt_grader.statement import Binding, Occurrence, Statement, read, resolve

Convention = Literal["sign", "phase", "normalization", "ascending", "descending", "unordered"]

# Pieces of the normalization phrases ("a normalization factor", "an overall scale factor",
# "a multiplicative constant") and of the freedoms joined to them. A bare "factor" is never
# read, nor anything followed by "of": "up to a factor of 2" is an error bar.
_SIZE = (
    r"(?:(?:an?|the)\s+)?(?:(?:overall|global|arbitrary)\s+)?normali[sz]ation"
    r"(?:\s+(?:factor|constant))?"
    r"|(?:an?\s+)?(?:(?:overall|global|constant|arbitrary)\s+)?(?:scale|scaling)\s+factor"
    r"|(?:an?\s+)?(?:overall|global)\s+scale|(?:an?\s+)?(?:(?:overall|global)\s+)?rescaling"
    r"|(?:an?\s+)?(?:overall\s+)?multiplicative\s+(?:constant|factor)(?:\s+factor)?"
    r"|(?:an?\s+)?(?:overall\s+)?constant\s+(?:multiplicative\s+)?factor"
    r"|an?\s+overall\s+factor"
)
_SIGN = r"(?:an?\s+)?(?:overall\s+|global\s+)?(?:minus\s+)?sign"
_PHASE = r"(?:an?\s+)?(?:overall\s+|global\s+)?phase(?:\s+factor)?"
_NOT_OF = r"\b(?!\s+of\b)"

# "The overall sign of the eigenvector is arbitrary": the freedom of what group ``about``
# names (the statement reader takes that noun phrase as the clause's subject).
_NOT_EACH = r"(?!(?:each|every|any|one|some|individual)\b)"
_ARBITRARY = (
    rf"\s+(?:{_NOT_EACH}(?P<about>[^.;:,()]{{1,60}}?)\s+(?:is|are)\s+"
    r"(?:(?:entirely|completely|also)\s+)?"
    r"(?:arbitrary|irrelevant|immaterial|undetermined|not\s+(?:fixed|determined|important)"
    r"|a\s+matter\s+of\s+convention|conventional)\b"
    rf"|{_NOT_EACH}(?P<about2>[^.;:,()]{{1,60}}?)\s+(?:does\s+not|doesn't)\s+matter\b)"
)

# Not "the relative phase of …", "the sign of each component …".
_WHOLE = r"(?<!relative )(?<!relative-)\b(?:(?:overall|global)\s+)?"

# An entry whose name joins conventions with "+" grants each of them ("up to normalization and
# an overall sign"); joint entries come first, since overlapping text goes to the earlier.
LEXICON: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(rx, re.IGNORECASE))
    for name, rx in (
        ("sign", rf"{_WHOLE}sign\s+of{_ARBITRARY}"),
        ("phase", rf"{_WHOLE}phase(?:\s+factor)?\s+of{_ARBITRARY}"),
        ("normalization", rf"{_WHOLE}(?:normali[sz]ation|scale)\s+of{_ARBITRARY}"),
        (
            "normalization+sign",
            rf"\bup\s+to\s+(?:(?:{_SIZE})\s+and\s+{_SIGN}|{_SIGN}\s+and\s+(?:{_SIZE})){_NOT_OF}",
        ),
        (
            "normalization+phase",
            rf"\bup\s+to\s+(?:(?:{_SIZE})\s+and\s+{_PHASE}|{_PHASE}\s+and\s+(?:{_SIZE})){_NOT_OF}",
        ),
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
            "normalization",
            rf"\bup\s+to\s+(?:{_SIZE}){_NOT_OF}"
            r"|\b(?:overall\s+|global\s+)?normali[sz]ation(?:\s+(?:factor|constant))?\s+"
            r"(?:is\s+)?(?:arbitrary|irrelevant|does\s+not\s+matter|doesn't\s+matter)",
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
            r"\b(?:in\s+(?:any|arbitrary|an\s+arbitrary)\s+order|unordered"
            r"|order\s+(?:does\s+not|doesn't)\s+matter"
            r"|order\s+is\s+(?:irrelevant|arbitrary|not\s+important)"
            r"|regardless\s+of\s+(?:the\s+)?order)\b",
        ),
    )
)
PURPOSE = {
    "sign": "sign",
    "phase": "phase",
    "normalization": "sign",  # a freedom of the value: bound as a sign or a phase is
    "unordered": "order",
    "ascending": "requirement",
    "descending": "requirement",
}


@dataclass(frozen=True, slots=True)
class ConventionPhrase:
    convention: Convention
    phrase: str
    occurrence: Occurrence


@dataclass(frozen=True)
class ConventionReading:
    statement: Statement
    phrases: tuple[ConventionPhrase, ...]


@functools.lru_cache(maxsize=512)
def read_conventions(problem: str, output_doc: str | None) -> ConventionReading:
    """Every convention phrase of a statement and its Outputs docstring (cached)."""
    statement = read(problem or "", output_doc)
    found = tuple(
        ConventionPhrase(convention, occurrence.text, occurrence)  # type: ignore[arg-type]
        for occurrence in statement.find(LEXICON)
        for convention in occurrence.lexeme.split("+")
    )
    return ConventionReading(statement, found)


@dataclass(frozen=True)
class AppliedConvention:
    convention: Convention
    phrase: str


@dataclass(frozen=True)
class BoundConventions:
    """Conventions placed on the paths of one expected value; ``idle`` keeps the phrases
    that govern nothing, with the reason."""

    by_path: tuple[tuple[str, AppliedConvention], ...] = ()
    idle: tuple[tuple[ConventionPhrase, str], ...] = ()
    bindings: tuple[tuple[ConventionPhrase, Binding], ...] = ()

    def at(self, path: str) -> tuple[AppliedConvention, ...]:
        return tuple(c for p, c in self.by_path if p == path)

    def __bool__(self) -> bool:
        return bool(self.by_path)


NO_CONVENTIONS = BoundConventions()

# A freedom dropped when a tighter convention governs the same output.
_TIGHTER = {"unordered": ("ascending", "descending"), "phase": ("sign",)}


def bind_conventions(reading: ConventionReading, expected: Any) -> BoundConventions:
    """Place the phrases of ``reading`` on ``expected``'s outputs."""
    if not reading.phrases:
        return NO_CONVENTIONS
    outputs = reading.statement.outputs(expected)
    placed: list[tuple[str, AppliedConvention]] = []
    idle: list[tuple[ConventionPhrase, str]] = []
    bindings: list[tuple[ConventionPhrase, Binding]] = []
    for item in reading.phrases:
        binding = resolve(item.occurrence.target, outputs, PURPOSE[item.convention])
        bindings.append((item, binding))
        if not binding.bound:
            idle.append((item, binding.reason))
            continue
        if binding.answer:
            paths = _answer_targets(item.convention, expected)
        else:
            paths = tuple(p for n in binding.names if (p := outputs.path(n)) is not None)
        if item.convention in ("sign", "phase", "normalization"):
            paths = _wholes(paths, expected)
        applied = AppliedConvention(item.convention, item.phrase)
        for path in paths:
            if (path, applied) not in placed:
                placed.append((path, applied))
    kept = tuple(
        (path, c)
        for path, c in placed
        if not any(p == path and o.convention in _TIGHTER.get(c.convention, ()) for p, o in placed)
    )
    return BoundConventions(kept, tuple(idle), tuple(bindings))


def _wholes(paths: tuple[str, ...], expected: Any) -> tuple[str, ...]:
    """A sign, a phase or a scale is one freedom of the value it is said of: a clause that
    names every member of one list, tuple or map ("the amplitudes [c_0, c_1] up to an
    overall sign", "c_0 and c_1 are defined up to a global phase") flips them together, at
    the value that holds them, never one member without the others."""
    by_parent: dict[str, set[str]] = {}
    for path in paths:
        if path:
            parent, _, key = path.rpartition("/")
            by_parent.setdefault(parent, set()).add(key)
    out: list[str] = []
    for path in paths:
        parent = path.rpartition("/")[0] if path else None
        keys = _keys_at(expected, parent) if parent is not None else None
        whole = keys is not None and len(keys) > 1 and keys == by_parent.get(parent)
        found = parent if whole else path
        if found not in out:
            out.append(found)  # type: ignore[arg-type]
    return tuple(out)


def _keys_at(expected: Any, path: str) -> set[str] | None:
    node = expected
    for part in [p for p in path.split("/")[1:]]:
        key = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list | tuple) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return None
    if isinstance(node, dict):
        return {k.replace("~", "~0").replace("/", "~1") for k in node if isinstance(k, str)}
    if isinstance(node, list | tuple):
        return {str(i) for i in range(len(node))}
    return None


def _answer_targets(convention: Convention, expected: Any) -> tuple[str, ...]:
    # A function with several outputs returns a tuple; a single list output is a list
    # (the codec keeps the two apart), so only a tuple's list members are separate outputs.
    if convention in ("sign", "phase", "normalization") or not isinstance(expected, tuple):
        return ("",)
    lists = tuple(f"/{i}" for i, v in enumerate(expected) if isinstance(v, list | tuple))
    return lists or ("",)
