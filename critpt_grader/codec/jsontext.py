"""Strict JSON text for envelopes: what :func:`loads` accepts, :func:`dumps` produces.

``json.loads`` alone is too lenient for wire input (it takes duplicate keys, ``NaN`` and
bare numbers), so the hooks below refuse them and the text is bounded before parsing.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

from critpt_grader.codec.wire import MAX_JSON_BYTES, MAX_JSON_NESTING
from critpt_grader.errors import CodecError

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def parse_json(payload: Any) -> Any:
    """Parse envelope JSON text (``str`` or UTF-8 ``bytes``) under the wire's limits."""
    if type(payload) in (bytes, bytearray):
        if len(payload) > MAX_JSON_BYTES:
            raise CodecError("size_limit", "$", f"JSON text over {MAX_JSON_BYTES} bytes")
        try:
            text = bytes(payload).decode("utf-8")
        except UnicodeDecodeError as error:
            raise CodecError("invalid_json", "$", f"bad UTF-8 at byte {error.start}") from None
    elif type(payload) is str:
        text = payload
        size = len(text) if len(text) > MAX_JSON_BYTES else _utf8_size(text)
        if size > MAX_JSON_BYTES:
            raise CodecError("size_limit", "$", f"JSON text over {MAX_JSON_BYTES} bytes")
    else:
        raise CodecError("invalid_type", "$", "JSON text is str or bytes")
    if _nesting(text) > MAX_JSON_NESTING:
        raise CodecError("depth_limit", "$", f"JSON nested deeper than {MAX_JSON_NESTING}")
    try:
        return json.loads(
            text,
            object_pairs_hook=_object_without_duplicates,
            parse_int=_refuse_number,
            parse_float=_refuse_number,
            parse_constant=_refuse_number,
        )
    except (ValueError, RecursionError) as error:
        raise CodecError("invalid_json", "$", str(error)[:200]) from None


def format_json(envelope: dict) -> str:
    """Compact JSON text, refused when it would be over the size a loader accepts."""
    text = json.dumps(envelope, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    if len(text) > MAX_JSON_BYTES or len(text.encode("utf-8")) > MAX_JSON_BYTES:
        raise CodecError("size_limit", "$", f"JSON text over {MAX_JSON_BYTES} bytes")
    return text


def _utf8_size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))  # lone surrogates are refused later


def _nesting(text: str) -> int:
    """Deepest bracket nesting outside strings (json's own recursion is not a limit)."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    if not brackets:
        return 0
    return max(accumulate(1 if char in "[{" else -1 for char in brackets))


def _object_without_duplicates(pairs: list[tuple[str, Any]]) -> dict:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        duplicate = next(key for key, _ in pairs if key in seen or seen.add(key))
        raise CodecError("duplicate_json_key", "$", f"JSON key {duplicate[:40]!r} appears twice")
    return result


def _refuse_number(text: str) -> Any:
    raise CodecError("raw_json_number", "$", f"raw JSON number {text[:40]!r}; numbers are tagged")
