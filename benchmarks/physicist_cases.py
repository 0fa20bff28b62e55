"""Comparisons written as a careful physicist grades them, one or more per kind of answer.

Each case is ``(group, truth, problem, expected, observed)`` or, for an exception case,
``(group, truth, "", expected_type_name, Raised-fields)``. ``truth`` is what a physicist says:
``"equal"`` (a correct answer, reward 1) or ``"different"`` (a wrong one, reward 0). Values
are decoded wire values (:mod:`critpt_grader.codec.values`), built from names every version
of the package since the codec has, so two versions can be run on the same cases.

The groups follow the kinds of answer the comparator has been found to misjudge: exact
values met by floats, freedoms and widths said of one output, units, misread clauses,
answers costly only to evaluate, special functions, exception subclasses and set algebra.
"""

from __future__ import annotations

import math
from fractions import Fraction

from critpt_grader.codec.values import ExactComplex, Symbolic, WireSet

S = Symbolic

CASES: list[tuple] = [
    # -- floats and decimal text for exact values ---------------------------------------------
    ("float-for-exact", "equal", "", Fraction(1, 5), 0.2),
    ("float-for-exact", "equal", "", 5, 5.000000000000001),
    ("float-for-exact", "equal", "", Fraction(1, 9), 1 / 9),
    ("float-for-exact", "equal", "", 3, math.sqrt(3) ** 2),
    ("float-for-exact", "equal", "", Fraction(2, 7), "0.2857142857142857"),
    ("float-for-exact", "equal", "", S("1/7"), 0.14285714285714285),
    ("float-for-exact", "equal", "", S("binomial(20, 10)"), 184756.00000000003),
    ("float-for-exact", "equal", "", ExactComplex(Fraction(1, 2), Fraction(1, 3)), 0.5 + 1j / 3),
    ("float-for-exact", "equal", "", [1, Fraction(3, 2), 4], [1.0, 1.5000000000000002, 4.0]),
    ("float-for-exact", "equal", "", 1_000_000, 999_999.9999999999),
    ("float-for-exact", "different", "", Fraction(1, 5), 0.2000001),
    ("float-for-exact", "different", "", 5, 5.0001),
    ("float-for-exact", "different", "", 2**70, 2**70 + 1),
    ("float-for-exact", "different", "", S("binomial(100, 50)"), math.comb(100, 50) - 1),
    ("float-for-exact", "different", "", Fraction(1, 3), Fraction(333_333_333_333, 10**12)),
    ("float-for-exact", "different", "", Fraction(2, 7), "0.2857"),
    ("float-for-exact", "different", "", 12, 12.5),
    # -- a freedom or width said of the returned object or of one member ------------------------
    (
        "subject-binding",
        "equal",
        "Return the ground state of the two-site Hamiltonian as a list of its two amplitudes. "
        "The ground state is only fixed up to normalization.",
        [0.6, 0.8],
        [1.2, 1.6],
    ),
    (
        "subject-binding",
        "different",
        "Return the ground state of the two-site Hamiltonian as a list of its two amplitudes. "
        "The ground state is only fixed up to normalization.",
        [0.6, 0.8],
        [0.8, 0.6],
    ),
    (
        "subject-binding",
        "equal",
        "Return the spin state as a list [a, b] of complex amplitudes. "
        "The spin state is defined up to an overall phase.",
        [complex(0.6, 0), complex(0, 0.8)],
        [complex(0, 0.6), complex(-0.8, 0)],
    ),
    (
        "subject-binding",
        "equal",
        "Return w, the lowest normal mode of the three-mass chain, as a list. "
        "w is fixed up to a constant factor.",
        [1.0, -2.0, 1.0],
        [-0.5, 1.0, -0.5],
    ),
    (
        "subject-binding",
        "different",
        "Return w, the lowest normal mode of the three-mass chain, as a list. "
        "w is fixed up to a constant factor.",
        [1.0, -2.0, 1.0],
        [1.0, 2.0, 1.0],
    ),
    (
        "subject-binding",
        "equal",
        "Return the pair (k, omega) of the dispersion minimum. "
        "Give k to 2 significant figures and omega at full precision.",
        (1.234, 5.678),
        (1.2, 5.678),
    ),
    (
        "subject-binding",
        "different",
        "Return the pair (k, omega) of the dispersion minimum. "
        "Give k to 2 significant figures and omega at full precision.",
        (1.234, 5.678),
        (1.234, 5.7),
    ),
    (
        "subject-binding",
        "equal",
        "Return the list [E0, E1] of the two lowest levels in eV. "
        "The first entry only needs to be within 2%.",
        [10.0, 20.0],
        [10.15, 20.0],
    ),
    (
        "subject-binding",
        "different",
        "Return the list [E0, E1] of the two lowest levels in eV. "
        "The first entry only needs to be within 2%.",
        [10.0, 20.0],
        [10.0, 20.3],
    ),
    (
        "subject-binding",
        "equal",
        "Return a dict with keys 'm' (the magnetization) and 'E' (the energy per site). "
        "The magnetization m is defined up to a sign.",
        {"m": 0.5, "E": -1.0},
        {"m": -0.5, "E": -1.0},
    ),
    (
        "subject-binding",
        "different",
        "Return a dict with keys 'm' (the magnetization) and 'E' (the energy per site). "
        "The magnetization m is defined up to a sign.",
        {"m": 0.5, "E": -1.0},
        {"m": 0.5, "E": 1.0},
    ),
    # -- units physicists use --------------------------------------------------------------------
    (
        "units",
        "equal",
        "Return the binding energy in eV. A deviation of 5 meV is tolerated.",
        1.0,
        1.003,
    ),
    (
        "units",
        "different",
        "Return the binding energy in eV. A deviation of 5 meV is tolerated.",
        1.0,
        1.007,
    ),
    (
        "units",
        "equal",
        "Return the transition energy in eV, accurate to within 1 cm^-1.",
        2.0,
        2.0001,
    ),
    (
        "units",
        "different",
        "Return the transition energy in eV, accurate to within 1 cm^-1.",
        2.0,
        2.0002,
    ),
    (
        "units",
        "equal",
        "Return the critical temperature in K, within 0.5 °C.",
        92.0,
        92.4,
    ),
    (
        "units",
        "different",
        "Return the critical temperature in K, within 0.5 °C.",
        92.0,
        92.6,
    ),
    ("units", "equal", "Give the energy in eV to 2 d.p.", 1.234, 1.23),
    ("units", "different", "Give the energy in eV to 2 d.p.", 1.234, 1.22),
    (
        "units",
        "equal",
        "Return a dict with 'gap' in eV and 'Tc' in K. "
        "The gap is accurate to 5 meV and Tc to within 0.5 K.",
        {"gap": 1.0, "Tc": 10.0},
        {"gap": 1.004, "Tc": 10.4},
    ),
    (
        "units",
        "different",
        "Return a dict with 'gap' in eV and 'Tc' in K. "
        "The gap is accurate to 5 meV and Tc to within 0.5 K.",
        {"gap": 1.0, "Tc": 10.0},
        {"gap": 1.3, "Tc": 10.0},
    ),
    (
        "units",
        "different",
        "Return a dict with 'gap' in eV and 'Tc' in K. "
        "The gap is accurate to 5 meV and Tc to within 0.5 K.",
        {"gap": 1.0, "Tc": 10.0},
        {"gap": 1.0, "Tc": 10.6},
    ),
    # -- clauses that must grant nothing ---------------------------------------------------------
    (
        "misreading",
        "different",
        "Return the effective number of modes N. The result should not be rounded to a whole "
        "number.",
        3.7,
        3.5,
    ),
    (
        "misreading",
        "different",
        "Return the phase shift in radians; at least 3 decimal places are needed, fewer is not "
        "enough.",
        0.12345,
        0.1239,
    ),
    (
        "misreading",
        "different",
        "Return a tuple (f, gamma): the frequency f, which only needs 2% accuracy, and the "
        "damping rate gamma at full precision.",
        (1.0, 0.1),
        (1.0, 0.1015),
    ),
    (
        "misreading",
        "equal",
        "Return a tuple (f, gamma): the frequency f, which only needs 2% accuracy, and the "
        "damping rate gamma at full precision.",
        (1.0, 0.1),
        (1.015, 0.1),
    ),
    (
        "misreading",
        "different",
        "Knowing the pressure to 3 decimal places, return the density of the gas in kg/m^3.",
        1.2345,
        1.2349,
    ),
    # -- answers costly only to evaluate ---------------------------------------------------------
    (
        "costly-candidate",
        "different",
        "",
        S("x**2"),
        S("x**2 + Sum(besselj(k, x), (k, 1, 10**7))"),
    ),
    (
        "costly-candidate",
        "different",
        "",
        S("sin(x)"),
        S("sin(x) + besselj(10**9, 10**9*x)"),
    ),
    # -- special functions -----------------------------------------------------------------------
    ("special-functions", "equal", "", S("pi**2/12 - log(2)**2/2"), S("polylog(2, 1/2)")),
    ("special-functions", "different", "", S("pi**2/12 - log(2)**2"), S("polylog(2, 1/2)")),
    ("special-functions", "equal", "", S("sin(x)/x"), S("sinc(x)")),
    ("special-functions", "different", "", S("cos(x)/x"), S("sinc(x)")),
    ("special-functions", "equal", "", S("1/(x*(x + 1))"), S("beta(x, 2)")),
    ("special-functions", "equal", "", S("8*x**3 - 12*x"), S("hermite(3, x)")),
    ("special-functions", "different", "", S("8*x**3 - 10*x"), S("hermite(3, x)")),
    ("special-functions", "equal", "", S("(3*x**2 - 1)/2"), S("legendre(2, x)")),
    ("special-functions", "equal", "", S("pi**2/6"), S("zeta(2)")),
    ("special-functions", "equal", "", S("x"), S("LambertW(x)*exp(LambertW(x))")),
    ("special-functions", "different", "", S("fresnelc(x)"), S("fresnels(x)")),
    ("special-functions", "equal", "", S("sin(x)/x"), S("jn(0, x)")),
    # -- exception subclasses and set algebra ----------------------------------------------------
    (
        "exception-subclass",
        "equal",
        "",
        "ValueError",
        ("critpt_program", "BadInput", False, ("ValueError", "Exception", "BaseException")),
    ),
    (
        "exception-subclass",
        "different",
        "",
        "ValueError",
        ("critpt_program", "BadInput", False, ("TypeError", "Exception", "BaseException")),
    ),
    (
        "exception-subclass",
        "different",
        "",
        "RuntimeError",
        (
            "critpt_program",
            "Todo",
            False,
            ("NotImplementedError", "RuntimeError", "Exception", "BaseException"),
        ),
    ),
    (
        "set-algebra",
        "equal",
        "",
        S("Interval(1, 2)"),
        S("Intersection(Interval(0, 2), Interval(1, 3))"),
    ),
    (
        "set-algebra",
        "different",
        "",
        S("Interval(1, 3)"),
        S("Intersection(Interval(0, 2), Interval(1, 3))"),
    ),
    ("set-algebra", "equal", "", WireSet((1, 2)), WireSet((2.0, 1.0))),
]
