"""The SymPy → grammar-text printer: exact forms, lossless floats, and round trips through
the restricted parser."""

from __future__ import annotations

import importlib.util
import math

import pytest
import sympy
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from mpmath import libmp

from critpt_grader.codec import encode
from critpt_grader.symbolic.printer import to_text

x, y = sympy.symbols("x y")
k = sympy.Symbol("k", positive=True)
f = sympy.Function("f")


@pytest.mark.parametrize(
    ("expr", "text"),
    [
        (sympy.Rational(1, 3) * x**2 + 4 * x + 4, "x**2/3 + 4*x + 4"),
        (sympy.Rational(-7, 19), "-7/19"),
        (x ** sympy.Rational(2, 3), "x**(2/3)"),
        (sympy.sqrt(2) / 2 + sympy.I * sympy.pi, "sqrt(2)/2 + I*pi"),
        (sympy.exp(-x) * sympy.E, "exp(1)*exp(-x)"),
        (sympy.Float(0.1), "0.1"),
        (sympy.Float(-2.5) * x, "-2.5*x"),
        (sympy.Float(1e100), "1e100"),
        (sympy.Float(1.5e-7), "1.5e-07"),
        (sympy.Float("0.1", 30), "0.1"),
        (sympy.oo, "oo"),
        (-sympy.oo, "-oo"),
        (sympy.zoo, "zoo"),
        (sympy.nan, "nan"),
        (sympy.Interval(0, 1), "Interval(0, 1)"),
        (sympy.Interval.open(0, x), "Interval.open(0, x)"),
        (sympy.Interval.Lopen(0, 1), "Interval.Lopen(0, 1)"),
        (sympy.Interval(0, sympy.oo, right_open=True), "Interval(0, oo)"),
        (f(x), "f(x)"),
        (sympy.Derivative(f(x), x), "Derivative(f(x), x)"),
        (x < 1, "Lt(x, 1)"),
        (sympy.Eq(x, y), "Eq(x, y)"),
        (sympy.And(x > 1, y <= 2), "And(Le(y, 2), Gt(x, 1))"),
        (sympy.Piecewise((x, x > 0), (0, True)), "Piecewise((x, Gt(x, 0)), (0, True))"),
        (sympy.FiniteSet(2, 1, x), "FiniteSet(1, 2, x)"),
        (
            sympy.Union(sympy.Interval(0, 1), sympy.Interval(2, 3)),
            "Union(Interval(0, 1), Interval(2, 3))",
        ),
        (sympy.besselj(0, k), "besselj(0, k)"),
        (sympy.Abs(x), "Abs(x)"),
    ],
)
def test_prints_grammar_text(expr, text):
    assert to_text(expr) == text


def test_units_print_as_their_abbreviation():
    from sympy.physics.units import hbar, meter, speed_of_light

    assert to_text(hbar * speed_of_light / meter) == "hbar*c/m"


def test_sympy_infinities_print_by_name():
    assert [to_text(sympy.Float(t)) for t in ("inf", "-inf", "nan")] == ["oo", "-oo", "nan"]


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_binary64_floats_print_shortest_round_trip_digits(value):
    text = to_text(sympy.Float(value))
    assert "+" not in text
    assert float(text) == value
    if value != 0:  # SymPy itself has no negative zero
        assert text == repr(value).replace("e+", "e")


@settings(max_examples=200, deadline=None)
@given(
    st.integers(min_value=-(2**300), max_value=2**300),
    st.integers(min_value=-2000, max_value=2000),
    st.integers(min_value=2, max_value=400),
)
def test_floats_of_any_precision_read_back_exactly(mantissa, exponent, precision):
    value = sympy.Float._new(libmp.from_man_exp(mantissa, exponent, precision), precision)
    assume(isinstance(value, sympy.Float))  # SymPy turns a zero Float into the Integer 0
    text = to_text(value)
    assert libmp.from_str(text, precision, libmp.round_nearest) == value._mpf_


def test_binary64_precision_outside_double_range_still_round_trips():
    tiny = sympy.Float("1e-400")
    assert libmp.from_str(to_text(tiny), 53, libmp.round_nearest) == tiny._mpf_
    assert math.isfinite(float(to_text(sympy.Float(1e308))))


# --- round trips through the parser ---------------------------------------------------------

_HAS_PARSER = importlib.util.find_spec("critpt_grader.symbolic.parse") is not None
needs_parser = pytest.mark.skipif(not _HAS_PARSER, reason="symbolic parser not built yet")

ROUND_TRIP = [
    x**2 + 4 * x + 4,
    (x + 2) ** 2,
    sympy.sqrt(k) / 2 - sympy.I * sympy.pi,
    sympy.exp(-x / 2) * sympy.cos(x),
    sympy.log(k) + sympy.atan(x) - sympy.asinh(y),
    sympy.Abs(x - y) + sympy.conjugate(x),
    sympy.besselj(1, k) * sympy.gamma(x),
    sympy.E + sympy.GoldenRatio + sympy.EulerGamma + sympy.Catalan,
    f(x, y) + 3,
    x ** sympy.Rational(-3, 2),
    sympy.Float(0.5) * x + sympy.Float(2.25),
    sympy.Interval(0, 1),
    sympy.Interval.open(0, k),
    sympy.Interval.Ropen(-1, sympy.Rational(1, 2)),
    sympy.Tuple(x, 1),
    sympy.Integer(-12),
    sympy.Rational(7, 19),
    sympy.I,
]


def _symbols_of(expr) -> dict:
    symbols: dict = {}
    encode([expr], symbols=symbols)
    return symbols


@needs_parser
@pytest.mark.parametrize("expr", ROUND_TRIP, ids=str)
def test_parse_reads_back_what_the_printer_prints(expr):
    from critpt_grader.symbolic.parse import parse
    from critpt_grader.symbolic.printer import float_text

    # A Float prints as its shortest round-trip decimal, which reads back as that exact
    # decimal (a rational): the value the text denotes, not a binary float.
    exact = expr.xreplace({f: sympy.Rational(float_text(f)) for f in expr.atoms(sympy.Float)})
    assert parse(to_text(expr), _symbols_of(expr)) == exact


@needs_parser
def test_forms_sympy_itself_reorders_read_back_as_equal_values():
    # SymPy folds 75*(1 - 8*k) into 75 - 600*k when it reads the text (as sympify does),
    # so only the value survives the trip, not the tree.
    from critpt_grader.symbolic.parse import parse

    expr = sympy.Rational(16, 75) * k**2 / (1 - 8 * k)
    back = parse(to_text(expr), _symbols_of(expr))
    assert back != expr
    assert sympy.simplify(back - expr) == 0


def test_euler_number_prints_apart_from_a_symbol_named_E():
    """Regression: ``exp(1)`` printed as ``E``, the same text as a declared symbol ``E``."""
    import sympy as sp

    from critpt_grader.symbolic import parse
    from critpt_grader.symbolic.printer import to_text

    field = sp.Symbol("E")
    text = to_text(sp.E * field)
    assert parse(text, {"E": {}}) == sp.E * field
    assert parse(to_text(sp.E)) == sp.E


def test_safe_str_prints_what_sympy_cannot_order():
    from critpt_grader.symbolic.parse import parse
    from critpt_grader.symbolic.printer import safe_str, structural_text

    junk = parse("x + sin(exp(exp(exp(9))))")  # ordering its terms evaluates them: overflow
    text = safe_str(junk)
    assert text == "Add(x, sin(exp(exp(exp(9)))))"
    assert safe_str(x + 1) == "x + 1"
    assert structural_text(x / 2 + sympy.Float(0.25)) == "Add(0.25, Mul(1/2, x))"
