"""Statement text: two same-length views, sentences and tokens.

Everything the statement reader finds is located by offsets into the text as written, so
both views keep the length of the original:

* ``marked``: code fences blanked (newlines kept), display math (``\\begin{equation}…``,
  ``$$…$$``, ``\\[…\\]``) turned into an inert run of ``¦`` that neither ends a sentence nor
  reads as a paragraph break, Unicode minus signs made ASCII, ``\\$`` made a plain ``$``, and
  ``10⁻⁶`` written ``1e-6``. Inline math ``$…$`` and backticks stay, so tokens can see them.
* ``flat``: ``marked`` with ``$`` and backticks blanked, ``\\%`` → `` %``, ``\\pm`` → ``±``:
  the view the phrase lexicons match on.

A **sentence** ends at ``.``/``!``/``?`` before white space (not after ``e.g.``, ``i.e.``,
``Eq.`` and the like), at a blank line, before a line that starts a heading, a bullet or
an enumerated item, or at a line break before a capitalized word that opens sentences and is
no name ("The", "Report", "Keep", …: ``_OPENERS``) unless the line ends in ``,;:(-``.

A **token** is a word (letters, digits, ``_``, inner hyphens), a number, an inline math span,
a code span, the opaque display-math run, ``±`` or one punctuation mark.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
# Where display math opens; it closes at the first "\\end{NAME}" or "\\end{NAME*}", "$$" or
# "\\]" after that (see _display_math).
_DISPLAY_OPEN = re.compile(r"\\begin\{(equation|align|eqnarray|gather|multline)\*?\}|\$\$|\\\[")
_MINUS = str.maketrans({"−": "-", "–": "-", "‒": "-", "‐": "-", "\u2011": "-", "—": "-"})
_SUPER = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_POWER_OF_TEN = re.compile(r"10([⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)")


def _blank(match: re.Match[str], keep_lines: bool) -> str:
    if keep_lines:
        return re.sub(r"[^\n]", " ", match.group(0))
    return "¦" * len(match.group(0))


def marked_view(text: str) -> str:
    """The ``marked`` view (same length as ``text``)."""
    text = text.translate(_MINUS)
    text = _FENCE.sub(lambda m: _blank(m, True), text)
    text = _display_math(text)
    # "10⁻⁶" (4 characters) becomes "1e-6" (4 characters): the same length, and a number the
    # lexicons read. Other superscripts become plain digits.
    text = _POWER_OF_TEN.sub(lambda m: "1e" + m.group(1).translate(_SUPER), text)
    text = text.translate(_SUPER)
    return text.replace("\\$", " $")


def _display_math(text: str) -> str:
    """Display math turned into a run of ``¦``, in one pass: an opener (``\\begin{NAME}``,
    ``$$``, ``\\[``) up to the first closer after it (``\\end{NAME}`` or ``\\end{NAME*}``,
    ``$$``, ``\\]``); an opener whose closer never comes is no display math. This is what one
    regular expression with lazy ``.*?`` did, except that it looked for a missing closer again
    from every later opener, to the end of the text; once a closer is missing after some
    offset it is missing after any later one."""
    pieces: list[str] = []
    done = 0  # text before this offset is in pieces
    pos = 0
    missing: dict[str, int] = {}  # closer -> an offset after which it never occurs
    while (opened := _DISPLAY_OPEN.search(text, pos)) is not None:
        name = opened.group(1)
        if name:
            closers = (f"\\end{{{name}}}", f"\\end{{{name}*}}")
        else:
            closers = ("$$",) if opened.group(0) == "$$" else ("\\]",)
        end = -1
        for closer in closers:
            if missing.get(closer, len(text) + 1) <= opened.end():
                continue
            at = text.find(closer, opened.end())
            if at < 0:
                missing[closer] = opened.end()
            elif end < 0 or at < end:
                end, size = at, len(closer)
        if end < 0:
            pos = opened.start() + 1
            continue
        end += size
        pieces.append(text[done : opened.start()])
        pieces.append("¦" * (end - opened.start()))
        done = pos = end
    pieces.append(text[done:])
    return "".join(pieces)


def flat_view(marked: str) -> str:
    """The ``flat`` view of a ``marked`` text (same length)."""
    text = marked.replace("$", " ").replace("`", " ").replace("\\%", " %")
    text = text.replace("\\pm", "±  ").replace("\\mp", "∓  ")
    for command in ("\\,", "\\!", "\\;", "\\:", "\\ ", "~"):
        text = text.replace(command, " " * len(command))
    return text


def closed(words: str) -> frozenset[str]:
    """A closed word list written as one string."""
    return frozenset(words.split())


# --- sentences -----------------------------------------------------------------------------

_ABBREVIATIONS = closed("e.g i.e etc eq eqs fig figs approx vs cf resp ref refs no dr mr al ca sec")
# Abbreviations that may end a sentence, or not: not when a lower-case word follows.
_UNIT_ABBREVIATIONS = closed("d.p s.f sig.fig sig.figs")
# Capitalized words that open a sentence and are no name: after a line break with no full
# stop before it, they start a new sentence ("Give E in eV⏎Keep 2 decimal places"). A line
# of wrapped prose goes on in lower case, or with a name ("… of the⏎Hubbard model").
_OPENERS = (
    "The|A|An|All|Each|Every|Both|This|These|Those|That|It|Its|Your|Our|We|You|They|There|"
    "Here|Please|Note|Assume|Use|Using|If|When|For|In|To|Round|Report|Give|Return|Compute|"
    "Calculate|Evaluate|Find|Determine|Obtain|Express|Keep|Provide|Estimate|Output|Present|"
    "Write|Quote|List|Record|Predict|Retain|Derive|Specify|Print|Produce|Answer|Tabulate|Only|"
    "Also|Then|Finally|Now|Other|Any|No|Results|Answers|Values|Deviations|Errors"
)
_SENTENCE_END = re.compile(
    r"(?<=[.!?])\s+(?=\S)|\n[ \t]*\n\s*"
    r"|\n(?=[ \t]*(?:#|[-*•][ \t]|\(\w{1,3}\)[ \t]|\d{1,2}[.)][ \t]|Case[ \t]+\d))"
    rf"|(?P<line>\n)(?=[ \t]*(?:{_OPENERS})\b(?![-.]))"
)
_GOES_ON = ",;:(-\\"  # a line ending in one of these goes on in the next


@dataclass(frozen=True, slots=True)
class Sentence:
    """A sentence: ``[start, end)`` in the statement, its ``flat`` text and its section
    (the last ``# heading`` before it, lower case, ``""`` when none)."""

    start: int
    end: int
    text: str
    section: str


def sentences(flat: str) -> tuple[Sentence, ...]:
    """Split the ``flat`` view into sentences."""
    found: list[Sentence] = []
    start = 0
    section = ""
    for match in _SENTENCE_END.finditer(flat):
        if match.group("line") and _goes_on(flat, match.start()):
            continue
        if match.group(0).strip() == "" and flat[match.start() - 1 : match.start()] == ".":
            word = re.search(r"([A-Za-z.]+)\.$", flat[max(0, match.start() - 12) : match.start()])
            if word and word.group(1).lower().strip(".") in _ABBREVIATIONS:
                continue
            if (
                word
                and word.group(1).lower().strip(".") in _UNIT_ABBREVIATIONS
                and flat[match.end() : match.end() + 1].islower()
            ):
                continue  # "to 3 d.p. and B to 1 d.p.": the sentence goes on
        section = _add(found, flat, start, match.start(), section)
        start = match.end()
    _add(found, flat, start, len(flat), section)
    return tuple(found)


def _goes_on(flat: str, at: int) -> bool:
    """Whether the line ending at ``at`` ends in a mark that continues it (a comma …)."""
    k = at - 1
    while k >= 0 and flat[k] in " \t\r":
        k -= 1
    return k < 0 or flat[k] in _GOES_ON


def _add(found: list[Sentence], flat: str, start: int, end: int, section: str) -> str:
    text = flat[start:end]
    lead = len(text) - len(text.lstrip())
    text = text.strip()
    if not text:
        return section
    heading = re.match(r"#+\s*([^\n:]*)", text)
    if heading:
        section = heading.group(1).strip().lower()
    found.append(Sentence(start + lead, start + lead + len(text), text, section))
    return section


# --- tokens --------------------------------------------------------------------------------

TokenKind = Literal["word", "number", "math", "code", "punct"]

_TOKEN = re.compile(
    r"(?P<math>\$[^$\n]+\$)"
    r"|(?P<code>`[^`\n]+`)"
    r"|(?P<opaque>¦+)"
    r"|(?P<number>\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"
    r"|(?P<word>[A-Za-z_][A-Za-z0-9_]*(?:['’][a-z]+)?(?:-[A-Za-z0-9_]+)*)"
    r"|(?P<punct>[,;:()?!\[\].±∓])"
)


@dataclass(frozen=True, slots=True)
class Token:
    kind: TokenKind
    text: str  # a math or code token: its content without the delimiters
    start: int
    end: int

    @property
    def lower(self) -> str:
        return self.text.lower()

    def is_word(self, *words: str) -> bool:
        return self.kind == "word" and self.text.lower() in words


def tokens(marked: str, start: int, end: int) -> tuple[Token, ...]:
    """Tokens of ``marked[start:end]`` with absolute offsets."""
    found: list[Token] = []
    pos = start
    opens = marked.find("\\(", start, end)  # the next "\(" from pos
    closes = newline = start - 1  # the next "\)" and newline after the last place looked
    while pos < end:
        if 0 <= opens < pos:
            opens = marked.find("\\(", pos, end)
        match = _TOKEN.search(marked, pos, end)
        if opens >= 0 and (match is None or opens < match.start()):
            # inline math "\( … \)" on one line: the first "\)" after the opener, unless a
            # line ends before it (what r"\\\([^\n]*?\\\)" first in the pattern matched)
            if closes < opens + 2:
                closes = marked.find("\\)", opens + 2, end)
                closes = end if closes < 0 else closes
            if newline < opens + 2:
                newline = marked.find("\n", opens + 2, end)
                newline = end if newline < 0 else newline
            if closes < end and closes < newline:
                found.append(Token("math", marked[opens + 2 : closes], opens, closes + 2))
                pos = closes + 2
            else:
                pos = opens + 1  # no math opens here, and the "\" is no token
            continue
        if match is None:
            break
        kind = match.lastgroup
        text = match.group(0)
        if kind in ("math", "code"):
            text = text[1:-1]
        elif kind == "opaque":
            kind, text = "math", "¦"
        found.append(Token(kind, text, match.start(), match.end()))  # type: ignore[arg-type]
        pos = match.end()
    return tuple(found)


_MATH_NOISE = re.compile(
    r"\\(?:mathrm|mathop|mathit|mathbf|boldsymbol|operatorname|text|textrm|rm|left|right|"
    r"big|Big|bigg|Bigg|displaystyle)(?![A-Za-z])|\\[,;:! ]|[{}\s$]"
)


def math_key(text: str) -> str:
    """A canonical form of inline math for comparing mentions: ``E_{\\rm ground}`` and
    ``E_ground`` read the same."""
    return _MATH_NOISE.sub("", text)
