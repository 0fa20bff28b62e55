"""Field-level rules shared by the task loaders: tolerance text, JSON Pointers, identifiers."""

from __future__ import annotations

import keyword
import re
from decimal import Decimal, InvalidOperation

_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,127}")
_ROOT_ALIASES = {"", "/", ".", "root"}
_MAX_TOLERANCE_EXPONENT = 1024


def tolerance_text(value: object) -> str:
    """A tolerance as exact decimal text: a finite, nonnegative decimal given as str, int or
    float. Floats keep their shortest round-trip text; ``"0"`` stays distinct from absent."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        kind = type(value).__name__
        raise ValueError(f"a tolerance must be a decimal number or text, not {kind}")
    text = repr(value) if isinstance(value, float) else str(value).strip()
    try:
        number = Decimal(text)
    except InvalidOperation:
        raise ValueError(f"{text!r} is not a decimal number") from None
    if not number.is_finite():
        raise ValueError(f"{text!r} is not finite")
    if number < 0:
        raise ValueError(f"{text!r} is negative")
    if number != 0 and abs(number.adjusted()) > _MAX_TOLERANCE_EXPONENT:
        raise ValueError(f"{text!r} is out of range")
    return text


def json_pointer(path: object) -> str:
    """Normalize a leaf path: root aliases become ``""``, a missing leading ``/`` is added,
    and only the ``~0``/``~1`` escapes are accepted. Wildcards are not supported."""
    if not isinstance(path, str):
        raise ValueError("a path must be text")
    if path in _ROOT_ALIASES:
        return ""
    if not path.startswith("/"):
        path = "/" + path
    if re.search(r"~(?![01])", path):
        raise ValueError(f"{path!r} has an escape other than ~0 or ~1")
    if "*" in path.split("/"):
        raise ValueError(f"{path!r}: wildcards are not supported")
    return path


def identifier(name: object) -> str:
    if not isinstance(name, str) or not _IDENTIFIER.fullmatch(name) or keyword.iskeyword(name):
        raise ValueError(f"{name!r} is not a valid entry point name")
    return name
