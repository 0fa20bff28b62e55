"""Statement promises: precision the problem text promises for the reported output.

The reader looks at two texts: the problem statement and the template docstring's Outputs
section. It understands these phrases (any case; numbers as digits or words one–twelve):

=====================================================  ================================
phrase                                                 tolerance
=====================================================  ================================
"relative error below 1e-6", "relative precision of    rtol 1e-6
10^{-6}", "fractional accuracy 2×10^-5"
"absolute error below 1e-8", "absolute accuracy of     atol 1e-8
0.001"
"error below 1e-6", "accuracy of 1e-6", "tolerance     rtol 1e-6 and atol 1e-6 (kind not
1e-6", "to within 1e-6"                                said: both)
"within 0.1%", "error below 1%", "0.5% accuracy"       rtol 1e-3 / 1e-2 / 5e-3
"N significant digits/figures", "N sig figs",          rtol 5·10^-N
"N digits of precision", "accurate to N digits"
"N decimal places", "N decimals", "N-decimal           atol 5·10^-(N+1)
precision", "N decimal precision", "N digits after
the decimal point", "N significant decimal places",
"(4 decimal places)", "accurate to at least 8
decimal places"
"rounded to the nearest integer", "rounded integer",   atol 1/2
"round to an integer"
=====================================================  ================================

Rules that keep an incidental number from widening a tolerance:

* **Tied to the output.** A clause in the Outputs docstring always speaks of an output. A
  clause in the statement counts only when its own segment of the sentence says what is
  reported: report, return, give, answer, output, result, provide, express, record, keep,
  compute, calculate, evaluate, determine, find, obtain, estimate, predict, round, solution.
  A sentence is cut into segments at ``;`` and before ", so", ", while", ", whereas", ", but",
  ", and", " while ", " whereas ". So "The trap frequency is stable to within 2% during the
  measurement." promises nothing; "Report the energy with relative error below 1e-6." does.
  Fenced code blocks are ignored.
* **Range.** A value is honoured only in (1e-15, 0.1]; outside it the clause is kept with
  the reason ``below_float64_resolution`` or ``too_loose_to_be_an_accuracy_claim``. The one
  deliberate exception is rounding to an integer: it states how the answer is rounded, not
  how accurate it is, and reads as ``atol 1/2`` against the exact expected value (an integer
  answer that rounds correctly passes, any other integer fails).
* **Names.** A clause in the Outputs docstring governs the output whose entry it sits in
  (``energies: list[float] ... (four-decimal precision)`` governs ``energies``). The outputs
  are listed in return order, so for a returned tuple the names map to positions (``/0``,
  ``/1``...); for a returned map, to keys; a single output is the root. A clause in the
  statement governs the output it names (the nearest output name before it in its sentence,
  else the nearest after it, within 90 characters); the first clause to claim a name wins.
  A clause that names no output is a **blanket**: it governs every non-integer numeric leaf;
  when several blanket clauses exist the loosest applies, and a blanket skips a leaf that has
  its own task entry when some clause was bound to a name.

:func:`read_statement` does the text work once per statement; :func:`bind` places the result
on one expected value.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal

from critpt_grader.tolerance import PromisedPair

ClauseKind = Literal["rel", "abs", "unknown"]

_WORDS = {
    w: i
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
        ]
    )
}
_COUNT = r"(\d{1,2}|" + "|".join(_WORDS) + r")"
_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_MINUS_SIGNS = str.maketrans({"−": "-", "–": "-", "‒": "-", "‐": "-", "\u2011": "-"})

_FLOOR = Fraction(1, 10**15)
_CEILING = Fraction(1, 10)

# --- number forms -----------------------------------------------------------------------
_MANTISSA = r"\d+(?:\.\d+)?"
_TIMES = r"(?:×|x|\*|·|\\times|\\cdot)"
_POWER = r"10\s*(?:\^|\*\*)\s*[{(]?\s*([-+]?\s*\d{1,3})\s*[})]?"
_SCI = (
    rf"(?:(?:({_MANTISSA})\s*{_TIMES}\s*)?{_POWER}"  # 2×10^-6, 10^{-6}
    rf"|({_MANTISSA})\s*[eE]\s*([-+]?\d{{1,3}})"  # 2e-6
    rf"|({_MANTISSA})(?:\s*(%|\\%|percent|per\s*cent))?)"  # 0.001, 1%
)
_BOUND = (
    r"(?:\s*(?:below|under|less\s+than|smaller\s+than|lower\s+than|at\s+most|within|"
    r"no\s+(?:more|greater|larger|worse)\s+than|not\s+exceeding|better\s+than|bounded\s+by|"
    r"up\s+to|of|is|was|be|to|<=|<|≤|≲|~|\\leq?|\\lesssim|\\sim)(?![A-Za-z]))*"
)
_QUAL = r"(?:(relative|fractional|absolute)\s+)?"
_NOUN = r"(?:numerical\s+)?(?:error|accuracy|precision|tolerance|uncertainty|deviation)"

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(rx, re.IGNORECASE))
    for name, rx in (
        (
            "decimals",
            rf"\b{_COUNT}[\s-]*(?:significant\s+)?(?:decimal(?:s|\s+(?:places?|digits?|points?))?"
            r"(?:\s+(?:precision|accuracy))?|digits?\s+after\s+the\s+decimal(?:\s+point)?)",
        ),
        (
            "significant",
            rf"\b{_COUNT}[\s-]*(?:(?:significant|sig\.?)\s*(?:figures?|digits?|figs?)"
            r"|digits?\s+(?:of\s+)?(?:precision|accuracy))",
        ),
        ("accurate_digits", rf"\baccurate\s+to\s+(?:at\s+least\s+)?{_COUNT}\s+digits?\b"),
        (
            "integer",
            r"\bround(?:ed|ing)?\s+(?:off\s+)?to\s+(?:the\s+)?nearest\s+(?:integer|whole\s+number)"
            r"|\bround(?:ed|ing)?\s+to\s+(?:an?\s+)?(?:integer|whole\s+number)"
            r"|\brounded\s+integer|\bnearest\s+integer",
        ),
        ("noun_first", rf"{_QUAL}{_NOUN}{_BOUND}\s*±?\s*{_SCI}"),
        ("within", rf"\b(?:to\s+)?within\s+(?:an?\s+)?{_QUAL}(?:{_NOUN}\s+(?:of\s+)?)?±?\s*{_SCI}"),
        ("number_first", rf"(?<![\w.])±?\s*{_SCI}\s+{_QUAL}{_NOUN}"),
    )
)

_TIE_WORDS = re.compile(
    r"\b(?:report\w*|return\w*|answer\w*|output\w*|results?|give|gives|giving|provid\w*|"
    r"express\w*|record\w*|keep|kept|comput\w*|calculat\w*|evaluat\w*|determin\w*|find|"
    r"obtain\w*|estimat\w*|predict\w*|round\w*|solutions?)\b",
    re.IGNORECASE,
)
_SEGMENT_BREAK = re.compile(
    r";|,\s+(?=(?:so|while|whereas|but|and|although|though)\b)|\s(?=(?:while|whereas)\b)",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"[.;!?](?=\s)|\n\s*\n|\n(?=\s*#)")
_NAME = re.compile(r"(?<![\\\w])[A-Za-z_][A-Za-z0-9_]*")
_VOCABULARY = frozenset(
    [
        "relative",
        "absolute",
        "fractional",
        "decimal",
        "decimals",
        "digits",
        "digit",
        "places",
        "place",
        "significant",
        "figures",
        "figure",
        "precision",
        "accuracy",
        "error",
        "tolerance",
        "within",
        "rounded",
        "round",
        "nearest",
        "integer",
        "the",
        "a",
        "an",
        "of",
        "to",
        "and",
        "or",
        "in",
        "with",
        "at",
        "least",
        "report",
        "return",
        "give",
        "answer",
        "output",
        "result",
        "value",
        "values",
        "float",
        "int",
        "list",
        "tuple",
        "str",
        "set",
        "dict",
        "sympy",
    ]
)


@dataclass(frozen=True)
class Clause:
    """One precision clause found in the text."""

    kind: ClauseKind
    value: Fraction  # the promised width: rtol for rel, atol for abs, both for unknown
    phrase: str  # as written
    source: Literal["statement", "outputs"]
    offset: int
    honoured: bool
    reason: str  # "" when honoured
    owners: tuple[str, ...] = ()  # outputs-docstring entry names that own it
    names_before: tuple[str, ...] = ()  # statement: name tokens before it, nearest first
    names_after: tuple[str, ...] = ()  # statement: name tokens after it, nearest first

    def pair(self) -> PromisedPair:
        rtol = self.value if self.kind in ("rel", "unknown") else Fraction(0)
        atol = self.value if self.kind in ("abs", "unknown") else Fraction(0)
        return PromisedPair(rtol, atol, self.phrase)


@dataclass(frozen=True)
class OutputEntry:
    """An entry of the Outputs docstring: ``name: type, description`` plus its block."""

    names: tuple[str, ...]
    indent: int
    start: int
    end: int
    children: tuple[OutputEntry, ...] = ()


@dataclass(frozen=True)
class Phrase:
    """A matched phrase with the ownership information clauses and conventions share."""

    text: str
    source: Literal["statement", "outputs"]
    offset: int
    tied: bool
    sentence: str
    owners: tuple[str, ...] = ()
    names_before: tuple[str, ...] = ()
    names_after: tuple[str, ...] = ()


@dataclass(frozen=True)
class StatementReading:
    """All clauses of one statement and the Outputs docstring's layout."""

    clauses: tuple[Clause, ...]
    ignored: tuple[Clause, ...]  # found but not tied to the output (kept for reports)
    outputs: tuple[OutputEntry, ...] = field(default=())


# --- normalization and text structure ---------------------------------------------------


def normalize(text: str) -> str:
    """Same-length cleanup: minus signs, superscript digits, ``$``, LaTeX ``\\%``, fences."""
    text = _blank(_DISPLAY_MATH, _blank(_FENCE, text.translate(_MINUS_SIGNS)), keep_lines=False)
    text = re.sub(
        r"(?<=\d)([⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+)",
        lambda m: "^" + m.group(1).translate(_SUPERSCRIPTS)[1:] if len(m.group(1)) > 1 else "^",
        text,
    )
    text = text.translate(_SUPERSCRIPTS).replace("$", " ").replace("\\%", " %")
    text = text.replace("\\,", "  ").replace("\\!", "  ")
    return text


_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
# Display math carries no precision clause and its ``\left.`` would end a sentence.
_DISPLAY_MATH = re.compile(
    r"\\begin\{(equation|align|eqnarray|gather|multline)\*?\}.*?\\end\{\1\*?\}|\$\$.*?\$\$"
    r"|\\\[.*?\\\]",
    re.DOTALL,
)


def _blank(pattern: re.Pattern[str], text: str, keep_lines: bool = True) -> str:
    # Same length keeps offsets; display math becomes an inert non-space run so that it
    # neither ends a sentence nor reads as a paragraph break.
    if keep_lines:
        return pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    return pattern.sub(lambda m: "¦" * len(m.group(0)), text)


def _sentence_bounds(text: str, offset: int) -> tuple[int, int]:
    start = 0
    for match in _SENTENCE_END.finditer(text, 0, offset):
        start = match.end()
    end_match = _SENTENCE_END.search(text, offset)
    return start, end_match.start() if end_match else len(text)


def _segment(sentence: str, at: int) -> str:
    start, end = 0, len(sentence)
    for match in _SEGMENT_BREAK.finditer(sentence):
        if match.start() < at:
            start = match.end()
        else:
            end = match.start()
            break
    return sentence[start:end]


def parse_outputs(doc: str) -> tuple[OutputEntry, ...]:
    """Entries of an Outputs docstring section, nested by indentation, in order."""
    header = re.compile(
        r"^([ \t]*)([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*(?::|\s[-–—]{1,2}\s|=)(?!=)"
    )
    skip = {"outputs", "output", "returns", "return", "inputs", "input", "none", "parameters"}
    found: list[tuple[tuple[str, ...], int, int]] = []
    pos = 0
    for line in doc.splitlines(keepends=True):
        match = header.match(line)
        if match:
            names = tuple(n.strip() for n in match.group(2).split(","))
            if not any(n.lower() in skip for n in names):
                found.append((names, len(match.group(1).expandtabs(4)), pos))
        pos += len(line)
    return _nest(found, len(doc))


def _nest(found: list[tuple[tuple[str, ...], int, int]], end: int) -> tuple[OutputEntry, ...]:
    entries: list[OutputEntry] = []
    i = 0
    while i < len(found):
        names, indent, start = found[i]
        j = i + 1
        while j < len(found) and found[j][1] > indent:
            j += 1
        block_end = found[j][2] if j < len(found) else end
        children = _nest(found[i + 1 : j], block_end)
        entries.append(OutputEntry(names, indent, start, block_end, children))
        i = j
    return tuple(entries)


def owners_at(entries: tuple[OutputEntry, ...], offset: int) -> tuple[str, ...]:
    """Names of the innermost entry whose block contains ``offset``. A template may list an
    output twice (docstring entry, then ``name = ...  # note``); either block owns its text."""
    best: OutputEntry | None = None
    for entry in _walk(entries):
        if entry.start <= offset < entry.end and (best is None or entry.indent > best.indent):
            best = entry
    return best.names if best else ()


def _walk(entries: tuple[OutputEntry, ...]):
    for entry in entries:
        yield entry
        yield from _walk(entry.children)


def top_level_names(entries: tuple[OutputEntry, ...]) -> tuple[str, ...]:
    names: list[str] = []
    for entry in entries:
        names.extend(n for n in entry.names if n not in names)
    return tuple(names)


# --- phrase discovery (shared with conventions) -----------------------------------------


def find_phrases(
    patterns: tuple[re.Pattern[str], ...], problem: str, output_doc: str | None
) -> list[tuple[re.Match[str], Phrase]]:
    """Every match of ``patterns`` in both texts, with tie and ownership information."""
    found: list[tuple[re.Match[str], Phrase]] = []
    statement = normalize(problem or "")
    for pattern in patterns:
        for match in pattern.finditer(statement):
            found.append((match, _statement_phrase(statement, match)))
    if output_doc:
        doc = normalize(output_doc)
        entries = parse_outputs(doc)
        for pattern in patterns:
            for match in pattern.finditer(doc):
                start, end = _sentence_bounds(doc, match.start())
                found.append(
                    (
                        match,
                        Phrase(
                            match.group(0),
                            "outputs",
                            match.start(),
                            True,
                            doc[start:end],
                            owners_at(entries, match.start()),
                        ),
                    )
                )
    return found


def _statement_phrase(text: str, match: re.Match[str]) -> Phrase:
    start, end = _sentence_bounds(text, match.start())
    sentence = text[start:end]
    segment = _segment(sentence, match.start() - start)
    tied = bool(_TIE_WORDS.search(segment))
    before = [
        m.group(0)
        for m in _NAME.finditer(text, max(start, match.start() - 90), match.start())
        if m.group(0).lower() not in _VOCABULARY
    ]
    after = [
        m.group(0)
        for m in _NAME.finditer(text, match.end(), min(end, match.end() + 90))
        if m.group(0).lower() not in _VOCABULARY
    ]
    return Phrase(
        match.group(0),
        "statement",
        match.start(),
        tied,
        sentence,
        names_before=tuple(reversed(before)),
        names_after=tuple(after),
    )


# --- clause reading ---------------------------------------------------------------------


def _count(text: str) -> int:
    text = text.lower()
    return _WORDS[text] if text in _WORDS else int(text)


def _sci_value(groups: tuple[str | None, ...]) -> tuple[Fraction, bool] | None:
    """Value of the ``_SCI`` groups: (value, is_percent)."""
    mant_pow, power, mant_e, exp_e, plain, percent = groups
    if power is not None:
        base = Fraction(mant_pow) if mant_pow else Fraction(1)
        return base * Fraction(10) ** int(power.replace(" ", "")), False
    if mant_e is not None:
        return Fraction(mant_e) * Fraction(10) ** int(exp_e), False
    if plain is not None:
        value = Fraction(plain)
        return (value / 100, True) if percent else (value, False)
    return None


def _kind_from(qualifier: str | None, sentence: str) -> ClauseKind:
    word = (qualifier or "").lower()
    if word in ("relative", "fractional"):
        return "rel"
    if word == "absolute":
        return "abs"
    lowered = sentence.lower()
    if "absolut" in lowered:
        return "abs"
    if "relativ" in lowered:
        return "rel"
    return "unknown"


def _clause_value(name: str, match: re.Match[str], sentence: str) -> tuple[ClauseKind, Fraction]:
    if name == "decimals":
        return "abs", Fraction(5, 10 ** (_count(match.group(1)) + 1))
    if name in ("significant", "accurate_digits"):
        return "rel", Fraction(5, 10 ** _count(match.group(1)))
    if name == "integer":
        return "abs", Fraction(1, 2)
    qualifier, *sci = match.groups()
    if name == "number_first":
        *sci, qualifier = match.groups()
    parsed = _sci_value(tuple(sci))
    if parsed is None:
        raise ValueError("no number")
    value, is_percent = parsed
    return ("rel" if is_percent else _kind_from(qualifier, sentence)), value


def _range_reason(name: str, value: Fraction) -> str:
    if name == "integer":
        return ""
    if value <= _FLOOR:
        return "below_float64_resolution"
    if value > _CEILING:
        return "too_loose_to_be_an_accuracy_claim"
    return ""


@functools.lru_cache(maxsize=512)
def read_statement(problem: str, output_doc: str | None) -> StatementReading:
    """Read every precision clause of a statement and its Outputs docstring (cached)."""
    names = [n for n, _ in _PATTERNS]
    patterns = tuple(p for _, p in _PATTERNS)
    taken: list[tuple[str, int, int]] = []  # (source, start, end) already claimed
    clauses: list[Clause] = []
    ignored: list[Clause] = []
    for match, phrase in find_phrases(patterns, problem, output_doc):
        kind_name = names[patterns.index(match.re)]
        span = (phrase.source, match.start(), match.end())
        if any(s == span[0] and a < span[2] and span[1] < b for s, a, b in taken):
            continue  # an earlier (more specific) pattern already read this text
        try:
            kind, value = _clause_value(kind_name, match, phrase.sentence)
        except (ValueError, ZeroDivisionError, OverflowError):
            continue
        taken.append(span)
        reason = _range_reason(kind_name, value)
        clause = Clause(
            kind,
            value,
            " ".join(phrase.text.split()),
            phrase.source,
            phrase.offset,
            honoured=not reason and phrase.tied,
            reason=reason or ("" if phrase.tied else "not_tied_to_the_reported_output"),
            owners=phrase.owners,
            names_before=phrase.names_before,
            names_after=phrase.names_after,
        )
        (clauses if phrase.tied else ignored).append(clause)
    clauses.sort(key=lambda c: (c.source != "outputs", c.offset))
    outputs = parse_outputs(normalize(output_doc)) if output_doc else ()
    return StatementReading(tuple(clauses), tuple(ignored), outputs)


# --- binding to an expected value -------------------------------------------------------


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def bind_names(entries: tuple[OutputEntry, ...], expected: Any, base: str = "") -> dict[str, str]:
    """Map output names to JSON Pointers in ``expected`` (return order → tuple positions)."""
    names = top_level_names(entries)
    bound: dict[str, str] = {}
    if not names:
        return bound
    if len(names) == 1:
        bound[names[0]] = base
        for entry in entries:
            for name, path in bind_names(entry.children, expected, base).items():
                bound.setdefault(name, path)
        return bound
    if isinstance(expected, dict):
        for entry in entries:
            for name in entry.names:
                if name in expected:
                    path = f"{base}/{_escape(name)}"
                    bound.setdefault(name, path)
                    if len(entry.names) == 1:
                        for sub, sub_path in bind_names(
                            entry.children, expected[name], path
                        ).items():
                            bound.setdefault(sub, sub_path)
        return bound
    if isinstance(expected, list | tuple) and len(expected) == len(names):
        for index, name in enumerate(names):
            bound[name] = f"{base}/{index}"
        for entry in entries:
            if len(entry.names) == 1:
                index = names.index(entry.names[0])
                for sub, sub_path in bind_names(
                    entry.children, expected[index], f"{base}/{index}"
                ).items():
                    bound.setdefault(sub, sub_path)
    return bound


def clause_paths(
    phrase_owners: tuple[str, ...],
    names_before: tuple[str, ...],
    names_after: tuple[str, ...],
    bound: dict[str, str],
    claimed: set[str],
) -> tuple[str, ...] | None:
    """Paths a clause governs, or ``None`` for a blanket clause."""
    if phrase_owners:
        paths = tuple(bound[n] for n in phrase_owners if n in bound)
        return paths or None
    for candidates in (names_before, names_after):
        for name in candidates:
            if name in bound and name not in claimed:
                claimed.add(name)
                return (bound[name],)
    return None


@dataclass(frozen=True)
class BoundPromises:
    """The promises of one statement placed on one expected value."""

    named: tuple[tuple[str, Clause], ...]  # (path prefix, clause), first claim first
    blanket: tuple[Clause, ...]  # clauses that name no output
    any_named: bool

    def for_leaf(
        self, path: str, *, scale: Fraction, is_int: bool, has_leaf_entry: bool
    ) -> Clause | None:
        """The clause governing the numeric leaf at ``path`` (expected magnitude ``scale``):
        the deepest named clause covering it, else the loosest blanket clause."""
        best: tuple[int, Clause] | None = None
        for prefix, clause in self.named:
            if _covers(prefix, path) and (best is None or len(prefix) > best[0]):
                best = (len(prefix), clause)
        if best is not None:
            return best[1]
        if not self.blanket or is_int or (has_leaf_entry and self.any_named):
            return None
        return max(self.blanket, key=lambda c: _width(c, scale))


def _width(clause: Clause, scale: Fraction) -> tuple[Fraction, Fraction]:
    pair = clause.pair()
    return pair.atol + pair.rtol * scale, pair.rtol


def _covers(prefix: str, path: str) -> bool:
    return path == prefix or path.startswith(prefix + "/")


NO_PROMISES = BoundPromises((), (), False)


def bind(reading: StatementReading, expected: Any) -> BoundPromises:
    """Place honoured clauses on the leaves of ``expected``."""
    honoured = [c for c in reading.clauses if c.honoured]
    if not honoured:
        return NO_PROMISES
    names = output_paths(reading.outputs, expected)
    claimed: set[str] = set()
    named: list[tuple[str, Clause]] = []
    blanket: list[Clause] = []
    for clause in honoured:
        paths = clause_paths(clause.owners, clause.names_before, clause.names_after, names, claimed)
        if paths is None:
            blanket.append(clause)
            continue
        for path in paths:
            if all(path != seen for seen, _ in named):  # the first claim on a name wins
                named.append((path, clause))
    return BoundPromises(tuple(named), tuple(blanket), bool(named))


def output_paths(entries: tuple[OutputEntry, ...], expected: Any) -> dict[str, str]:
    """Output names (docstring entries, identifier map keys) and the paths they denote."""
    names = bind_names(entries, expected)
    if isinstance(expected, dict):
        for key in expected:
            if key.isidentifier() and key.lower() not in _VOCABULARY:
                names.setdefault(key, f"/{_escape(key)}")
    return names
