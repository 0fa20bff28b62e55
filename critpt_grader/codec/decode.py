"""Wire nodes → Python values. Pure, total on any input: whatever the shape, it returns a
value or raises :class:`CodecError` naming the offending node; nothing is evaluated."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from critpt_grader.codec.values import ExactComplex, Legacy, Symbolic, WireSet
from critpt_grader.codec.wire import (
    ARITY,
    COMPLEX_PART_TAGS,
    FORMAT,
    MAX_DEPTH,
    MAX_DIGITS,
    MAX_NODES,
    NONFINITE_TEXTS,
    check_text,
    child_path,
    int_fits,
    parse_decimal_text,
    parse_float_hex,
    parse_int_text,
)
from critpt_grader.errors import CodecError

_NONFINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
COMPLEX_ALIAS_KEY = "__complex__"


def decode(envelope: Any) -> Any:
    """Decode ``{"format": "critpt-value-v1", "value": node}``."""
    if (
        type(envelope) is not dict
        or envelope.keys() != {"format", "value"}
        or type(envelope["format"]) is not str
        or envelope["format"] != FORMAT
    ):
        raise CodecError("invalid_envelope", "$", f'expected {{"format": "{FORMAT}", "value": …}}')
    return decode_value(envelope["value"])


def decode_value(node: Any, path: str = "$.value") -> Any:
    """Decode one node (no envelope); ``path`` names it in error messages."""
    return _Decoder().node(node, path, 0)


class _Decoder:
    def __init__(self) -> None:
        self.nodes = 0

    def node(self, node: Any, path: str, depth: int) -> Any:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise CodecError("size_limit", path, f"more than {MAX_NODES} nodes")
        if depth > MAX_DEPTH:
            raise CodecError("depth_limit", path, f"nested deeper than {MAX_DEPTH}")
        if type(node) is dict:
            return self.complex_alias(node, path)
        if type(node) is not list or not node:
            raise CodecError("invalid_type", path, "a node is a non-empty array")
        tag = node[0]
        if type(tag) is not str:
            raise CodecError("invalid_type", path, "a node starts with a string tag")
        arity = ARITY.get(tag)
        if arity is None:
            raise CodecError("unknown_tag", path, f"unknown tag {tag[:40]!r}")
        if len(node) != arity:
            raise CodecError("invalid_arity", path, f"{tag!r} takes {arity - 1} element(s)")
        return getattr(self, "tag_" + tag)(node, path, depth)

    # scalars ------------------------------------------------------------------------------

    def tag_null(self, node: list, path: str, depth: int) -> None:
        return None

    def tag_bool(self, node: list, path: str, depth: int) -> bool:
        if type(node[1]) is not bool:
            raise CodecError("invalid_bool", path, "expected a JSON boolean")
        return node[1]

    def tag_int(self, node: list, path: str, depth: int) -> int:
        return parse_int_text(node[1], path)

    def tag_float(self, node: list, path: str, depth: int) -> float:
        return parse_float_hex(node[1], path)

    def tag_nonfinite(self, node: list, path: str, depth: int) -> float:
        if type(node[1]) is not str or node[1] not in NONFINITE_TEXTS:
            raise CodecError("invalid_nonfinite", path, 'expected "nan", "inf" or "-inf"')
        return _NONFINITE[node[1]]

    def tag_fraction(self, node: list, path: str, depth: int) -> Fraction:
        numerator = parse_int_text(node[1], path + ".numerator")
        denominator = parse_int_text(node[2], path + ".denominator")
        if denominator <= 0:
            raise CodecError("invalid_fraction", path + ".denominator", "must be positive")
        return Fraction(numerator, denominator)

    def tag_decimal(self, node: list, path: str, depth: int) -> Any:
        return parse_decimal_text(node[1], path)

    def tag_str(self, node: list, path: str, depth: int) -> str:
        return check_text(node[1], path)

    def tag_symbolic(self, node: list, path: str, depth: int) -> Symbolic:
        return Symbolic(check_text(node[1], path))

    def tag_legacy(self, node: list, path: str, depth: int) -> Legacy:
        return Legacy(check_text(node[1], path))

    def tag_complex(self, node: list, path: str, depth: int) -> complex | ExactComplex:
        real = self.complex_part(node[1], path + ".re", depth)
        imag = self.complex_part(node[2], path + ".im", depth)
        if type(real) is float and type(imag) is float:
            return complex(real, imag)
        return ExactComplex(real, imag)

    def complex_part(self, part: Any, path: str, depth: int) -> Any:
        if not (type(part) is list and part and type(part[0]) is str):
            raise CodecError("invalid_complex", path, "a complex part is a node")
        if part[0] not in COMPLEX_PART_TAGS:
            raise CodecError("invalid_complex", path, "a part is int, float, fraction or decimal")
        return self.node(part, path, depth + 1)

    # composites ---------------------------------------------------------------------------

    def items(self, node: list, path: str) -> list:
        items = node[1]
        if type(items) is not list:
            raise CodecError("invalid_type", path, f"{node[0]!r} holds an array of nodes")
        if len(items) > MAX_NODES:
            raise CodecError("size_limit", path, f"more than {MAX_NODES} nodes")
        return items

    def tag_list(self, node: list, path: str, depth: int) -> list:
        items = self.items(node, path)
        return [self.node(item, f"{path}[{i}]", depth + 1) for i, item in enumerate(items)]

    def tag_tuple(self, node: list, path: str, depth: int) -> tuple:
        return tuple(self.tag_list(node, path, depth))

    def tag_set(self, node: list, path: str, depth: int) -> WireSet:
        return WireSet(tuple(self.tag_list(node, path, depth)))

    def tag_map(self, node: list, path: str, depth: int) -> dict:
        result: dict[str, Any] = {}
        for i, entry in enumerate(self.items(node, path)):
            entry_path = f"{path}[{i}]"
            if type(entry) is not list:
                raise CodecError("invalid_type", entry_path, "a map entry is [key, node]")
            if len(entry) != 2:
                raise CodecError("invalid_arity", entry_path, "a map entry is [key, node]")
            key = check_text(entry[0], entry_path)
            key_path = child_path(path, key)
            if key in result:
                raise CodecError("duplicate_map_key", key_path, "key appears twice")
            result[key] = self.node(entry[1], key_path, depth + 1)
        return result

    # delivered alias ----------------------------------------------------------------------

    def complex_alias(self, node: dict, path: str) -> complex | ExactComplex:
        """``{"__complex__": [re, im]}`` from delivered task data: two finite int/float parts."""
        parts = node.get(COMPLEX_ALIAS_KEY) if node.keys() == {COMPLEX_ALIAS_KEY} else None
        if type(parts) is not list or len(parts) != 2:
            raise CodecError("invalid_type", path, "a node is an array (or a __complex__ alias)")
        for part, suffix in zip(parts, (".re", ".im"), strict=True):
            if type(part) is float and not math.isfinite(part):
                raise CodecError("invalid_complex", path + suffix, "alias parts are finite")
            if type(part) is int and not int_fits(part):
                raise CodecError("size_limit", path + suffix, f"more than {MAX_DIGITS} digits")
            if type(part) not in (int, float):
                raise CodecError("invalid_complex", path + suffix, "alias parts are int or float")
        real, imag = parts
        if type(real) is float and type(imag) is float:
            return complex(real, imag)
        return ExactComplex(real, imag)
