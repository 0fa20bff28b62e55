"""Statement promises: the precision a statement promises for a reported output.

The lexicon below says which phrases are precision clauses and what each means; which
output a clause governs is the statement reader's job (:mod:`critpt_grader.statement`: a
clause about an input, a description, or an output it does not name sets nothing).

==========================================================  ===================================
phrase (any case; counts as digits or words one–twelve)     tolerance at a leaf whose expected
                                                            value is ``e``
==========================================================  ===================================
"relative error below 1e-6", "relative precision of         rtol 1e-6
10^{-6}", "fractional accuracy 2×10^-5", "1e-6 relative
error"
"absolute error below 1e-8", "absolute accuracy of 0.001"   atol 1e-8
"within 0.1%", "error below 1%", "0.5% accuracy"            rtol 1e-3, 1e-2, 5e-3
"error below 1e-6", "accuracy of 1e-6", "tolerance 1e-6",   the tighter of rtol 1e-6 and
"to within 1e-6" (relative or absolute not said)            atol 1e-6 at ``e``: atol when
                                                            ``|e| >= 1``, else rtol
"(allowing $\\pm 0.5$ error)", "with an error of ±0.02",     atol 0.5 (a percentage: rtol)
"±0.05 tolerance"
"N significant figures/digits", "N sig figs", "N            atol = half a unit in the Nth
significant decimal digits", "N digits of precision",       significant digit of ``e``:
"N-digit accuracy", "accurate to N digits"                  5·10^(floor(log10 |e|) − N)
"N decimal places", "N decimals", "N-decimal precision",    atol 5·10^-(N+1)
"N decimal precision", "N digits after the decimal point",
"N significant decimal places", "precision to N decimal
places", "(4 decimal places)"
"to the nearest tenth / hundredth / thousandth"             atol 5·10^-2, 5·10^-3, 5·10^-4
"rounded to the nearest integer", "rounded integer",        ``e`` rounded: an integer
"round to an integer", "nearest whole number"               within 1/2 of ``e``
==========================================================  ===================================

Meanings and ranges:

* **Significant figures** are counted on the *expected* value: "4 significant figures" of
  ``e = 950.37`` is ``atol 0.05`` (rtol 5·10^-N would be 0.475, up to ten times looser near
  mantissa 1). At ``e = 0`` there is no significant digit, and the clause gives nothing.
* **Rounded to the nearest integer** compares after rounding the expected value: the
  candidate must be an integer within 1/2 of it (41.7 expected: 42 passes, 41 and 41.7 do
  not; at a half, either neighbour).
* A relative (or unqualified) width is honoured only in (1e-15, 0.1]; outside it the clause is
  kept with the reason ``below_float64_resolution`` or ``too_loose_to_be_an_accuracy_claim``.
  An absolute width larger than the expected value is dropped at the leaf
  (:mod:`critpt_grader.policy.tolerance`), except for the integer rounding.
* **Per output, never lent.** A clause governs the outputs it is about (named, described, or
  "the answer/result/value you report"); an output no clause governs falls to the next rule
  of the precedence. When several clauses govern one leaf, the **tighter** at that leaf wins.
  A clause that governs the whole answer skips int leaves (except integer rounding).
* **Unknown phrasings.** Precision words the lexicon cannot read ("as accurate as possible",
  "to one part in a million") in a clause about the answer are kept and reported in the
  tolerance text of the leaves without a promise as ``no promise read: '…'``.

:func:`read_promises` reads a statement once (cached); :func:`bind` places the clauses on one
expected value; :meth:`BoundPromises.for_leaf` picks the promise for one numeric leaf.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any, Literal

from critpt_grader.policy.tolerance import PromisedPair, format_number
from critpt_grader.policy.units import (
    Width,
    convert,
    convert_to,
    same_kind,
    unit_mentions,
    width_unit,
)
from critpt_grader.statement import (
    Binding,
    Occurrence,
    Output,
    OutputSet,
    Statement,
    Target,
    read,
    resolve,
)

Meaning = Literal["rel", "abs", "either", "sig", "dec", "int"]

# Counts written as words, "zero" to "twelve" ("two significant figures").
NUMBER_WORDS = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve",
)  # fmt: skip
_WORDS = {word: value for value, word in enumerate(NUMBER_WORDS)}
_COUNT = r"(\d{1,2}|" + "|".join(_WORDS) + r")"
_FLOOR = Fraction(1, 10**15)
_CEILING = Fraction(1, 10)

# --- number forms -----------------------------------------------------------------------
_MANTISSA = r"\d+(?:\.\d+)?"
_TIMES = r"(?:×|x|\*|·|\\times|\\cdot)"
_POWER = r"10\s*(?:\^|\*\*)\s*[{(]?\s*([-+]?\s*\d{1,3})\s*[})]?"
_SCI = (
    rf"(?:(?:({_MANTISSA})\s*{_TIMES}\s*)?{_POWER}"  # 2×10^-6, 10^{-6}
    rf"|({_MANTISSA})\s*[eE]\s*([-+]?\d{{1,3}})"  # 2e-6
    rf"|({_MANTISSA})(?:\s*(%|percent(?!age)|per\s*cent(?!age)))?)"  # 0.001, 1%
)
_BOUND = (
    r"(?:\s*(?:below|under|less\s+than|smaller\s+than|lower\s+than|at\s+most|within|"
    r"no\s+(?:more|greater|larger|worse)\s+than|not\s+exceeding|better\s+than|bounded\s+by|"
    r"up\s+to|of|is|was|be|to|<=|<|≤|≲|~|\\leq?|\\lesssim|\\sim)(?![A-Za-z]))*"
)
_QUAL = r"(?:(relative|fractional|absolute)\s+)?"
_NOUN = r"(?:numerical\s+)?(?:error|accuracy|precision|tolerance|uncertainty|deviation)"
_PM_NOUN = r"(?:error|tolerance|uncertainty|deviation)"

LEXICON: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(rx, re.IGNORECASE))
    for name, rx in (
        (
            "pm",
            rf"(?:allow(?:ing|ed|s)?|accept(?:ing|ed|s)?|tolerat(?:ing|ed|es?))\s+(?:an?\s+)?"
            rf"(?:{_PM_NOUN}\s+(?:of\s+)?)?(?:up\s+to\s+)?±\s*{_SCI}(?:\s*{_PM_NOUN})?"
            rf"|{_PM_NOUN}\s+(?:of\s+)?(?:up\s+to\s+)?±\s*{_SCI}"
            rf"|within\s+±\s*{_SCI}"
            rf"|±\s*{_SCI}\s*{_PM_NOUN}",
        ),
        (
            "integer",
            r"\bround(?:ed|ing)?\s+(?:off\s+)?to\s+(?:the\s+)?nearest\s+(?:integer|whole\s+number)"
            r"|\bround(?:ed|ing)?\s+to\s+(?:an?\s+)?(?:integer|whole\s+number)"
            r"|\brounded\s+integer|\bnearest\s+(?:integer|whole\s+number)",
        ),
        ("nearest_unit", r"\bto\s+the\s+nearest\s+(tenth|hundredth|thousandth)\b"),
        (
            "decimals",
            rf"\b{_COUNT}[\s-]*(?:significant\s+decimal\s+(?:places?|points?)"
            r"|decimal(?:s|\s+(?:places?|digits?|points?))?(?:\s+(?:precision|accuracy))?"
            r"|digits?\s+after\s+the\s+decimal(?:\s+point)?"
            r"|places?\s+after\s+the\s+decimal(?:\s+point)?"
            r"|d\.\s?p(?:\.|(?![\w]))|dp\b)",
        ),
        (
            "significant",
            rf"\b{_COUNT}[\s-]*(?:(?:significant|sig\.?)\s*(?:decimal\s+)?(?:figures?|digits?|figs?)"
            r"|s\.\s?f\.|sf\b"
            r"|digits?\s+(?:of\s+)?(?:precision|accuracy)|digit\s+(?:precision|accuracy))",
        ),
        (
            "accurate_digits",
            rf"\baccurate\s+to\s+(?:at\s+least\s+)?{_COUNT}\s+digits?\b(?!\s+after)",
        ),
        ("noun_first", rf"{_QUAL}{_NOUN}{_BOUND}\s*±?\s*{_SCI}"),
        ("accurate_to", rf"\baccurate\s+to\s+(?:within\s+)?(?:about\s+)?±?\s*{_SCI}"),
        ("within", rf"\b(?:to\s+)?within\s+(?:an?\s+)?{_QUAL}(?:{_NOUN}\s+(?:of\s+)?)?±?\s*{_SCI}"),
        ("number_first", rf"(?<![\w.])±?\s*{_SCI}\s+{_QUAL}{_NOUN}"),
    )
)

# Precision words the lexicon may fail to read; reported as "no promise read" when they sit
# in a clause about the answer and no phrase of the lexicon covers them.
CUES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "cue",
        re.compile(
            r"\b(?:accura(?:te|cy|tely)|precis(?:e|ely|ion)|significant|decimals?|"
            r"toleran(?:ce|t)|sig\.?\s*figs?|ppm|ppb|parts?\s+per\s+(?:million|billion|thousand)"
            r"|one\s+part\s+in)\b",
            re.IGNORECASE,
        ),
    ),
)

_ORDINAL = {1: "1st", 2: "2nd", 3: "3rd"}


@dataclass(frozen=True, slots=True)
class Clause:
    """One precision clause: what it means and what it is about."""

    meaning: Meaning
    value: Fraction  # rel/abs/either: the width; sig/dec: the digit count N; int: 1/2
    phrase: str  # as written
    source: Literal["statement", "outputs"]
    offset: int
    sentence: str
    target: Target
    honoured: bool
    reason: str  # "" when honoured
    unit_note: str = ""  # "0.5 meV = 0.0005 eV": a width's unit and the converted width
    # A width written with a physical unit, and its number as written: put in each governed
    # output's own unit when the statement names one (see ``localize``).
    width: Width | None = None
    written: Fraction | None = None

    def pair(self, scale: Fraction) -> PromisedPair | None:
        """The tolerance this clause promises at a leaf whose expected magnitude is
        ``scale``; ``None`` where it gives nothing (significant figures of 0)."""
        zero = Fraction(0)
        note = f"'{self.phrase}'" + (f" ({self.unit_note})" if self.unit_note else "")
        if self.meaning == "rel":
            return PromisedPair(self.value, zero, note)
        if self.meaning == "abs":
            return PromisedPair(zero, self.value, note)
        if self.meaning == "either":
            # relative or absolute not said: the tighter reading at this value
            if scale >= 1:
                return PromisedPair(zero, self.value, f"{note}, the tighter reading: absolute")
            return PromisedPair(self.value, zero, f"{note}, the tighter reading: relative")
        if self.meaning == "dec":
            return PromisedPair(zero, Fraction(5, 10 ** (int(self.value) + 1)), note)
        if self.meaning == "sig":
            if scale == 0:
                return None
            n = int(self.value)
            atol = Fraction(5) * Fraction(10) ** (_floor_log10(scale) - n)
            return PromisedPair(zero, atol, f"{note} of {_short(scale)}")
        # Integer rounding: the expected value rounded, which the candidate must equal.
        return PromisedPair(zero, Fraction(1, 2), note, scale_guard=False, integral=True)

    def meaning_text(self) -> str:
        """What the clause promises, in words ("half a unit in the 4th significant digit"),
        with a width's unit and its conversion ("atol 0.0005 (0.5 meV = 0.0005 eV)")."""
        text = self._meaning_words()
        return f"{text} ({self.unit_note})" if self.unit_note else text

    def _meaning_words(self) -> str:
        if self.meaning == "rel":
            return f"rtol {format_number(self.value)}"
        if self.meaning == "abs":
            return f"atol {format_number(self.value)}"
        if self.meaning == "either":
            v = format_number(self.value)
            return f"the tighter of rtol {v} and atol {v} at the expected value"
        n = int(self.value)
        if self.meaning == "dec":
            return f"atol {format_number(Fraction(5, 10 ** (n + 1)))} (half a unit in decimal {n})"
        if self.meaning == "sig":
            nth = _ORDINAL.get(n, f"{n}th")
            return f"half a unit in the {nth} significant digit of the expected value"
        return "the expected value rounded to an integer, which the candidate must equal"


@dataclass(frozen=True)
class PromiseReading:
    """The precision clauses of one statement, and the phrasings nobody could read."""

    statement: Statement
    clauses: tuple[Clause, ...]
    cues: tuple[Occurrence, ...]  # precision words left unread


@functools.lru_cache(maxsize=512)
def read_promises(problem: str, output_doc: str | None) -> PromiseReading:
    """Every precision clause of a statement and its Outputs docstring (cached)."""
    statement = read(problem or "", output_doc)
    clauses: list[Clause] = []
    contexts = tuple(text.flat for text in reversed(statement.texts))
    kinds: dict[str, tuple[bool, bool]] = {}  # a sentence's words "absolute", "relative"
    for found in statement.find(LEXICON):
        try:
            meaning, value = _meaning(found.lexeme, found.groups, found.sentence, kinds)
        except (ValueError, ZeroDivisionError, OverflowError, KeyError):
            continue
        unit_note, unit_reason, width, written = "", "", None, None
        if found.lexeme in _WIDTHS and (width := width_unit(found.following)) is not None:
            if width.kind == "unit" and meaning != "rel":
                written = value
            meaning, value, unit_note, unit_reason = _in_output_unit(
                meaning, value, width, (found.sentence, *contexts)
            )
        reason = unit_reason or _range_reason(meaning, value) or _lower_bound(found)
        clauses.append(
            Clause(
                meaning,
                value,
                found.text,
                found.source,
                found.start,
                found.sentence,
                found.target,
                not reason,
                reason,
                unit_note,
                width if written is not None else None,
                written,
            )
        )
    # a cue in a sentence that holds a read clause is that clause's wording
    read_sentences = {(c.source, c.sentence) for c in clauses}
    cues = tuple(
        cue
        for cue in statement.find(CUES)
        if (cue.source, cue.sentence) not in read_sentences
        and cue.target.mood in ("directive", "docstring")
    )
    return PromiseReading(statement, tuple(clauses), cues)


# Lexemes whose width may carry a unit ("an absolute error below 0.5 meV").
_WIDTHS = frozenset({"pm", "noun_first", "within", "accurate_to"})


def _in_output_unit(
    meaning: Meaning, value: Fraction, width: Width, contexts: tuple[str, ...]
) -> tuple[Meaning, Fraction, str, str]:
    """A width with a unit, in the output's unit: (meaning, value, note, reason not
    honoured). A ratio (ppm) is relative; a unit makes the width absolute, and a relative
    error with a unit, or a unit that cannot be put in the output's, is not understood."""
    converted = convert(value, width, contexts)
    if converted.value is None:
        return meaning, value, converted.note, "unit_not_understood"
    if converted.relative:
        return "rel", converted.value, converted.note, ""
    if meaning == "rel":
        return (
            meaning,
            value,
            f"{converted.note}: a relative error has no unit",
            ("unit_not_understood"),
        )
    return "abs", converted.value, converted.note, ""


# A count of digits that is only a floor: "no fewer than 3 decimal places", "a minimum of 4
# significant figures"; "at least N …" only where the statement says so ("at least 3 decimal
# places are needed; fewer is not enough", "3 decimal places or more"), since "Evaluate to at
# least six decimal places" is how CritPt asks for six.
_FLOOR_BEFORE = re.compile(
    r"\b(?:no|not)\s+(?:fewer|less)\s+than\s*$|\b(?:a\s+)?minimum\s+of\s*$", re.IGNORECASE
)
_AT_LEAST = re.compile(r"\bat\s+least\s*$|\bat\s+least\b", re.IGNORECASE)
_FLOOR_SAID = re.compile(
    r"\b(?:fewer|less)\b[^.;]{0,40}?\b(?:(?:not|never)\s+(?:be\s+)?(?:enough|sufficient|"
    r"suffice|acceptable|accepted|allowed|ok|okay)|insufficient|unacceptable|too\s+few|rejected)"
    r"|\bor\s+more\b|\bmore\s+(?:digits\s+|places\s+)?(?:is|are)\s+(?:fine|ok|okay|acceptable|"
    r"welcome|allowed)|\bas\s+many\s+as\s+you\s+(?:like|want)",
    re.IGNORECASE,
)
_FLOOR_NEEDED = re.compile(
    r"^(?:\S+\s+){0,3}?(?:is|are)\s+(?:\w+\s+)?(?:needed|required|necessary|expected)\b",
    re.IGNORECASE,
)
_COUNTS = frozenset({"decimals", "significant", "accurate_digits"})


def _lower_bound(found: Occurrence) -> str:
    """``lower_bound`` when a count of digits is a floor on what is given, not a width."""
    if found.lexeme not in _COUNTS:
        return ""
    before = found.preceding
    if _FLOOR_BEFORE.search(before):
        return "lower_bound"
    at_least = bool(re.search(r"\bat\s+least\s*$", before, re.IGNORECASE)) or bool(
        _AT_LEAST.search(found.text)
    )
    if at_least and (_FLOOR_SAID.search(found.sentence) or _FLOOR_NEEDED.search(found.following)):
        return "lower_bound"
    return ""


def _count(text: str) -> int:
    text = text.lower()
    return _WORDS[text] if text in _WORDS else int(text)


def _sci(groups: tuple[str | None, ...]) -> tuple[Fraction, bool]:
    """Value of the ``_SCI`` groups: (value, is_percent)."""
    mant_pow, power, mant_e, exp_e, plain, percent = groups
    if power is not None:
        base = Fraction(mant_pow) if mant_pow else Fraction(1)
        return base * Fraction(10) ** int(power.replace(" ", "")), False
    if mant_e is not None and exp_e is not None:
        return Fraction(mant_e) * Fraction(10) ** int(exp_e), False
    if plain is not None:
        value = Fraction(plain)
        return (value / 100, True) if percent else (value, False)
    raise ValueError("no number")


def _first_sci(groups: tuple[str | None, ...]) -> tuple[Fraction, bool]:
    """The first complete ``_SCI`` group set among alternatives (6 groups each)."""
    for k in range(0, len(groups) - 5, 6):
        chunk = groups[k : k + 6]
        if any(g is not None for g in chunk[1:5]):
            return _sci(chunk)
    raise ValueError("no number")


def _meaning(
    lexeme: str,
    groups: tuple[str | None, ...],
    sentence: str,
    kinds: dict[str, tuple[bool, bool]] | None = None,
) -> tuple[Meaning, Fraction]:
    if lexeme == "pm":
        value, percent = _first_sci(groups)
        return ("rel" if percent else "abs"), value
    if lexeme == "integer":
        return "int", Fraction(1, 2)
    if lexeme == "nearest_unit":
        return "dec", Fraction({"tenth": 1, "hundredth": 2, "thousandth": 3}[groups[0].lower()])
    if lexeme == "decimals":
        return "dec", Fraction(_count(groups[0]))
    if lexeme in ("significant", "accurate_digits"):
        return "sig", Fraction(_count(groups[0]))
    if lexeme == "accurate_to":
        value, percent = _sci(groups)
        return ("rel" if percent else "either"), value
    if lexeme == "number_first":
        *sci, qualifier = groups
    else:
        qualifier, *sci = groups
    value, percent = _sci(tuple(sci))
    if percent:
        return "rel", value
    return _kind(qualifier, sentence, kinds), value


def _kind(
    qualifier: str | None, sentence: str, kinds: dict[str, tuple[bool, bool]] | None = None
) -> Meaning:
    word = (qualifier or "").lower()
    if word in ("relative", "fractional"):
        return "rel"
    if word == "absolute":
        return "abs"
    said = kinds.get(sentence) if kinds is not None else None
    if said is None:  # read once per sentence: a long one holds many clauses
        lowered = sentence.lower()
        said = ("absolut" in lowered, "relativ" in lowered)
        if kinds is not None:
            kinds[sentence] = said
    absolute, relative = said
    if absolute and not relative:
        return "abs"
    if relative and not absolute:
        return "rel"
    return "either"


def _range_reason(meaning: Meaning, value: Fraction) -> str:
    if meaning in ("rel", "either"):
        if value <= _FLOOR:
            return "below_float64_resolution"
        if value > _CEILING:
            return "too_loose_to_be_an_accuracy_claim"
    if meaning == "abs" and value <= 0:
        return "not_a_width"
    if meaning == "sig" and not 1 <= value <= 30:
        return "not_a_digit_count"
    if meaning == "dec" and not 0 <= value <= 30:
        return "not_a_digit_count"
    return ""


def _floor_log10(value: Fraction) -> int:
    """``floor(log10(value))`` for ``value > 0``, read on the value as written: a binary64
    value by its shortest decimal form (the float nearest 1e-7 lies just below 1e-7, but it is
    written, and its digits are counted, as 1e-7), any other value exactly."""
    as_float = float(value)
    if as_float > 0 and Fraction(as_float) == value:
        return Decimal(repr(as_float)).adjusted()
    e = len(str(value.numerator)) - len(str(value.denominator))
    while Fraction(10) ** e > value:
        e -= 1
    while Fraction(10) ** (e + 1) <= value:
        e += 1
    return e


def _short(value: Fraction) -> str:
    return f"{float(value):.6g}"


# --- binding to an expected value -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Local:
    """A clause whose width has a unit, at one output it governs: put in that output's own
    unit (``clause``), or not applied there (``clause is None``, ``note`` says why)."""

    name: str
    path: str | None
    clause: Clause | None
    note: str = ""


@dataclass(frozen=True)
class Placed:
    """A clause and the outputs it governs on one expected value."""

    clause: Clause
    binding: Binding
    paths: tuple[str, ...]  # where the named outputs sit (empty for the whole answer)
    # a width with a unit, per output (None: the clause as read applies wherever it governs)
    local: tuple[Local, ...] | None = None

    def at(self, path: str) -> tuple[Clause | None, str]:
        """The clause as it applies at the leaf ``path``, or None and why not."""
        if self.local is None:
            return self.clause, ""
        best: Local | None = None
        for item in self.local:
            if (
                item.path is not None
                and _covers(item.path, path)
                and (best is None or len(item.path) > len(best.path or ""))
            ):
                best = item
        if best is None:
            return None, "names no unit for this output"
        return best.clause, best.note


@dataclass(frozen=True)
class BoundPromises:
    """The promises of one statement placed on one expected value."""

    placed: tuple[Placed, ...] = ()  # honoured clauses that govern something
    idle: tuple[tuple[Clause, str], ...] = ()  # clauses that govern nothing, and why
    cues: tuple[str, ...] = ()  # precision wording no phrase of the lexicon read

    def for_leaf(self, path: str, *, scale: Fraction, is_int: bool) -> PromisedPair | None:
        """The promise for the numeric leaf at ``path`` whose expected magnitude is
        ``scale``: the tightest of the clauses that govern it (a named clause before the
        whole answer's on a tie), ``None`` when none does. A clause that governs the leaf
        but gives nothing there (significant figures of 0) comes back as a zero pair, so
        the tolerance says why it did not apply."""
        best: tuple[Fraction, int, PromisedPair] | None = None
        empty: PromisedPair | None = None
        named = any(
            item.binding.names and any(_covers(prefix, path) for prefix in item.paths)
            for item in self.placed
        )
        for item in self.placed:
            clause, _ = item.at(path)
            if clause is None:
                continue  # a width with a unit this output's cannot take
            if item.binding.others:
                if named or (is_int and clause.meaning != "int"):
                    continue  # "other outputs": only those no clause names
            elif item.binding.answer:
                if is_int and clause.meaning != "int":
                    continue  # the answer's precision is not a licence to round a count
            elif not any(_covers(prefix, path) for prefix in item.paths):
                continue
            who = ", ".join(item.binding.names) if item.binding.names else "the answer"
            if item.binding.others:
                who = "the outputs no other clause names"
            pair = clause.pair(scale)
            if pair is None:
                empty = empty or PromisedPair(
                    Fraction(0), Fraction(0), f"'{clause.phrase}' for {who}, at {_short(scale)}"
                )
                continue
            pair = PromisedPair(
                pair.rtol, pair.atol, f"{pair.phrase} for {who}", pair.scale_guard, pair.integral
            )
            key = (pair.atol + pair.rtol * scale, 0 if item.binding.names else 1)
            if best is None or key < best[:2]:
                best = (*key, pair)
        return best[2] if best else empty

    def note_for(self, path: str) -> str:
        """Why no promise governs ``path`` (``""`` when the statement has no precision
        wording at all): wording nobody could read, clauses about other things or outputs."""
        others = [
            f"'{p.clause.phrase}' is for {', '.join(p.binding.names)}"
            for p in self.placed
            if p.binding.names and not any(_covers(prefix, path) for prefix in p.paths)
        ]
        for p in self.placed:
            clause, why = p.at(path)
            governs = p.binding.answer or any(_covers(prefix, path) for prefix in p.paths)
            if clause is None and governs:
                others.insert(0, f"'{p.clause.phrase}' is not applied here: {why}")
        details = (others + [f"'{c.phrase}' {why}" for c, why in self.idle])[:2]
        if self.cues:
            head = "no promise read: " + "; ".join(f"'{c}'" for c in self.cues[:2])
        elif details:
            head = "no promise read for this output"
        else:
            return ""
        return head + (f" ({'; '.join(details)})" if details else "")


def _covers(prefix: str, path: str) -> bool:
    return path == prefix or path.startswith(prefix + "/")


NO_PROMISES = BoundPromises()


def bind(reading: PromiseReading, expected: Any) -> BoundPromises:
    """Place the clauses of ``reading`` on the outputs of ``expected``."""
    if not reading.clauses and not reading.cues:
        return NO_PROMISES
    outputs = reading.statement.outputs(expected)
    placed: list[Placed] = []
    idle: list[tuple[Clause, str]] = []
    for clause in reading.clauses:
        binding = resolve(clause.target, outputs, "precision")
        local = None
        if clause.width is not None and (binding.bound or binding.others):
            local = localize(clause, binding, outputs, reading.statement, known=True)
            if local is not None and not any(item.clause for item in local):
                idle.append((clause, "; ".join(dict.fromkeys(i.note for i in local))))
                continue
        if not clause.honoured and local is None:
            idle.append((clause, f"is not honoured ({clause.reason})"))
            continue
        if not (binding.bound or binding.others):
            idle.append((clause, _short_reason(binding.reason)))
            continue
        paths = tuple(p for n in binding.names if (p := outputs.path(n)) is not None)
        if binding.names and not paths:
            idle.append((clause, f"names {', '.join(binding.names)}, not found in the value"))
            continue
        placed.append(Placed(clause, binding, paths, local))
    cues = []
    for cue in reading.cues:
        if resolve(cue.target, outputs, "precision").bound:
            cues.append(_cue_text(cue))
    return BoundPromises(tuple(placed), tuple(idle), tuple(dict.fromkeys(cues)))


# --- a width with a unit, per output ---------------------------------------------------------


def output_units(statement: Statement, outputs: OutputSet) -> dict[str, tuple[str, ...]]:
    """The units the statement names for each output: in its Outputs entry ("gap: float,
    band gap in eV") and after a noun phrase that names it ("the gap in eV", "T (K)",
    "E1 and E2 in eV"); units named for the answer as a whole count for every output."""
    return _output_units(statement, tuple(outputs.outputs), outputs.count)


@functools.lru_cache(maxsize=256)
def _output_units(
    statement: Statement, outputs: tuple[Output, ...], count: int
) -> dict[str, tuple[str, ...]]:
    found: dict[str, list[str]] = {}
    for output in outputs:
        for mention in unit_mentions(output.description):
            if output.source == "docstring":
                found.setdefault(output.name, []).append(mention.written)
    for text in statement.texts:
        if text.source != "statement":
            continue
        mentions = unit_mentions(text.flat)
        named = statement.named_before(
            "statement", [m.start for m in mentions], OutputSet(outputs, count=count)
        )
        for mention, names in zip(mentions, named, strict=True):
            for name in names:
                found.setdefault(name, []).append(mention.written)
    return {name: tuple(dict.fromkeys(units)) for name, units in found.items()}


def localize(
    clause: Clause, binding: Binding, outputs: OutputSet, statement: Statement, *, known: bool
) -> tuple[Local, ...] | None:
    """A width with a unit at each output ``binding`` governs, in that output's own unit.
    ``None`` when nothing is known per output: one output whose unit the statement does not
    name for it keeps the clause as read (its unit found near the clause). Otherwise an
    output takes the width only when the statement names its unit, of the width's kind
    (a meV width never reaches an output in K), or — its unit not named — when the clause
    names it alone and the unit near the clause was understood. ``known``: the expected
    value is known (outputs have paths)."""
    width, written = clause.width, clause.written
    if width is None or written is None:
        return None
    units = output_units(statement, outputs)
    names = list(binding.names) or [o.name for o in outputs.outputs if o.name]
    targets = [(n, outputs.path(n)) for n in names]
    if known:
        targets = [(n, p) for n, p in targets if p is not None]
    if not targets or (outputs.count == 1 and not any(units.get(n) for n, _ in targets)):
        return None
    alone = len(binding.names) == 1
    local: list[Local] = []
    for name, path in targets:
        own = units.get(name, ())
        kind = [u for u in own if same_kind(width.written, u)]
        if len(kind) == 1:
            converted = convert_to(written, width, kind[0])
            value = converted.value
            if value is None or _range_reason("abs", value):
                local.append(Local(name, path, None, converted.note))
                continue
            at = dataclasses.replace(
                clause, meaning="abs", value=value, unit_note=converted.note, honoured=True
            )
            local.append(Local(name, path, dataclasses.replace(at, reason="")))
        elif kind:
            note = f"{width.written}, but {name} may be in {', '.join(kind)}"
            local.append(Local(name, path, None, note))
        elif own:
            note = f"{width.written} is not of the kind of {name}'s unit ({own[0]})"
            local.append(Local(name, path, None, note))
        elif alone and clause.honoured:
            local.append(Local(name, path, clause, clause.unit_note))
        else:
            note = f"{width.written}, but the statement names no unit for {name}"
            local.append(Local(name, path, None, note))
    return tuple(local)


def _short_reason(reason: str) -> str:
    return reason.split(" (", 1)[0]


def _cue_text(cue: Occurrence) -> str:
    sentence = cue.sentence
    return sentence if len(sentence) <= 80 else sentence[:79] + "…"
