"""How deep untrusted JSON may nest: one limit, for every place such bytes arrive.

A value on the wire (``critpt-value-v1``) nests at most :data:`MAX_JSON_NESTING` brackets
(the codec's depth of 32, a map level costing three). Every reader of untrusted JSON measures
against that one number, plus the fixed wrapping of its own format:

* the runner's channels (a child's case report, the framed result): :data:`FRAME_NESTING`;
* request bodies, batch rows and task rows, whose values sit a few levels down in a row that
  also carries a Responses API object: :data:`BODY_NESTING`, read by :func:`loads_strict`.

The check comes first, before anything recurses over the parsed value (the comparator,
``pickle`` to a comparison worker, pydantic): :func:`loads_bounded` parses with ``json``'s C
parser — whose own recursion is bounded by the interpreter and reported as
:class:`TooDeep` — then measures the result without recursing. Standard library only: the
runner inside the sandbox uses it too.
"""

from __future__ import annotations

import json
from typing import Any

MAX_JSON_NESTING = 104  # brackets in one wire value: 3 * the codec's MAX_DEPTH (32) + 8
FRAME_NESTING = MAX_JSON_NESTING + 8  # result → cases → outcome → value envelope, with room
BODY_NESTING = MAX_JSON_NESTING + 32  # row → task_data → test_cases → case → expected → value …


class TooDeep(ValueError):
    """JSON nested deeper than the reader's limit."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"JSON nested deeper than {limit}")
        self.limit = limit


def loads_bounded(text: str | bytes | bytearray, limit: int, **hooks: Any) -> Any:
    """``json.loads(text, **hooks)``, refused with :class:`TooDeep` past ``limit`` brackets
    (other malformed input raises ``ValueError`` as ``json.loads`` does)."""
    try:
        parsed = json.loads(text, **hooks)
    except RecursionError:  # far deeper than any limit of ours
        raise TooDeep(limit) from None
    if nesting_exceeds(parsed, limit):
        raise TooDeep(limit)
    return parsed


def loads_strict(text: str | bytes | bytearray) -> Any:
    """Untrusted rows and task files: ``json.loads`` that refuses duplicate keys, NaN/Infinity
    literals and nesting past :data:`BODY_NESTING` (ValueError)."""
    return loads_bounded(
        text,
        BODY_NESTING,
        object_pairs_hook=_no_duplicate_keys,
        parse_constant=_refuse_constant,
    )


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicate key {key!r}")
        result[key] = value
    return result


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not valid JSON")


def nesting_exceeds(parsed: Any, limit: int) -> bool:
    """Whether arrays and objects nest deeper than ``limit`` (the outermost counts as 1).

    Measured on the parsed value, without recursion: scanning the text for brackets would
    have to skip strings, which a regular expression does in quadratic time on crafted input.
    """
    pending = [(parsed, 1)]
    while pending:
        item, depth = pending.pop()
        if type(item) is list:
            children = item
        elif type(item) is dict:
            children = list(item.values())
        else:
            continue
        if depth > limit:
            return True
        pending.extend((child, depth + 1) for child in children)
    return False
