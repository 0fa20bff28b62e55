"""The per-leaf comparison: walks the expected value and the observed value together.

Every function here returns the leaf verdicts of one subtree. Nothing is evaluated from
text except through the restricted grammar (:func:`critpt_grader.symbolic.parse`), and
symbolic equality is accepted only when :func:`critpt_grader.symbolic.decide` proves it.
What is neither proved equal nor proved different is settled by the one rule of
:mod:`critpt_grader.compare.uncertainty`: uncertain only when the candidate agreed wherever
it was evaluated.

A candidate leaf whose value is too costly to have where the expectation has one (blame
follows the value) decides its case: the walk stops there (:class:`CandidateTooCostly`), since
no other leaf can undo a proven mismatch and each further costly leaf would spend another CPU
cap of the row's budget.
"""

from __future__ import annotations

from typing import Any

from critpt_grader.codec.values import Symbolic, WireSet
from critpt_grader.compare.closeness import magnitude
from critpt_grader.compare.convention_rules import (
    factor_text,
    flat_paths,
    flat_values,
    modulus_status,
    negate,
    normalization_factor,
    normalization_freedom,
    numbers_flat,
    order_breach,
    scaled,
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
    shown,
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
    is_integer,
)
from critpt_grader.compare.reading import (
    Categorical,
    Expr,
    Unreadable,
    as_number,
    exact_candidate,
    exact_expectation,
    expression_names,
    is_decimal_number,
    is_sympy_set,
    read_expression,
    read_value,
    string_as_math,
    to_sympy,
)
from critpt_grader.compare.uncertainty import (
    candidate_unevaluable,
    expected_unevaluable,
    settle,
    settle_against_number,
)
from critpt_grader.compare.verdicts import LeafVerdict, Status, aggregate, render
from critpt_grader.policy.context import CaseContext
from critpt_grader.policy.conventions import AppliedConvention
from critpt_grader.policy.tolerance import Tolerance

Leaves = list[LeafVerdict]


class CandidateTooCostly(Exception):
    """The walk stops: ``leaf`` is a candidate value too costly to have where the expected
    value has one, a mismatch that decides the case."""

    def __init__(self, leaf: LeafVerdict) -> None:
        super().__init__(leaf.reason)
        self.leaf = leaf


class Walker:
    def __init__(self, ctx: CaseContext, expected_root: Any) -> None:
        self.ctx = ctx
        self.context_names = expression_names(expected_root)
        self._too_costly = False  # set by _decide_pair, acted on by _scalar

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
            if isinstance(read, tuple | WireSet):  # a Tuple or FiniteSet written as text
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
            # No matching was found to agree: nothing shows the candidate is right.
            status, reason = candidate_unevaluable(
                "the matching search exceeded its step budget before finding a matching"
            )
            return [make_leaf(path, "set", status, reason, expected, observed)]
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
            reason += f": expected member /{lonely} ({render(shown(e_items[lonely]))}) equals none"
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
        # normalization: one factor read from the data (a positive real; any real with a sign;
        # any complex number with a phase, whose freedom it then contains), else None
        rescaled = None
        if "normalization" in kinds:
            rescaled = self._normalization(expected, observed, path, kinds)
        if "phase" in kinds and rescaled is None:
            phased = self._phase(expected, observed, path, kinds["phase"])
            if phased is not None:
                return phased
        plain = self.compare(expected, observed, path, skip=True)
        if "sign" not in kinds and rescaled is None:
            return plain
        plain_status = aggregate(leaf.status for leaf in plain)
        if plain_status == "equal":
            return plain  # c = 1 (and c = -1 below) first: a freedom never loses an answer
        if "sign" in kinds:
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
            if rescaled is None:
                if "mismatch" in (plain_status, flipped_status) and plain_status == flipped_status:
                    return plain
                if plain_status == "mismatch":
                    return flipped
                return plain
        assert rescaled is not None
        if plain_status == "mismatch" or aggregate(leaf.status for leaf in rescaled) == "equal":
            return rescaled  # equal after rescaling, or where it differs after rescaling
        return plain

    def _normalization(self, expected, observed, path: str, kinds: dict[str, str]) -> Leaves | None:
        """Equal up to one factor ``c``, read from the largest expected component as the
        phase is (:func:`normalization_factor`); ``None`` where normalization grants nothing.
        Each leaf meets ``c·e`` with its own tolerance at that value; as ``c`` comes from the
        candidate, an exact expectation is compared with the tolerance of a float."""
        phrase = kinds["normalization"]
        factor = normalization_factor(expected, observed, normalization_freedom(kinds))
        if factor is None:
            return None
        e_flat, o_flat = numbers_flat(expected), numbers_flat(observed)
        assert e_flat is not None and o_flat is not None  # normalization_factor checked them
        paths, e_values, o_values = (
            flat_paths(expected, path),
            flat_values(expected),
            flat_values(observed),
        )
        by = f"rescaling by {factor_text(factor)}"
        leaves: Leaves = []
        for k, (e, o) in enumerate(zip(e_flat, o_flat, strict=True)):
            target = scaled(e, factor)
            tolerance = self.ctx.tolerance(paths[k], magnitude(target))
            status = compare_numbers(target, o, tolerance)
            leaves.append(
                LeafVerdict(
                    paths[k],
                    kind_of(e_values[k]),
                    status,
                    f"{outcome_words(status)} after {by} (statement: {phrase!r})",
                    tolerance,
                    render(e_values[k]),
                    render(o_values[k]),
                )
            )
        return leaves

    def _phase(self, expected, observed, path: str, phrase: str) -> Leaves | None:
        """Equal up to ``e^{iφ}``: φ is read from the largest expected component."""
        e_flat = numbers_flat(expected)
        o_flat = numbers_flat(observed)
        if e_flat is None or o_flat is None or len(e_flat) != len(o_flat) or not e_flat:
            return None
        anchor = max(range(len(e_flat)), key=lambda k: magnitude(e_flat[k]))
        e_anchor, o_anchor = e_flat[anchor], o_flat[anchor]
        if magnitude(e_anchor) == 0:
            return None
        # phase = o/e at the anchor, exactly; its modulus is checked separately
        denominator = e_anchor.re**2 + e_anchor.im**2
        ph_re = (o_anchor.re * e_anchor.re + o_anchor.im * e_anchor.im) / denominator
        ph_im = (o_anchor.im * e_anchor.re - o_anchor.re * e_anchor.im) / denominator
        leaves: Leaves = []
        paths = flat_paths(expected, path)
        for k, (e, o) in enumerate(zip(e_flat, o_flat, strict=True)):
            tolerance = self.ctx.tolerance(paths[k], magnitude(e))
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
        # Identical text is no shortcut: 0*oo, 0/0 or zoo written twice are still undefined,
        # and text over a grammar limit is still unreadable. Parsing is cached per text.
        kind = kind_of(expected)
        e = read_value(self.ctx, expected, self.context_names)
        o = read_value(self.ctx, observed, self.context_names)
        if isinstance(e, tuple) or isinstance(o, tuple):  # a SymPy Tuple written as text
            e_seq = e if isinstance(e, tuple) else expected
            o_seq = o if isinstance(o, tuple) else observed
            if isinstance(e_seq, tuple | list) and isinstance(o_seq, tuple | list):
                return self._sequence(list(e_seq), list(o_seq), path)
        if isinstance(e, WireSet) or isinstance(o, WireSet):  # a FiniteSet written as text
            e_set = e if isinstance(e, WireSet) else expected
            o_set = o if isinstance(o, WireSet) else observed
            if isinstance(e_set, WireSet) and is_sequence(o_set):
                return self._unordered(e_set, o_set, path)
            return [self._structure(expected, observed, path)]
        self._too_costly = False
        status, reason, tolerance = self._judge(e, o, expected, observed, path)
        leaf = make_leaf(path, kind, status, reason, expected, observed, tolerance)
        if self._too_costly and status == "mismatch":
            raise CandidateTooCostly(leaf)
        return [leaf]

    def _judge(self, e, o, expected, observed, path: str) -> tuple[Status, str, Tolerance | None]:
        if isinstance(e, Unreadable):
            return "invalid", f"expected value unreadable: {e.reason}", None
        if isinstance(o, Unreadable):
            return "mismatch", f"candidate value unreadable: {o.reason}", None
        if isinstance(e, Categorical):
            return self._category(e, o, observed, path)
        if isinstance(o, Categorical):
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
        return self._mathematical(e, o, expected, observed, path)

    def _category(self, e: Categorical, o, observed, path) -> tuple[Status, str, Tolerance | None]:
        if isinstance(o, Categorical):
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
        # An unevaluated Intersection, Complement or SymmetricDifference is the set SymPy
        # reduces it to: Intersection(Interval(0, 2), Interval(1, 3)) is Interval(1, 2).
        e, o = self._reduced(e), self._reduced(o)
        if e == o:
            return "equal", "identical sets once SymPy's set algebra reduced them", None
        if not (isinstance(e, sympy.Interval) and isinstance(o, sympy.Interval)):
            status, reason = self._other_sets(e, o)
            if type(e) is not type(o) and status != "equal":
                return "mismatch", "different kinds of set", None
            return status, reason, None
        if (e.left_open, e.right_open) != (o.left_open, o.right_open):
            return "mismatch", "interval ends differ in openness", None
        statuses, reasons = [], []
        for name, a, b in (("left", e.start, o.start), ("right", e.end, o.end)):
            status, reason = self._decide_pair(_end(a), _end(b))
            if status == "mismatch":
                return "mismatch", f"{name} ends differ: {reason}", None
            statuses.append(status)
            reasons.append(f"{name}: {reason}")
        status = aggregate(statuses)
        if status == "equal":
            return status, "ends and openness match", None
        return status, "ends unproved (" + "; ".join(reasons) + ")", None

    def _reduced(self, value):
        """A set with its unevaluated operations (as the parser reads ``Intersection``,
        ``Complement``, ``SymmetricDifference``) evaluated by SymPy, innermost first, under
        the CPU cap; the set as it was where that fails or runs out of time."""
        import sympy

        from critpt_grader.symbolic.cpu_cap import run_with_cpu_cap

        lazy = (sympy.Intersection, sympy.Complement, sympy.SymmetricDifference)
        if not any(isinstance(node, lazy) for node in sympy.preorder_traversal(value)):
            return value
        operations = (sympy.Union, *lazy)  # a Union around a lazy one is rebuilt too

        def reduce(node):
            if not isinstance(node, operations):
                return node
            return node.func(*(reduce(arg) for arg in node.args))

        try:
            return run_with_cpu_cap(lambda: reduce(value), self.ctx.cpu_seconds)
        except Exception:  # CpuCapReached, RecursionError, SymPy's set algebra giving up
            return value

    def _other_sets(self, e, o) -> tuple[Status, str]:
        """Unions and other sets of one kind: equal when SymPy's set algebra empties both
        differences, different when it shows one nonempty; with numbers for ends it decides."""
        import sympy

        from critpt_grader.symbolic.cpu_cap import run_with_cpu_cap

        def differences():
            return sympy.Complement(e, o), sympy.Complement(o, e)

        try:
            left, right = run_with_cpu_cap(differences, self.ctx.cpu_seconds)
            empty = [d.is_empty for d in (left, right)]
        except Exception:  # CpuCapReached, or SymPy's set algebra gave up
            empty = [None, None]
        if empty == [True, True]:
            return "equal", "the sets have no point outside each other"
        if False in empty:
            return "mismatch", "one set has points outside the other"
        if getattr(e, "free_symbols", None):
            return expected_unevaluable("sets of this kind with symbols are compared by algebra")
        return candidate_unevaluable("the set algebra could not compare the candidate's set")

    def _mathematical(self, e, o, expected, observed, path) -> tuple[Status, str, Tolerance | None]:
        """Numbers and expressions. A number from the wire meets a constant expression
        through the tolerance; two symbolic values need a proof, unless the candidate is a
        decimal number (``1.5``, ``0.5 + 2.0*I``: written with decimals, nothing but
        arithmetic) and the expectation a constant (``1.5``, ``1/3``, ``pi/3``), which use the
        tolerance: ``0.333333333333333`` is a rounded number, as a float is, and so is
        ``1.0471975511966`` against ``pi/3``.
        Exact against exact is exact: an exact expected value (``1/3``,
        ``binomial(100, 50)``; :func:`exact_expectation`) meets an exact candidate (an int, a
        Fraction, text without decimals; :func:`exact_candidate`) with no width under the
        default tolerance, so ``binomial(100, 50) - 1`` is a mismatch. An inexact candidate (a
        float, decimal text) meets it with the tolerance an inexact expectation would get
        there: ``0.1111111111111111`` equals ``1/9``. An author's or a promised tolerance
        applies as given either way."""
        candidate_exact = exact_candidate(observed, o)
        e_text, o_text = isinstance(e, Expr), isinstance(o, Expr)
        e_free, o_free = e_text and e.free, o_text and o.free
        if e_text and o_text:
            if is_decimal_number(o) and not e.free:
                return self._numeric(e, o, expected, path, candidate_exact=candidate_exact)
            status, reason = self._decide_pair(e, o)
            return status, reason, None
        if e_free or o_free:
            return self._free_against_number(e, o, expected, path, candidate_exact)
        return self._numeric(e, o, expected, path, candidate_exact=candidate_exact)

    def _free_against_number(
        self, e, o, expected, path, candidate_exact: bool
    ) -> tuple[Status, str, Tolerance | None]:
        """An expression with free symbols against a number from the wire. It equals the
        number only if it is a constant: ``sin(x)**2 + cos(x)**2`` against ``1``,
        ``(x**2-1)/(x-1) - x`` against ``1.0``. Constancy is a claim to prove: the
        expression must be proved equal to its own value at one point, which then meets the
        number with the tolerance; an expression proved to vary is a mismatch."""
        from critpt_grader.symbolic.prove import decide
        from critpt_grader.symbolic.sampling import value_at_a_point

        free_is_expected = isinstance(e, Expr) and e.free
        free = e if free_is_expected else o
        side = "expected value" if free_is_expected else "candidate"
        status, reason = self._decide_pair(e, o)  # exactly the number? (cheap when it is)
        if status == "equal":
            return status, reason, None
        cpu_seconds = self.ctx.cpu_seconds
        found = value_at_a_point(free.expr, cpu_seconds)
        if found is None:
            why = f"the {side} has no finite value at any sample point"
            verdict = expected_unevaluable(why) if free_is_expected else candidate_unevaluable(why)
            return *verdict, None
        value, point = found
        decision = decide(free.expr, value, cpu_seconds=cpu_seconds)
        if decision.status == "different":
            why = f"the {side} depends on its symbols ({decision.reason}), so it is no number"
            return "mismatch", why, None
        constant = Expr(value, f"{free.text} at {point}", False, False)
        pair = (constant, o) if free_is_expected else (e, constant)
        status, reason, tolerance = self._numeric(
            *pair, expected, path, candidate_exact=candidate_exact
        )
        if decision.status == "equal":
            proof = f"it is constant: equal to its value at {point} [{decision.method}]"
            return status, f"{reason} ({proof})", tolerance
        unproved = f"{reason} at {point}; whether the {side} is constant is unproved"
        return *settle_against_number(decision.evidence, status, free_is_expected, unproved), None

    def _numeric(
        self, e, o, expected, path, *, candidate_exact: bool = True
    ) -> tuple[Status, str, Tolerance | None]:
        from critpt_grader.symbolic.cpu_cap import CpuCapReached, run_with_cpu_cap

        seconds = self.ctx.cpu_seconds

        def exact(value):
            if isinstance(value, ExactNumber):
                return value
            return run_with_cpu_cap(lambda: as_number(value), seconds)

        numbers = []
        for value, unevaluable in ((e, expected_unevaluable), (o, candidate_unevaluable)):
            try:
                numbers.append(exact(value))
            except CpuCapReached:
                why = f"evaluating the constant took more than {seconds:g} s of CPU"
                return *unevaluable(f"{why} (a cap only a costly value reaches)"), None
            except Exception as exc:  # OverflowError, SymPy giving up...: no value
                return *unevaluable(f"the constant has no finite value here: {exc}"), None
        e_num, o_num = numbers
        tolerance = self.ctx.tolerance(
            path,
            magnitude(e_num),
            expected_exact=exact_expectation(expected, e, e_num),
            candidate_exact=candidate_exact,
        )
        outcome = compare_numbers(e_num, o_num, tolerance)
        if outcome == "equal":
            # the tolerance text says where it came from, or why no promise applied
            reason = "identical" if tolerance.exact else f"within {tolerance.text}"
            return "equal", reason, tolerance
        if outcome == "mismatch" and tolerance.integral and not is_integer(o_num):
            return "mismatch", f"not an integer; {tolerance.text}", tolerance
        if outcome == "mismatch":
            diff = difference_text(e_num, o_num)
            bound = tolerance.text if tolerance.exact else f"beyond {tolerance.text}"
            return "mismatch", f"differs by {diff}; {bound}", tolerance
        if tolerance.exact:
            # No width to be near: only the evaluation error is in the way. Prove it exactly.
            status, reason = self._decide_pair(_as_expr(e), _as_expr(o))
            if status != "uncertain":
                return status, reason, tolerance
        # Within the evaluation error (1e-45 relative) of the boundary: the candidate agrees
        # with the expectation at its one point as closely as the evaluation can tell.
        return "uncertain", "within the evaluation error of the tolerance boundary", tolerance

    def _decide_pair(self, e, o) -> tuple[Status, str]:
        from critpt_grader.symbolic.prove import decide

        e, o = _as_expr(e), _as_expr(o)
        # Expectation first; a candidate too costly to evaluate where the expectation has a
        # value ends the proof: blame follows the value (compare.uncertainty).
        decision = decide(e.expr, o.expr, cpu_seconds=self.ctx.cpu_seconds, blame_second=True)
        status: Status = _DECISION_STATUS[decision.status]
        reason = decision.reason or decision.status
        if decision.method:
            reason = f"{reason} [{decision.method}]"
        if status == "uncertain":
            evidence = decision.evidence
            self._too_costly = self._too_costly or bool(evidence and evidence.second_costly)
            return settle(evidence, reason)
        return status, reason


def _as_expr(value) -> Expr:
    return value if isinstance(value, Expr) else Expr(to_sympy(value), "", False, False)


def _end(value) -> Expr:
    """An interval end as an expression (``-oo`` included)."""
    from critpt_grader.symbolic.printer import safe_str

    return Expr(value, safe_str(value), False, bool(value.free_symbols))


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
    for side, value in (("expected", e), ("got", o)):
        if isinstance(value, NonfiniteNumber) and value.label == "zoo":
            why = "zoo (an undirected infinity, zoo - zoo is nan) never equals anything"
            return "mismatch", f"{side} {why}", None
    if isinstance(e, NonfiniteNumber) and isinstance(o, NonfiniteNumber):
        if e.label == o.label:
            return "equal", f"both {e.label}", None
        return "mismatch", f"expected {e.label}, got {o.label}", None
    if isinstance(e, NonfiniteNumber):
        return "mismatch", f"expected {e.label}, got a finite value", None
    return "mismatch", f"expected a finite value, got {o.label}", None
