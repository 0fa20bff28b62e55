"""Step 1 of the pipeline: get the candidate's code out of a model response.

A response is plain text, or a Responses API object. An object that did not complete
(``status`` other than ``completed``, ``incomplete_details`` or ``error`` set, or a last
assistant message marked incomplete) is not scored: it must be regenerated.

Which fence is the answer
  Fences are found by a CommonMark parser (markdown-it-py), so ```` ``` ```` and ``~~~``
  fences, any info string (```` ```Python ````, ```` ```py ````, ```` ```python3 ````), fences
  indented inside list items or block quotes (their content dedented), and long fences
  (```` ```` ```` closes only on four or more backticks, so ```` ``` ```` inside is content)
  are read as Markdown renders them. An unclosed fence runs to the end of the text (a
  truncated answer). Raw HTML blocks are not recognised, so a ``</think>`` line cannot swallow
  the fence after it.

  The **candidate blocks** are the fences tagged python-ish (``python``, ``py``, ``python3``,
  ``py3``, ``ipython``…, any case) or not tagged at all; when there is none, every fence is a
  candidate (a ```` ```text ```` block is never preferred over a Python one). Of those,
  the ``fence`` setting picks exactly one — a response's blocks are never tried in turn:

  * ``last-defining`` (default): the last candidate that **defines the entry point** — a
    top-level ``def name``, ``async def name`` or assignment ``name = …``, found with
    :mod:`ast` (by a line-start regex when the block does not parse) — else the last
    candidate. A draft followed by the final code grades the final code; a final answer
    followed by a usage example grades the answer.
  * ``last``: the last candidate, like CritPt's official harness and NeMo Gym's ``critpt``
    server (which take the last ```` ```python ```` or bare block).
  * ``first``: the first python-tagged block, else the first untagged one, else the first
    fence, like the PR #3430 custom grader.

  A response with no fence at all is taken whole. Either way the code must compile or have a
  ``def``/``import``/``return`` line; otherwise it is prose and holds no code.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any, Literal

from markdown_it import MarkdownIt

FenceRule = Literal["last-defining", "last", "first"]

# CommonMark block structure only: no raw HTML blocks (a "<think>" or "</think>" line would
# otherwise open one and hide the fences up to the next blank line) and no inline parsing.
_MARKDOWN = MarkdownIt("commonmark").disable(["html_block", "inline"])
_PYTHONISH = re.compile(r"(?:i?python|py)(?:[23](?:\.\d+)?)?", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Extraction:
    status: Literal["code", "missing", "too_large", "incomplete"]
    source: str = ""
    reason: str = ""


@dataclass(frozen=True, slots=True)
class _Block:
    language: str  # the info string's first word, as written ("" when untagged)
    content: str

    @property
    def pythonish(self) -> bool:
        return bool(_PYTHONISH.fullmatch(self.language))


def extract(
    response: Any,
    *,
    max_bytes: int = 262_144,
    entrypoint: str | None = None,
    fence: FenceRule = "last-defining",
) -> Extraction:
    """The code to grade in ``response`` (text or a Responses API dict).

    ``entrypoint`` is the function the task calls; the default ``fence`` rule grades the
    last candidate block that defines it (without a name, the last candidate block).
    """
    if isinstance(response, str):
        return _from_text(response, max_bytes, entrypoint, fence)
    if not isinstance(response, dict):
        return Extraction("missing", reason=f"a response of type {type(response).__name__}")
    incomplete = _incompleteness(response)
    if incomplete:
        return Extraction("incomplete", reason=incomplete)
    message = _last_assistant_message(response.get("output"))
    if message is None:
        return Extraction("missing", reason="no assistant message in the response")
    parts = message.get("content")
    if isinstance(parts, str):
        return _from_text(parts, max_bytes, entrypoint, fence)
    if not isinstance(parts, list):
        return Extraction("missing", reason="the assistant message has no content")
    texts = []
    for part in parts:
        if not isinstance(part, dict) or part.get("type") != "output_text":
            kind = part.get("type") if isinstance(part, dict) else type(part).__name__
            return Extraction("missing", reason=f"a content part of type {kind!r}")
        text = part.get("text")
        if not isinstance(text, str):
            return Extraction("missing", reason="an output_text part without text")
        texts.append(text)
    return _from_text("\n".join(texts), max_bytes, entrypoint, fence)


def _incompleteness(response: dict[str, Any]) -> str:
    status = response.get("status", "completed")
    if status != "completed":
        return f"response status is {status!r}"
    if response.get("incomplete_details"):
        return "response has incomplete_details"
    if response.get("error"):
        return "response carries an error"
    message = _last_assistant_message(response.get("output"))
    if message is not None and message.get("status") not in (None, "completed"):
        return f"last assistant message status is {message.get('status')!r}"
    return ""


def _last_assistant_message(output: Any) -> dict[str, Any] | None:
    if not isinstance(output, list):
        return None
    for item in reversed(output):
        if (
            isinstance(item, dict)
            and item.get("type", "message") == "message"
            and item.get("role") == "assistant"
        ):
            return item
    return None


def _from_text(text: str, max_bytes: int, entrypoint: str | None, fence: FenceRule) -> Extraction:
    text = text.strip()
    blocks = _fenced_blocks(text)
    if blocks is None:
        return Extraction("missing", reason="the response contains a NUL character")
    source = _choose(blocks, entrypoint, fence, max_bytes).content if blocks else text
    source = source.strip()
    if not source:
        return Extraction("missing", reason="the response holds no code")
    if "\x00" in source:
        return Extraction("missing", reason="the code contains a NUL character")
    if len(source.encode("utf-8", "surrogatepass")) > max_bytes:
        return Extraction("too_large", reason=f"the code is over {max_bytes} bytes")
    if not _looks_like_code(source):
        return Extraction("missing", reason="the response holds prose but no code")
    return Extraction("code", source=source)


def _fenced_blocks(text: str) -> list[_Block] | None:
    """Every fenced code block, in order, as CommonMark reads it (None: see below)."""
    if "```" not in text and "~~~" not in text:
        return []
    # markdown-it turns NUL into U+FFFD. Carry NULs through under a character the text does
    # not use, so a NUL in the code is still seen (and refused) rather than silently changed;
    # a text that leaves no such character free is refused whole (None).
    nul = ""
    if "\x00" in text:
        nul = next((chr(c) for c in range(0xE000, 0xF900) if chr(c) not in text), "")
        if not nul:
            return None
        text = text.replace("\x00", nul)
    blocks = []
    for token in _MARKDOWN.parse(text):
        if token.type == "fence":
            content = token.content.replace(nul, "\x00") if nul else token.content
            words = token.info.split(maxsplit=1)
            # Pandoc writes the language as {.python}; the rest of the info string is ignored.
            language = words[0].strip("{}.") if words else ""
            blocks.append(_Block(language, content))
    return blocks


def _choose(
    blocks: list[_Block], entrypoint: str | None, rule: FenceRule, max_bytes: int
) -> _Block:
    """The one block to grade (``blocks`` is not empty); see the module docstring."""
    candidates = [b for b in blocks if b.pythonish or not b.language] or blocks
    if rule == "first":
        tagged = [b for b in candidates if b.pythonish]
        return (tagged or candidates)[0]
    if rule == "last-defining" and entrypoint:
        for block in reversed(candidates):
            if _defines(block.content, entrypoint, max_bytes):
                return block
    return candidates[-1]


def _defines(source: str, name: str, max_bytes: int) -> bool:
    """Does ``source`` define ``name`` at top level (``def``, ``async def``, ``name =``)?"""
    if len(source.encode("utf-8", "surrogatepass")) <= max_bytes:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass  # a block that does not parse (or is too deep): read it by its lines
        else:
            return any(_binds(node, name) for node in tree.body)
    word = re.escape(name)
    pattern = rf"^(?:(?:async[ \t]+)?def[ \t]+{word}\b|{word}[ \t]*(?::[^=\n]*)?=(?!=))"
    return re.search(pattern, source, re.MULTILINE) is not None


def _binds(node: ast.stmt, name: str) -> bool:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return node.name == name
    if isinstance(node, ast.Assign):
        return any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
    if isinstance(node, ast.AnnAssign):
        return isinstance(node.target, ast.Name) and node.target.id == name
    return False


def _looks_like_code(source: str) -> bool:
    """Prose with no fence is not code. A text compiles or mentions a definition/return."""
    try:
        compile(source, "<candidate>", "exec", dont_inherit=True)
        return True
    except (SyntaxError, ValueError):
        return bool(re.search(r"^\s*(def|import|from|return)\b", source, re.M))
