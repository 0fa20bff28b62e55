"""Text that survives a Harbor template: no ``{{`` once a placeholder is filled.

Gym's prepare fails on any ``{{ … }}`` left after filling, so every value the templates insert
loses its opening double braces (a ``}}`` alone, as in ``{"k": {"v": 1}}``, opens nothing):

* **prose** (a statement, a code template shown to the agent): a space between two braces,
  ``{{`` → ``{ {``: the same LaTeX group, the same text to a reader;
* **Python source** (the reference in the solution answer): string literals holding ``{{``
  are split in two by implicit concatenation (``"a{{b"`` → ``"a{" "{b"``, prefixes and quotes
  kept), comments get the space. The result must parse to the very same syntax tree
  (``ast.dump`` equal: adjacent literals are one constant), or the source is refused; an
  f-string with ``{{`` (an escaped brace, which cannot be split) is refused too.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize

_DOUBLE = re.compile(r"\{\{")
_STRING_START = re.compile(r"^([A-Za-z]*)('''|\"\"\"|'|\")")


class BracesError(ValueError):
    """The source holds a double brace that cannot be carried unchanged."""


def has_double_braces(text: str) -> bool:
    return bool(_DOUBLE.search(text))


def safe_prose(text: str) -> str:
    """``{{`` → ``{ {``, repeatedly (``{{{`` too)."""
    while has_double_braces(text):
        text = text.replace("{{", "{ {")
    return text


def safe_source(source: str) -> str:
    """``source`` with no double brace and the same syntax tree; :class:`BracesError` when
    that cannot be done."""
    if not has_double_braces(source):
        return source
    try:
        tree = ast.dump(ast.parse(source))
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (SyntaxError, tokenize.TokenError, ValueError) as exc:
        raise BracesError(f"the source does not parse ({exc})") from None
    lines = source.splitlines(keepends=True)
    edits: list[tuple[tuple[int, int], tuple[int, int], str]] = []
    for token in tokens:
        if not has_double_braces(token.string):
            continue
        if token.type == tokenize.COMMENT:
            edits.append((token.start, token.end, safe_prose(token.string)))
        elif token.type == tokenize.STRING:
            edits.append((token.start, token.end, _split_literal(token.string)))
    rewritten = _apply(lines, edits)
    if has_double_braces(rewritten):
        raise BracesError("a double brace ({{) outside a string or a comment")
    try:
        same = ast.dump(ast.parse(rewritten)) == tree
    except SyntaxError:
        same = False
    if not same:
        raise BracesError("splitting its string literals would change the program")
    return rewritten


def _split_literal(text: str) -> str:
    match = _STRING_START.match(text)
    if not match:
        raise BracesError(f"an unreadable string literal {text[:20]!r}")
    prefix, quote = match.groups()
    if "f" in prefix.lower():
        raise BracesError("an f-string holds an escaped brace ({{), which cannot be split")
    body = text[len(prefix) + len(quote) : len(text) - len(quote)]
    # Cut between the two braces of every pair: "a{{b" -> "a{" + "{b".
    pieces = re.split(r"(?<=\{)(?=\{)", body)
    return " ".join(f"{prefix}{quote}{piece}{quote}" for piece in pieces)


def _apply(lines: list[str], edits) -> str:
    """Replace each token span (1-based rows, 0-based columns) by its new text, last first."""
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    text = "".join(lines)
    for (start_row, start_col), (end_row, end_col), new in sorted(edits, reverse=True):
        begin = offsets[start_row - 1] + start_col
        end = offsets[end_row - 1] + end_col
        text = text[:begin] + new + text[end:]
    return text
