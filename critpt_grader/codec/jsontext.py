"""Strict JSON text for envelopes: what :func:`loads` accepts, :func:`dumps` produces.

``json.loads`` alone is too lenient for wire input (it takes duplicate keys, ``NaN`` and
bare numbers), so the hooks below refuse them; the size is bounded before parsing and the
nesting by :func:`critpt_grader.jsonlimits.loads_bounded`, the one reader of untrusted JSON.
"""

from __future__ import annotations

import json
from typing import Any

from critpt_grader.codec.wire import MAX_JSON_BYTES, MAX_JSON_NESTING
from critpt_grader.errors import CodecError
from critpt_grader.jsonlimits import TooDeep, loads_bounded

_TOO_DEEP = f"JSON nested deeper than {MAX_JSON_NESTING}"


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
    try:
        return loads_bounded(
            text,
            MAX_JSON_NESTING,
            object_pairs_hook=_object_without_duplicates,
            parse_int=_refuse_number,
            parse_float=_refuse_number,
            parse_constant=_refuse_number,
        )
    except TooDeep:
        raise CodecError("depth_limit", "$", _TOO_DEEP) from None
    except ValueError as error:
        raise CodecError("invalid_json", "$", str(error)[:200]) from None


def format_json(envelope: dict) -> str:
    """Compact JSON text, refused when it would be over the size a loader accepts."""
    text = json.dumps(envelope, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    if len(text) > MAX_JSON_BYTES or len(text.encode("utf-8")) > MAX_JSON_BYTES:
        raise CodecError("size_limit", "$", f"JSON text over {MAX_JSON_BYTES} bytes")
    return text


def _utf8_size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))  # lone surrogates are refused later


def _object_without_duplicates(pairs: list[tuple[str, Any]]) -> dict:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        duplicate = next(key for key, _ in pairs if key in seen or seen.add(key))
        raise CodecError("duplicate_json_key", "$", f"JSON key {duplicate[:40]!r} appears twice")
    return result


def _refuse_number(text: str) -> Any:
    raise CodecError("raw_json_number", "$", f"raw JSON number {text[:40]!r}; numbers are tagged")
