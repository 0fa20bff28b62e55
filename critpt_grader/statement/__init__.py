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

import bisect
import dataclasses
import functools
import heapq
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from critpt_grader.statement.binding import Binding, Purpose, names_of, resolve
from critpt_grader.statement.grammar import (
    Mention,
    Objects,
    Parse,
    Returned,
    Target,
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
            spans = _spans(text.flat, lexicon)
            at = 0
            for sentence in text.sentences:
                # spans and sentences both run in text order
                while at < len(spans) and spans[at][0] < sentence.start:
                    at += 1
                first = at
                while at < len(spans) and spans[at][0] < sentence.end:
                    at += 1
                if at > first:
                    found.extend(self._occurrences(text, sentence, spans[first:at]))
        return tuple(found)

    def _occurrences(self, text: _Text, sentence: Sentence, inside) -> list[Occurrence]:
        toks = tokens(text.marked, sentence.start, sentence.end)
        starts = [t.start for t in toks]
        ends = [t.end for t in toks]
        token_spans = [_token_span(starts, ends, a, b) for a, b, _, _ in inside]
        parse = Parse(toks, token_spans, text.marked)
        said = " ".join(sentence.text.split())  # one string for every phrase of the sentence
        found = []
        for (a, b, lexeme, match), span in zip(inside, token_spans, strict=True):
            about = _about(match)
            if about is not None and (inner := _token_span(starts, ends, *about))[0] < inner[1]:
                target = subject(toks, *inner, text.marked)
            elif span[0] < span[1]:
                target = parse.attach(span[0], span[1])
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
                    said,
                    target,
                    _following(text.flat, b, sentence.end),
                    _preceding(text.flat, sentence.start, a),
                )
            )
        return found

    def named_before(
        self, source: Source, offsets: Sequence[int], outputs: OutputSet
    ) -> tuple[tuple[str, ...], ...]:
        """For each offset into the ``source`` text, the outputs named by the noun phrase
        that ends just before it, and by the phrases listed with it ("E1 and E2 in eV",
        back to one that has an offset of its own: "the gap in eV and T in K"): what a unit
        written there is the unit of ("the gap in eV", "T (K)", "the gap, in eV"). A phrase
        about the answer as a whole ("all results in eV", "the tuple (E, T) in eV") names
        every output; one that names nothing known, nothing."""
        found: list[tuple[str, ...]] = [() for _ in offsets]
        text = next((t for t in self.texts if t.source == source), None)
        if text is None or not offsets:
            return tuple(found)
        order = sorted(range(len(offsets)), key=lambda n: offsets[n])
        at = 0
        for sentence in text.sentences:
            mine: list[int] = []
            while at < len(order) and offsets[order[at]] < sentence.end:
                if offsets[order[at]] >= sentence.start:
                    mine.append(order[at])
                at += 1
            if mine:
                toks = tokens(text.marked, sentence.start, sentence.end)
                starts = [t.start for t in toks]
                marks = [bisect.bisect_left(starts, offsets[n]) for n in mine]
                names = Parse(toks, []).named_before(
                    marks, outputs, lambda mention: names_of(mention, outputs)
                )
                for n, named in zip(mine, names, strict=True):
                    found[n] = named
        return tuple(found)

    def outputs(self, expected: Any = None, *, known: bool = True) -> OutputSet:
        """The declared outputs placed on ``expected`` (``known=False``: no value known)."""
        return output_set(self.declared, expected, known=known)


def _spans(flat: str, lexicon: Lexicon) -> list[tuple[int, int, str, re.Match[str]]]:
    """The lexicon's matches in ``flat``, in text order; where two entries match
    overlapping text the earlier entry wins (each entry's matches are merged into the
    spans already kept in one pass: they run in text order and never overlap each other)."""
    kept: list[tuple[int, int, str, re.Match[str]]] = []
    for lexeme, pattern in lexicon:
        new: list[tuple[int, int, str, re.Match[str]]] = []
        at = 0
        for match in pattern.finditer(flat):
            start, end = match.span()
            if end == start:
                continue
            while at < len(kept) and kept[at][1] <= start:
                at += 1  # kept spans that end before this match cannot overlap it
            if at < len(kept) and kept[at][0] < end:
                continue
            new.append((start, end, lexeme, match))
        if new:
            kept = list(heapq.merge(kept, new, key=lambda s: s[0]))
    return kept


def _token_span(starts: list[int], ends: list[int], a: int, b: int) -> tuple[int, int]:
    """The tokens that overlap ``[a, b)``: ``starts``/``ends`` are the sentence's token
    offsets, in order."""
    first = bisect.bisect_right(ends, a)  # the first token that ends after a
    last = bisect.bisect_left(starts, b)  # past the last token that starts before b
    return (first, last) if first < last else (0, 0)


def _following(flat: str, start: int, end: int) -> str:
    """The first 80 characters, white space collapsed, of ``flat[start:end]``."""
    size = 256
    while True:
        stop = min(end, start + size)
        said = " ".join(flat[start:stop].split())
        if stop == end or len(said) > 81:
            return said[:80]
        size *= 4


def _preceding(flat: str, start: int, end: int) -> str:
    """The last 80 characters, white space collapsed, of ``flat[start:end]`` (read from the
    end, so a long sentence costs each phrase a bounded window, not the whole sentence)."""
    size = 256
    while True:
        begin = max(start, end - size)
        said = " ".join(flat[begin:end].split())
        if begin == start or len(said) > 81:
            return said[-80:]
        size *= 4


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
        first = bisect.bisect_right(cuts, sentence.start)
        last = bisect.bisect_left(cuts, sentence.end)
        for cut in cuts[first:last]:  # sentence.start < cut < sentence.end
            out.append(_piece(sentence, start, cut))
            start = cut
        out.append(_piece(sentence, start, sentence.end))
    return tuple(s for s in out if s.text)


def _piece(sentence: Sentence, start: int, end: int) -> Sentence:
    text = sentence.text[start - sentence.start : end - sentence.start]
    lead = len(text) - len(text.lstrip())
    return Sentence(start + lead, start + lead + len(text.strip()), text.strip(), sentence.section)
