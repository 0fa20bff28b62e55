"""The statement reader, table-driven: for each statement, the tolerance and conventions every
output gets.

Each row is a statement (and an Outputs docstring when the row needs one), an expected value
giving the outputs' shapes and magnitudes, and per output path what applies:

* ``"rtol 1e-6"`` / ``"atol 5e-4"``: a promise with exactly that width at that leaf;
* ``"default"``: no promise, the strict default ``rtol=5e-12``; ``"exact"``: an int, compared
  exactly;
* conventions: the set granted at that path (paths not listed get none).

The rows were written for the statement reader: decoys about inputs, intermediate objects and
enumerations; several outputs bound by one clause or by several; CritPt's ``±`` phrasing;
significant figures near mantissa 1 and near 10; phrases about the answer as a whole.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from critpt_grader.compare import Policy
from critpt_grader.policy.context import CaseContext

ROWS: list[tuple[str, str, str | None, Any, dict[str, str], dict[str, set[str]]]] = [
    # --- decoys: precision of inputs and measured parameters ---------------------------
    (
        "decoy-known-coupling",
        "The coupling J is known to within 0.5%. Compute the ground-state energy.",
        None,
        -1.25,
        {"": "default"},
        {},
    ),
    (
        "decoy-using-mass",
        "Using a mass accurate to four significant figures, compute the energy.",
        None,
        2.5,
        {"": "default"},
        {},
    ),
    (
        "decoy-where-given",
        "Compute the cohesive energy, where the lattice constant is given to 3 decimal places.",
        None,
        3.25,
        {"": "default"},
        {},
    ),
    (
        "decoy-stable-then-real",
        "The trap frequency is stable to within 2% during the measurement. Report the "
        "ground-state energy with relative error below 1e-6.",
        None,
        1.5,
        {"": "rtol 1e-6"},
        {},
    ),
    (
        "decoy-quoted-after-comma",
        "Take the electron mass m = 9.109e-31 kg, quoted to 4 significant figures, and return "
        "the Bohr radius in metres.",
        None,
        5.29e-11,
        {"": "default"},
        {},
    ),
    (
        "decoy-uncertainty-of-measured",
        "The measured wavelength has an uncertainty of 0.1 nm. Report the photon energy in eV "
        "with relative error below 1e-9.",
        None,
        2.33,
        {"": "rtol 1e-9"},
        {},
    ),
    (
        "decoy-for-temperature",
        "For a temperature accurate to within 1%, return the heat capacity.",
        None,
        24.9,
        {"": "default"},
        {},
    ),
    (
        "decoy-given-field",
        "Given a field strength measured to three significant figures, report the Zeeman "
        "shift in GHz.",
        None,
        1.4,
        {"": "default"},
        {},
    ),
    (
        "decoy-input-provided",
        "The input density is provided with 6 decimal places; compute the pressure.",
        None,
        101.325,
        {"": "default"},
        {},
    ),
    (
        "decoy-for-viscosity",
        "Compute the Reynolds number for a viscosity known to 2 significant figures.",
        None,
        2300.5,
        {"": "default"},
        {},
    ),
    (
        "decoy-spacing-is-accurate",
        "The lattice spacing a = 3.615 is accurate to 4 significant figures. Return the "
        "nearest-neighbour distance.",
        None,
        2.556,
        {"": "default"},
        {},
    ),
    (
        "decoy-whose-resolution",
        "Compute the count rate with a detector whose resolution is within 0.5%.",
        None,
        1200.0,
        {"": "default"},
        {},
    ),
    (
        "decoy-intermediate-rounding",
        "Round intermediate results to 3 decimal places, but report the final energy to 6 "
        "decimal places.",
        None,
        0.125,
        {"": "atol 5e-7"},
        {},
    ),
    (
        "decoy-solver-tolerance",
        "The numerical integration should converge to a relative tolerance of 1e-10; report "
        "the decay rate with relative error below 1e-6.",
        None,
        0.75,
        {"": "rtol 1e-6"},
        {},
    ),
    (
        "decoy-simulation-uses",
        "The simulation uses 4 decimal places internally; report the energy to 2 decimal places.",
        None,
        13.6,
        {"": "atol 5e-3"},
        {},
    ),
    (
        "decoy-in-docstring",
        "Compute the energy.",
        "E: float, energy computed with a coupling known to within 1%",
        -0.5,
        {"": "default"},
        {},
    ),
    (
        "decoy-gravity-and-real",
        "Give the final answer to 5 significant figures, using g = 9.81 m/s^2 accurate to 3 "
        "significant figures.",
        None,
        12.345,
        {"": "atol 5e-4"},
        {},
    ),
    (
        "decoy-unknown-verb",
        "We measured the energy to within 0.1%; report the decay width.",
        "energy: float, the decay width",
        2.5,
        {"": "default"},
        {},
    ),
    (
        "decoy-take-constant",
        "Take hbar = 1.0546e-34 J s (to 5 significant figures) and return the zero-point energy.",
        None,
        3.2e-21,
        {"": "default"},
        {},
    ),
    (
        "decoy-use-experimental-value",
        "Use the experimental value E = 13.6 eV (4 significant figures) to compute the "
        "ionization rate.",
        None,
        0.031,
        {"": "default"},
        {},
    ),
    (
        "decoy-assume-appositive",
        "Assume the Fermi energy is 5 eV, accurate to 2 decimal places, and return the "
        "density of states.",
        None,
        0.75,
        {"": "default"},
        {},
    ),
    (
        "decoy-converge",
        "The solution should converge to within 1e-8. Return the period.",
        None,
        6.28,
        {"": "default"},
        {},
    ),
    (
        "decoy-tabulated",
        "Tabulated values are accurate to 3 decimal places; return the interpolated value.",
        None,
        1.2345,
        {"": "default"},
        {},
    ),
    (
        "answer-results-accepted",
        "Results are accepted within 1%.",
        None,
        2.0,
        {"": "rtol 0.01"},
        {},
    ),
    # --- decoys: conventions of intermediate objects --------------------------------------
    (
        "decoy-eigenvector-sign-scalar",
        "The eigenvector is defined up to an overall sign. Return the expectation value of "
        "S_z in the ground state.",
        None,
        0.5,
        {"": "default"},
        {},
    ),
    (
        "decoy-state-phase-tuple",
        "The ground state is given up to a global phase. Return its energy and the expectation "
        "value of X as a tuple (E, x).",
        None,
        (-1.0, 0.25),
        {"/0": "default", "/1": "default"},
        {},
    ),
    (
        "decoy-each-eigenvector",
        "Diagonalize H; each eigenvector is only determined up to a sign. Return the list of "
        "eigenvalues.",
        None,
        [-1.0, 1.0],
        {"/0": "default", "/1": "default"},
        {},
    ),
    (
        "decoy-chern-sign-conductance",
        "The Chern number of each band is defined up to a sign convention; return the Hall "
        "conductance in units of e^2/h.",
        None,
        1.0,
        {"": "default"},
        {},
    ),
    (
        "decoy-overlap-states-phase",
        "Return the overlap of the two states; the states are each defined up to a global phase.",
        None,
        0.5,
        {"": "default"},
        {},
    ),
    (
        "decoy-if-orderings-sign",
        "If two orderings of fields define the same operator up to a sign, always write "
        "smaller charge fields on the left.",
        None,
        1.0,
        {"": "default"},
        {},
    ),
    # --- conventions that do govern the output --------------------------------------------
    (
        "phase-returned-vector",
        "Return the ground-state vector up to a global phase.",
        None,
        [0.6, 0.8],
        {"/0": "default", "/1": "default"},
        {"": {"phase"}},
    ),
    (
        "phase-named-member",
        "Return the tuple (E, psi): the energy and the normalized state psi. The state psi is "
        "defined up to a global phase.",
        None,
        (-1.0, [0.6, 0.8]),
        {"/0": "default", "/1/0": "default", "/1/1": "default"},
        {"/1": {"phase"}},
    ),
    (
        "sign-may-be-returned",
        "Return (E, v), the lowest eigenvalue and its eigenvector; v may be returned up to an "
        "overall sign.",
        None,
        (-2.0, [0.6, -0.8]),
        {"/0": "default", "/1/0": "default", "/1/1": "default"},
        {"/1": {"sign"}},
    ),
    (
        "phase-absolute-with",
        "Return the ground-state energy E and the ground state psi as a tuple (E, psi), with "
        "psi up to a global phase.",
        None,
        (-1.0, [0.6, 0.8]),
        {"/0": "default", "/1/0": "default", "/1/1": "default"},
        {"/1": {"phase"}},
    ),
    (
        "sign-graded-after-colon",
        "An eigenvector is defined only up to a sign: the returned vector is graded up to an "
        "overall sign.",
        None,
        [0.6, 0.8],
        {"/0": "default", "/1": "default"},
        {"": {"sign"}},
    ),
    (
        "sign-docstring-entry",
        "Compute the Chern numbers and the Wannier spread.",
        "chern: tuple[int, int]\n    Chern numbers, up to an overall sign.\n"
        "TrG: float\n    Wannier spread, rounded to 2 decimal places.\n",
        ((1, -1), 0.71),
        {"/0/0": "exact", "/0/1": "exact", "/1": "atol 5e-3"},
        {"/0": {"sign"}},
    ),
    # --- enumerations ---------------------------------------------------------------------
    (
        "enum-basis-states",
        "The basis states may be enumerated in any order. Return the energies as a list in "
        "ascending order.",
        None,
        [1.0, 2.0],
        {"/0": "default", "/1": "default"},
        {"": {"ascending"}},
    ),
    (
        "enum-sum-configurations",
        "Sum over the configurations in any order and return the partition function as a "
        "list of its two terms.",
        None,
        [1.0, 2.0],
        {"/0": "default", "/1": "default"},
        {},
    ),
    (
        "enum-label-then-return-sorted",
        "Label the lattice sites in any order, then return the spectrum sorted in ascending order.",
        None,
        [1.0, 2.0],
        {"/0": "default", "/1": "default"},
        {"": {"ascending"}},
    ),
    (
        "enum-compute-in-any-order",
        "Compute the eigenvalues in any order and return the two largest as a list.",
        None,
        [3.0, 2.0],
        {"/0": "default", "/1": "default"},
        {},
    ),
    (
        "enum-terms-added",
        "The terms of the series can be added in any order; return the partial sums as a list.",
        None,
        [1.0, 1.5],
        {"/0": "default", "/1": "default"},
        {},
    ),
    (
        "order-return-any-order",
        "Return the allowed wavelengths in any order.",
        None,
        [500.0, 600.0],
        {"/0": "default", "/1": "default"},
        {"": {"unordered"}},
    ),
    (
        "order-returned-may-come",
        "The returned multiplets may come in any order.",
        None,
        [1.0, 3.0],
        {"/0": "default", "/1": "default"},
        {"": {"unordered"}},
    ),
    (
        "order-tighter-wins",
        "Return the levels as a list in ascending order. The returned levels may come in any "
        "order.",
        None,
        [1.0, 2.0],
        {"/0": "default", "/1": "default"},
        {"": {"ascending"}},
    ),
    # --- several outputs ------------------------------------------------------------------
    (
        "multi-width-with-x-depth-with-y",
        "Return the tuple (width, depth). Report the width with relative error below 1e-6 and "
        "the depth with absolute error below 1e-3.",
        None,
        (2.0, 0.5),
        {"/0": "rtol 1e-6", "/1": "atol 1e-3"},
        {},
    ),
    (
        "multi-one-clause-two-names",
        "Implement f(x) returning (span, shift). Report span and shift with relative error "
        "below 2e-8.",
        None,
        (3.0, 0.25),
        {"/0": "rtol 2e-8", "/1": "rtol 2e-8"},
        {},
    ),
    (
        "multi-named-is-no-blanket",
        "Return the tuple (mean, variance). Report the mean with absolute error below 1e-6.",
        None,
        (0.5, 0.25),
        {"/0": "atol 1e-6", "/1": "default"},
        {},
    ),
    (
        "multi-two-of-three",
        "Return (a, b, c). Give a and c to three decimal places.",
        None,
        (1.5, 2.5, 3.5),
        {"/0": "atol 5e-4", "/1": "default", "/2": "atol 5e-4"},
        {},
    ),
    (
        "multi-dict-key",
        'Return a dict with exactly the keys "Z", "U", "S" and "C". Report C with relative '
        "error below 1e-9.",
        None,
        {"Z": 1.5, "U": 0.25, "S": 0.5, "C": 0.125},
        {"/Z": "default", "/U": "default", "/S": "default", "/C": "rtol 1e-9"},
        {},
    ),
    (
        "multi-each-its-own",
        "Return (E1, E2). Report E1 to 4 significant figures and E2 to 3 decimal places.",
        None,
        (12.34, 5.678),
        {"/0": "atol 5e-3", "/1": "atol 5e-4"},
        {},
    ),
    (
        "multi-both-values",
        "Return the pair (x, y). Both values should be given with relative error below 1e-7.",
        None,
        (1.0, 2.0),
        {"/0": "rtol 1e-7", "/1": "rtol 1e-7"},
        {},
    ),
    (
        "multi-names-nothing",
        "Return the tuple (p, q). Report the energy to 3 decimal places.",
        None,
        (1.0, 2.0),
        {"/0": "default", "/1": "default"},
        {},
    ),
    (
        "multi-all-and-one-tighter",
        "Return (gap, width). Give all results to 2 decimal places, and the gap to 6 decimal "
        "places.",
        None,
        (1.0, 2.0),
        {"/0": "atol 5e-7", "/1": "atol 5e-3"},
        {},
    ),
    (
        "multi-parenthesized-each",
        "T (to 3 significant figures) and E (to 5 decimal places) are returned as the tuple "
        "(T, E).",
        None,
        (293.15, 0.5),
        {"/0": "atol 0.5", "/1": "atol 5e-6"},
        {},
    ),
    (
        "multi-shared-description",
        "Calculate $\\sigma(E)$ with a precision to three decimal places for E = 1 meV and "
        "E = 40 meV.",
        "sigma_1: float, $\\sigma(E)$ at $E = 1$ meV\n"
        "sigma_40: float, $\\sigma(E)$ at $E = 40$ meV",
        (0.5, 0.25),
        {"/0": "atol 5e-4", "/1": "atol 5e-4"},
        {},
    ),
    (
        "multi-math-alias",
        "Numerically evaluate $\\mathrm{Tr}\\,\\mathcal{G}$ for the top band (to two decimal "
        "places).",
        "chern: int, Chern number of the top band\n"
        "TrG: float, $\\mathrm{Tr}\\mathcal{G}$ of the top band",
        (1, 0.71),
        {"/0": "exact", "/1": "atol 5e-3"},
        {},
    ),
    (
        "multi-described-ground-energy",
        "How many degenerate ground states are there? Compute the energy of the ground states "
        "with three decimal precision.",
        "N_total : total number of degenerate ground states.\n"
        "E_ground : float, ground state energy.",
        (4, -1.5),
        {"/0": "exact", "/1": "atol 5e-4"},
        {},
    ),
    (
        "multi-abs-and-rel",
        "Return the tuple (q, p). Report q with absolute error below 1e-6 and p with relative "
        "error below 1e-6.",
        None,
        (50.0, 50.0),
        {"/0": "atol 1e-6", "/1": "rtol 1e-6"},
        {},
    ),
    (
        "multi-width-only-needed",
        "Return (E, w). Report E with relative error below 1e-8; w is only needed to 2 "
        "significant figures.",
        None,
        (1.0, 0.35),
        {"/0": "rtol 1e-8", "/1": "atol 5e-3"},
        {},
    ),
    # --- CritPt's ± phrasing --------------------------------------------------------------
    (
        "pm-two-quantities",
        "What are the critical Rayleigh number (allowing $\\pm 0.5$ error) and associated "
        "critical horizontal wavenumber (allowing $\\pm 0.02$ error), where above this "
        "critical Rayleigh number, the conduction base state is linearly unstable?",
        "Ra_c: float, critical Rayleigh number\n"
        "kx: float, associated critical horizontal wavenumber",
        (1707.762, 3.117),
        {"/0": "atol 0.5", "/1": "atol 0.02"},
        {},
    ),
    (
        "pm-third-output-untouched",
        "What is the critical Rayleigh number (allowing $\\pm 0.05$ error) and associated "
        "critical horizontal wavenumber (allowing $\\pm 0.02$ error)? Moreover, what is the "
        "value of w(z)/T(z) at z=0.67?",
        "Ra_c: float, the critical Rayleigh number.\n"
        "k_c: float, the associated critical horizontal wavenumber.\n"
        "ratio: float, the value of w(z)/T(z) at z=0.67.",
        (1100.65, 2.682, 0.25),
        {"/0": "atol 0.05", "/1": "atol 0.02", "/2": "default"},
        {},
    ),
    (
        "pm-single",
        "What is the critical Rayleigh number (allowing $\\pm 0.05$ error)?",
        None,
        1100.65,
        {"": "atol 0.05"},
        {},
    ),
    (
        "pm-percent",
        "Give the transition temperature (allowing ±2% error).",
        None,
        92.0,
        {"": "rtol 0.02"},
        {},
    ),
    (
        "pm-error-of",
        "Report the velocity in m/s with an error of ±0.1 m/s.",
        None,
        12.0,
        {"": "atol 0.1"},
        {},
    ),
    (
        # The width has a unit and the statement names none for the output: which unit the
        # velocity is returned in cannot be told, so the width loosens nothing.
        "pm-unit-of-output-unknown",
        "Report the velocity with an error of ±0.1 m/s.",
        None,
        12.0,
        {"": "default"},
        {},
    ),
    (
        "pm-unit-converted",
        "Report the velocity in km/s with an error of ±0.1 m/s.",
        None,
        12.0,
        {"": "atol 0.0001"},
        {},
    ),
    (
        "pm-value-set-is-no-tolerance",
        "Give the associated helicity $\\sigma$ ($\\pm 1$).",
        None,
        1,
        {"": "exact"},
        {},
    ),
    (
        "pm-tolerance-one-of-two",
        "Report the Rayleigh number (±0.5 tolerance) and the wavenumber.",
        "Ra: float, the Rayleigh number\nk: float, the wavenumber",
        (1707.762, 3.117),
        {"/0": "atol 0.5", "/1": "default"},
        {},
    ),
    # --- significant figures near mantissa 1 and near 10 -----------------------------------
    (
        "sig-mantissa-one",
        "Report the result to 4 significant figures.",
        None,
        1.0004,
        {"": "atol 5e-4"},
        {},
    ),
    (
        "sig-mantissa-ten",
        "Report the result to 4 significant figures.",
        None,
        9.9996,
        {"": "atol 5e-4"},
        {},
    ),
    (
        "sig-just-below-one",
        "Report the result to 4 significant figures.",
        None,
        0.99996,
        {"": "atol 5e-5"},
        {},
    ),
    (
        "sig-hundreds",
        "Give the result to 6 significant figures.",
        None,
        1234.56,
        {"": "atol 5e-3"},
        {},
    ),
    ("sig-near-thousand", "Give the result to 3 sig figs.", None, 999.6, {"": "atol 0.5"}, {}),
    (
        "sig-list-each-own",
        "Keep at least three significant digits in the final result.",
        None,
        [2.0e-3, 5.5e-4, 9.99],
        {"/0": "atol 5e-6", "/1": "atol 5e-7", "/2": "atol 5e-3"},
        {},
    ),
    (
        "sig-hartree-coordinated",
        "Report the answer in Hartree and keep two significant digits.",
        None,
        -0.0123,
        {"": "atol 5e-4"},
        {},
    ),
    (
        "sig-significant-decimal-digits",
        "Give the decay constant to 10 significant decimal digits.",
        None,
        0.0371,
        {"": "atol 5e-12"},
        {},
    ),
    # --- the answer as a whole --------------------------------------------------------------
    (
        "answer-within-percent",
        "Report the answer to within 0.1%.",
        None,
        3.0,
        {"": "rtol 1e-3"},
        {},
    ),
    (
        "answer-all-numerical-results",
        "All numerical results should be given to four decimal places.",
        "energies: list[float], the energies\ngap: float, the gap",
        ([1.0, 2.0], 1.0),
        {"/0/0": "atol 5e-5", "/0/1": "atol 5e-5", "/1": "atol 5e-5"},
        {},
    ),
    (
        "answer-this-quantity",
        "Evaluate this quantity to at least six decimal places.",
        None,
        0.5,
        {"": "atol 5e-7"},
        {},
    ),
    (
        "answer-keep-for-all",
        "For all numerical calculations, please use a 60 x 60 mesh, and keep four decimal "
        "places for all numerical answers.",
        None,
        (0.5, 0.25),
        {"/0": "atol 5e-5", "/1": "atol 5e-5"},
        {},
    ),
    (
        "answer-skips-counts",
        "Give all numerical results with three decimal precision.",
        None,
        (4, 1.25),
        {"/0": "exact", "/1": "atol 5e-4"},
        {},
    ),
    (
        "answer-unqualified-error",
        "Compute it with an error below 1e-3.",
        None,
        50.0,
        {"": "atol 1e-3"},
        {},
    ),
    (
        "answer-nearest-hundredth",
        "Give the answer to the nearest hundredth.",
        None,
        3.14159,
        {"": "atol 5e-3"},
        {},
    ),
    (
        "answer-fronted",
        "To three significant figures, report the period.",
        None,
        2.007,
        {"": "atol 5e-3"},
        {},
    ),
    (
        "answer-units",
        "Give the energy in eV rounded to 3 decimal places.",
        None,
        13.6057,
        {"": "atol 5e-4"},
        {},
    ),
    (
        "answer-integer-rounding",
        "Find the evolution time $T$ (rounded to the nearest integer) and the achievable "
        "probability $P$ (to two decimal places).",
        "T: int, evolution time T\nP: float, achievable probability P",
        (120, 0.25),
        {"/0": "atol 1/2", "/1": "atol 5e-3"},
        {},
    ),
    # --- what is not read ---------------------------------------------------------------------
    (
        "unread-as-accurate-as-possible",
        "Please be as accurate as possible.",
        None,
        1.0,
        {"": "default"},
        {},
    ),
    ("unread-too-loose", "Report E to within 20%.", None, 1.0, {"": "default"}, {}),
    (
        "unread-below-resolution",
        "Report E with relative error below 1e-20.",
        None,
        1.0,
        {"": "default"},
        {},
    ),
]


def _leaves(value: Any, path: str = ""):
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        yield path, Fraction(abs(value)), True
    elif isinstance(value, float):
        yield path, abs(Fraction(value)), False
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from _leaves(item, f"{path}/{i}")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, f"{path}/{key}")


def _width(text: str) -> Fraction:
    return Fraction(text) if "/" in text else Fraction(Decimal(text))


def _applied(problem: str, doc: str | None, value: Any):
    context = CaseContext(Policy(problem=problem, output_doc=doc), value)
    tolerances = {}
    for path, scale, is_int in _leaves(value):
        tolerances[path] = context.tolerance(path, scale, expected_is_int=is_int)
    conventions: dict[str, set[str]] = {}
    for path, applied in context.conventions.by_path:
        conventions.setdefault(path, set()).add(applied.convention)
    return tolerances, conventions


@pytest.mark.parametrize(
    ("problem", "doc", "value", "tolerances", "conventions"),
    [row[1:] for row in ROWS],
    ids=[row[0] for row in ROWS],
)
def test_binding_per_output(problem, doc, value, tolerances, conventions):
    applied, granted = _applied(problem, doc, value)
    assert set(applied) == set(tolerances), "every numeric leaf is listed in the row"
    for path, want in tolerances.items():
        got = applied[path]
        if want == "default":
            assert (got.source, got.rtol, got.atol) == ("default", Fraction(5, 10**12), 0), (
                path,
                got.text,
            )
        elif want == "exact":
            assert got.exact, (path, got.text)
        else:
            kind, width = want.split()
            pair = (got.rtol, got.atol)
            expected = (_width(width), 0) if kind == "rtol" else (0, _width(width))
            assert (got.source, pair) == ("promise", expected), (path, got.text)
    assert granted == conventions


def test_the_table_is_large_and_covers_every_group():
    ids = [row[0] for row in ROWS]
    assert len(ids) == len(set(ids)) >= 60
    groups = {i.split("-")[0] for i in ids}
    assert {"decoy", "enum", "multi", "pm", "sig", "answer", "unread"} <= groups
    assert sum(i.startswith("decoy") for i in ids) >= 20


def test_every_tolerance_names_its_source_and_unread_wording_is_reported():
    tolerances, _ = _applied("Please be as accurate as possible.", None, 1.0)
    assert "no promise read: 'Please be as accurate as possible.'" in tolerances[""].text
    tolerances, _ = _applied(
        "The coupling J is known to within 0.5%. Compute the energy.", None, 1.0
    )
    assert "'to within 0.5%' sets nothing" in tolerances[""].text
    tolerances, _ = _applied(ROWS[0][1], None, 1.0)
    assert tolerances[""].text.startswith("rtol=5e-12 (default; no promise read for this output")


_WORDS = (
    "Report Return the a energy E T width and , ; : ( ) . ? is are should given known to within "
    "0.5% 1e-6 relative error below three decimal places significant figures rounded nearest "
    "integer up overall sign global phase in any order ascending using with where which for "
    "$T$ $\\pm 0.5$ allowing ± each both all it answer returned tuple (p, W) keep Compute "
    "What Please as accurate"
)
_VOCABULARY = _WORDS.split()


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(_VOCABULARY), min_size=1, max_size=40),
    st.sampled_from([None, "x: float, the width (3 decimal places)\ny: int, a count"]),
    st.sampled_from([1.0, (1.0, 2), [1.0, 2.0], {"x": 1.0}]),
)
def test_any_text_reads_without_error(words, doc, value):
    tolerances, _ = _applied(" ".join(words), doc, value)
    assert all(t.rtol >= 0 and t.atol >= 0 for t in tolerances.values())
