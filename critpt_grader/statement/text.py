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
``Eq.`` and the like), at a blank line, or before a line that starts a heading, a bullet or
an enumerated item. A **token** is a word (letters, digits, ``_``, inner hyphens), a number,
an inline math span, a code span, the opaque display-math run, ``±`` or one punctuation mark.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_DISPLAY_MATH = re.compile(
    r"\\begin\{(equation|align|eqnarray|gather|multline)\*?\}.*?\\end\{\1\*?\}|\$\$.*?\$\$"
    r"|\\\[.*?\\\]",
    re.DOTALL,
)
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
    text = _DISPLAY_MATH.sub(lambda m: _blank(m, False), text)
    # "10⁻⁶" (4 characters) becomes "1e-6" (4 characters): the same length, and a number the
    # lexicons read. Other superscripts become plain digits.
    text = _POWER_OF_TEN.sub(lambda m: "1e" + m.group(1).translate(_SUPER), text)
    text = text.translate(_SUPER)
    return text.replace("\\$", " $")


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
_SENTENCE_END = re.compile(
    r"(?<=[.!?])\s+(?=\S)|\n[ \t]*\n\s*"
    r"|\n(?=[ \t]*(?:#|[-*•][ \t]|\(\w{1,3}\)[ \t]|\d{1,2}[.)][ \t]|Case[ \t]+\d))"
)


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
        if match.group(0).strip() == "" and flat[match.start() - 1 : match.start()] == ".":
            word = re.search(r"([A-Za-z.]+)\.$", flat[max(0, match.start() - 12) : match.start()])
            if word and word.group(1).lower().strip(".") in _ABBREVIATIONS:
                continue
        section = _add(found, flat, start, match.start(), section)
        start = match.end()
    _add(found, flat, start, len(flat), section)
    return tuple(found)


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
    r"(?P<math>\$[^$\n]+\$|\\\([^\n]*?\\\))"
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
    for match in _TOKEN.finditer(marked, start, end):
        kind = match.lastgroup
        text = match.group(0)
        if kind == "math":
            text = text[1:-1] if text.startswith("$") else text[2:-2]
        elif kind == "code":
            text = text[1:-1]
        elif kind == "opaque":
            kind, text = "math", "¦"
        found.append(Token(kind, text, match.start(), match.end()))  # type: ignore[arg-type]
    return tuple(found)


_MATH_NOISE = re.compile(
    r"\\(?:mathrm|mathop|mathit|mathbf|boldsymbol|operatorname|text|textrm|rm|left|right|"
    r"big|Big|bigg|Bigg|displaystyle)(?![A-Za-z])|\\[,;:! ]|[{}\s$]"
)


def math_key(text: str) -> str:
    """A canonical form of inline math for comparing mentions: ``E_{\\rm ground}`` and
    ``E_ground`` read the same."""
    return _MATH_NOISE.sub("", text)
