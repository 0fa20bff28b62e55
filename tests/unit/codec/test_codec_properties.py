"""Property tests: decoding an encoding gives back an identical value, and malformed wire input
of any shape raises CodecError and nothing else."""

from __future__ import annotations

import copy
import json
import math
import struct
from decimal import Decimal
from fractions import Fraction
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from critpt_grader.codec import decode, decode_value, dumps, encode, encode_value, loads
from critpt_grader.codec.values import ExactComplex, Legacy, Symbolic, WireSet
from critpt_grader.errors import CodecError

PROPERTY = settings(max_examples=100, deadline=None)


def identical(a: Any, b: Any) -> bool:
    """Same types all the way down, floats bit for bit (any NaN matches only a NaN),
    Decimals with the same sign, digits and exponent, maps in the same key order."""
    if type(a) is not type(b):
        return False
    if type(a) is float:
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return struct.pack("<d", a) == struct.pack("<d", b)
    if type(a) is complex:
        return identical(a.real, b.real) and identical(a.imag, b.imag)
    if type(a) is ExactComplex:
        return identical(a.re, b.re) and identical(a.im, b.im)
    if type(a) is Decimal:
        return a.as_tuple() == b.as_tuple()
    if type(a) in (list, tuple):
        return len(a) == len(b) and all(map(identical, a, b))
    if type(a) is WireSet:
        return identical(a.items, b.items)
    if type(a) is dict:
        return list(a) == list(b) and all(identical(a[k], b[k]) for k in a)
    return a == b


def test_identical_is_strict():
    assert identical(math.nan, -math.nan)
    assert not identical(0.0, -0.0)
    assert not identical(1, 1.0)
    assert not identical(Decimal("1.0"), Decimal("1.00"))
    assert not identical({"a": 1, "b": 2}, {"b": 2, "a": 1})
    assert not identical([1], (1,))


# --- strategies -------------------------------------------------------------------------------

MAX_INT = 10**1024 - 1
integers = st.one_of(st.integers(), st.integers(min_value=-MAX_INT, max_value=MAX_INT))
floats = st.one_of(
    st.floats(),
    st.sampled_from([0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1.7976931348623157e308]),
)
fractions = st.builds(
    Fraction, st.integers(-(10**60), 10**60), st.integers(min_value=1, max_value=10**60)
)
decimals = st.one_of(
    st.builds(
        lambda sign, digits, exponent: Decimal((sign, tuple(digits), exponent)),
        st.integers(0, 1),
        st.lists(st.integers(0, 9), min_size=1, max_size=80),
        st.integers(-900, 900),
    ),
    st.sampled_from([Decimal("NaN"), Decimal("Infinity"), Decimal("-Infinity"), Decimal("-0")]),
)
exact_reals = st.one_of(integers, fractions, decimals)
texts = st.text(max_size=40)  # hypothesis leaves out surrogates
complexes = st.builds(complex, floats, floats)
exact_complexes = st.one_of(
    st.builds(ExactComplex, exact_reals, st.one_of(exact_reals, floats)),
    st.builds(ExactComplex, floats, exact_reals),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    integers,
    floats,
    fractions,
    decimals,
    complexes,
    exact_complexes,
    texts,
    st.builds(Symbolic, texts),
    st.builds(Legacy, texts),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.lists(inner, max_size=5).map(tuple),
        st.dictionaries(st.text(max_size=8), inner, max_size=5),
    ),
    max_leaves=25,
)
hashable_scalars = st.one_of(st.none(), st.booleans(), integers, floats, fractions, texts)
sets = st.one_of(
    st.frozensets(hashable_scalars, max_size=8),
    st.sets(st.one_of(hashable_scalars, st.tuples(hashable_scalars, hashable_scalars)), max_size=8),
)


# --- round trips ------------------------------------------------------------------------------


@PROPERTY
@given(values)
def test_decode_of_encode_is_identical(value):
    assert identical(decode(encode(value)), value)


@PROPERTY
@given(values)
def test_loads_of_dumps_is_identical(value):
    assert identical(loads(dumps(value)), value)


@PROPERTY
@given(sets)
def test_sets_reencode_to_the_same_node(value):
    node = encode(value)
    assert encode(decode(node)) == node
    assert len(decode(node)) == len(value)


@PROPERTY
@given(values)
def test_encoding_is_deterministic_json(value):
    assert dumps(value) == dumps(copy.deepcopy(value))


@PROPERTY
@given(st.integers(min_value=1, max_value=33), scalars)
def test_nesting_within_the_depth_limit_round_trips(levels, leaf):
    value = leaf
    for _ in range(levels - 1):
        value = [value]
    if type(leaf) in (complex, ExactComplex) and levels == 33:
        # complex parts are one level below the complex node
        assert _code(lambda: encode(value)) == "depth_limit"
    else:
        assert identical(decode(encode(value)), value)


@PROPERTY
@given(st.integers(min_value=34, max_value=200))
def test_deeper_nesting_is_refused_both_ways(levels):
    node: list = ["null"]
    value: Any = None
    for _ in range(levels - 1):
        node, value = ["list", [node]], [value]
    assert _code(lambda: decode_value(node)) == "depth_limit"
    assert _code(lambda: encode_value(value)) == "depth_limit"
    assert _code(lambda: loads(json.dumps({"format": "critpt-value-v1", "value": node}))) == (
        "depth_limit"
    )


# --- malformed input --------------------------------------------------------------------------


def _code(call) -> str | None:
    """The CodecError code ``call`` raises, or None when it returns; any other exception
    propagates and fails the test."""
    try:
        call()
    except CodecError as error:
        assert error.path.startswith("$")
        return error.code
    return None


json_like = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(),
        st.text(max_size=10),
        st.sampled_from(["null", "int", "float", "list", "map", "set", "complex", "__complex__"]),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=30,
)


@PROPERTY
@given(json_like)
def test_garbage_nodes_raise_only_codec_errors(garbage):
    _code(lambda: decode_value(garbage))
    _code(lambda: decode(garbage))
    _code(lambda: decode({"format": "critpt-value-v1", "value": garbage}))


@PROPERTY
@given(st.one_of(st.text(max_size=200), st.binary(max_size=200)))
def test_garbage_text_raises_only_codec_errors(text):
    _code(lambda: loads(text))


@PROPERTY
@given(json_like.map(lambda garbage: json.dumps(garbage, allow_nan=True)))
def test_json_garbage_raises_only_codec_errors(text):
    _code(lambda: loads(text))
    _code(lambda: loads('{"format":"critpt-value-v1","value":' + text + "}"))


def _node_slots(root: list) -> list[tuple[list, int]]:
    """Every (container, index) at which a node sits inside ``root[0]``, that node included."""
    slots: list[tuple[list, int]] = []
    pending: list[tuple[list, int]] = [(root, 0)]
    while pending:
        container, index = pending.pop()
        slots.append((container, index))
        child = container[index]
        tag = child[0]
        if tag in ("list", "tuple", "set"):
            pending.extend((child[1], i) for i in range(len(child[1])))
        elif tag == "map":
            pending.extend((entry, 1) for entry in child[1])
        elif tag == "complex":
            pending.extend((child, i) for i in (1, 2))
    return slots


def _mutations(node: list) -> list:
    """Ways to break one node so that decoding it must fail."""
    tag = node[0]
    broken: list = [
        [*node, ["null"]],  # wrong arity
        [tag + "x", *node[1:]],  # unknown tag
        [tag],  # missing payload (wrong arity for every tag but null)
        42,  # a raw number where a node belongs
    ]
    if len(node) > 1:
        broken.append([tag, 7, *node[2:]])  # raw number payload
    bomb: list = node
    for _ in range(40):
        bomb = ["list", [bomb]]
    broken.append(bomb)
    if tag == "int":
        broken.append(["int", "0" + node[1]])  # leading zero
    if tag == "float":
        # other hex spellings: a 14th mantissa digit, upper case (a digit appended to the
        # exponent would spell another valid float)
        broken += [["float", node[1].replace("p", "0p")], ["float", node[1].upper()]]
    if tag in ("str", "symbolic", "legacy"):
        broken.append([tag, node[1] + "\ud800"])
    if tag == "null":
        broken.remove([tag])
    return broken


@PROPERTY
@given(values, st.data())
def test_mutated_nodes_raise_codec_errors(value, data):
    root = [encode_value(value)]  # a holder, so the top node can be replaced too
    container, index = data.draw(st.sampled_from(_node_slots(root)))
    container[index] = data.draw(st.sampled_from(_mutations(container[index])))
    node = root[0]
    assert _code(lambda: decode_value(node)) is not None
    text = json.dumps({"format": "critpt-value-v1", "value": node})
    assert _code(lambda: loads(text)) is not None


@PROPERTY
@given(
    st.recursive(
        st.one_of(st.sampled_from([object(), b"x", len, range(2), type, iter([])]), st.integers()),
        lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(), inner)),
        max_leaves=10,
    )
)
def test_encoding_unknown_objects_raises_only_codec_errors(value):
    _code(lambda: encode_value(value))
