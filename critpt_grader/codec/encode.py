"""Python values → wire nodes. Runs inside the sandbox: stdlib only at import time.

Types are matched exactly (``bool`` before ``int``); subclasses of builtin value types are
refused with ``invalid_type``, except numpy scalars, which :mod:`.adapters` lowers first,
namedtuples (encoded as tuples) and ``OrderedDict``/``defaultdict``/``Counter`` (maps).
"""

from __future__ import annotations

import json
import math
import types
from collections import Counter, OrderedDict, defaultdict
from collections.abc import Iterator
from decimal import Decimal
from fractions import Fraction
from typing import Any

from critpt_grader.codec.adapters import UNSET, lower_foreign
from critpt_grader.codec.values import ExactComplex, Legacy, Symbolic, WireSet
from critpt_grader.codec.wire import (
    MAX_DEPTH,
    MAX_DIGITS,
    MAX_NODES,
    check_text,
    child_path,
    int_fits,
    parse_decimal_text,
)
from critpt_grader.errors import CodecError

_REAL_TYPES = (int, float, Fraction, Decimal)
# Not values at all: the candidate returned the wrong kind of thing.
_NOT_VALUES = (
    bytes,
    bytearray,
    memoryview,
    type,
    range,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.ModuleType,
    types.GeneratorType,
    types.CoroutineType,
    types.AsyncGeneratorType,
    Iterator,
)
# Subclasses of these change behaviour the comparator relies on, so they are refused.
_VALUE_BASES = (int, float, complex, str, list, tuple, dict, set, frozenset, Fraction, Decimal)
_MAX_LOWERINGS = 8
_KEY_TYPES = (bool, int, float, Fraction, Decimal, complex, tuple, type(None))


def encode_value(value: Any, *, symbols: dict | None = None) -> list:
    """Encode ``value`` as one node (no envelope). See :func:`critpt_grader.codec.encode`."""
    return _Encoder(symbols).node(value, "$.value", 0)


class _Encoder:
    def __init__(self, symbols: dict | None) -> None:
        self.nodes = 0
        self.symbols = symbols

    def node(self, value: Any, path: str, depth: int) -> list:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise CodecError("size_limit", path, f"more than {MAX_NODES} nodes")
        if depth > MAX_DEPTH:
            raise CodecError("depth_limit", path, f"nested deeper than {MAX_DEPTH}")
        return self.dispatch(value, path, depth, 0)

    def dispatch(self, value: Any, path: str, depth: int, lowerings: int) -> list:
        encoder = _BY_TYPE.get(type(value))
        if encoder is not None:
            return encoder(self, value, path, depth)
        if _is_namedtuple(value):
            # a record of fields is a tuple to the comparator; tuple's own iteration is used
            # so a field-level override cannot change what is encoded
            return ["tuple", self.children(tuple(tuple.__iter__(value)), path, depth)]
        lowered = lower_foreign(value, path, self.symbols)
        if lowered is not UNSET:
            # the lowered value stands in the same place; it may be foreign again (a 0-d
            # object array holds one object), but not endlessly (one that holds itself)
            if lowerings == _MAX_LOWERINGS:
                raise CodecError("depth_limit", path, "value lowers to itself")
            return self.dispatch(lowered, path, depth, lowerings + 1)
        if isinstance(value, _NOT_VALUES):
            raise CodecError("invalid_type", path, f"{type(value).__name__} is not a value")
        if isinstance(value, _VALUE_BASES):
            raise CodecError("invalid_type", path, f"subclass {type(value).__name__} is refused")
        raise CodecError("unsupported_type", path, f"cannot encode {type(value).__name__}")

    # scalars ------------------------------------------------------------------------------

    def null(self, value: None, path: str, depth: int) -> list:
        return ["null"]

    def boolean(self, value: bool, path: str, depth: int) -> list:
        return ["bool", value]

    def integer(self, value: int, path: str, depth: int) -> list:
        return ["int", self.int_text(value, path)]

    def int_text(self, value: int, path: str) -> str:
        if not int_fits(value):
            raise CodecError("size_limit", path, f"integer longer than {MAX_DIGITS} digits")
        return str(value)

    def real(self, value: float, path: str, depth: int) -> list:
        if math.isfinite(value):
            return ["float", value.hex()]
        return ["nonfinite", "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")]

    def fraction(self, value: Fraction, path: str, depth: int) -> list:
        # Fraction keeps itself reduced with a positive denominator
        numerator = self.int_text(value.numerator, path + ".numerator")
        denominator = self.int_text(value.denominator, path + ".denominator")
        return ["fraction", numerator, denominator]

    def decimal(self, value: Decimal, path: str, depth: int) -> list:
        text = str(value)
        parse_decimal_text(text, path)  # refuses sNaN, signed or payload NaN, out-of-range
        return ["decimal", text]

    def native_complex(self, value: complex, path: str, depth: int) -> list:
        return [
            "complex",
            self.node(value.real, path + ".re", depth + 1),
            self.node(value.imag, path + ".im", depth + 1),
        ]

    def exact_complex(self, value: ExactComplex, path: str, depth: int) -> list:
        parts = []
        for part, suffix in ((value.re, ".re"), (value.im, ".im")):
            if type(part) not in _REAL_TYPES:
                raise CodecError("invalid_type", path + suffix, "a complex part is a real number")
            parts.append(self.node(part, path + suffix, depth + 1))
        return ["complex", *parts]

    def text(self, value: str, path: str, depth: int) -> list:
        return ["str", check_text(value, path)]

    def symbolic(self, value: Symbolic, path: str, depth: int) -> list:
        return ["symbolic", check_text(value.text, path)]

    def legacy(self, value: Legacy, path: str, depth: int) -> list:
        return ["legacy", check_text(value.text, path)]

    # composites ---------------------------------------------------------------------------

    def children(self, items: Any, path: str, depth: int) -> list:
        if len(items) > MAX_NODES:
            raise CodecError("size_limit", path, f"more than {MAX_NODES} nodes")
        return [self.node(item, f"{path}[{i}]", depth + 1) for i, item in enumerate(items)]

    def sequence(self, value: list | tuple, path: str, depth: int) -> list:
        return ["list" if type(value) is list else "tuple", self.children(value, path, depth)]

    def unordered(self, value: Any, path: str, depth: int) -> list:
        members = value.items if type(value) is WireSet else value
        nodes = self.children(tuple(members), path, depth)
        # members sorted by their node's JSON: the same set always encodes the same way
        nodes.sort(key=_canonical_json)
        return ["set", nodes]

    def mapping(self, value: dict, path: str, depth: int) -> list:
        if len(value) > MAX_NODES:
            raise CodecError("size_limit", path, f"more than {MAX_NODES} nodes")
        entries = []
        seen: set[str] = set()
        for key, item in dict.items(value):
            text = _key_text(key, path, 0)
            key_path = child_path(path, text)
            if text in seen:
                raise CodecError("invalid_text", key_path, "two keys stringify the same")
            seen.add(text)
            entries.append([text, self.node(item, key_path, depth + 1)])
        return ["map", entries]


def _is_namedtuple(value: Any) -> bool:
    """Made by ``collections.namedtuple`` or ``typing.NamedTuple``: a direct tuple subclass
    with the generated ``_fields`` and ``_make``."""
    kind = type(value)
    return (
        kind.__bases__ == (tuple,)
        and isinstance(kind.__dict__.get("_fields"), tuple)
        and "_make" in kind.__dict__
    )


def _canonical_json(node: list) -> str:
    return json.dumps(node, ensure_ascii=True, separators=(",", ":"))


def _key_text(key: Any, path: str, depth: int) -> str:
    """A map key as text: str unchanged, the scalar key types through ``str()`` (``1`` →
    ``"1"``, ``(0, 0)`` → ``"(0, 0)"``); numpy scalar keys count as their plain value."""
    if type(key) is str:
        return check_text(key, path)
    if type(key) not in _KEY_TYPES:
        lowered = lower_foreign(key, path, None)
        if lowered is UNSET or type(lowered) not in (str, *_KEY_TYPES):
            raise CodecError("invalid_type", path, f"map key of type {type(key).__name__}")
        return _key_text(lowered, path, depth)
    if depth > MAX_DEPTH:
        raise CodecError("depth_limit", path, "map key nested too deep")
    if type(key) is tuple:
        for member in key:  # str() of a tuple prints its members' repr: plain key types only
            if type(member) is not str and type(member) not in _KEY_TYPES:
                raise CodecError("invalid_type", path, f"tuple key holds {type(member).__name__}")
            _key_text(member, path, depth + 1)
    elif type(key) is int and not int_fits(key):
        raise CodecError("size_limit", path, f"integer key longer than {MAX_DIGITS} digits")
    elif type(key) is Fraction and not (int_fits(key.numerator) and int_fits(key.denominator)):
        raise CodecError("size_limit", path, f"fraction key longer than {MAX_DIGITS} digits")
    return check_text(str(key), path)


_BY_TYPE = {
    type(None): _Encoder.null,
    bool: _Encoder.boolean,
    int: _Encoder.integer,
    float: _Encoder.real,
    Fraction: _Encoder.fraction,
    Decimal: _Encoder.decimal,
    complex: _Encoder.native_complex,
    ExactComplex: _Encoder.exact_complex,
    str: _Encoder.text,
    Symbolic: _Encoder.symbolic,
    Legacy: _Encoder.legacy,
    list: _Encoder.sequence,
    tuple: _Encoder.sequence,
    set: _Encoder.unordered,
    frozenset: _Encoder.unordered,
    WireSet: _Encoder.unordered,
    dict: _Encoder.mapping,
    # the standard library's dicts with extra behaviour hold plain key-value data
    OrderedDict: _Encoder.mapping,
    defaultdict: _Encoder.mapping,
    Counter: _Encoder.mapping,
}
