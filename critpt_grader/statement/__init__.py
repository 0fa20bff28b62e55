"""The statement reader: sentences, clauses, outputs, and what each clause is about.

A problem statement and its template's Outputs docstring say how the answer will be judged —
"to three decimal places", "up to an overall sign" — but they also quote the precision of
inputs, the freedoms of intermediate objects and the order in which things are enumerated.
This package reads a statement once into a :class:`Statement` and answers one question for
any phrase a lexicon names: **which outputs does it govern, and why?** The lexicons and
what their phrases mean live with their users (:mod:`critpt_grader.policy.promises`,
:mod:`critpt_grader.policy.conventions`); the reading here is shared and knows no phrase.

Layers, each its own module:

* :mod:`~critpt_grader.statement.text` — same-length views of the text, sentences, tokens;
* :mod:`~critpt_grader.statement.outputs` — the declared outputs (Outputs docstring entries
  with their descriptions, return declarations in the statement) and their paths in a value;
* :mod:`~critpt_grader.statement.grammar` — the clause grammar: the noun phrase a phrase is
  about, its role (object, subject, input) and the clause's mood (directive, description);
* :mod:`~critpt_grader.statement.binding` — which outputs that noun phrase governs.

Guarantees: reading is pure and deterministic, never evaluates anything, and is cached per
``(problem, output_doc)``; a phrase the grammar cannot attach governs nothing (the strict
default applies), never every output.

Usage::

    statement = read("Find T (rounded to the nearest integer) and P (to two decimal places).",
                     "T: int, evolution time\\nP: float, probability")
    for found in statement.find(lexicon):          # lexicon: ((name, compiled regex), ...)
        binding = resolve(found.target, statement.outputs((120, 0.25)), "precision")
        binding.names, binding.answer, binding.reason   # ('T',), False, "'T' names T …"
"""

from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass
from typing import Any, Literal

from critpt_grader.statement.binding import Binding, Purpose, resolve
from critpt_grader.statement.grammar import (
    Mention,
    Objects,
    Returned,
    Target,
    attach,
    pronoun,
    returned_objects,
    subject,
)
from critpt_grader.statement.outputs import (
    Declared,
    Output,
    OutputSet,
    declare,
    output_set,
    owners_at,
)
from critpt_grader.statement.text import Sentence, flat_view, marked_view, sentences, tokens

__all__ = [
    "Binding",
    "Lexicon",
    "Mention",
    "Occurrence",
    "Output",
    "OutputSet",
    "Purpose",
    "Returned",
    "Statement",
    "Target",
    "read",
    "resolve",
]

Source = Literal["statement", "outputs"]
Lexicon = tuple[tuple[str, re.Pattern[str]], ...]


@dataclass(frozen=True, slots=True)
class Occurrence:
    """One phrase of a lexicon found in the text, and what it is about."""

    lexeme: str  # the lexicon entry that matched
    groups: tuple[str | None, ...]  # the match's groups, for the lexicon to read its numbers
    text: str  # the phrase as written, white space collapsed
    source: Source
    start: int  # offset in its source text
    end: int
    sentence: str  # the sentence it sits in, white space collapsed
    target: Target
    following: str = ""  # the rest of its sentence after the phrase (a unit may stand there)
    preceding: str = ""  # its sentence before the phrase ("at least" may stand there)


@dataclass(frozen=True)
class _Text:
    source: Source
    marked: str
    flat: str
    sentences: tuple[Sentence, ...]
    # per sentence start: the last directive object before the sentence, and the directive
    # objects inside it with their verbs' token indices (what a pronoun stands for)
    objects: dict[int, tuple[tuple[Mention, ...], Objects]] = dataclasses.field(
        default_factory=dict
    )


@dataclass(frozen=True, eq=False)
class Statement:
    """One statement read once: its texts, sentences and declared outputs."""

    problem: str
    output_doc: str | None
    texts: tuple[_Text, ...]
    declared: Declared

    def find(self, lexicon: Lexicon) -> tuple[Occurrence, ...]:
        """Every phrase of ``lexicon`` in the statement, then in the Outputs docstring, in
        text order; where two entries match overlapping text the earlier entry wins."""
        found: list[Occurrence] = []
        for text in self.texts:
            spans: list[tuple[int, int, str, re.Match[str]]] = []
            for lexeme, pattern in lexicon:
                for match in pattern.finditer(text.flat):
                    if match.end() == match.start():
                        continue
                    if any(a < match.end() and match.start() < b for a, b, _, _ in spans):
                        continue
                    spans.append((match.start(), match.end(), lexeme, match))
            spans.sort(key=lambda s: s[0])
            for sentence in text.sentences:
                inside = [s for s in spans if sentence.start <= s[0] < sentence.end]
                if inside:
                    found.extend(self._occurrences(text, sentence, inside))
        return tuple(found)

    def _occurrences(self, text: _Text, sentence: Sentence, inside) -> list[Occurrence]:
        toks = tokens(text.marked, sentence.start, sentence.end)
        token_spans = [_token_span(toks, a, b) for a, b, _, _ in inside]
        found = []
        for (a, b, lexeme, match), span in zip(inside, token_spans, strict=True):
            others = [s for s in token_spans if s != span and s[0] < s[1]]
            about = _about(match)
            if about is not None and (inner := _token_span(toks, *about))[0] < inner[1]:
                target = subject(toks, *inner, text.marked)
            elif span[0] < span[1]:
                target = attach(toks, span[0], span[1], others, text.marked)
            else:
                target = Target("", (), "label", "none", "not attached", "")
            if text.source == "outputs":
                target = _in_entry(target, owners_at(self.declared.entries, a))
            elif pronoun(target):
                target = _antecedent(target, text.objects.get(sentence.start), span[0])
            found.append(
                Occurrence(
                    lexeme,
                    match.groups(),
                    " ".join(match.group(0).split()),
                    text.source,
                    a,
                    b,
                    " ".join(sentence.text.split()),
                    target,
                    " ".join(text.flat[b : sentence.end].split())[:80],
                    " ".join(text.flat[sentence.start : a].split())[-80:],
                )
            )
        return found

    def outputs(self, expected: Any = None, *, known: bool = True) -> OutputSet:
        """The declared outputs placed on ``expected`` (``known=False``: no value known)."""
        return output_set(self.declared, expected, known=known)


def _about(match: re.Match[str]) -> tuple[int, int] | None:
    """Where a phrase names what it is about itself ("the overall sign *of the eigenvector* is
    arbitrary"): the lexicon's ``about`` group."""
    for name in ("about", "about2"):
        if name in match.re.groupindex and match.group(name):
            return match.start(name), match.end(name)
    return None


def _antecedent(target: Target, objects, at: int) -> Target:
    """A pronoun subject stands for the last object a directive verb names before it ("Return
    the eigenvector; it is only defined up to a sign" → the eigenvector; "Compute the ground
    state. It is defined up to a global phase." → the ground state, which is not returned)."""
    if not objects:
        return target
    previous, inside = objects
    before = [mentions for k, mentions in inside if k < at]
    found = before[-1] if before else previous
    if not found:
        return target
    text = " and ".join(m.text for m in found)
    how = f"{target.how}; '{target.text}' stands for '{text}'"
    return dataclasses.replace(target, mentions=found, how=how)


def _token_span(toks, a: int, b: int) -> tuple[int, int]:
    inside = [k for k, t in enumerate(toks) if t.start < b and t.end > a]
    return (inside[0], inside[-1] + 1) if inside else (0, 0)


def _in_entry(target: Target, owners: tuple[str, ...]) -> Target:
    role = "input" if target.role == "input" else "entry"
    return Target(target.text, target.mentions, "docstring", role, target.how, target.verb, owners)


@functools.lru_cache(maxsize=512)
def read(problem: str, output_doc: str | None) -> Statement:
    """Read a statement and its Outputs docstring section (cached)."""
    texts = []
    problem_marked = marked_view(problem or "")
    problem_flat = flat_view(problem_marked)
    problem_sentences = sentences(problem_flat)
    returned, objects = _returned(problem_marked, problem_sentences)
    texts.append(_Text("statement", problem_marked, problem_flat, problem_sentences, objects))
    doc_marked = marked_view(output_doc) if output_doc else None
    declared = declare(problem_flat, doc_marked)
    if returned:
        declared = dataclasses.replace(declared, returned=returned)
    if doc_marked is not None:
        doc_flat = flat_view(doc_marked)
        cuts = sorted({e.start for e in _entries(declared)})
        texts.append(_Text("outputs", doc_marked, doc_flat, _cut(sentences(doc_flat), cuts)))
    return Statement(problem or "", output_doc, tuple(texts), declared)


def _returned(
    marked: str, found: tuple[Sentence, ...]
) -> tuple[tuple[Returned, ...], dict[int, tuple[tuple[Mention, ...], Objects]]]:
    """What the statement's returning verbs return, sentence by sentence ("… and return it"
    stands for the object before it, in its sentence or the one before), and per sentence the
    directive objects a pronoun may stand for."""
    out: list[Returned] = []
    objects: dict[int, tuple[tuple[Mention, ...], Objects]] = {}
    last: tuple[Mention, ...] = ()
    for sentence in found:
        toks = tokens(marked, sentence.start, sentence.end)
        here, inside = returned_objects(toks, marked, last)
        objects[sentence.start] = (last, inside)
        out.extend(here)
        if inside:
            last = inside[-1][1]
    return tuple(out), objects


def _entries(declared: Declared):
    from critpt_grader.statement.outputs import walk

    return walk(declared.entries)


def _cut(found: tuple[Sentence, ...], cuts: list[int]) -> tuple[Sentence, ...]:
    """Docstring sentences also end where an entry starts (entries are lines, not prose)."""
    out: list[Sentence] = []
    for sentence in found:
        start = sentence.start
        for cut in cuts:
            if sentence.start < cut < sentence.end:
                out.append(_piece(sentence, start, cut))
                start = cut
        out.append(_piece(sentence, start, sentence.end))
    return tuple(s for s in out if s.text)


def _piece(sentence: Sentence, start: int, end: int) -> Sentence:
    text = sentence.text[start - sentence.start : end - sentence.start]
    lead = len(text) - len(text.lstrip())
    return Sentence(start + lead, start + lead + len(text.strip()), text.strip(), sentence.section)
