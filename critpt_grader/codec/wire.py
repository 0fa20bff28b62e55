"""Shape of ``critpt-value-v1``: the format name, the limits, the tag table, and the checks on
node texts that the encoder and the decoder share (so both accept exactly the same texts)."""

from __future__ import annotations

import json
import re
from decimal import Decimal

from critpt_grader.errors import CodecError
from critpt_grader.jsonlimits import MAX_JSON_NESTING

FORMAT = "critpt-value-v1"

MAX_DEPTH = 32  # the root node has depth 0; a child is one deeper than its parent
MAX_NODES = 32768  # every node counts, complex parts included
MAX_TEXT = 16384  # characters and UTF-8 bytes of one text (str, symbolic, legacy, map key)
MAX_DIGITS = 1024  # decimal digits of an int text, a fraction part or a decimal coefficient
MAX_DECIMAL_EXPONENT = 1024
MAX_JSON_BYTES = 524288  # UTF-8 bytes of one envelope as JSON text
# Brackets; a map level costs three. Defined once in jsonlimits, for every reader of the wire.
assert MAX_JSON_NESTING == 3 * MAX_DEPTH + 8

# tag -> number of array elements including the tag
ARITY = {
    "null": 1,
    "bool": 2,
    "int": 2,
    "float": 2,
    "fraction": 3,
    "decimal": 2,
    "nonfinite": 2,
    "complex": 3,
    "list": 2,
    "tuple": 2,
    "set": 2,
    "map": 2,
    "str": 2,
    "symbolic": 2,
    "legacy": 2,
}
COMPLEX_PART_TAGS = frozenset({"int", "float", "fraction", "decimal", "nonfinite"})
NONFINITE_TEXTS = ("nan", "inf", "-inf")
DECIMAL_SPECIALS = frozenset({"NaN", "Infinity", "-Infinity"})

_INT_TEXT = re.compile(r"-?(?:0|[1-9][0-9]*)")
_FLOAT_HEX = re.compile(r"-?0x[01]\.[0-9a-f]+p[+-][0-9]{1,4}")
_DECIMAL_TEXT = re.compile(
    r"[+-]?(?P<int>[0-9]+)?(?:\.(?P<frac>[0-9]*))?(?:[eE](?P<exp>[+-]?[0-9]+))?"
)
_MAX_INT_BITS = (10**MAX_DIGITS).bit_length()  # every int of MAX_DIGITS digits fits
_MAX_FLOAT_HEX_CHARS = 32  # '-0x1.fffffffffffffp-1022' is 24


def child_path(path: str, key: int | str) -> str:
    """``$.value[2]`` for an array position, ``$.value["k"]`` for a map key."""
    if type(key) is int:
        return f"{path}[{key}]"
    return f"{path}[{json.dumps(key)}]"


def check_text(value: object, path: str, code: str = "invalid_text") -> str:
    """A JSON string within the text limit that is valid Unicode (no lone surrogates)."""
    if type(value) is not str:
        raise CodecError(code, path, f"expected a string, got {type(value).__name__}")
    if len(value) > MAX_TEXT:
        raise CodecError("size_limit", path, f"text longer than {MAX_TEXT} characters")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        raise CodecError("invalid_text", path, "lone surrogate in text") from None
    if size > MAX_TEXT:
        raise CodecError("size_limit", path, f"text longer than {MAX_TEXT} UTF-8 bytes")
    return value


def int_fits(value: int) -> bool:
    """At most MAX_DIGITS decimal digits; checked on the bit length first because ``str()``
    of a huge int is slow (and refused by Python beyond 4300 digits)."""
    if value.bit_length() > _MAX_INT_BITS:
        return False
    return len(str(abs(value))) <= MAX_DIGITS


def parse_int_text(value: object, path: str) -> int:
    """``-?(0|[1-9][0-9]*)`` without ``-0``, at most MAX_DIGITS digits."""
    if type(value) is not str:
        raise CodecError("invalid_int", path, f"expected int text, got {type(value).__name__}")
    digits = len(value) - value.startswith("-")
    if digits > MAX_DIGITS:
        raise CodecError("size_limit", path, f"integer longer than {MAX_DIGITS} digits")
    if not _INT_TEXT.fullmatch(value) or value == "-0":
        raise CodecError("invalid_int", path, f"not a canonical integer: {value[:40]!r}")
    return int(value)


def parse_float_hex(value: object, path: str) -> float:
    """A finite binary64 written exactly as ``float.hex()`` writes it."""
    if type(value) is not str or len(value) > _MAX_FLOAT_HEX_CHARS:
        raise CodecError("invalid_float", path, "expected float.hex() text")
    if not _FLOAT_HEX.fullmatch(value):
        raise CodecError("invalid_float", path, f"not float.hex() text: {value!r}")
    try:
        number = float.fromhex(value)
    except (ValueError, OverflowError):
        raise CodecError("invalid_float", path, f"out of binary64 range: {value!r}") from None
    if number.hex() != value:  # one text per float: no other spellings, no rounding
        raise CodecError("invalid_float", path, f"not canonical float.hex() text: {value!r}")
    return number


def parse_decimal_text(value: object, path: str) -> Decimal:
    """``str(Decimal)`` text within the digit and exponent limits; NaN and ±Infinity allowed."""
    if type(value) is not str:
        raise CodecError("invalid_decimal", path, "expected decimal text")
    if value in DECIMAL_SPECIALS:
        return Decimal(value)
    if len(value) > MAX_DIGITS + 16:
        raise CodecError("size_limit", path, f"decimal longer than {MAX_DIGITS} digits")
    match = _DECIMAL_TEXT.fullmatch(value)
    if match is None or (match["int"] is None and not match["frac"]):
        raise CodecError("invalid_decimal", path, f"not decimal text: {value[:40]!r}")
    whole, fraction, exponent_text = match["int"] or "", match["frac"] or "", match["exp"]
    if len(whole) + len(fraction) > MAX_DIGITS:
        raise CodecError("size_limit", path, f"decimal longer than {MAX_DIGITS} digits")
    exponent = 0
    if exponent_text is not None:
        if len(exponent_text.lstrip("+-")) > 4:
            raise CodecError("invalid_decimal", path, "exponent longer than 4 digits")
        exponent = int(exponent_text)
    if abs(exponent) > MAX_DECIMAL_EXPONENT or abs(exponent - len(fraction)) > MAX_DECIMAL_EXPONENT:
        raise CodecError("invalid_decimal", path, f"exponent out of range: {value[:40]!r}")
    return Decimal(value)
