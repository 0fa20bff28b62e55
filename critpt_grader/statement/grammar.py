"""The clause grammar: what one phrase of a sentence is about.

A phrase ("to three decimal places", "up to an overall sign") modifies something; this module
finds that something — the **target** noun phrase — and how the sentence relates to it. The
grammar is small and closed (word lists in :mod:`critpt_grader.statement.words`):

**Clauses.** A sentence is cut at ``;`` and ``:``, before ``, so|while|whereas|but|although|
though|since|because|hence|thus|then|otherwise``, before a subordinate clause (``, which``,
``where``, ``whose``, ``when``, ``if`` …) that has a verb of its own, and before ``and|then``
followed by a directive verb ("Report the answer in Hartree | and keep two significant
digits"). A parenthetical is its own clause when it has a copula, a modal or starts with a
directive; otherwise it is a modifier of the noun phrase just before it.

**Attachment.** The phrase attaches, in this order of checks, to

1. *the noun phrase before a modifier parenthetical*: "the evolution time $T$ (rounded to the
   nearest integer)", "the critical Rayleigh number (allowing $\\pm 0.5$ error)";
2. *the noun phrase before a post-nominal adjective or participle*: "a mass **accurate** to
   four significant figures", "both **rounded** to 4 decimal places" — unless a copula comes
   first ("J **is known** to within 0.5%": a predicate, 3) or a comma ("…, accurate to 8
   decimal places": the clause's verb, 4);
3. *the subject of a predicate*: "All numerical results **should be given** to four decimal
   places", "the returned vector **is graded** up to an overall sign";
4. *the object of the clause's directive verb*: "**Report** the width with X and the depth
   with Y" (each phrase's object runs back to the verb or to the previous phrase), "**Keep**
   four decimal places for all numerical answers" (an object after the phrase), "Report the
   answer in Hartree and **keep** two significant digits" (no object: the coordinated verb's);
   a question "**What are** A (…) and B (…)?" asks for its noun phrases.

**Roles and moods.** A noun phrase opened by ``using``, ``with``, ``from``, ``for``, ``at``,
``in``, ``where``… is an **input** (a unit after ``in`` is skipped: "E in eV rounded to …"). A
predicate is a **directive** with an imperative reporting verb, a modal with a reporting
participle ("should be given"), a grading participle ("is graded", "are accepted") or a
question; any other predicate ("is known", "is stable", "drifts", "is defined") is a
**description**. A phrase with no verb at all is a **label**.

**Negation, relative clauses, pronouns.** A negator in the verb group or just before the
phrase ("should *not* be rounded", "*without* rounding", "*do not* report") marks the target
``negated``. A relative clause (", *which* only needs 2% accuracy") is about its antecedent
and must name an output (``must_name``) unless that antecedent is the one object of a
directive. A subject that opens with "Note that", "Here", "Since" … starts after it.

**What is returned.** :func:`returned_objects` reads the objects of the returning verbs
("Return the spin state as a list", "… and return it", "return w, the vector of weights",
"Return A and B as a tuple (a, b)") with the names set after a noun (``label``) and the
members an ordinal names ("the first entry": ``position``).

:func:`attach` returns a :class:`Target`; which outputs it governs is decided by
:mod:`critpt_grader.statement.binding`.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from critpt_grader.statement import words as W
from critpt_grader.statement.text import Token, closed, math_key

Mood = Literal["directive", "description", "label", "docstring"]
Role = Literal["object", "subject", "input", "implied", "entry", "none"]

# Skipped between a phrase and the word it hangs on: "accurate *to at least* 8 decimal places".
_FILLERS = closed(
    """to within at least most up only better than with a an of in no more about roughly
    approximately precision accuracy"""
)
_ADVERBS = closed(
    """only exactly precisely also always typically approximately here then now just as very
    highly sufficiently extremely more most reasonably fairly quite"""
)
_UNITS = closed(
    """ev mev kev gev tev k kelvin hz khz mhz ghz thz nm um mm cm m km s ms us ns ps fs j
    hartree hartrees rydberg rydbergs ry db decibel decibels unit units radian radians rad
    degree degrees mpc kpc pc au year years yr yrs light-year light-years t tesla gauss w mw
    kw v mv ma ohm ohms pa kpa bar atm kg g mg amu percent"""
)
_WEAK_STOP = 8  # how many chunks a coordination walk may pass
# Participles by which a width standing as the subject is granted: "… is tolerated".
_GRANTED = closed(
    """tolerated allowed permitted accepted acceptable admissible admitted tolerable fine
    ok okay"""
)
_KEYED = closed("under at for")
_NOT_NAMES = closed("a an as at be by in is it of on or to we us me my")


@dataclass(frozen=True, slots=True)
class Mention:
    """One conjunct of a target noun phrase: "the critical Rayleigh number".

    ``names``: identifiers, code and math in its head (``strong`` when written as code or
    math); ``words``/``head``: its content words and head noun; ``generic``: only words like
    "the answer", "both", "it"; ``returned``: qualified as the reported output."""

    text: str
    names: tuple[str, ...] = ()
    strong: tuple[str, ...] = ()
    words: tuple[str, ...] = ()
    head: str = ""
    generic: bool = False
    returned: bool = False
    whole: bool = False  # "the tuple of …", "a list of …": a value as a whole
    inner: bool = False  # qualified as not reported: "intermediate results", "input data"
    others: bool = False  # "other outputs", "the remaining quantities": those not named
    position: int | None = None  # "the first entry", "the last element": a member by place
    label: str = ""  # a name set after its noun: "the weight vector w" → "w"


IMPLIED = Mention("(the requested answer)", generic=True)


@dataclass(frozen=True, slots=True)
class Target:
    """What a phrase is about. ``how`` says it in words ("object of 'Report'")."""

    text: str
    mentions: tuple[Mention, ...]
    mood: Mood
    role: Role
    how: str
    verb: str = ""  # the governing verb or participle, lower case
    owners: tuple[str, ...] = ()  # the docstring entry it sits in
    allowed: bool = False  # the subject is allowed something ("can be listed", "permits")
    negated: bool = False  # "should not be rounded", "without rounding": the clause denies it
    must_name: bool = False  # a relative clause or a "with" phrase on one noun: never the
    # whole answer unless that noun names it


@dataclass(frozen=True, slots=True)
class Returned:
    """What one returning verb of the statement returns: "Return the spin state as a list"
    → ``the spin state``; "Find the null vector w … and return it" → ``the null vector w``.
    ``mentions`` are its conjuncts in order ("the frequency f, …, and the damping rate");
    ``declares`` the names the same verb gives them ("Return the eigenvector and the
    eigenvalue as a tuple (v, lam)" → ``v``, ``lam``)."""

    verb: str
    text: str
    mentions: tuple[Mention, ...]
    declares: tuple[str, ...] = ()


# --- entry point ---------------------------------------------------------------------------


def attach(
    toks: Sequence[Token],
    i: int,
    j: int,
    others: Sequence[tuple[int, int]],
    raw: str | None = None,
) -> Target:
    """The target of the phrase covering tokens ``[i, j)`` of one sentence's tokens;
    ``others`` are the token spans of the sentence's other phrases of the same lexicon."""
    return Parse(toks, [*others, (i, j)], raw).attach(i, j)


Objects = tuple[tuple[int, tuple[Mention, ...]], ...]


def returned_objects(
    toks: Sequence[Token], raw: str, previous: tuple[Mention, ...] = ()
) -> tuple[tuple[Returned, ...], Objects]:
    """What the returning verbs of one sentence return, and the object of every directive
    verb with the verb's token index (a pronoun after it may stand for it: "Find w. Return
    it.", "Compute the ground state. It is defined …"). ``previous``: the last directive
    object before the sentence."""
    return _Attach(Parse(toks, (), raw), (0, 0)).returned(previous)


def subject(toks: Sequence[Token], i: int, j: int, raw: str | None = None) -> Target:
    """The noun phrase ``[i, j)`` a phrase names inside itself as what it is about ("the
    overall sign of *the eigenvector* is arbitrary"): a subject, described."""
    found = _Attach(Parse(toks, (), raw), (i, j))
    return Target(
        found.text(i, j),
        found.mentions(i, j),
        "description",
        "subject",
        "what the phrase says is free",
        "",
        negated=found.negated_verb(i),
    )


def pronoun(target: Target) -> bool:
    """A subject that is only a pronoun: "It is defined up to a sign", "They may come …"."""
    return (
        target.role == "subject"
        and len(target.mentions) == 1
        and target.mentions[0].text.lower() in W.PRONOUNS
    )


class Parse:
    """One sentence's tokens read once for every phrase in it: the words and punctuation by
    index, the parentheses matched, the phrases' spans, and the walks the grammar makes back
    to a clause's start or on to its end, remembered — so that many phrases in one long
    sentence cost each token a bounded number of steps, not one walk each."""

    def __init__(
        self, toks: Sequence[Token], spans: Sequence[tuple[int, int]], raw: str | None = None
    ) -> None:
        self.toks = toks
        self.raw = raw  # the text the tokens' offsets point into, when known
        n = len(toks)
        self.words = [t.lower if t.kind == "word" else "" for t in toks]
        self.puncts = [t.text if t.kind == "punct" else "" for t in toks]
        self.rendered = [
            f"${t.text}$" if t.kind == "math" and t.text != "¦" else t.text for t in toks
        ]
        # Parentheses: each one's partner (the canonical matching), and the innermost open
        # parenthesis before each index, looking back no further than a "." "?" or "!".
        self.partner: dict[int, int] = {}
        self.enclosing: list[int | None] = [None] * (n + 1)
        stack: list[int] = []
        inner: list[int] = []
        for k, p in enumerate(self.puncts):
            if p == "(":
                stack.append(k)
                inner.append(k)
            elif p == ")":
                if stack:
                    self.partner[k] = stack[-1]
                    self.partner[stack.pop()] = k
                if inner:
                    inner.pop()
            elif p in (".", "?", "!"):
                inner.clear()
            self.enclosing[k + 1] = inner[-1] if inner else None
        # The phrases' spans: how many distinct ones cover each token, and their ends.
        distinct = sorted({(a, b) for a, b in spans if a < b})
        cover = [0] * (n + 1)
        for a, b in distinct:
            cover[max(a, 0)] += 1
            cover[min(b, n)] -= 1
        for k in range(1, n + 1):
            cover[k] += cover[k - 1]
        self.cover = cover
        self.ends = sorted({b for _, b in distinct})
        self.memo: dict[tuple, dict[int, int]] = {}

    def attach(self, i: int, j: int) -> Target:
        """The target of the phrase covering tokens ``[i, j)`` (one of the spans)."""
        return _Attach(self, (i, j)).run(i, j)

    def named_before(
        self, marks: Sequence[int], outputs, names_of: Callable[[Mention], tuple[str, ...]]
    ) -> list[tuple[str, ...]]:
        """For each token index in ``marks``, the outputs named by the noun phrase ending
        before it (see :meth:`Statement.named_before`); ``names_of`` says which outputs one
        mention names (the binding's rule, which sits above this module)."""
        grammar = _Attach(self, (0, 0))
        every = tuple(o.name for o in outputs.outputs if o.name)
        ordered = sorted(marks)
        result: list[tuple[str, ...]] = []
        for p in marks:
            if grammar.punct(p - 1) in ("(", ","):
                p -= 1  # "the gap (in eV)", "the gap, in eV"
            names: list[str] = []
            for _ in range(_WEAK_STOP):
                a, governor = grammar.np_before(p, 0)
                first = bisect.bisect_left(ordered, a)
                if a >= p or (first < len(ordered) and ordered[first] < p):
                    break  # nothing there, or a phrase with a unit of its own
                for mention in grammar.mentions(a, p):
                    if mention.generic or mention.whole:
                        named: tuple[str, ...] = every
                    else:
                        named = names_of(mention)
                    names.extend(n for n in named if n not in names)
                if governor is None or not (
                    grammar.word(governor) in ("and", "or") or grammar.punct(governor) == ","
                ):
                    break
                p = governor
            result.append(tuple(names))
        return result

    def walk(
        self, kind: str, k: int, bound: int, stop, *, forward: bool = False, jump: bool = True
    ) -> int:
        """The first index from ``k`` on (back down to ``bound``, or ``forward`` up to it,
        jumping over parenthesized groups) where ``stop`` holds; past the bound (``bound - 1``
        back, ``bound`` forward) when none does. ``stop`` must depend on the index alone, as
        the answers are remembered per ``(kind, bound)`` for every index a walk passes."""
        memo = self.memo.setdefault((kind, bound), {})
        passed: list[int] = []
        found = bound if forward else bound - 1
        while (k < bound) if forward else (k >= bound):
            known = memo.get(k)
            if known is not None:
                found = known
                break
            passed.append(k)
            p = self.puncts[k]
            if not forward and jump and p == ")":
                k = self.matching_open(k, bound) - 1
                continue
            if forward and jump and p == "(":
                k = self.matching_close(k) + 1
                continue
            if stop(k):
                found = k
                break
            k = k + 1 if forward else k - 1
        for m in passed:
            memo[m] = found
        return found

    def matching_open(self, close: int, floor: int) -> int:
        """The "(" matching the ")" at ``close``, or ``floor`` when it lies before it."""
        found = self.partner.get(close)
        return found if found is not None and found >= floor else floor

    def matching_close(self, open_: int) -> int:
        """The ")" matching the "(" at ``open_``, or the end when it is never closed."""
        found = self.partner.get(open_)
        return found if found is not None and found > open_ else len(self.toks)


class _Attach:
    def __init__(self, parse: Parse, own: tuple[int, int]) -> None:
        self.parse = parse
        self.toks = parse.toks
        self.own = own
        self.raw = parse.raw

    # -- helpers ---------------------------------------------------------------------------

    def word(self, k: int) -> str:
        return self.parse.words[k] if 0 <= k < len(self.toks) else ""

    def punct(self, k: int) -> str:
        return self.parse.puncts[k] if 0 <= k < len(self.toks) else ""

    def text(self, a: int, b: int) -> str:
        if a >= b:
            return ""
        return " ".join(self.parse.rendered[max(a, 0) : b])

    def in_other(self, k: int) -> bool:
        """Whether a phrase other than this one covers token ``k``."""
        if not 0 <= k < len(self.toks):
            return False
        mine = 1 if self.own[0] <= k < self.own[1] else 0
        return self.parse.cover[k] - mine > 0

    def matching_open(self, close: int, floor: int) -> int:
        return self.parse.matching_open(close, floor)

    def matching_close(self, open_: int) -> int:
        return self.parse.matching_close(open_)

    def directive(self, k: int) -> bool:
        """A directive verb at ``k`` (not the noun: "the ground state", "a list")."""
        w = self.word(k)
        if w not in W.DIRECTIVE:
            return False
        before = self.word(k - 1)
        if before in W.DETERMINERS and before not in ("then", "now", "also", "only", "first"):
            return False
        if w in W.AMBIGUOUS and not w.endswith("ing"):
            return k == 0 or bool(self.punct(k - 1)) or before in W.VERB_SLOT
        return True

    def imperative(self, k: int) -> bool:
        return self.directive(k) and not self.word(k).endswith(("ing", "ed"))

    def descriptive(self, k: int) -> bool:
        """A descriptive verb at ``k`` ("the frequency *drifts*"), not the noun it can also
        be: after an article or a directive verb it is the thing named ("Report *drift*")."""
        if self.word(k) not in W.DESCRIPTIVE:
            return False
        before = self.word(k - 1)
        return not (before in W.DETERMINERS or self.directive(k - 1))

    def is_predicate(self, k: int) -> bool:
        w = self.word(k)
        return bool(w) and (w in W.COPULA or w in W.MODAL or self.descriptive(k))

    def has_predicate(self, a: int, b: int) -> bool:
        n = len(self.toks)
        first = self.parse.walk(
            "predicate",
            max(a, 0),
            n,
            lambda k: self.is_predicate(k) or self.directive(k),
            forward=True,
            jump=False,
        )
        return first < min(b, n)

    # -- clauses ---------------------------------------------------------------------------

    def enclosing_paren(self, i: int) -> tuple[int, int] | None:
        k = self.parse.enclosing[i] if 0 <= i <= len(self.toks) else None
        return None if k is None else (k, self.matching_close(k))

    def paren_is_clause(self, a: int, b: int) -> bool:
        n = len(self.toks)
        first = self.parse.walk(
            "word", a + 1, n, lambda k: self.toks[k].kind == "word", forward=True, jump=False
        )
        if first < b and self.imperative(first):
            return True
        copula = self.parse.walk(
            "copula_or_modal",
            a + 1,
            n,
            lambda k: self.word(k) in W.COPULA or self.word(k) in W.MODAL,
            forward=True,
            jump=False,
        )
        return copula < b

    def clause_start(self, i: int, floor: int) -> tuple[int, int | None]:
        """Where the clause holding token ``i`` starts, and the token index of a coordinated
        directive clause before it ("… and keep …": the "and"), if any."""
        k = self.parse.walk("clause_start", i - 1, floor, self._starts_clause)
        if k < floor:
            return floor, None
        p, w = self.punct(k), self.word(k)
        if p in (";", ":") or p == "(":
            return k + 1, None
        if p == ",":
            return k + 2, None  # the conjunction itself is no part of either clause
        if w in ("and", "then") and self.imperative(k + 1):
            return k + 1, k
        return k, None

    def _starts_clause(self, k: int) -> bool:
        """Whether the walk back from a phrase stops at ``k`` (see :meth:`clause_start`)."""
        p, w = self.punct(k), self.word(k)
        if p in (";", ":") or p == "(":
            return True
        if p == "," and (self.word(k + 1) in W.SPLIT_AFTER_COMMA):
            return True
        if w in ("and", "then") and self.imperative(k + 1):
            return True
        return w in W.SUBORDINATORS and self.has_predicate(
            k + 1, self.clause_end(k + 1, len(self.toks), subordinate=True)
        )

    def clause_end(self, j: int, ceiling: int, *, subordinate: bool = False) -> int:
        """Where the clause holding token ``j`` ends; a subordinate clause ("If two
        orderings define the same operator up to a sign, …") also ends at a comma."""
        kind = "clause_end_subordinate" if subordinate else "clause_end"
        return self.parse.walk(
            kind, j, ceiling, lambda k: self._ends_clause(k, subordinate), forward=True
        )

    def _ends_clause(self, k: int, subordinate: bool) -> bool:
        p, w = self.punct(k), self.word(k)
        if subordinate and p == ",":
            return True
        if p in (";", ":", ".", "?", "!", ")"):
            return True
        if p == "," and (
            self.word(k + 1) in W.SPLIT_AFTER_COMMA or self.word(k + 1) in W.SUBORDINATORS
        ):
            return True
        return w in ("and", "then") and self.imperative(k + 1)

    # -- attachment ------------------------------------------------------------------------

    def run(self, i: int, j: int) -> Target:
        target = self.attach(i, j)
        if not target.negated and self.negated_before(i):
            target = replace(target, negated=True)
        return target

    def negated_before(self, i: int) -> bool:
        """A negator just before the phrase: "*not* rounded to …", "*without* rounding to …",
        "Do *not* round to …"."""
        k = i - 1
        while k >= 0 and (self.word(k) in _FILLERS or self.word(k) in _ADVERBS):
            if W.negative(self.word(k)):
                return True
            k -= 1
        return W.negative(self.word(k))

    def negated_verb(self, v: int) -> bool:
        """A negator in the verb group before the verb at ``v``: "do *not* report", "you
        should *never* give", "*don't* round"."""
        k = v - 1
        while k >= 0 and (
            W.negative(self.word(k))
            or self.word(k) in W.MODAL
            or self.word(k) in W.COPULA
            or self.word(k) in _ADVERBS
            or self.word(k) in ("do", "does", "did", "please", "you", "to")
        ):
            if W.negative(self.word(k)):
                return True
            k -= 1
        return False

    def attach(self, i: int, j: int) -> Target:
        paren = self.enclosing_paren(i)
        if paren is not None and not self.paren_is_clause(*paren):
            start, _ = self.clause_start(paren[0], 0)
            np_start, governor = self.np_before(paren[0], start, high=True)
            return self.noun_target(np_start, paren[0], governor, start, "before a parenthesis")
        floor = paren[0] + 1 if paren else 0
        ceiling = paren[1] if paren else len(self.toks)
        start, coordinated = self.clause_start(i, floor)
        end = self.clause_end(j, ceiling, subordinate=self.word(start) in W.SUBORDINATORS)

        lead = i - 1
        while lead >= start and self.word(lead) in _FILLERS:
            lead -= 1
        # the phrase itself may open with a participle: "rounded to the nearest integer"
        own = self.word(i) if self.word(i) in W.POSTNOMINAL else ""
        adjective = lead if self.word(lead) in W.POSTNOMINAL else (i if own else -1)
        if adjective >= start:
            before = adjective - 1
            while before >= start and self.word(before) in _ADVERBS:
                before -= 1
            if self.word(before) in ("each", "both", "all") and (
                self.word(before - 1) in W.COPULA or self.word(before - 1) in W.MODAL
            ):
                before -= 1  # a floating quantifier: "the states are each defined up to …"
            if self.word(before) in W.COPULA or self.word(before) in W.MODAL:
                return self.predicate_target(before, start, self.word(adjective))
            if self.punct(before) != ",":
                np_start, governor = self.np_before(adjective, start)
                return self.noun_target(
                    np_start, adjective, governor, start, f"'{self.toks[adjective].text}'"
                )
            i = adjective  # ", accurate to …": it qualifies what the clause's verb governs
        return self.adverbial(i, j, start, end, coordinated)

    def adverbial(self, i: int, j: int, start: int, end: int, coordinated: int | None) -> Target:
        np_start, governor = self.np_before(i, start)
        if (
            np_start < i
            and governor is not None
            and self.word(governor) == "with"
            and self.punct(governor - 1)
            and any(self.word(k) not in W.DETERMINERS for k in range(np_start, i))
        ):
            # "…, with psi up to a global phase": the phrase qualifies psi alone
            found = self.adverbial(governor, governor, start, governor - 1, coordinated)
            if found.mood == "directive":
                how = f"'with' {self.text(np_start, i)}, in the {found.how}"
                return Target(
                    self.text(np_start, i),
                    self.mentions(np_start, i),
                    "directive",
                    "object",
                    how,
                    found.verb,
                    negated=found.negated,
                    must_name=True,
                )
        if (
            np_start < i
            and governor is not None
            and self.word(governor) in W.INPUT_PARTICIPLES
            and self.word(governor) != "with"
            and self.word(np_start) not in ("in", "per")
        ):
            # "…, knowing the pressure to 3 decimal places": the precision of an input
            tok = self.toks[governor].text
            return Target(
                self.text(np_start, i),
                self.mentions(np_start, i),
                "description",
                "input",
                f"opened by '{tok}'",
                self.word(governor),
            )
        k = self.parse.walk("verb", i - 1, start, self._verb)
        if k >= start:
            w = self.word(k)
            if self.directive(k):
                return self.directive_target(k, i, j, end, coordinated)
            if w in W.COPULA or w in W.MODAL:
                return self.predicate_target(k, start, self.participle_after(k, i), limit=i)
            if w in W.GRANTING and not self.directive(k - 1):
                np_start, _ = self.np_before(k, start)
                return Target(
                    self.text(np_start, k),
                    self.mentions(np_start, k),
                    "directive",
                    "subject",
                    f"subject of '{self.toks[k].text}'",
                    w,
                    allowed=True,
                )
            if self.descriptive(k):
                np_start, _ = self.np_before(k, start)
                return Target(
                    self.text(np_start, k),
                    self.mentions(np_start, k),
                    "description",
                    "subject",
                    f"subject of '{self.toks[k].text}'",
                    w,
                )
        granted = self.granted(i, j, start, end)
        if granted is not None:
            return granted
        # fronted: "To three decimal places, report the energy." (only a phrase that opens
        # its clause; elsewhere an unknown verb stands before it: "… define X up to a sign")
        fronted = all(self.word(k) in _FILLERS or self.punct(k) for k in range(start, i))
        for k in range(j, end if fronted else j):
            if self.imperative(k):
                return self.directive_target(k, end, end, end, None, after_only=True)
        text = self.text(start, i) or self.text(j, end)
        member = self.bare_member(start, i)
        if member is not None:
            # "…; the first entry within 2%, …", "(k, omega); k to 2 significant figures": a
            # member of the answer named alone before the phrase labels it
            return Target(
                self.text(*member), self.mentions(*member), "label", "subject", "no verb", ""
            )
        # No verb the grammar knows: an unknown one may stand there ("We measured the energy
        # to within 0.1%"), so the clause is read as a description, never as a request.
        return Target(text, self.mentions(start, i), "description", "none", "no known verb", "")

    def granted(self, i: int, j: int, start: int, end: int) -> Target | None:
        """A phrase that is itself the subject of a grant: "A deviation of 5 meV is
        tolerated", "an error of up to 0.5 K in T_c is acceptable". What follows the phrase
        up to the copula is its unit (at most three tokens), then perhaps what it is about
        ("in T_c", "for the gap", "on E": granted to that, which must name an output);
        without it the grant is the requested answer's. Only a phrase that opens its clause
        (after determiners) and only a plain grant: "no …", "is not tolerated" grant nothing.
        """
        before = [self.word(k) for k in range(start, i)]
        if not all(w in W.DETERMINERS or w in _FILLERS for w in before) or "no" in before:
            return None
        copula = next((k for k in range(j, min(end, j + 12)) if self.word(k) in W.COPULA), None)
        if copula is None:
            return None
        about = next(
            (k for k in range(j, copula) if self.word(k) in ("in", "for", "on", "of", "at")), None
        )
        if (about if about is not None else copula) - j > 3:
            return None  # more than a unit between the width and its verb
        participle = self.participle_after(copula, end)
        said = [self.word(k) for k in range(copula, end)]
        if participle not in _GRANTED or any(w in ("not", "never") for w in said[:4]):
            return None
        verb = f"{self.toks[copula].text} {participle}"
        if about is not None and about + 1 < copula:
            return Target(
                self.text(about + 1, copula),
                self.mentions(about + 1, copula),
                "directive",
                "subject",
                f"granted by '{verb}' to '{self.text(about + 1, copula)}'",
                participle,
                allowed=True,
            )
        return Target(
            "",
            (IMPLIED,),
            "directive",
            "implied",
            f"a width granted by '{verb}': the requested answer",
            participle,
        )

    def _verb(self, k: int) -> bool:
        """Whether the walk back from a phrase to its verb stops at ``k`` (a directive, a
        copula or modal, a granting or a descriptive verb: see :meth:`adverbial`)."""
        w = self.word(k)
        return (
            self.directive(k)
            or w in W.COPULA
            or w in W.MODAL
            or (w in W.GRANTING and not self.directive(k - 1))
            or self.descriptive(k)
        )

    def bare_member(self, start: int, i: int) -> tuple[int, int] | None:
        """The span of a clause that is only a member before the phrase: an ordinal one ("the
        first entry") or one name (``k``, ``$\\omega$``); ``None`` for anything else ("We
        measured the energy")."""
        b = i
        while b > start and (self.word(b - 1) in _FILLERS or self.punct(b - 1) == ","):
            b -= 1
        a = start
        while a < b and self.word(a) in ("and", "or"):
            a += 1
        if a >= b:
            return None
        found = self.mentions(a, b)
        if len(found) != 1 or any(self.punct(k) for k in range(a, b)):
            return None
        if found[0].position is not None:
            return a, b
        span = [t for t in self.toks[a:b] if not (t.kind == "word" and t.lower in W.DETERMINERS)]
        if len(span) == 1 and _name_like(span[0]) and span[0].lower not in _NOT_NAMES:
            return a, b
        return None

    def participle_after(self, k: int, limit: int) -> str:
        """The participle or verb of a copula/modal chain starting at ``k``."""
        m = self.parse.walk(
            "participle", k + 1, len(self.toks), self._participle, forward=True, jump=False
        )
        return self.word(m) if m < limit else ""

    def _participle(self, m: int) -> bool:
        w = self.word(m)
        return not (not w or w in W.COPULA or w in W.MODAL or w in _ADVERBS or w in ("to", "not"))

    def predicate_target(
        self, k: int, start: int, participle: str, limit: int | None = None
    ) -> Target:
        """The subject of the copula/modal chain that ends at ``k``."""
        chain = k
        while chain - 1 >= start and (
            self.word(chain - 1) in W.COPULA
            or self.word(chain - 1) in W.MODAL
            or self.word(chain - 1) in _ADVERBS
            or self.word(chain - 1) in ("not", "to", "has", "have")
            or W.negative(self.word(chain - 1))
        ):
            chain -= 1
        modal = any(
            self.word(m) in W.MODAL or _modal_contraction(self.word(m)) for m in range(chain, k + 1)
        ) or self.word(chain - 1) in ("please",)
        allowed = any(self.word(m) in W.PERMISSION for m in range(chain, k + 1))
        negated = any(W.negative(self.word(m)) for m in range(chain, k + 1))
        if self.relative(chain - 1):
            return replace(
                self.antecedent_target(chain - 1, k, participle, modal, allowed),
                negated=negated,
            )
        question = self.word(chain - 1) in W.QUESTION
        if question:
            # "What is the value of J (…)": the question asks for what follows the copula
            stop = len(self.toks) if limit is None else limit
            end = self.parse.walk(
                "asked",
                k + 1,
                len(self.toks),
                lambda m: self.punct(m) in ("(", ",", "?"),
                forward=True,
                jump=False,
            )
            end = min(end, stop)
            return Target(
                self.text(k + 1, end),
                self.mentions(k + 1, end),
                "directive",
                "object",
                f"asked for by '{self.toks[chain - 1].text} {self.toks[k].text}'",
                "what",
            )
        np_start, governor = self.np_before(chain, start)
        if (
            governor is not None
            and self.word(governor) in ("and", "or")
            and any(self.word(m) in ("are", "were") for m in range(chain, k + 1))
        ):
            # "c_0 and c_1 are defined up to a global phase": a coordinated subject
            first, before = self.np_before(governor, start)
            if first < governor and (before is None or self.punct(before) in (",", ";", ":")):
                np_start, governor = first, before
        asks = _asks(participle, modal)
        words = " ".join(t.text for t in self.toks[chain : k + 1])
        verb = f"{words} {participle}".strip() if participle and participle not in words else words
        mentions = self.mentions(np_start, chain)
        if not mentions and modal:
            mentions = (IMPLIED,)  # "Please be as accurate as possible"
        role: Role = "subject"
        if (
            governor is not None
            and self.word(governor) in W.INPUT_OPENERS
            and self.word(governor) not in W.SUBORDINATORS
        ):
            role = "input"
        return Target(
            self.text(np_start, chain),
            mentions,
            "directive" if asks else "description",
            role,
            f"subject of '{verb}'",
            participle or self.word(k),
            allowed=allowed,
            negated=negated,
        )

    def relative(self, r: int) -> bool:
        """A relative pronoun after a noun phrase ("the frequency f, *which* only needs 2%
        accuracy"), not a question ("*Which* is …?")."""
        if self.word(r) not in ("which", "who", "that") or r < 1:
            return False
        before = r - 1
        if self.punct(before) in (",", "("):
            before -= 1
        tok = self.toks[before] if 0 <= before < len(self.toks) else None
        if tok is None or (tok.kind == "punct" and tok.text != ")"):
            return False
        w = self.word(before)
        return not (w in W.DETERMINERS or w in W.COPULA or w in W.MODAL or self.directive(before))

    def antecedent_target(
        self, r: int, k: int, participle: str, modal: bool, allowed: bool
    ) -> Target:
        """A relative clause on one noun phrase: the phrase is about that noun phrase, and only
        the outputs it names take it ("the frequency f, which only needs 2% accuracy, and the
        damping rate …" loosens f, never the damping rate). The whole object of a directive
        ("Compute the gap, which should be given to 3 decimal places.") is asked for as any
        object is."""
        b = r - 1 if self.punct(r - 1) in (",", "(") else r
        a, governor = self.np_before(b, 0)
        sole = (
            governor is not None
            and self.directive(governor)
            and self.word(governor - 1) not in ("and", "or")
            and not self.coordinated_after(r)
        )
        asks = _asks(participle, modal)
        role: Role = "subject"
        if (
            governor is not None
            and (
                self.word(governor) in W.STRONG_INPUT or self.word(governor) in W.INPUT_PARTICIPLES
            )
            and self.word(governor) not in W.SUBORDINATORS
            and self.word(governor - 1) not in W.CONTAINERS  # "a list with the frequency f, …"
        ):
            role = "input"
        verb = " ".join(t.text for t in self.toks[r + 1 : k + 1])
        return Target(
            self.text(a, b),
            self.mentions(a, b),
            "directive" if asks else "description",
            "object" if sole and role == "subject" else role,
            f"antecedent of '{self.toks[r].text} {verb}'",
            participle or self.word(k),
            allowed=allowed,
            must_name=not sole,
        )

    def coordinated_after(self, r: int) -> bool:
        """Another noun phrase joined after the relative clause at ``r``: "…, which …, *and*
        the damping rate"."""
        k = r + 1
        while k < len(self.toks) and self.punct(k) not in (",", ")", ".", ";", ":", "?", "!"):
            if self.word(k) in ("and", "or") and self.word(k + 1) in W.DETERMINERS:
                return True  # "… which only needs 2% accuracy and the damping rate"
            k += 1
        if self.punct(k) not in (",", ")"):
            return False
        k += 1
        while self.punct(k) == ",":
            k += 1
        return self.word(k) in ("and", "or", "plus") or (
            bool(self.word(k)) and self.word(k) in W.DETERMINERS
        )

    def directive_target(
        self,
        v: int,
        i: int,
        j: int,
        end: int,
        coordinated: int | None,
        *,
        after_only: bool = False,
    ) -> Target:
        target = self._directive_target(v, i, j, end, coordinated, after_only=after_only)
        if self.negated_verb(v):
            return replace(target, negated=True)
        return target

    def _directive_target(
        self,
        v: int,
        i: int,
        j: int,
        end: int,
        coordinated: int | None,
        *,
        after_only: bool = False,
    ) -> Target:
        verb = self.toks[v].text
        a = v + 1
        # "the width with X and the depth with Y": from the end of a phrase before this one
        ends = self.parse.ends
        at = bisect.bisect_right(ends, i) - 1
        if at >= 0 and v < ends[at]:
            a = max(a, ends[at])
        b = i
        while b > a and (self.word(b - 1) in _FILLERS or self.punct(b - 1) == ","):
            b -= 1
        while a < b and (self.word(a) in ("and", "or") or self.punct(a) == ","):
            a += 1
        if not after_only and a < b:
            return Target(
                self.text(a, b),
                self.mentions(a, b),
                "directive",
                "object",
                f"object of '{verb}'",
                verb.lower(),
            )
        # no object before the phrase: "Keep N decimal places for all numerical answers"
        c = j
        while c < end and self.word(c) in ("in", "for", "of", "on", "to"):
            c += 1
        d = c
        while (
            d < end
            and not self.punct(d)
            and not self.in_other(d)
            and self.word(d) not in W.SUBORDINATORS
        ):
            d += 1
        if c < d:
            return Target(
                self.text(c, d),
                self.mentions(c, d),
                "directive",
                "object",
                f"object of '{verb}'",
                verb.lower(),
            )
        if coordinated is not None:
            inherited = self.coordinated_object(coordinated)
            if inherited is not None:
                text, mentions, other = inherited
                return Target(
                    text,
                    mentions,
                    "directive",
                    "object",
                    f"object of '{other}', coordinated with '{verb}'",
                    verb.lower(),
                )
        return Target(
            "",
            (IMPLIED,),
            "directive",
            "implied",
            f"'{verb}' with no object: the requested answer",
            verb.lower(),
        )

    def coordinated_object(self, conj: int) -> tuple[str, tuple[Mention, ...], str] | None:
        start, _ = self.clause_start(conj, 0)
        n = len(self.toks)
        v = self.parse.walk("directive", start, n, self.directive, forward=True, jump=False)
        while v < conj:
            a, b = v + 1, conj
            while b > a and self.punct(b - 1) == ",":
                b -= 1
            if a < b:
                return self.text(a, b), self.mentions(a, b), self.toks[v].text
            v = self.parse.walk("directive", v + 1, n, self.directive, forward=True, jump=False)
        return None

    # -- the returned object ---------------------------------------------------------------

    def returning(self, k: int) -> bool:
        """A returning verb at ``k``: "Return …", "… and return it", "The function returns
        …" (not "the return value")."""
        w = self.word(k)
        if w not in W.RETURNING_VERBS:
            return False
        if self.directive(k):
            return True
        before = self.word(k - 1)
        return (
            w.endswith("s")
            and bool(before)
            and before not in W.DETERMINERS
            and before not in W.INPUT_OPENERS
        )

    def returned(self, previous: tuple[Mention, ...]) -> tuple[tuple[Returned, ...], Objects]:
        found: list[Returned] = []
        objects: list[tuple[int, tuple[Mention, ...]]] = []
        last = previous
        for k in range(len(self.toks)):
            returning = self.returning(k)
            if not (returning or self.directive(k)):
                continue
            spans = self.object_spans(k + 1)
            mentions = tuple(m for a_, b_ in spans for m in self.mentions(a_, b_))
            text = " ".join(self.text(a_, b_) for a_, b_ in spans)
            if len(mentions) == 1 and mentions[0].text.lower() in W.PRONOUNS:
                mentions, text = last, " and ".join(m.text for m in last)
            elif len(spans) == 1 and self.apposition(*spans[0]):
                # "return w, the vector of weights": one object, named and described
                name, described = mentions
                mentions = (replace(described, label=name.label or name.text),)
            if not mentions:
                continue
            if returning and not self.negated_verb(k):
                declares = self.declared_after(spans[-1][1]) if spans else ()
                found.append(Returned(self.toks[k].text.lower(), text, mentions, declares))
            last = mentions
            objects.append((k, mentions))
        return tuple(found), tuple(objects)

    def apposition(self, a: int, b: int) -> bool:
        """``w, the vector of weights``: a name, a comma and a described noun phrase."""
        if b - a < 3 or self.punct(a + 1) != "," or not _name_like(self.toks[a]):
            return False
        if self.toks[a].kind == "word" and self.toks[a].lower in _NOT_NAMES | W.GENERIC:
            return False
        rest = range(a + 2, b)
        return self.word(a + 2) in W.DETERMINERS and not any(
            self.punct(k) or self.word(k) in ("and", "or", "plus") for k in rest
        )

    def object_spans(self, a: int) -> list[tuple[int, int]]:
        """The object after a verb, as token spans: up to "as", "in", "with", a clause end or
        a coordinated verb; a relative clause inside (", which …,") is left out, and "a list
        of"/"a tuple with" before the members is skipped."""
        n = len(self.toks)
        k = a
        while k < n and self.word(k) in W.DETERMINERS:
            k += 1
        if k + 1 < n and self.word(k) in W.CONTAINERS and self.punct(k + 1) in ("[", "("):
            # "the list [c1, c2] of coefficients": what the members are
            close = self.matching_close(k + 1) if self.punct(k + 1) == "(" else k + 1
            while self.punct(k + 1) == "[" and close < n and self.punct(close) != "]":
                close += 1
            if self.word(close + 1) == "of":
                k = close
        if (
            k + 1 < n
            and (self.word(k) in W.CONTAINERS or self.punct(k) in (")", "]"))
            and self.word(k + 1) in ("of", "with", "containing", "holding")
        ):
            a = k + 2
        spans: list[tuple[int, int]] = []
        start = b = a
        while b < n:
            p, w = self.punct(b), self.word(b)
            if p == "(" and self.word(b + 1) in ("which", "who", "whose"):
                spans.append((start, b))  # "the frequency f (which needs only 2%) and …"
                start = b = self.matching_close(b) + 1
                continue
            if p in (".", ";", ":", "?", "!", "(", "[", ")", "]"):
                break
            if p == ",":
                nxt = self.word(b + 1)
                if nxt in ("which", "who", "whose"):
                    close = next(
                        (m for m in range(b + 1, n) if self.punct(m) in (",", ".", ";", ":")),
                        n,
                    )
                    if close >= n or self.punct(close) != ",":
                        break
                    spans.append((start, b))
                    start = b = close
                    continue
                if nxt in W.SPLIT_AFTER_COMMA or nxt in W.SUBORDINATORS:
                    break
            if w in ("which", "that", "who") and b > start:
                # "the frequency f which only needs 2% and the damping rate": the object
                # goes on after the relative clause
                again = next(
                    (
                        m
                        for m in range(b + 1, n)
                        if self.punct(m) in (".", ";", ":", "?", "!")
                        or (self.word(m) in ("and", "or") and self.word(m + 1) in W.DETERMINERS)
                    ),
                    n,
                )
                if again < n and self.word(again) in ("and", "or"):
                    spans.append((start, b))
                    start = b = again
                    continue
                break
            if w in W.OBJECT_STOP:
                break
            if w in W.OBJECT_PARTICIPLES and b > start and self.word(b - 1) not in W.DETERMINERS:
                break
            if w in ("and", "then") and (self.imperative(b + 1) or self.word(b + 1) == "then"):
                break
            b += 1
        spans.append((start, b))
        trimmed = []
        for x, y in spans:
            while y > x and self.punct(y - 1) == ",":
                y -= 1
            if x < y:
                trimmed.append((x, y))
        return trimmed

    def declared_after(self, b: int) -> tuple[str, ...]:
        """Names a returning verb gives right after its object: "… as a tuple (v, lam)",
        "… as a list [a, b]", "… (E, psi)"."""
        k = b
        while self.punct(k) == ",":
            k += 1
        if self.word(k) == "as":
            k += 1
            while self.word(k) in W.DETERMINERS or self.word(k) in ("python", "plain"):
                k += 1
            if self.word(k) not in W.CONTAINERS:
                return ()
            k += 1
        if self.punct(k) not in ("(", "["):
            return ()
        close = ")" if self.punct(k) == "(" else "]"
        names: list[str] = []
        m = k + 1
        while m < len(self.toks) and self.punct(m) != close:
            tok = self.toks[m]
            if tok.kind in ("word", "math", "code"):
                names.append(math_key(tok.text) if tok.kind != "word" else tok.text)
            elif tok.text != ",":
                return ()
            m += 1
        return tuple(names) if len(names) > 1 else ()

    # -- noun phrases ----------------------------------------------------------------------

    def np_before(self, p: int, floor: int, *, high: bool = False) -> tuple[int, int | None]:
        """The noun phrase ending just before token ``p``: its first token and the token it
        hangs on (``None`` at the clause start). A post-nominal adjective attaches to the
        nearest noun (any preposition ends the phrase: "the energy for **a mass** accurate
        to …"); a parenthetical (``high``) to the whole phrase, through ``in``, ``at``,
        ``of``, ``for``… ("**the energy at the critical point** (4 decimal places)")."""
        start, governor = self._np_before(p, floor, high=high)
        # "Note that the eigenvector …", "Here w …": an opener is no part of the subject
        while start < p - 1 and self.word(start) in W.SUBJECT_OPENERS:
            start += 1
        return start, governor

    def _np_before(self, p: int, floor: int, *, high: bool) -> tuple[int, int | None]:
        k = p - 1
        while k >= floor:
            if self.in_other(k):
                return k + 1, k
            p_, w = self.punct(k), self.word(k)
            if p_ == ")":
                k = self.matching_open(k, floor) - 1
                continue
            if p_ == "]":
                k = self.matching_bracket(k, floor) - 1  # "result['m'] is defined …"
                continue
            if p_:
                return k + 1, k
            if w in ("in", "per") and self.is_unit(k + 1, p):
                k -= 1
                continue
            if w == "with" and self.lists_members(k + 1):
                k -= 1  # "a dict with exactly the keys …" describes the output itself
                continue
            if w in _KEYED and self.keyed(k):
                k -= 1  # "the entry under 'm'": a member of the answer, not an input
                continue
            if self.you_return(k) and k - 2 >= floor:
                k -= 2  # "the eigenvector you return is …": a contact clause
                continue
            if (
                self.directive(k)
                or w in W.COPULA
                or w in W.MODAL
                or w in W.SUBORDINATORS
                or w in W.COORDINATORS
                or (w in W.STRONG_INPUT if high else (w in W.INPUT_OPENERS and w != "of"))
                or w in W.INPUT_PARTICIPLES
                or self.descriptive(k)
            ):
                return k + 1, k
            k -= 1
        return floor, None

    def you_return(self, k: int) -> bool:
        """``you return`` after a noun: "the eigenvector *you return*"."""
        before = self.toks[k - 2] if k >= 2 else None
        return (
            self.word(k) in W.RETURNING_VERBS
            and self.word(k - 1) in ("you", "we")
            and before is not None
            and before.kind != "punct"
            and self.word(k - 2) not in W.MODAL
            and self.word(k - 2) not in W.VERB_SLOT
        )

    def matching_bracket(self, close: int, floor: int) -> int:
        for k in range(close, floor - 1, -1):
            if self.punct(k) == "[":
                return k
        return floor

    def keyed(self, k: int) -> bool:
        """``under``/``at``/``for`` between a member noun and one name: "the value under
        'm'", "the entry for key m"."""
        before = self.word(k - 1)
        if before not in W.MEMBER_NOUNS:
            return False
        after = k + 1
        if self.word(after) in ("key", "the"):
            after += 1
        tok = self.toks[after] if after < len(self.toks) else None
        if tok is None or tok.kind not in ("word", "math", "code"):
            return False
        return (
            after + 1 >= len(self.toks)
            or bool(self.punct(after + 1))
            or (self.word(after + 1) in W.COPULA or self.word(after + 1) in W.MODAL)
        )

    def lists_members(self, a: int) -> bool:
        for k in range(a, min(a + 3, len(self.toks))):
            w = self.word(k)
            if w in ("keys", "entries", "elements", "components", "members", "fields"):
                return True
            if w not in ("exactly", "the", "following"):
                return False
        return False

    def is_unit(self, a: int, b: int) -> bool:
        span: list[Token] = []
        for k in range(max(a, 0), min(b, len(self.toks))):
            t = self.toks[k]
            if not (t.kind == "word" and t.lower in ("of", "the")):
                span.append(t)
                if len(span) > 3:
                    return False
        if not span:
            return False
        first = span[0]
        if first.kind == "word" and first.lower in ("unit", "units"):
            return True
        return all(
            (t.kind == "word" and (t.lower in _UNITS or t.lower.replace("-", "") in _UNITS))
            or (t.kind == "math" and len(math_key(t.text)) <= 6)
            for t in span
        )

    def noun_target(self, a: int, b: int, governor: int | None, start: int, where: str) -> Target:
        """A noun phrase ``[a, b)`` found before a modifier; its role comes from what it
        hangs on, following a list ("A, B and C") back to its first member."""
        text = self.text(a, b)
        mentions = self.mentions(a, b)
        g = governor
        for _ in range(_WEAK_STOP):
            if g is None or not (self.word(g) in ("and", "or") or self.punct(g) == ","):
                break
            g = self.np_before(g, start, high=True)[1]
        if g is None or self.punct(g) in (";", ":", "(", ",") or self.word(g) in ("and", "or"):
            return self.subject_of_clause(a, b, text, mentions, where)
        w, tok = self.word(g), self.toks[g].text
        if self.directive(g):
            return Target(text, mentions, "directive", "object", f"object of '{tok}' ({where})", w)
        if w in W.COPULA and self.word(g - 1) in W.QUESTION:
            asked = f"asked for by '{self.toks[g - 1].text} {tok}' ({where})"
            return Target(text, mentions, "directive", "object", asked, "what")
        if w in W.INPUT_OPENERS or w in W.SUBORDINATORS:
            return Target(text, mentions, "description", "input", f"opened by '{tok}' ({where})", w)
        return Target(text, mentions, "description", "subject", f"after '{tok}' ({where})", w)

    def subject_of_clause(
        self, a: int, b: int, text: str, mentions: tuple[Mention, ...], where: str
    ) -> Target:
        """A noun phrase that opens its clause: the mood comes from the clause's verb."""
        k = self.parse.walk(
            "subject_verb",
            b,
            len(self.toks),
            lambda m: (
                self.punct(m) in (";", ":", ".", "?", "!")
                or self.word(m) in W.COPULA
                or self.word(m) in W.MODAL
            ),
            forward=True,
            jump=False,
        )
        if k < len(self.toks) and not self.punct(k):  # a copula or a modal
            found = self.predicate_target(k, a, self.participle_after(k, len(self.toks)))
            how = f"{found.how} ({where})"
            return Target(text, mentions, found.mood, "subject", how, found.verb)
        return Target(text, mentions, "label", "subject", f"no verb ({where})", "")

    def mentions(self, a: int, b: int) -> tuple[Mention, ...]:
        found: list[Mention] = []
        chunk: list[Token] = []
        listed: list[str] = []
        k = a
        while k < b:
            tok = self.toks[k]
            if tok.kind == "punct" and tok.text == "(":
                close = min(self.matching_close(k), b)
                # "the Chern numbers (C1, C2, C3)" lists the members it means; any other
                # parenthetical remark names nothing
                listed.extend(_listed_names(self.toks[k + 1 : close]))
                k = close + 1
                continue
            if (tok.kind == "punct" and tok.text == ",") or tok.is_word("and", "or", "plus"):
                if chunk:
                    found.append(_mention(chunk, listed, self.raw))
                chunk, listed = [], []
            elif tok.kind != "punct":
                chunk.append(tok)
            k += 1
        if chunk:
            found.append(_mention(chunk, listed, self.raw))
        return tuple(m for m in found if m.text)


def _modal_contraction(word: str) -> bool:
    """ "shouldn't", "mustn't", "needn't": a modal with its negation."""
    return word.endswith(("n't", "n’t")) and word[:-3] in W.MODAL


def _listed_names(inner: Sequence[Token]) -> list[str]:
    """The names of a parenthetical that is only a list of names: ``(C1, C2, C3)``."""
    items = [t for t in inner if not (t.kind == "punct" and t.text == ",")]
    if len(items) < 2 or len(items) * 2 - 1 != len(inner):
        return []
    if not all(
        t.kind in ("math", "code") or (t.kind == "word" and t.lower not in W.DETERMINERS)
        for t in items
    ):
        return []
    return [math_key(t.text) for t in items]


def _mention(chunk: list[Token], listed: Sequence[str] = (), raw: str | None = None) -> Mention:
    found = _plain_mention(chunk, listed)
    position = _position(chunk)
    label = _label(chunk, raw)
    if position is None and not label:
        return found
    return replace(found, position=position, label=label)


def _position(chunk: Sequence[Token]) -> int | None:
    """The place an ordinal names: "the first entry", "the second component of the returned
    list", "the last element" (not "the first component of the spin")."""
    words = [t.lower if t.kind == "word" else "" for t in chunk]
    k = 0
    while k < len(words) and words[k] in W.DETERMINERS and words[k] not in W.ORDINALS:
        k += 1
    if k + 1 >= len(words) or words[k] not in W.ORDINALS or words[k + 1] not in W.MEMBER_NOUNS:
        return None
    rest = words[k + 2 :]
    if rest and (rest[0] != "of" or not rest[1:]):
        return None
    if any(w not in W.DETERMINERS and w not in W.WHOLE_NOUNS for w in rest[1:]):
        return None
    return W.ORDINALS[words[k]]


def _name_like(tok: Token) -> bool:
    """A token that reads as a symbol, not a noun: math, code, ``w``, ``psi``, ``E_0``."""
    if tok.kind in ("math", "code"):
        return tok.text != "¦"
    if tok.kind != "word":
        return False
    text = tok.text
    return (
        len(text) <= 2
        or text in W.GREEK
        or "_" in text
        or any(c.isdigit() for c in text)
        or any(c.isupper() for c in text[1:])
    )


def _label(chunk: Sequence[Token], raw: str | None) -> str:
    """The name that ends a noun phrase's head group, set off after a noun ("the weight vector
    w", "the ground state $\\psi$"), or the phrase itself when it is only a name. With the text
    known, a word must stand alone (not "<v|A|v>")."""
    head: list[Token] = []
    for tok in chunk:
        if tok.kind == "word" and (tok.lower in W.HEAD_STOP or tok.lower == "of"):
            break
        if tok.kind != "punct":
            head.append(tok)
    names = [t for t in head if not (t.kind == "word" and t.lower in W.DETERMINERS)]
    if not names or not _name_like(names[-1]):
        return ""
    if names[-1].kind == "word" and (names[-1].lower in W.GENERIC or names[-1].lower in _NOT_NAMES):
        return ""
    last = names[-1]
    if len(names) > 1:
        before = names[-2]
        if before.kind != "word" or _name_like(before):
            return ""
    if raw is not None and last.kind == "word":
        gap = raw[names[-2].end : last.start] if len(names) > 1 else " "
        after = raw[last.end : last.end + 1]
        if not gap.isspace() or (after and not (after.isspace() or after in ",.;:()[]$`")):
            return ""
    return math_key(last.text) if last.kind in ("math", "code") else last.text


def _plain_mention(chunk: list[Token], listed: Sequence[str] = ()) -> Mention:
    head: list[Token] = []
    only_generic = True
    for tok in chunk:
        w = tok.lower if tok.kind == "word" else ""
        if (
            w in _KEYED
            and only_generic
            and head
            and head[-1].kind == "word"
            and head[-1].lower in W.MEMBER_NOUNS
        ):
            continue  # "the entry under 'm'" reads on to the name
        if w in W.HEAD_STOP or w == "of":
            if w == "of" and only_generic:
                continue
            if any(t.kind != "word" or t.lower not in W.DETERMINERS for t in head):
                break
            if w in W.RETURNED:
                head.append(tok)  # "the returned vector": a qualifier before the noun
            continue
        head.append(tok)
        if tok.kind in ("math", "code") or (
            w and w not in W.DETERMINERS and w not in W.GENERIC and w not in W.RETURNED
        ):
            only_generic = False
    text = " ".join(
        (f"${t.text}$" if t.kind == "math" and t.text != "¦" else t.text) for t in chunk
    )
    names: list[str] = []
    strong: list[str] = []
    for tok in head:
        if tok.kind in ("math", "code") and tok.text != "¦":
            strong.append(math_key(tok.text))
        elif tok.kind == "word" and tok.lower not in W.DETERMINERS:
            names.append(tok.text)
    words = W.content_words(head)
    lowered = {t.lower for t in head if t.kind == "word"}
    plain = W.DETERMINERS | W.GENERIC | W.RETURNED
    generic = (
        not strong
        and not words
        and not any(t.kind == "word" and t.lower not in plain | W.OTHERS for t in head)
    )
    if generic and lowered & W.OTHERS:
        return Mention(text, others=True)
    if len(chunk) == 1 and chunk[0].kind == "word" and chunk[0].lower not in W.GENERIC:
        # a lone word is a name even when it could be an article: "Give a and c to …"
        strong.append(chunk[0].text)
        generic = False
    first = next((t for t in chunk if t.kind != "word" or t.lower not in W.DETERMINERS), None)
    if first is not None and first.kind == "word" and first.lower in W.CONTAINERS:
        # "the tuple of the integer orders", "a list of floats": a value as a whole
        return Mention(text, whole=True, returned=bool(lowered & W.RETURNED))
    said = [t.lower for t in chunk if t.kind == "word"]
    returned = bool(lowered & W.RETURNED) or any(
        a in ("you", "we") and b in W.RETURNING_VERBS for a, b in itertools.pairwise(said)
    )  # "the eigenvector you return"
    return Mention(
        text,
        tuple(names),
        tuple(strong) + tuple(listed),
        words,
        W.head_noun(head),
        generic and bool(head),
        returned,
        inner=bool(set(said) & W.INNER),
    )


def _asks(participle: str, modal: bool) -> bool:
    """Whether a predicate asks for its subject ("is graded", "should be reported within …")
    rather than describing it."""
    return (
        participle in W.GRADING
        or participle in W.RETURNING
        or (
            modal
            and (
                participle in W.REPORTING_PARTICIPLE
                or participle in W.LISTING
                or participle in ("within", "be", "")
            )
        )
    )
