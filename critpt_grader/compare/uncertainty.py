"""The one rule for a comparison that is neither proved equal nor proved different.

``uncertain`` makes the row ``comparator_uncertain``: unscorable, masked from training. A wrong
answer that could make its own comparison undecidable (``sin(exp(exp(exp(9))))``, a value the
host cannot evaluate, an expression too large to read) would escape its 0 that way. So:

    An unproved comparison is **uncertain** only when the evidence says "equal": the candidate
    was evaluated at every evaluation point where the expectation has a value, agreed with it
    at each, and there were enough such points to have had a chance to differ.

Everything else is decided by whose value could not be evaluated. **Blame follows the
value**: when the expectation has a value at the evaluation points and the candidate's value
alone cannot be had there within its deterministic caps, the candidate scores 0; only an
expectation without a value makes a row unscorable. So:

* **the candidate's** (no finite value where the expectation has one at the same point, an
  overflow, a size limit of the grammar, no two precisions agreeing on its value, a CPU cap
  that only a costly value reaches, an order past the size checks, a function the grader
  does not know), or it differs at a point, however little → ``mismatch``
  (scored 0): its own structure is the cause, since the expectation has a value there. A
  candidate that could not be evaluated at *any* point is a mismatch, never "agreeing
  vacuously";
* **the expectation's** (the host cannot evaluate the reference at enough points) →
  ``uncertain`` (or ``invalid`` when its text cannot even be read): the task's defect, never
  the candidate's 0.

The evaluation points (:class:`critpt_grader.symbolic.sampling.Evidence`): for expressions with
symbols or opaque calls, up to 8 seeded points that respect the symbols' assumptions (complex
and real-line points in turn for assumption-free symbols); a point *counts* when the
expectation has a value there, and :data:`~critpt_grader.symbolic.sampling.REQUIRED_POINTS` (4)
counted points are needed. Every point is always evaluated: nothing depends on a clock. A
constant has one point: its value. Values are read at fixed precisions (30, 60, 120, 240
digits) and accepted where two agree; a candidate *agrees* at a point when its value there
exists and the difference vanishes as the precision grows (or, against a number with a
tolerance, lies within it).

Every ``uncertain`` the comparator produces comes from :func:`settle`,
:func:`expected_unevaluable` or a combination of leaves that each came from them.
"""

from __future__ import annotations

from critpt_grader.compare.verdicts import Status
from critpt_grader.symbolic.sampling import Evidence


def settle(evidence: Evidence | None, unproved: str) -> tuple[Status, str]:
    """The verdict of an unproved comparison from what evaluation showed. ``evidence`` is in
    (expectation, candidate) order; None means nothing was evaluated."""
    if evidence is None:
        return candidate_unevaluable(f"{unproved}, and the candidate was not evaluated")
    if evidence.second_failure is not None and evidence.second_costly:
        return candidate_unevaluable(
            f"{unproved}; blame follows the value: the candidate's value is too costly to "
            f"have where the expected value has one ({evidence.second_failure})"
        )
    if evidence.second_failure is not None:
        return "mismatch", f"{unproved}; the candidate does not agree: {evidence.second_failure}"
    if evidence.counted >= evidence.required and evidence.agreed == evidence.counted:
        where = "at its value" if evidence.required == 1 else f"at all {evidence.agreed} points"
        return "uncertain", f"{unproved}; the candidate agrees {where} (agreement is no proof)"
    if evidence.first_failure is not None:
        return expected_unevaluable(
            f"{unproved}; the expected value has a value at only {evidence.counted} of "
            f"{evidence.tried} points ({evidence.first_failure})"
        )
    return candidate_unevaluable(
        f"{unproved}; the candidate was evaluated at only {evidence.counted} points, "
        f"{evidence.required} are needed"
    )


def candidate_unevaluable(reason: str) -> tuple[Status, str]:
    """The candidate's value could not be evaluated where the expectation's can: a mismatch."""
    return "mismatch", reason


def expected_unevaluable(reason: str) -> tuple[Status, str]:
    """The expectation cannot be evaluated: the row is unscorable, whatever the candidate."""
    return "uncertain", f"{reason} (the expected value cannot be evaluated here)"


def settle_against_number(
    evidence: Evidence | None, number_status: Status, free_is_expected: bool, unproved: str
) -> tuple[Status, str]:
    """An expression with free symbols against a number, when its constancy is unproved.

    ``evidence`` compares the expression (first) with its own value at one point (second);
    ``number_status`` is how that value met the number. The number has a value at every
    point, so every point counts: a free *candidate* must have a value at each, the same
    value at each, and that value must meet the number, or it is a mismatch. A free
    *expectation* that cannot be evaluated makes the row unscorable; one whose values differ
    from point to point is no number, so a number never equals it."""
    if free_is_expected:
        if evidence is None:
            return expected_unevaluable(f"{unproved}; it was not evaluated")
        if evidence.second_failure is not None:
            return "mismatch", f"{unproved}; it varies: {evidence.second_failure}"
        if evidence.first_failure is not None or evidence.counted < evidence.required:
            why = evidence.first_failure or f"{evidence.counted} points evaluated"
            return expected_unevaluable(f"{unproved}; {why}")
    else:
        if evidence is None:
            return candidate_unevaluable(f"{unproved}; the candidate was not evaluated")
        failure = evidence.first_failure or evidence.second_failure
        if failure is not None:
            return "mismatch", f"{unproved}; the candidate does not agree: {failure}"
        if evidence.counted < evidence.required:
            return candidate_unevaluable(
                f"{unproved}; the candidate was evaluated at only {evidence.counted} points"
            )
    if number_status == "mismatch":
        return "mismatch", unproved
    return "uncertain", f"{unproved}; it agrees at all {evidence.agreed} points (no proof)"
