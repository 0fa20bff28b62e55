"""The strict per-leaf comparator.

``compare_values(expected, observed, policy)`` walks two decoded values (see
:mod:`critpt_grader.codec.values`) together and returns a :class:`CaseVerdict` with one
:class:`LeafVerdict` per compared leaf. The rules, in short:

* ``int`` and ``bool`` compare exactly, and a bool never equals an int; an exact expected
  value (an int, a Fraction, exact symbolic text) meets an exact candidate exactly, and an
  inexact one (a float, decimal text) with the tolerance an inexact expectation would get;
* floats and complex numbers pass ``|o - e| <= atol + rtol*|e|`` in exact rationals, with the
  tolerance chosen per leaf by :mod:`critpt_grader.policy.tolerance` (statement promise → per-leaf
  entry → task → default) and recorded on the verdict;
* strings are categories (exact); legacy strings are read as numbers, expressions or
  categories (:mod:`critpt_grader.compare.legacy`);
* symbolic values are equal only when :func:`critpt_grader.symbolic.decide` proves it; a
  constant expression meets a number through its 60-digit value and the tolerance; an
  expression with free symbols never equals a number;
* ``inf`` equals ``inf``, ``-inf`` equals ``-inf``, ``nan`` equals nothing;
* lists and tuples compare element by element; maps need the same keys; sets (or a set
  against a list) need a one-to-one matching of equal members;
* conventions read from the statement (overall sign, global phase, ordering) apply at the
  output they govern (:mod:`critpt_grader.policy.conventions`).

A case is ``mismatch`` if any leaf is a proven mismatch, else ``invalid`` if the expected
side could not be read, else ``uncertain`` if anything is unproved, else ``equal``.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

from critpt_grader.compare.verdicts import CaseVerdict, LeafVerdict, render
from critpt_grader.policy.context import CaseContext, Policy
from critpt_grader.raised import Raised, judge

__all__ = ["CaseVerdict", "LeafVerdict", "Policy", "compare_expectation", "compare_values"]


def compare_values(expected: Any, observed: Any, policy: Policy | None = None) -> CaseVerdict:
    """Compare two decoded values leaf by leaf under ``policy``."""
    # The walker needs SymPy: loaded at the first comparison (in a comparison worker, whose
    # warm-up does it), not whenever the pipeline imports this package.
    from critpt_grader.compare.walk import CandidateTooCostly, Walker

    policy = policy or Policy()
    walker = Walker(CaseContext(policy, expected), expected)
    try:
        return CaseVerdict.of(walker.compare(expected, observed, ""))
    except CandidateTooCostly as stop:  # blame follows the value: the case is decided
        leaf = stop.leaf
        reason = f"{leaf.reason} (the case stops at this leaf)"
        return CaseVerdict.of([dataclasses.replace(leaf, reason=reason)])


def compare_expectation(
    expectation_kind: Literal["value", "exception"],
    expected_value: Any,
    observed_kind: Literal["value", "exception"],
    observed_value: Any,
    policy: Policy | None = None,
) -> CaseVerdict:
    """Compare one case outcome with its expectation.

    For an exception expectation, ``expected_value`` is the expected builtin type's name and
    an observed raise is a :class:`critpt_grader.raised.Raised` (``None``: nothing known of
    its class). It passes only for a class that is that builtin type by its genuine builtin
    bases (the type, a builtin subclass, a program's or a library's subclass), never for the
    never-pass types (:mod:`critpt_grader.raised`); the message is never compared. A returned
    value fails it."""
    if expectation_kind == "exception":
        expected_text = expected_value if isinstance(expected_value, str) else "exception"
        if observed_kind == "exception":
            if not isinstance(observed_value, Raised):
                observed_value = Raised("?", "?", False, ())
            met, reason = judge(expected_value, observed_value)
            status, observed_text = ("equal" if met else "mismatch"), observed_value.name
        else:
            status, reason = "mismatch", "expected an exception, but the call returned a value"
            observed_text = _observed_text(observed_value)
        leaf = LeafVerdict("", "exception", status, reason, None, expected_text, observed_text)
        return CaseVerdict.of([leaf])
    if observed_kind == "exception":
        leaf = LeafVerdict(
            "",
            "exception",
            "mismatch",
            "expected a value, but the call raised",
            None,
            render(expected_value),
            _observed_text(observed_value),
        )
        return CaseVerdict.of([leaf])
    return compare_values(expected_value, observed_value, policy)


def _observed_text(value: Any) -> str:
    return "exception" if value is None else render(value)
