"""Which outputs a clause governs: a :class:`~critpt_grader.statement.grammar.Target` placed
on the outputs of one statement.

The rules (strict: when a rule does not apply, the clause governs nothing):

* **In an Outputs entry**, a clause governs that entry's output — unless its noun phrase is
  an input ("E: energy computed with a coupling known to within 1%").
* **An input governs nothing**: a noun phrase opened by ``using``, ``with``, ``for``, ``at``…
  ("using a mass accurate to four significant figures").
* **A description governs nothing** for a precision: "the coupling J is known to within 0.5%"
  says how well J is known, not how the answer is graded. A convention (sign, phase, order) may
  come as a description, but only of an output the clause names or calls the answer ("the
  returned state is defined only up to a global phase").
* **Names, then descriptions.** Each conjunct of the noun phrase ("span and shift") binds the
  outputs it names — by name, as code or math (``$T$``, ``$S/N$``, math from the output's
  description) — or, failing that, the outputs whose description it matches: the same head
  noun and at least two thirds of its content words ("the critical Rayleigh number" ↔
  ``Ra_c: float, critical Rayleigh number``). A clause covers every output it names.
* **The others.** "Other outputs", "the remaining quantities", "the rest" govern, for a
  precision, the outputs no other precision clause names (for a convention, nothing).
* **The answer.** A conjunct made only of generic words ("the answer", "your result", "all
  numerical answers", "both", "it", "this quantity") governs every output.
* **One output.** A directive whose noun phrase names nothing known ("Report each energy …",
  "the energy should be given to …") governs the output when the task has exactly one; with
  several it governs nothing. A subject *allowed* something ("can", "may") must name the
  output, even when there is one: "the Fock basis states can be listed in any order" is about
  the basis, not the returned list.
* **Denied**: a clause the grammar reads as negated ("should not be rounded") governs nothing.
* **The returned object.** A noun phrase that is what the statement returns ("Return the spin
  state …. The spin state is defined up to an overall phase", "w is fixed up to a constant
  factor" after "return the vector w") governs the outputs that returned phrase names, or the
  answer when it alone is returned and the task has one output. "The first entry" governs
  that place of a returned list or tuple.
* **One noun.** A relative clause (", which only needs 2%") or ", with X …" must name an
  output: it never falls back to the one output.
* **Order freedoms** ("in any order") need a verb that places the output ("return", "list",
  "report", "come", "appear"…): "the states may be enumerated in any order" and "compute them in
  any order" describe how work is done.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from critpt_grader.statement import words as W
from critpt_grader.statement.grammar import Mention, Target
from critpt_grader.statement.outputs import Output, OutputSet

Purpose = Literal["precision", "sign", "phase", "order", "requirement"]

# Names a plain word may denote only when written as code or math ("a" is an article).
_WORD_NAMES_EXCLUDED = frozenset(
    {"a", "A", "I", "an", "as", "at", "be", "by", "in", "is", "it", "of", "on", "or", "to"}
)


@dataclass(frozen=True, slots=True)
class Binding:
    """The outputs one clause governs. ``answer``: every output. ``reason`` says why."""

    names: tuple[str, ...] = ()
    answer: bool = False
    reason: str = ""
    others: bool = False  # every output no clause of the same kind names

    @property
    def bound(self) -> bool:
        return self.answer or bool(self.names)


def resolve(target: Target, outputs: OutputSet, purpose: Purpose) -> Binding:
    """The outputs ``target`` governs for a clause of kind ``purpose``."""
    phrase = f"'{target.text}'" if target.text else "the clause"
    if target.negated:
        return Binding(reason=f"sets nothing: the clause denies it ({target.how})")
    if target.mood == "docstring":
        if target.role == "input":
            return Binding(reason=f"sets nothing: {phrase} is an input ({target.how})")
        known = tuple(n for n in target.owners if outputs.named(n) or n in outputs.paths)
        if known:
            return Binding(known, reason=f"in the Outputs entry of {', '.join(known)}")
        if target.owners:
            return Binding(target.owners, reason=f"in the Outputs entry of {target.owners[0]}")
        return Binding(answer=True, reason="in the Outputs section, outside any entry")
    if target.role == "input":
        return Binding(reason=f"sets nothing: {phrase} is an input or a detail ({target.how})")
    if purpose == "order" and target.verb in W.PROCESS:
        return Binding(reason=f"sets nothing: '{target.verb}' says how work is done")
    if purpose == "order" and target.mood == "directive" and not _places(target):
        return Binding(
            reason=f"sets nothing: '{target.verb}' in any order may say how work is done"
        )
    if target.mood == "description" and purpose == "precision":
        return Binding(reason=f"sets nothing: {phrase} is described ({target.how}), not asked for")
    explicit = target.mood != "directive"
    others = [m for m in target.mentions if m.others]
    if others and len(others) == len(target.mentions) and purpose == "precision":
        why = f"'{others[0].text}' are the outputs no other clause names"
        return Binding(others=True, reason=f"{why} ({target.how})")
    names, answer, why = _mentions(target.mentions, outputs, explicit=explicit)
    if names:
        return Binding(names, reason=f"{why} ({target.how})")
    if answer:
        return Binding(answer=True, reason=f"{why} ({target.how})")
    if any(m.inner for m in target.mentions):
        return Binding(reason=f"sets nothing: {phrase} is not reported ({target.how})")
    one = not explicit and outputs.count == 1 and not _permits(target) and not target.must_name
    if not one and not (target.mood == "description" and purpose == "precision"):
        names, answer, why = _returned(target.mentions, outputs)
        if names:
            return Binding(names, reason=f"{why} ({target.how})")
        if answer:
            return Binding(answer=True, reason=f"{why} ({target.how})")
    if target.must_name:
        return Binding(reason=f"sets nothing: {phrase} names no output ({target.how})")
    if (
        target.role == "object"
        and target.mood == "description"
        and purpose != "precision"
        and outputs.count == 1
        and not outputs.returned
    ):
        # "Compute the eigenvector, which is defined up to a sign.": the one thing asked for
        return Binding(
            answer=True, reason=f"{phrase} is what the task asks for: its one output ({target.how})"
        )
    if not explicit and outputs.count == 1 and not _permits(target):
        return Binding(
            answer=True, reason=f"{phrase} is what the task returns: its one output ({target.how})"
        )
    if not explicit and outputs.count == 1:
        return Binding(
            reason=f"sets nothing: {phrase} is allowed it, and names no output ({target.how})"
        )
    if explicit:
        return Binding(reason=f"sets nothing: {phrase} is not an output ({target.how})")
    return Binding(
        reason=f"sets nothing: {phrase} names none of the {outputs.count} outputs ({target.how})"
    )


def _permits(target: Target) -> bool:
    """A subject granted something ("the states *can* be listed in any order", "the solver
    *allows* an error of 1%") rather than asked for ("the energy *should* be given to …"):
    only an output it names may take it."""
    return target.role == "subject" and target.allowed


def _places(target: Target) -> bool:
    return target.verb in W.LISTING or target.verb in W.REPORTING_PARTICIPLE


def _mentions(
    mentions: tuple[Mention, ...], outputs: OutputSet, *, explicit: bool
) -> tuple[tuple[str, ...], bool, str]:
    names: list[str] = []
    reasons: list[str] = []
    answer = ""
    for mention in mentions:
        if mention.inner:
            continue  # "intermediate results", "the input data": not a reported output
        if mention.position is not None:
            member = outputs.member(mention.position)
            if member is not None:
                names.extend(n for n in (member,) if n not in names)
                reasons.append(f"'{mention.text}' is {member}")
            continue
        if mention.generic or (mention.whole and (not explicit or mention.returned)):
            answer = answer or f"'{mention.text}' is the answer"
            continue
        named = _named(mention, outputs)
        if named:
            names.extend(n for n in named if n not in names)
            reasons.append(f"'{mention.text}' names {', '.join(named)}")
            continue
        described = _described(mention, outputs)
        if described:
            names.extend(n for n in described if n not in names)
            reasons.append(f"'{mention.text}' describes {', '.join(described)}")
            continue
        if mention.returned and outputs.count == 1:
            answer = answer or f"'{mention.text}' is the returned output"
    if names:
        return tuple(names), False, "; ".join(reasons)
    return (), bool(answer), answer


def names_of(mention: Mention, outputs: OutputSet) -> tuple[str, ...]:
    """The outputs one mention names: by name or alias, else by description."""
    return _named(mention, outputs) or _described(mention, outputs)


def _returned(
    mentions: tuple[Mention, ...], outputs: OutputSet
) -> tuple[tuple[str, ...], bool, str]:
    """A noun phrase that is what the statement returns ("Return the spin state …. The spin
    state is defined up to an overall phase"): the outputs that returned phrase names, or the
    answer when it alone is returned and the task has one output. A returned phrase among
    others of a tuple that declares no names is placed nowhere, nor is one of two returned
    phrases it could be."""
    found: set[tuple[tuple[str, ...], bool]] = set()
    why = ""
    for mention in mentions:
        if mention.inner or mention.generic or mention.whole or mention.others:
            continue
        for returned in outputs.returned:
            places = returned.declares if len(returned.declares) == len(returned.mentions) else ()
            for index, other in enumerate(returned.mentions):
                if not _same(mention, other):
                    continue
                named = _named(other, outputs) or _described(other, outputs)
                if not named and places and outputs.path(places[index]) is not None:
                    named = (places[index],)  # "Return A and B as a tuple (a, b)"
                if named:
                    found.add((named, False))
                elif len(returned.mentions) == 1 and outputs.count == 1:
                    found.add(((), True))
                else:
                    found.add(((), False))
                why = why or f"'{mention.text}' is what the task returns ('{returned.text}')"
    if len(found) != 1:
        return (), False, ""
    ((names, answer),) = found
    return names, answer, why


def _same(mention: Mention, returned: Mention) -> bool:
    """Two noun phrases for one object: the same name set after its noun ("w", "the vector
    w"), or the same head noun with no content word the returned phrase lacks ("the state",
    "the ground state" for "the ground state of H"; not "the spin state")."""
    if returned.inner or returned.generic or returned.whole or returned.others:
        return False
    if mention.position is not None:
        return False
    head, words = _bare(mention)
    own = mention.label or (mention.strong[0] if len(mention.strong) == 1 and not head else "")
    if own in _WORD_NAMES_EXCLUDED:
        return False
    if own and returned.label:
        return own == returned.label
    if own and not head:
        return False  # a bare name the returned phrase does not carry
    if not head or (head in W.GENERIC_NOUNS and not words):
        return False
    return any(
        mine[0] == theirs[0] and set(mine[1]) <= set(theirs[1]) | {theirs[0]}
        for mine in _readings(mention)
        for theirs in _readings(returned)
    )


def _bare(mention: Mention) -> tuple[str, tuple[str, ...]]:
    """The noun a phrase names its object by, and its content words, without a name set after
    the noun ("the ground state psi" → ``state``)."""
    label = W.stem(mention.label) if mention.label else ""
    words = tuple(w for w in mention.words if w != label)
    head = mention.head
    if label and head == label:
        head = words[-1] if words else ""
    return head, words


def _readings(mention: Mention) -> list[tuple[str, tuple[str, ...]]]:
    """A phrase by its head noun, and, when that noun is the form the object takes, by the
    noun before it: "the ground state vector" is also "the ground state"."""
    head, words = _bare(mention)
    found = [(head, words)]
    things = tuple(w for w in words if w not in W.FORM_NOUNS)
    if head in W.FORM_NOUNS and things:
        found.append((things[-1], things))
    return found


def _named(mention: Mention, outputs: OutputSet) -> tuple[str, ...]:
    found: list[str] = []
    for output in outputs.outputs:
        hit = any(key == output.name or key in output.aliases for key in mention.strong) or any(
            word == output.name and word not in _WORD_NAMES_EXCLUDED for word in mention.names
        )
        if hit:
            found.append(output.name)
    return tuple(found)


def _described(mention: Mention, outputs: OutputSet) -> tuple[str, ...]:
    if not mention.head or (not mention.words and mention.head in W.GENERIC_NOUNS):
        return ()
    words = set(mention.words) | {mention.head}
    needed = -(-2 * len(words) // 3)  # two thirds, rounded up
    best: list[tuple[int, Output]] = []
    for output in outputs.outputs:
        if not output.head or output.head != mention.head:
            continue
        overlap = len(words & (output.words | {output.head}))
        if overlap >= needed:
            best.append((overlap, output))
    if not best:
        return ()
    top = max(score for score, _ in best)
    return tuple(o.name for score, o in best if score == top)
