"""Step 1 of the pipeline: get the candidate's code out of a model response.

A response is plain text, or a Responses API object. An object that did not complete
(``status`` other than ``completed``, ``incomplete_details`` or ``error`` set, or a last
assistant message marked incomplete) is not scored: it must be regenerated. From a completed
response the code is the first ```` ```python ```` fence, else the first bare fence, else the
whole text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

_PYTHON_FENCE = re.compile(r"^```[ \t]*(?:python|py|python3)[ \t]*\r?\n(.*?)^```", re.M | re.S)
_BARE_FENCE = re.compile(r"^```[ \t]*\r?\n(.*?)^```", re.M | re.S)
_ANY_FENCE_START = re.compile(r"^```", re.M)


@dataclass(frozen=True, slots=True)
class Extraction:
    status: Literal["code", "missing", "too_large", "incomplete"]
    source: str = ""
    reason: str = ""


def extract(response: Any, *, max_bytes: int = 262_144) -> Extraction:
    if isinstance(response, str):
        return _from_text(response, max_bytes)
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
        return _from_text(parts, max_bytes)
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
    return _from_text("\n".join(texts), max_bytes)


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


def _from_text(text: str, max_bytes: int) -> Extraction:
    text = text.strip()
    match = _PYTHON_FENCE.search(text) or _BARE_FENCE.search(text)
    if match:
        source = match.group(1)
    elif _ANY_FENCE_START.search(text):
        # An opening fence that never closes (a truncated answer): take what follows it.
        start = _ANY_FENCE_START.search(text)
        source = text[start.end() :].split("\n", 1)[1] if "\n" in text[start.end() :] else ""
    else:
        source = text
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


def _looks_like_code(source: str) -> bool:
    """Prose with no fence is not code. A text compiles or mentions a definition/return."""
    try:
        compile(source, "<candidate>", "exec", dont_inherit=True)
        return True
    except (SyntaxError, ValueError):
        return bool(re.search(r"^\s*(def|import|from|return)\b", source, re.M))
