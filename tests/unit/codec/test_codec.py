"""Unit tests for the critpt-value-v1 codec: each tag, limit, error code and adapter."""

from __future__ import annotations

import json
import math
import struct
import time
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
import sympy

from critpt_grader.codec import decode, decode_value, dumps, encode, encode_value, loads
from critpt_grader.codec.values import ExactComplex, Legacy, Symbolic, WireSet
from critpt_grader.errors import CodecError
from tests.support.paths import CRITPT_PUBLIC

CRITPT = CRITPT_PUBLIC


def envelope(node):
    return {"format": "critpt-value-v1", "value": node}


def codec_error(call, *args) -> CodecError:
    with pytest.raises(CodecError) as caught:
        call(*args)
    return caught.value


def bits(x: float) -> bytes:
    return struct.pack("<d", x)


# --- each tag, both ways --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "node"),
    [
        (None, ["null"]),
        (True, ["bool", True]),
        (False, ["bool", False]),
        (0, ["int", "0"]),
        (-12, ["int", "-12"]),
        (10**1023, ["int", "1" + "0" * 1023]),
        (0.1, ["float", "0x1.999999999999ap-4"]),
        (-0.0, ["float", "-0x0.0p+0"]),
        (5e-324, ["float", "0x0.0000000000001p-1022"]),
        (math.inf, ["nonfinite", "inf"]),
        (-math.inf, ["nonfinite", "-inf"]),
        (Fraction(-2, 6), ["fraction", "-1", "3"]),
        (Decimal("12.3400"), ["decimal", "12.3400"]),
        (Decimal("-0.000"), ["decimal", "-0.000"]),
        (Decimal("1E-800"), ["decimal", "1E-800"]),
        (Decimal("-Infinity"), ["decimal", "-Infinity"]),
        (1 + 2j, ["complex", ["float", "0x1.0000000000000p+0"], ["float", "0x1.0000000000000p+1"]]),
        (complex(math.inf, 0), ["complex", ["nonfinite", "inf"], ["float", "0x0.0p+0"]]),
        (ExactComplex(1, Fraction(1, 2)), ["complex", ["int", "1"], ["fraction", "1", "2"]]),
        ([1, "a"], ["list", [["int", "1"], ["str", "a"]]]),
        ((), ["tuple", []]),
        ({"k": None}, ["map", [["k", ["null"]]]]),
        ("ünï\u2028", ["str", "ünï\u2028"]),
        (Symbolic("x**2"), ["symbolic", "x**2"]),
        (Legacy("7/19"), ["legacy", "7/19"]),
    ],
)
def test_each_tag_encodes_and_decodes(value, node):
    assert encode_value(value) == node
    decoded = decode(encode(value))
    assert type(decoded) is type(value)
    if type(value) is float:
        assert bits(decoded) == bits(value)
    elif type(value) is Decimal:
        assert decoded.as_tuple() == value.as_tuple()
    else:
        assert decoded == value


def test_nan_round_trips_as_nan():
    assert encode_value(math.nan) == ["nonfinite", "nan"]
    assert math.isnan(decode_value(["nonfinite", "nan"]))
    assert decode_value(["decimal", "NaN"]).is_nan()


def test_complex_decodes_to_python_complex_only_when_both_parts_are_binary64():
    assert decode_value(["complex", ["float", "0x1.0000000000000p+0"], ["nonfinite", "-inf"]]) == (
        complex(1, -math.inf)
    )
    mixed = decode_value(["complex", ["int", "1"], ["float", "0x0.0p+0"]])
    assert mixed == ExactComplex(1, 0.0)
    assert type(decode_value(["complex", ["decimal", "1.0"], ["int", "0"]])) is ExactComplex


def test_negative_zero_complex_parts_keep_their_sign():
    value = decode(encode(complex(-0.0, -0.0)))
    assert math.copysign(1, value.real) == -1 and math.copysign(1, value.imag) == -1


def test_set_decodes_to_wireset_in_wire_order():
    assert decode_value(["set", [["int", "2"], ["int", "1"]]]) == WireSet((2, 1))


def test_sets_encode_in_one_deterministic_order():
    first = encode_value({"b", "a", 3, 1.5, (1, 2)})
    second = encode_value(frozenset([(1, 2), 1.5, 3, "a", "b"]))
    assert first == second
    assert encode_value(WireSet(("b", "a"))) == encode_value({"a", "b"})


def test_map_keeps_wire_order():
    decoded = decode_value(["map", [["b", ["int", "1"]], ["a", ["int", "2"]]]])
    assert list(decoded) == ["b", "a"]


def test_delivered_complex_alias():
    assert decode_value({"__complex__": [1.5, -2.0]}) == complex(1.5, -2.0)
    assert decode_value({"__complex__": [1, 0.5]}) == ExactComplex(1, 0.5)
    for bad in ({"__complex__": [math.nan, 0.0]}, {"__complex__": [True, 0]}):
        assert codec_error(decode_value, bad).code == "invalid_complex"
    for bad in ({"__complex__": [1.0]}, {"__complex__": [1.0, 2.0], "x": 1}, {}):
        assert codec_error(decode_value, bad).code == "invalid_type"


# --- map keys --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "text"),
    [
        (0, "0"),
        ((0, 0), "(0, 0)"),
        (True, "True"),
        (None, "None"),
        (Fraction(1, 3), "1/3"),
        (Decimal("2.50"), "2.50"),
        (1 + 2j, "(1+2j)"),
        (0.5, "0.5"),
        (np.int64(7), "7"),
    ],
)
def test_map_keys_stringify(key, text):
    assert encode_value({key: 1}) == ["map", [[text, ["int", "1"]]]]


def test_colliding_map_keys_are_refused():
    error = codec_error(encode_value, {1: "a", "1": "b"})
    assert (error.code, error.path) == ("invalid_text", '$.value["1"]')


@pytest.mark.parametrize("key", [frozenset({1}), b"k", (1, object()), sympy.Symbol("x")])
def test_other_map_key_types_are_refused(key):
    assert codec_error(encode_value, {key: 1}).code == "invalid_type"


# --- encoding refusals -----------------------------------------------------------------------


class MyFloat(float):
    pass


@pytest.mark.parametrize(
    "value",
    [
        b"bytes",
        bytearray(b"x"),
        len,
        lambda: 1,
        math,
        (i for i in range(3)),
        iter([1]),
        range(3),
        int,
        MyFloat(1.0),
        __import__("enum").IntEnum("E", "A").A,
    ],
)
def test_non_values_and_subclasses_are_invalid_type(value):
    assert codec_error(encode_value, value).code == "invalid_type"


def test_namedtuples_and_stdlib_dicts_encode_as_plain_data():
    from collections import Counter, OrderedDict, defaultdict, namedtuple
    from typing import NamedTuple

    class Pair(NamedTuple):
        first: int
        second: float

    assert decode(encode(namedtuple("P", "x y")(1, "a"))) == (1, "a")
    assert encode_value(Pair(1, 2.0)) == encode_value((1, 2.0))
    assert decode(encode(OrderedDict(b=1, a=2))) == {"b": 1, "a": 2}
    assert decode(encode(defaultdict(list, k=[1]))) == {"k": [1]}
    assert decode(encode(Counter("aab"))) == {"a": 2, "b": 1}


class Sneaky(tuple):
    _fields = ("x",)


def test_tuple_subclasses_that_are_not_namedtuples_are_refused():
    assert codec_error(encode_value, Sneaky((1,))).code == "invalid_type"


def test_unknown_objects_are_unsupported_type():
    assert codec_error(encode_value, object()).code == "unsupported_type"
    assert codec_error(encode_value, [1, {"a": object()}]).path == '$.value[1]["a"]'


def test_encoding_error_paths_name_the_leaf():
    assert codec_error(encode_value, [0, [1, b"x"]]).path == "$.value[1][1]"
    assert codec_error(encode_value, ExactComplex(1, True)).path == "$.value.im"


@pytest.mark.parametrize("text", ["sNaN", "-NaN", "NaN12", "1E+2000"])
def test_unrepresentable_decimals_are_refused(text):
    assert codec_error(encode_value, Decimal(text)).code == "invalid_decimal"


# --- limits -----------------------------------------------------------------------------------


def nested_lists(levels: int) -> list:
    value: list = []
    for _ in range(levels - 1):
        value = [value]
    return value


def test_depth_limit_root_is_depth_zero():
    assert decode(encode(nested_lists(33))) == nested_lists(33)  # depths 0..32
    assert codec_error(encode_value, nested_lists(34)).code == "depth_limit"
    node = encode_value(nested_lists(33))
    assert codec_error(decode_value, ["list", [node]]).code == "depth_limit"


def test_self_referencing_list_hits_the_depth_limit():
    loop: list = []
    loop.append(loop)
    assert codec_error(encode_value, loop).code == "depth_limit"


def test_node_limit():
    assert len(decode(encode([0] * 32767))) == 32767  # plus the list node itself
    assert codec_error(encode_value, [0] * 32768).code == "size_limit"
    assert codec_error(decode_value, ["list", [["null"]] * 32768]).code == "size_limit"


def test_complex_parts_count_as_nodes():
    assert codec_error(encode_value, [0j] * 10923).code == "size_limit"


def test_text_limit_in_characters_and_bytes():
    assert decode(encode("a" * 16384)) == "a" * 16384
    assert codec_error(encode_value, "a" * 16385).code == "size_limit"
    assert codec_error(encode_value, "é" * 8193).code == "size_limit"  # 16386 bytes
    assert codec_error(decode_value, ["str", "a" * 16385]).code == "size_limit"
    assert codec_error(encode_value, {"k" * 16385: 1}).code == "size_limit"


def test_lone_surrogates_are_refused():
    assert codec_error(encode_value, "\ud800").code == "invalid_text"
    assert codec_error(decode_value, ["str", "\udfff"]).code == "invalid_text"
    assert codec_error(loads, '{"format":"critpt-value-v1","value":["str","\\ud800"]}').code == (
        "invalid_text"
    )


def test_integer_digit_limit():
    assert codec_error(encode_value, 10**1024).code == "size_limit"
    assert codec_error(encode_value, -(10**5000)).code == "size_limit"
    assert codec_error(encode_value, Fraction(1, 10**1024)).code == "size_limit"
    assert codec_error(decode_value, ["int", "1" * 1025]).code == "size_limit"
    assert decode_value(["int", "-" + "9" * 1024]) == -(10**1024 - 1)


def test_decimal_limits():
    assert codec_error(decode_value, ["decimal", "1" * 1025]).code == "size_limit"
    assert codec_error(decode_value, ["decimal", "1e1025"]).code == "invalid_decimal"
    assert codec_error(decode_value, ["decimal", "1e+00001"]).code == "invalid_decimal"
    # the value's exponent (written exponent minus places) is bounded too
    assert codec_error(decode_value, ["decimal", "0.001e-1023"]).code == "invalid_decimal"
    assert decode_value(["decimal", "1.5e-1023"]) == Decimal("1.5e-1023")


# --- malformed wire input: codes and paths ----------------------------------------------------


@pytest.mark.parametrize(
    ("node", "code", "path"),
    [
        ("x", "invalid_type", "$.value"),
        ([], "invalid_type", "$.value"),
        ([1], "invalid_type", "$.value"),
        (None, "invalid_type", "$.value"),
        (["nope"], "unknown_tag", "$.value"),
        (["null", 1], "invalid_arity", "$.value"),
        (["int"], "invalid_arity", "$.value"),
        (["bool", "true"], "invalid_bool", "$.value"),
        (["int", 1], "invalid_int", "$.value"),
        (["int", "01"], "invalid_int", "$.value"),
        (["int", "-0"], "invalid_int", "$.value"),
        (["int", "+1"], "invalid_int", "$.value"),
        (["int", " 1"], "invalid_int", "$.value"),
        (["int", "١"], "invalid_int", "$.value"),
        (["float", "0x1.8p+1"], "invalid_float", "$.value"),  # not float.hex()'s spelling
        (["float", "0x1.8000000000000P+1"], "invalid_float", "$.value"),
        (["float", "0x1.0000000000000p+1024"], "invalid_float", "$.value"),
        (["float", "inf"], "invalid_float", "$.value"),
        (["float", 1.5], "invalid_float", "$.value"),
        (["nonfinite", "Infinity"], "invalid_nonfinite", "$.value"),
        (["fraction", "1", "0"], "invalid_fraction", "$.value.denominator"),
        (["fraction", "1", "-2"], "invalid_fraction", "$.value.denominator"),
        (["fraction", "x", "2"], "invalid_int", "$.value.numerator"),
        (["decimal", "1,5"], "invalid_decimal", "$.value"),
        (["decimal", "sNaN"], "invalid_decimal", "$.value"),
        (["decimal", "."], "invalid_decimal", "$.value"),
        (["complex", ["bool", True], ["int", "0"]], "invalid_complex", "$.value.re"),
        (["complex", ["int", "0"], ["str", "1"]], "invalid_complex", "$.value.im"),
        (["complex", ["int", "0"], {"__complex__": [1, 2]}], "invalid_complex", "$.value.im"),
        (["complex", ["int", "0"], ["int", "01"]], "invalid_int", "$.value.im"),
        (["list", "abc"], "invalid_type", "$.value"),
        (["list", [["int", "1"], ["int", "x"]]], "invalid_int", "$.value[1]"),
        (["tuple", [["list", [["oops"]]]]], "unknown_tag", "$.value[0][0]"),
        (["set", [["null"], []]], "invalid_type", "$.value[1]"),
        (["map", [["a"]]], "invalid_arity", "$.value[0]"),
        (["map", ["a"]], "invalid_type", "$.value[0]"),
        (["map", [[1, ["null"]]]], "invalid_text", "$.value[0]"),
        (["map", [["a", ["null"]], ["a", ["null"]]]], "duplicate_map_key", '$.value["a"]'),
        (["map", [["k", ["int", "x"]]]], "invalid_int", '$.value["k"]'),
        (["str", None], "invalid_text", "$.value"),
        (["symbolic", 3], "invalid_text", "$.value"),
        (["legacy", ["x"]], "invalid_text", "$.value"),
    ],
)
def test_malformed_nodes(node, code, path):
    error = codec_error(decode_value, node)
    assert (error.code, error.path) == (code, path)


@pytest.mark.parametrize(
    "wire",
    [
        None,
        [],
        {"value": ["null"]},
        {"format": "critpt-value-v2", "value": ["null"]},
        {"format": "critpt-value-v1", "value": ["null"], "extra": 1},
        {"format": ["critpt-value-v1"], "value": ["null"]},
    ],
)
def test_bad_envelopes(wire):
    error = codec_error(decode, wire)
    assert (error.code, error.path) == ("invalid_envelope", "$")


def test_decode_value_path_prefix():
    assert codec_error(decode_value, ["list", [["x"]]], "$.cases[3]").path == "$.cases[3][0]"


# --- strict JSON text -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ('{"format":"critpt-value-v1","value":["int",1]}', "raw_json_number"),
        ('{"format":"critpt-value-v1","value":["float",1.5]}', "raw_json_number"),
        ('{"format":"critpt-value-v1","value":["list",[NaN]]}', "raw_json_number"),
        ('{"format":"critpt-value-v1","value":["null"],"value":["null"]}', "duplicate_json_key"),
        ('{"format":"critpt-value-v1","value":["null"]', "invalid_json"),
        ('{"format":"critpt-value-v1","value":["null"]} x', "invalid_json"),
        ("", "invalid_json"),
        ("\ufeff{}", "invalid_json"),
        (b'{"format":"critpt-value-v1","value":["str","\xff"]}', "invalid_json"),
        ("[" * 105 + "]" * 105, "depth_limit"),
        ('"' + "x" * 524288 + '"', "size_limit"),
        (12, "invalid_type"),
    ],
)
def test_loads_is_strict(text, code):
    assert codec_error(loads, text).code == code


@pytest.mark.parametrize(
    "text", ["[" * 200_000, '\\"' * 100_000, '["str","' + "\\" * 200_000 + '"]']
)
def test_loads_rejects_hostile_text_quickly(text):
    # CPU time of this thread, not wall time: a busy machine must not fail the test.
    start = time.thread_time()
    assert codec_error(loads, text).code in {"depth_limit", "invalid_json", "invalid_envelope"}
    assert time.thread_time() - start < 0.5


def test_loads_ignores_brackets_inside_strings():
    text = json.dumps(envelope(["str", "[" * 200 + '\\"{']))
    assert loads(text) == "[" * 200 + '\\"{'


def test_dumps_is_compact_and_loads_back():
    value = {"E": [1.5, Fraction(1, 3)], "ok": True, "name": "ψ"}
    text = dumps(value)
    assert text.startswith('{"format":"critpt-value-v1","value":["map",')
    assert " " not in text and "ψ" in text
    assert loads(text) == value
    assert loads(text.encode("utf-8")) == value


def test_dumps_refuses_text_a_loader_would_refuse():
    assert codec_error(dumps, ["x" * 16000] * 40).code == "size_limit"


def test_decoding_half_a_megabyte_is_fast():
    value = [[1.25 * i, str(i), i, Fraction(i, 7)] for i in range(5200)]
    text = dumps(value)
    assert 400_000 < len(text) <= 524_288
    start = time.thread_time()  # CPU, not wall: ~0.07 s here
    assert loads(text) == value
    assert time.thread_time() - start < 0.5


# --- numpy ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "plain"),
    [
        (np.float64(0.1), 0.1),
        (np.float32(0.1), float(np.float32(0.1))),
        (np.float16(0.1), float(np.float16(0.1))),
        (np.int64(-5), -5),
        (np.uint64(2**64 - 1), 2**64 - 1),
        (np.bool_(True), True),
        (np.complex128(1 - 2j), 1 - 2j),
        (np.complex64(0.1j), complex(0, float(np.float32(0.1)))),
        (np.str_("s"), "s"),
        (np.float64("nan"), math.nan),
    ],
)
def test_numpy_scalars_encode_as_plain_nodes(value, plain):
    assert encode_value(value) == encode_value(plain)


def test_float32_widening_is_exact():
    x = np.float32(1 / 3)
    assert decode(encode(x)) == float(x)
    assert np.float32(decode(encode(x))) == x


def test_numpy_arrays_encode_as_nested_lists_by_shape():
    array = np.arange(6, dtype=np.float64).reshape(2, 3)
    assert decode(encode(array)) == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert encode_value(np.array(2.5)) == ["float", "0x1.4000000000000p+1"]
    assert decode(encode(np.zeros((2, 0)))) == [[], []]
    assert decode(encode(np.array([1, 2], dtype=np.int8))) == [1, 2]
    assert decode(encode(np.array([True]))) == [True]
    assert decode(encode(np.array([1 + 1j]))) == [1 + 1j]
    with pytest.warns(PendingDeprecationWarning):
        matrix = np.matrix([[1, 2]])
    assert decode(encode(matrix)) == [[1, 2]]


def test_object_arrays_encode_element_by_element():
    array = np.array([Fraction(1, 2), sympy.Rational(1, 3), None], dtype=object)
    assert decode(encode(array)) == [Fraction(1, 2), Symbolic("1/3"), None]
    assert codec_error(encode_value, np.array([b"x", 1], dtype=object)).path == "$.value[0]"


def test_object_array_holding_itself_is_refused():
    scalar = np.empty((), dtype=object)
    scalar[()] = scalar
    assert codec_error(encode_value, scalar).code == "depth_limit"
    vector = np.empty(1, dtype=object)
    vector[0] = vector
    assert codec_error(encode_value, vector).code == "depth_limit"


def test_longdouble_keeps_every_bit():
    third = np.longdouble(1) / np.longdouble(3)
    decoded = decode(encode(third))
    if np.finfo(np.longdouble).nmant > 52:
        assert decoded == Fraction(*third.as_integer_ratio())
    else:
        assert decoded == float(third)
    assert decode(encode(np.longdouble(0.5))) == 0.5


def test_refused_numpy_values():
    assert codec_error(encode_value, np.array([b"x"])).code == "invalid_type"
    assert codec_error(encode_value, np.bytes_(b"x")).code == "invalid_type"
    assert codec_error(encode_value, np.array(["2020-01-01"], "M8[D]")).code == "unsupported_type"
    assert codec_error(encode_value, np.datetime64("2020-01-01")).code == "unsupported_type"
    assert codec_error(encode_value, np.ma.array([1])).code == "unsupported_type"
    assert codec_error(encode_value, np.zeros(32769)).code == "size_limit"


# --- SymPy ------------------------------------------------------------------------------------


def test_sympy_numbers_and_expressions_become_symbolic_text():
    x = sympy.Symbol("x")
    assert encode_value(sympy.Integer(3)) == ["symbolic", "3"]
    assert encode_value(sympy.Rational(1, 2)) == ["symbolic", "1/2"]
    assert encode_value(sympy.Float(0.1)) == ["symbolic", "0.1"]
    assert encode_value(sympy.I) == ["symbolic", "I"]
    assert encode_value(sympy.oo) == ["symbolic", "oo"]
    assert encode_value(sympy.Interval(0, 1)) == ["symbolic", "Interval(0, 1)"]
    assert encode_value((x + 2) ** 2) == ["symbolic", "(x + 2)**2"]


def test_sympy_containers():
    x = sympy.Symbol("x")
    assert encode_value(sympy.Tuple(1, x)) == ["tuple", [["symbolic", "1"], ["symbolic", "x"]]]
    assert encode_value(sympy.FiniteSet(2, 1)) == encode_value({Symbolic("1"), Symbolic("2")})
    matrix = [[["symbolic", "1"], ["symbolic", "x"]], [["symbolic", "0"], ["symbolic", "x**2"]]]
    matrix_node = ["list", [["list", row] for row in matrix]]
    assert encode_value(sympy.Matrix([[1, x], [0, x**2]])) == matrix_node
    assert encode_value(sympy.ImmutableMatrix([[1, x], [0, x**2]])) == matrix_node
    assert encode_value(sympy.Dict({1: x})) == ["map", [["1", ["symbolic", "x"]]]]
    assert encode_value([sympy.true, sympy.false]) == ["list", [["bool", True], ["bool", False]]]


def test_sympy_arrays_encode_as_nested_lists():
    x = sympy.Symbol("x")
    rows = encode_value(sympy.Array([[1, x]]))
    assert rows == ["list", [["list", [["symbolic", "1"], ["symbolic", "x"]]]]]
    assert encode_value(sympy.Array(5)) == ["symbolic", "5"]


def test_symbols_record_declared_assumptions():
    from sympy.physics.units import hbar, speed_of_light

    k = sympy.Symbol("k", positive=True)
    n = sympy.Symbol("n", integer=True)
    symbols: dict = {}
    encode([k * hbar * speed_of_light, sympy.Matrix([[n, sympy.Symbol("y")]])], symbols=symbols)
    assert symbols == {
        "k": {"positive": True},
        "hbar": {"positive": True},
        "c": {"positive": True},
        "n": {"integer": True},
        "y": {},
    }


def test_symbols_with_one_name_and_two_meanings_conflict():
    pair = [sympy.Symbol("x"), sympy.Symbol("x", positive=True)]
    assert codec_error(lambda: encode(pair, symbols={})).code == "symbol_conflict"
    assert encode_value(pair) == ["list", [["symbolic", "x"], ["symbolic", "x"]]]


def test_symbolic_text_limit():
    assert codec_error(encode_value, sympy.Symbol("a" * 16385)).code == "size_limit"
    assert encode_value(sympy.Symbol("a" * 16384)) == ["symbolic", "a" * 16384]


def test_example_challenge_answers_encode_and_read_back():
    folder = CRITPT / "example_challenges"
    if not folder.is_dir():
        pytest.skip("CritPt public data not present")
    p = sympy.Symbol("p")
    for path in sorted(folder.glob("*.json")):
        for problem in json.loads(path.read_text())["problems"]:
            namespace: dict = {}
            exec(problem["answer_code"], namespace)  # public reference data, trusted here
            answer = namespace["real_answer"](p)
            symbols: dict = {}
            decoded = loads(json.dumps(encode(answer, symbols=symbols)))
            assert symbols == {"p": {}}
            assert sympy.simplify(sympy.sympify(decoded.text, locals={"p": p}) - answer) == 0


# --- mpmath ------------------------------------------------------------------------------


def test_mpmath_values_encode_exactly():
    import mpmath

    with mpmath.workdps(15):
        assert encode_value(mpmath.mpf("0.1")) == encode_value(0.1)
        assert encode_value(mpmath.mpc(1, -2)) == encode_value(1 - 2j)
        assert decode(encode(mpmath.matrix([[1, 2]]))) == [[1.0, 2.0]]
        assert decode(encode([mpmath.inf, mpmath.mpf(0)])) == [math.inf, 0.0]
        assert math.isnan(decode(encode(mpmath.nan)))
    with mpmath.workdps(40):
        third = mpmath.mpf(1) / 3
        man, exp = third.man_exp
        assert decode(encode(third)) == Fraction(man, 2**-exp)
        assert type(decode(encode(mpmath.mpc(third, 0)))) is ExactComplex
    assert codec_error(encode_value, mpmath.mpf("1e100000")).code == "size_limit"
