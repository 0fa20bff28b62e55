"""The per-leaf comparison: walks the expected value and the observed value together.

Every function here returns the leaf verdicts of one subtree. Nothing is evaluated from
text except through the restricted grammar (:func:`critpt_grader.symbolic.parse`), and
symbolic equality is accepted only when :func:`critpt_grader.symbolic.decide` proves it.
"""

from __future__ import annotations

import re
from typing import Any

from critpt_grader.compare.convention_rules import (
    flat_paths,
    flat_values,
    modulus_status,
    negate,
    numbers_flat,
    order_breach,
)
from critpt_grader.compare.describe import (
    difference_text,
    escape_key,
    is_container,
    is_sequence,
    keys_text,
    kind_of,
    kinds_differ,
    make_leaf,
    outcome_words,
    shape,
)
from critpt_grader.compare.matching import (
    BudgetExhausted,
    StepBudget,
    perfect_matching,
    preference,
)
from critpt_grader.compare.numbers import (
    ExactNumber,
    NonfiniteNumber,
    compare_numbers,
)
from critpt_grader.compare.policy import CaseContext
from critpt_grader.compare.reading import (
    Category,
    Expr,
    Unreadable,
    as_number,
    classify_sympy,
    expression_names,
    is_decimal_number,
    is_int_expectation,
    is_sympy_set,
    read_expression,
    read_value,
    string_as_math,
    to_sympy,
)
from critpt_grader.compare.verdicts import LeafVerdict, Status, aggregate, render
from critpt_grader.conventions import AppliedConvention
from critpt_grader.tolerance import Tolerance
from critpt_grader.values import Legacy, Symbolic, WireSet

Leaves = list[LeafVerdict]


class Walker:
    def __init__(self, ctx: CaseContext, expected_root: Any) -> None:
        self.ctx = ctx
        self.context_names = expression_names(expected_root)

    # entry point for any pair of values
    def compare(self, expected: Any, observed: Any, path: str, *, skip: bool = False) -> Leaves:
        conventions = () if skip else self.ctx.conventions.at(path)
        if conventions:
            return self._with_conventions(expected, observed, path, conventions)
        if is_sequence(expected) != is_sequence(observed):
            # a SymPy Tuple travels as symbolic text "(1, 2)"; meet a sequence as one
            expected, observed = self._as_tuple(expected), self._as_tuple(observed)
        if is_sequence(expected) or is_sequence(observed):
            if isinstance(expected, WireSet):
                return self._unordered(expected, observed, path)
            if isinstance(observed, WireSet):
                # An ordered answer was asked for: a set carries no order to check, so it
                # cannot be proved right (unless the statement grants any order).
                return [self._structure(expected, observed, path)]
            if is_sequence(expected) and is_sequence(observed):
                return self._sequence(expected, observed, path)
        if isinstance(expected, dict) and isinstance(observed, dict):
            return self._map(expected, observed, path)
        if is_container(expected) or is_container(observed):
            return [self._structure(expected, observed, path)]
        return self._scalar(expected, observed, path)

    def _as_tuple(self, value: Any) -> Any:
        if isinstance(value, Symbolic):
            read = read_expression(self.ctx, value.text)
            if isinstance(read, tuple):
                return read
        return value

    # containers ------------------------------------------------------------------------

    def _sequence(self, expected, observed, path: str) -> Leaves:
        leaves: Leaves = []
        if len(expected) != len(observed):
            leaves.append(
                make_leaf(
                    path,
                    "sequence",
                    "mismatch",
                    f"length differs: expected {len(expected)} elements, got {len(observed)}",
                    expected,
                    observed,
                )
            )
        for index, (e, o) in enumerate(zip(expected, observed, strict=False)):
            leaves.extend(self.compare(e, o, f"{path}/{index}"))
        if not expected and not observed:
            leaves.append(make_leaf(path, "sequence", "equal", "both empty", expected, observed))
        return leaves

    def _map(self, expected: dict, observed: dict, path: str) -> Leaves:
        leaves: Leaves = []
        missing = [k for k in expected if k not in observed]
        extra = [k for k in observed if k not in expected]
        if missing or extra:
            parts = []
            if missing:
                parts.append("missing key" + "s" * (len(missing) > 1) + f" {keys_text(missing)}")
            if extra:
                parts.append("extra key" + "s" * (len(extra) > 1) + f" {keys_text(extra)}")
            leaves.append(make_leaf(path, "map", "mismatch", "; ".join(parts), expected, observed))
        for key in expected:
            if key in observed:
                leaves.extend(
                    self.compare(expected[key], observed[key], f"{path}/{escape_key(key)}")
                )
        if not expected and not observed:
            leaves.append(make_leaf(path, "map", "equal", "both empty", expected, observed))
        return leaves

    def _unordered(self, expected, observed, path: str) -> Leaves:
        if not (is_sequence(expected) and is_sequence(observed)):
            return [self._structure(expected, observed, path)]
        e_items, o_items = list(expected), list(observed)
        if len(e_items) != len(o_items):
            return [
                make_leaf(
                    path,
                    "set",
                    "mismatch",
                    f"size differs: expected {len(e_items)} members, got {len(o_items)}",
                    expected,
                    observed,
                )
            ]
        if not e_items:
            return [make_leaf(path, "set", "equal", "both empty", expected, observed)]
        pairs: dict[tuple[int, int], Leaves] = {}

        def pair(i: int, j: int) -> tuple[Status, Leaves]:
            if (i, j) not in pairs:
                pairs[(i, j)] = self.compare(e_items[i], o_items[j], f"{path}/{i}")
            leaves = pairs[(i, j)]
            return aggregate(leaf.status for leaf in leaves), leaves

        budget = StepBudget(self.ctx.matching_steps)
        size = len(e_items)
        prefer = preference(e_items, o_items)
        try:
            match = perfect_matching(size, lambda i, j: pair(i, j)[0] == "equal", budget, prefer)
            if match is not None:
                self.ctx.matching_steps = budget.remaining
                return [leaf for i, j in enumerate(match) for leaf in pair(i, j)[1]]
            for allowed, status in (
                (("equal", "uncertain"), "uncertain"),
                (("equal", "uncertain", "invalid"), "invalid"),
            ):
                match = perfect_matching(
                    size, lambda i, j, a=allowed: pair(i, j)[0] in a, budget, prefer
                )
                if match is not None:
                    self.ctx.matching_steps = budget.remaining
                    detail = [
                        leaf
                        for i, j in enumerate(match)
                        for leaf in pair(i, j)[1]
                        if leaf.status != "equal"
                    ]
                    reason = (
                        "a one-to-one matching exists only if unproved pairs are equal"
                        if status == "uncertain"
                        else "a one-to-one matching exists only through unreadable members"
                    )
                    return [make_leaf(path, "set", status, reason, expected, observed), *detail]
        except (BudgetExhausted, RecursionError):
            return [
                make_leaf(
                    path,
                    "set",
                    "uncertain",
                    "matching search exceeded its step budget",
                    expected,
                    observed,
                )
            ]
        self.ctx.matching_steps = budget.remaining
        lonely = next(
            (
                i
                for i in range(size)
                if all(pair(i, j)[0] == "mismatch" for j in range(size) if (i, j) in pairs)
                and all((i, j) in pairs for j in range(size))
            ),
            None,
        )
        reason = "no one-to-one matching between the members"
        if lonely is not None:
            reason += f": expected member /{lonely} ({render(e_items[lonely])}) equals none"
        return [make_leaf(path, "set", "mismatch", reason, expected, observed)]

    def _structure(self, expected, observed, path: str) -> LeafVerdict:
        return make_leaf(
            path,
            "structure",
            "mismatch",
            f"expected {shape(expected)}, got {shape(observed)}",
            expected,
            observed,
        )

    # conventions -----------------------------------------------------------------------

    def _with_conventions(
        self, expected, observed, path: str, conventions: tuple[AppliedConvention, ...]
    ) -> Leaves:
        kinds = {c.convention: c.phrase for c in conventions}
        if "unordered" in kinds and is_sequence(expected) and is_sequence(observed):
            return self._unordered(expected, observed, path)
        for order in ("ascending", "descending"):
            ordered = not isinstance(expected, WireSet) and not isinstance(observed, WireSet)
            # The expected value itself must obey the phrase, or the phrase is about
            # something else: an identical answer must never fail on a misread convention.
            sorted_expectation = is_sequence(expected) and order_breach(expected, order) is None
            if order in kinds and ordered and sorted_expectation and is_sequence(observed):
                broken = order_breach(observed, order)
                if broken is not None:
                    return [
                        make_leaf(
                            path,
                            "sequence",
                            "mismatch",
                            f"not in {order} order at position {broken} "
                            f"(statement: {kinds[order]!r})",
                            expected,
                            observed,
                        )
                    ]
        if "phase" in kinds:
            phased = self._phase(expected, observed, path, kinds["phase"])
            if phased is not None:
                return phased
        plain = self.compare(expected, observed, path, skip=True)
        if "sign" not in kinds:
            return plain
        plain_status = aggregate(leaf.status for leaf in plain)
        if plain_status == "equal":
            return plain
        flipped = self.compare(negate(expected), observed, path, skip=True)
        flipped_status = aggregate(leaf.status for leaf in flipped)
        note = f" (equal to -expected; statement: {kinds['sign']!r})"
        if flipped_status == "equal":
            return [
                LeafVerdict(
                    leaf.path,
                    leaf.kind,
                    leaf.status,
                    leaf.reason + note,
                    leaf.tolerance,
                    leaf.expected,
                    leaf.observed,
                )
                for leaf in flipped
            ]
        if "mismatch" in (plain_status, flipped_status) and plain_status == flipped_status:
            return plain
        if plain_status == "mismatch":
            return flipped
        return plain

    def _phase(self, expected, observed, path: str, phrase: str) -> Leaves | None:
        """Equal up to ``e^{iφ}``: φ is read from the largest expected component."""
        e_flat = numbers_flat(expected)
        o_flat = numbers_flat(observed)
        if e_flat is None or o_flat is None or len(e_flat) != len(o_flat) or not e_flat:
            return None
        anchor = max(range(len(e_flat)), key=lambda k: e_flat[k].scale())
        e_anchor, o_anchor = e_flat[anchor], o_flat[anchor]
        if e_anchor.scale() == 0:
            return None
        # phase = o/e at the anchor, exactly; its modulus is checked separately
        denominator = e_anchor.re**2 + e_anchor.im**2
        ph_re = (o_anchor.re * e_anchor.re + o_anchor.im * e_anchor.im) / denominator
        ph_im = (o_anchor.im * e_anchor.re - o_anchor.re * e_anchor.im) / denominator
        leaves: Leaves = []
        paths = flat_paths(expected, path)
        for k, (e, o) in enumerate(zip(e_flat, o_flat, strict=True)):
            tolerance = self.ctx.tolerance(paths[k], e.scale(), expected_is_int=False)
            if k == anchor:
                status = modulus_status(e, o, tolerance)
                reason = "modulus " + ("matches" if status == "equal" else "differs")
            else:
                rotated = ExactNumber(
                    e.re * ph_re - e.im * ph_im, e.re * ph_im + e.im * ph_re, e.error
                )
                status = compare_numbers(rotated, o, tolerance)
                reason = f"{outcome_words(status)} after the common phase"
            leaves.append(
                LeafVerdict(
                    paths[k],
                    "complex",
                    status,
                    f"{reason} (statement: {phrase!r})",
                    tolerance,
                    render(flat_values(expected)[k]),
                    render(flat_values(observed)[k]),
                )
            )
        return leaves

    # scalars ---------------------------------------------------------------------------

    def _scalar(self, expected, observed, path: str) -> Leaves:
        kind = kind_of(expected)
        if (
            type(expected) is type(observed)
            and isinstance(expected, Symbolic | Legacy)
            and expected == observed
            and not _NAN_TEXT.search(expected.text)
        ):
            return [make_leaf(path, kind, "equal", "identical text", expected, observed)]
        e = read_value(self.ctx, expected, self.context_names)
        o = read_value(self.ctx, observed, self.context_names)
        if isinstance(e, tuple) or isinstance(o, tuple):  # a SymPy Tuple written as text
            e_seq = e if isinstance(e, tuple) else expected
            o_seq = o if isinstance(o, tuple) else observed
            if isinstance(e_seq, tuple | list) and isinstance(o_seq, tuple | list):
                return self._sequence(list(e_seq), list(o_seq), path)
        status, reason, tolerance = self._judge(e, o, expected, observed, path)
        return [make_leaf(path, kind, status, reason, expected, observed, tolerance)]

    def _judge(self, e, o, expected, observed, path: str) -> tuple[Status, str, Tolerance | None]:
        if isinstance(e, Unreadable):
            return "invalid", f"expected value unreadable: {e.reason}", None
        if isinstance(o, Unreadable):
            return "mismatch", f"candidate value unreadable: {o.reason}", None
        if isinstance(e, Category):
            return self._category(e, o, observed, path)
        if isinstance(o, Category):
            # a candidate string meets a mathematical expectation: read it as math
            reread = string_as_math(self.ctx, o.text)
            if isinstance(reread, Unreadable):
                return "mismatch", f"expected {shape(expected)}, got a string", None
            o = reread
        if e is None or o is None:
            same = e is None and o is None
            return ("equal", "both None", None) if same else kinds_differ(expected, observed)
        if isinstance(e, bool) or isinstance(o, bool):
            if isinstance(e, bool) and isinstance(o, bool):
                return ("equal" if e == o else "mismatch"), f"booleans {e} and {o}", None
            return "mismatch", "a boolean equals only a boolean", None
        if isinstance(e, NonfiniteNumber) or isinstance(o, NonfiniteNumber):
            return _nonfinite(e, o)
        if is_sympy_set(e) or is_sympy_set(o):
            return self._intervals(e, o)
        return self._mathematical(e, o, expected, path)

    def _category(self, e: Category, o, observed, path) -> tuple[Status, str, Tolerance | None]:
        if isinstance(o, Category):
            if e.text == o.text:
                return "equal", "identical strings", None
            return "mismatch", "strings differ (compared as categories)", None
        if e.legacy and not isinstance(o, bool | None):
            # A legacy category that parses (``pi``, ``A``) meets a mathematical candidate.
            parsed = read_expression(self.ctx, e.text)
            if not isinstance(parsed, Unreadable):
                status, reason, tol = self._judge(parsed, o, Symbolic(e.text), observed, path)
                return status, f"{reason} (legacy text read as an expression)", tol
        return "mismatch", f"expected the string {e.text!r}, got {shape(observed)}", None

    def _intervals(self, e, o) -> tuple[Status, str, Tolerance | None]:
        import sympy

        if not (is_sympy_set(e) and is_sympy_set(o)):
            return "mismatch", "an interval equals only an interval", None
        if e == o:
            return "equal", "identical sets", None
        if not (isinstance(e, sympy.Interval) and isinstance(o, sympy.Interval)):
            if type(e) is not type(o):
                return "mismatch", "different kinds of set", None
            return "uncertain", "sets of this kind are compared only structurally", None
        if (e.left_open, e.right_open) != (o.left_open, o.right_open):
            return "mismatch", "interval ends differ in openness", None
        statuses = []
        for name, a, b in (("left", e.start, o.start), ("right", e.end, o.end)):
            status, reason = self._decide_pair(classify_sympy(a, str(a)), classify_sympy(b, str(b)))
            if status == "mismatch":
                return "mismatch", f"{name} ends differ: {reason}", None
            statuses.append(status)
        status = aggregate(statuses)
        return status, "ends and openness match" if status == "equal" else "ends unproved", None

    def _mathematical(self, e, o, expected, path) -> tuple[Status, str, Tolerance | None]:
        """Numbers and expressions. A number from the wire meets a constant expression
        through the tolerance; two symbolic values need a proof, unless both are decimal
        numbers (``1.5``, ``0.5 + 2.0*I``: written with decimals, nothing but arithmetic),
        which use the tolerance too.
        So ``1/3`` never equals the text ``0.333333333333333``, while the float
        ``0.3333333333333333`` does (within the default rtol)."""
        e_text, o_text = isinstance(e, Expr), isinstance(o, Expr)
        e_free, o_free = e_text and e.free, o_text and o.free
        if e_text and o_text:
            if is_decimal_number(e) and is_decimal_number(o):
                return self._numeric(e, o, expected, path)
            status, reason = self._decide_pair(e, o)
            return status, reason, None
        if e_free or o_free:
            # only an expression proved constant (sin(x)**2 + cos(x)**2) can equal a number
            status, reason = self._decide_pair(e, o)
            if status == "equal":
                return status, reason, None
            return "mismatch", "an expression with free symbols never equals a number", None
        return self._numeric(e, o, expected, path)

    def _numeric(self, e, o, expected, path) -> tuple[Status, str, Tolerance | None]:
        from critpt_grader.symbolic.timebox import TimeBoxExceeded, run_timeboxed

        def exact(value):
            if isinstance(value, ExactNumber):
                return value
            return run_timeboxed(lambda: as_number(value), self.ctx.symbolic_budget())

        try:
            e_num, o_num = exact(e), exact(o)
        except TimeBoxExceeded:
            return "uncertain", "evaluating the constant ran out of time", None
        except (ValueError, TypeError, ArithmeticError) as exc:
            return "uncertain", f"could not evaluate the constant: {exc}", None
        tolerance = self.ctx.tolerance(
            path, e_num.scale(), expected_is_int=is_int_expectation(expected)
        )
        outcome = compare_numbers(e_num, o_num, tolerance)
        if outcome == "equal":
            return "equal", "within tolerance" if not tolerance.exact else "identical", tolerance
        if outcome == "mismatch":
            diff = difference_text(e_num, o_num)
            bound = tolerance.text if tolerance.exact else f"beyond {tolerance.text}"
            return "mismatch", f"differs by {diff}; {bound}", tolerance
        return "uncertain", "too close to the tolerance boundary to decide", tolerance

    def _decide_pair(self, e, o) -> tuple[Status, str]:
        from critpt_grader.symbolic.prove import decide

        if not isinstance(e, Expr):
            e = Expr(to_sympy(e), "", False, False)
        if not isinstance(o, Expr):
            o = Expr(to_sympy(o), "", False, False)
        budget = self.ctx.symbolic_budget()
        if budget <= 0:
            return "uncertain", "the case's symbolic time budget is spent"
        decision = decide(e.expr, o.expr, budget_seconds=budget)
        status: Status = _DECISION_STATUS[decision.status]
        reason = decision.reason or decision.status
        if decision.method:
            reason = f"{reason} [{decision.method}]"
        return status, reason


_NAN_TEXT = re.compile(r"(?i)\bnan\b")


_DECISION_STATUS: dict[str, Status] = {
    "equal": "equal",
    "different": "mismatch",
    "uncertain": "uncertain",
}


def _nonfinite(e, o) -> tuple[Status, str, None]:
    if isinstance(e, NonfiniteNumber) and e.has_nan:
        return "mismatch", "expected nan: nan never equals anything", None
    if isinstance(o, NonfiniteNumber) and o.has_nan:
        return "mismatch", "got nan: nan never equals anything", None
    if isinstance(e, NonfiniteNumber) and isinstance(o, NonfiniteNumber):
        if e.label == o.label:
            return "equal", f"both {e.label}", None
        return "mismatch", f"expected {e.label}, got {o.label}", None
    if isinstance(e, NonfiniteNumber):
        return "mismatch", f"expected {e.label}, got a finite value", None
    return "mismatch", f"expected a finite value, got {o.label}", None
