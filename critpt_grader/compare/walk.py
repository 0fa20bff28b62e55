"""The per-leaf comparison: walks the expected value and the observed value together.

Every function here returns the leaf verdicts of one subtree. Nothing is evaluated from
text except through the restricted grammar (:func:`critpt_grader.symbolic.parse`), and
symbolic equality is accepted only when :func:`critpt_grader.symbolic.decide` proves it.
"""

from __future__ import annotations

import bisect
import re
import sys
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

from critpt_grader.compare.legacy import LegacyReading, names_in, read_legacy
from critpt_grader.compare.matching import (
    BudgetExhausted,
    StepBudget,
    perfect_matching,
    same_position_first,
)
from critpt_grader.compare.numbers import (
    ExactNumber,
    NonfiniteNumber,
    compare_numbers,
    evaluate_constant,
    from_sympy_number,
    number_of,
)
from critpt_grader.compare.policy import CaseContext
from critpt_grader.compare.verdicts import LeafVerdict, Status, aggregate, render
from critpt_grader.conventions import AppliedConvention
from critpt_grader.errors import GrammarError
from critpt_grader.tolerance import Tolerance
from critpt_grader.values import ExactComplex, Legacy, Symbolic, WireSet

Leaves = list[LeafVerdict]


# --- reading a side into a comparable form ----------------------------------------------


@dataclass(frozen=True)
class Expr:
    """A parsed SymPy value. ``numeric`` is set for a constant without free symbols."""

    expr: Any
    text: str
    has_float: bool
    free: bool


@dataclass(frozen=True)
class Unreadable:
    """Text that could not be read (outside the grammar, refused legacy literal...)."""

    reason: str


@dataclass(frozen=True)
class Category:
    """A categorical string. ``math_text`` is set for a legacy category that still parses
    as an expression when it meets a mathematical candidate."""

    text: str
    legacy: bool = False


def _parse(ctx: CaseContext, text: str) -> Any:
    from critpt_grader.symbolic.parse import parse

    key = ("", text)
    if key not in ctx.parsed:
        try:
            ctx.parsed[key] = parse(text, ctx.policy.symbols or None, allow_infinity=True)
        except GrammarError as exc:
            ctx.parsed[key] = exc
    result = ctx.parsed[key]
    if isinstance(result, GrammarError):
        raise result
    return result


def _read_expression(ctx: CaseContext, text: str):
    """Parse symbolic text into a number, non-finite value, interval, tuple or expression."""

    try:
        expr = _parse(ctx, text)
    except GrammarError as exc:
        return Unreadable(f"outside the grammar ({exc})")
    return _classify_sympy(expr, text)


def _classify_sympy(expr: Any, text: str):
    import sympy

    if expr is sympy.true or expr is sympy.false:
        return bool(expr)
    if isinstance(expr, sympy.Tuple):
        return tuple(_classify_sympy(item, str(item)) for item in expr.args)
    if expr in (sympy.oo, -sympy.oo, sympy.zoo, sympy.nan):
        label = {sympy.oo: "inf", -sympy.oo: "-inf", sympy.zoo: "zoo", sympy.nan: "nan"}
        return NonfiniteNumber(label[expr])
    if isinstance(expr, sympy.Set):
        return expr
    free = bool(getattr(expr, "free_symbols", None)) or (
        bool(expr.atoms(sympy.Function))
        and any(isinstance(f, sympy.core.function.AppliedUndef) for f in expr.atoms(sympy.Function))
    )
    has_float = bool(expr.atoms(sympy.Float))
    return Expr(expr, text, has_float, free)


def _read(ctx: CaseContext, value: Any, *, expected: bool, context_names: set[str]):
    """The comparable form of a scalar (containers are handled by the walker)."""
    if value is None or isinstance(value, bool | ExactNumber | NonfiniteNumber | Expr | Category):
        return value
    if isinstance(value, Unreadable) or _is_sympy_set(value):
        return value
    number = number_of(value)
    if number is not None:
        return number
    if isinstance(value, str):
        return Category(value)
    if isinstance(value, Symbolic):
        return _read_expression(ctx, value.text)
    if isinstance(value, Legacy):
        reading = read_legacy(value.text, ctx.policy.symbols.keys(), context_names)
        return _from_legacy(ctx, reading)
    return Unreadable(f"not a comparable value: {type(value).__name__}")


def _from_legacy(ctx: CaseContext, reading: LegacyReading):
    if reading.kind == "refused":
        return Unreadable("ambiguous legacy literal")
    if reading.kind == "number":
        return ExactNumber(reading.number)
    if reading.kind == "nonfinite":
        return NonfiniteNumber(reading.nonfinite)
    if reading.kind == "expression":
        parsed = _read_expression(ctx, reading.text)
        if not isinstance(parsed, Unreadable):
            return parsed
    return Category(reading.text.strip(), legacy=True)


# --- the walker -------------------------------------------------------------------------


class Walker:
    def __init__(self, ctx: CaseContext, expected_root: Any) -> None:
        self.ctx = ctx
        self.context_names = _expression_names(expected_root)

    # entry point for any pair of values
    def compare(self, expected: Any, observed: Any, path: str, *, skip: bool = False) -> Leaves:
        conventions = () if skip else self.ctx.conventions.at(path)
        if conventions:
            return self._with_conventions(expected, observed, path, conventions)
        if _is_sequence(expected) != _is_sequence(observed):
            # a SymPy Tuple travels as symbolic text "(1, 2)"; meet a sequence as one
            expected, observed = self._as_tuple(expected), self._as_tuple(observed)
        if _is_sequence(expected) or _is_sequence(observed):
            if isinstance(expected, WireSet) or isinstance(observed, WireSet):
                return self._unordered(expected, observed, path)
            if _is_sequence(expected) and _is_sequence(observed):
                return self._sequence(expected, observed, path)
        if isinstance(expected, dict) and isinstance(observed, dict):
            return self._map(expected, observed, path)
        if _is_container(expected) or _is_container(observed):
            return [self._structure(expected, observed, path)]
        return self._scalar(expected, observed, path)

    def _as_tuple(self, value: Any) -> Any:
        if isinstance(value, Symbolic):
            read = _read_expression(self.ctx, value.text)
            if isinstance(read, tuple):
                return read
        return value

    # containers ------------------------------------------------------------------------

    def _sequence(self, expected, observed, path: str) -> Leaves:
        leaves: Leaves = []
        if len(expected) != len(observed):
            leaves.append(
                _leaf(
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
            leaves.append(_leaf(path, "sequence", "equal", "both empty", expected, observed))
        return leaves

    def _map(self, expected: dict, observed: dict, path: str) -> Leaves:
        leaves: Leaves = []
        missing = [k for k in expected if k not in observed]
        extra = [k for k in observed if k not in expected]
        if missing or extra:
            parts = []
            if missing:
                parts.append("missing key" + "s" * (len(missing) > 1) + f" {_keys(missing)}")
            if extra:
                parts.append("extra key" + "s" * (len(extra) > 1) + f" {_keys(extra)}")
            leaves.append(_leaf(path, "map", "mismatch", "; ".join(parts), expected, observed))
        for key in expected:
            if key in observed:
                leaves.extend(self.compare(expected[key], observed[key], f"{path}/{_escape(key)}"))
        if not expected and not observed:
            leaves.append(_leaf(path, "map", "equal", "both empty", expected, observed))
        return leaves

    def _unordered(self, expected, observed, path: str) -> Leaves:
        if not (_is_sequence(expected) and _is_sequence(observed)):
            return [self._structure(expected, observed, path)]
        e_items, o_items = list(expected), list(observed)
        if len(e_items) != len(o_items):
            return [
                _leaf(
                    path,
                    "set",
                    "mismatch",
                    f"size differs: expected {len(e_items)} members, got {len(o_items)}",
                    expected,
                    observed,
                )
            ]
        if not e_items:
            return [_leaf(path, "set", "equal", "both empty", expected, observed)]
        pairs: dict[tuple[int, int], Leaves] = {}

        def pair(i: int, j: int) -> tuple[Status, Leaves]:
            if (i, j) not in pairs:
                pairs[(i, j)] = self.compare(e_items[i], o_items[j], f"{path}/{i}")
            leaves = pairs[(i, j)]
            return aggregate(leaf.status for leaf in leaves), leaves

        budget = StepBudget(self.ctx.matching_steps)
        size = len(e_items)
        prefer = _preference(e_items, o_items)
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
                    return [_leaf(path, "set", status, reason, expected, observed), *detail]
        except (BudgetExhausted, RecursionError):
            return [
                _leaf(
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
        return [_leaf(path, "set", "mismatch", reason, expected, observed)]

    def _structure(self, expected, observed, path: str) -> LeafVerdict:
        return _leaf(
            path,
            "structure",
            "mismatch",
            f"expected {_shape(expected)}, got {_shape(observed)}",
            expected,
            observed,
        )

    # conventions -----------------------------------------------------------------------

    def _with_conventions(
        self, expected, observed, path: str, conventions: tuple[AppliedConvention, ...]
    ) -> Leaves:
        kinds = {c.convention: c.phrase for c in conventions}
        if "unordered" in kinds and _is_sequence(expected) and _is_sequence(observed):
            return self._unordered(expected, observed, path)
        for order in ("ascending", "descending"):
            ordered = not isinstance(expected, WireSet) and not isinstance(observed, WireSet)
            if order in kinds and ordered and _is_sequence(observed):
                broken = _order_breach(observed, order)
                if broken is not None:
                    return [
                        _leaf(
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
        e_flat = _numbers_flat(expected)
        o_flat = _numbers_flat(observed)
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
        paths = _flat_paths(expected, path)
        for k, (e, o) in enumerate(zip(e_flat, o_flat, strict=True)):
            tolerance = self.ctx.tolerance(paths[k], e.scale(), expected_is_int=False)
            if k == anchor:
                status = _modulus_status(e, o, tolerance)
                reason = "modulus " + ("matches" if status == "equal" else "differs")
            else:
                rotated = ExactNumber(
                    e.re * ph_re - e.im * ph_im, e.re * ph_im + e.im * ph_re, e.error
                )
                status = compare_numbers(rotated, o, tolerance)
                reason = f"{_outcome_words(status)} after the common phase"
            leaves.append(
                LeafVerdict(
                    paths[k],
                    "complex",
                    status,
                    f"{reason} (statement: {phrase!r})",
                    tolerance,
                    render(_flat_values(expected)[k]),
                    render(_flat_values(observed)[k]),
                )
            )
        return leaves

    # scalars ---------------------------------------------------------------------------

    def _scalar(self, expected, observed, path: str) -> Leaves:
        kind = _kind(expected)
        if (
            type(expected) is type(observed)
            and isinstance(expected, Symbolic | Legacy)
            and expected == observed
            and not _NAN_TEXT.search(expected.text)
        ):
            return [_leaf(path, kind, "equal", "identical text", expected, observed)]
        e = _read(self.ctx, expected, expected=True, context_names=self.context_names)
        o = _read(self.ctx, observed, expected=False, context_names=self.context_names)
        if isinstance(e, tuple) or isinstance(o, tuple):  # a SymPy Tuple written as text
            e_seq = e if isinstance(e, tuple) else expected
            o_seq = o if isinstance(o, tuple) else observed
            if isinstance(e_seq, tuple | list) and isinstance(o_seq, tuple | list):
                return self._sequence(list(e_seq), list(o_seq), path)
        status, reason, tolerance = self._judge(e, o, expected, observed, path)
        return [_leaf(path, kind, status, reason, expected, observed, tolerance)]

    def _judge(self, e, o, expected, observed, path: str) -> tuple[Status, str, Tolerance | None]:
        if isinstance(e, Unreadable):
            return "invalid", f"expected value unreadable: {e.reason}", None
        if isinstance(o, Unreadable):
            return "mismatch", f"candidate value unreadable: {o.reason}", None
        if isinstance(e, Category):
            return self._category(e, o, observed, path)
        if isinstance(o, Category):
            # a candidate string meets a mathematical expectation: read it as math
            reread = _string_as_math(self.ctx, o.text)
            if isinstance(reread, Unreadable):
                return "mismatch", f"expected {_shape(expected)}, got a string", None
            o = reread
        if e is None or o is None:
            same = e is None and o is None
            return ("equal", "both None", None) if same else _kinds_differ(expected, observed)
        if isinstance(e, bool) or isinstance(o, bool):
            if isinstance(e, bool) and isinstance(o, bool):
                return ("equal" if e == o else "mismatch"), f"booleans {e} and {o}", None
            return "mismatch", "a boolean equals only a boolean", None
        if isinstance(e, NonfiniteNumber) or isinstance(o, NonfiniteNumber):
            return _nonfinite(e, o)
        if _is_sympy_set(e) or _is_sympy_set(o):
            return self._intervals(e, o)
        return self._mathematical(e, o, expected, path)

    def _category(self, e: Category, o, observed, path) -> tuple[Status, str, Tolerance | None]:
        if isinstance(o, Category):
            if e.text == o.text:
                return "equal", "identical strings", None
            return "mismatch", "strings differ (compared as categories)", None
        if e.legacy and not isinstance(o, bool | None):
            # A legacy category that parses (``pi``, ``A``) meets a mathematical candidate.
            parsed = _read_expression(self.ctx, e.text)
            if not isinstance(parsed, Unreadable):
                status, reason, tol = self._judge(parsed, o, Symbolic(e.text), observed, path)
                return status, f"{reason} (legacy text read as an expression)", tol
        return "mismatch", f"expected the string {e.text!r}, got {_shape(observed)}", None

    def _intervals(self, e, o) -> tuple[Status, str, Tolerance | None]:
        import sympy

        if not (_is_sympy_set(e) and _is_sympy_set(o)):
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
            status, reason = self._decide_pair(
                _classify_sympy(a, str(a)), _classify_sympy(b, str(b))
            )
            if status == "mismatch":
                return "mismatch", f"{name} ends differ: {reason}", None
            statuses.append(status)
        status = aggregate(statuses)
        return status, "ends and openness match" if status == "equal" else "ends unproved", None

    def _mathematical(self, e, o, expected, path) -> tuple[Status, str, Tolerance | None]:
        """Numbers and expressions. A number from the wire meets a constant expression
        through the tolerance; two symbolic values need a proof, unless both are decimal
        numbers (``1.5``, ``0.5 + 2.0*I``: Floats and nothing but arithmetic), which use the
        tolerance too.
        So ``1/3`` never equals the text ``0.333333333333333``, while the float
        ``0.3333333333333333`` does (within the default rtol)."""
        e_text, o_text = isinstance(e, Expr), isinstance(o, Expr)
        e_free, o_free = e_text and e.free, o_text and o.free
        if e_text and o_text:
            if _is_decimal_number(e.expr) and _is_decimal_number(o.expr):
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
            return run_timeboxed(lambda: _as_number(value), self.ctx.symbolic_budget())

        try:
            e_num, o_num = exact(e), exact(o)
        except TimeBoxExceeded:
            return "uncertain", "evaluating the constant ran out of time", None
        except (ValueError, TypeError, ArithmeticError) as exc:
            return "uncertain", f"could not evaluate the constant: {exc}", None
        tolerance = self.ctx.tolerance(path, e_num.scale(), expected_is_int=_is_int(expected))
        outcome = compare_numbers(e_num, o_num, tolerance)
        if outcome == "equal":
            return "equal", "within tolerance" if not tolerance.exact else "identical", tolerance
        if outcome == "mismatch":
            diff = _difference_text(e_num, o_num)
            bound = tolerance.text if tolerance.exact else f"beyond {tolerance.text}"
            return "mismatch", f"differs by {diff}; {bound}", tolerance
        return "uncertain", "too close to the tolerance boundary to decide", tolerance

    def _decide_pair(self, e, o) -> tuple[Status, str]:
        from critpt_grader.symbolic.prove import decide

        if not isinstance(e, Expr):
            e = Expr(_to_sympy(e), "", False, False)
        if not isinstance(o, Expr):
            o = Expr(_to_sympy(o), "", False, False)
        budget = self.ctx.symbolic_budget()
        if budget <= 0:
            return "uncertain", "the case's symbolic time budget is spent"
        decision = decide(e.expr, o.expr, budget_seconds=budget)
        status: Status = _DECISION_STATUS[decision.status]
        reason = decision.reason or decision.status
        if decision.method:
            reason = f"{reason} [{decision.method}]"
        return status, reason


# --- helpers ----------------------------------------------------------------------------

_NAN_TEXT = re.compile(r"(?i)\bnan\b")
_DECISION_STATUS: dict[str, Status] = {
    "equal": "equal",
    "different": "mismatch",
    "uncertain": "uncertain",
}


def negate(value: Any) -> Any:
    """``-value`` leaf by leaf (strings, booleans and None are left alone)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float | Fraction | Decimal | complex):
        return -value
    if isinstance(value, ExactComplex):
        return ExactComplex(-value.re, -value.im)
    if isinstance(value, Symbolic):
        return Symbolic(f"-({value.text})")
    if isinstance(value, Legacy):
        return Legacy(f"-({value.text})")
    if isinstance(value, list):
        return [negate(v) for v in value]
    if isinstance(value, tuple):
        return tuple(negate(v) for v in value)
    if isinstance(value, dict):
        return {k: negate(v) for k, v in value.items()}
    if isinstance(value, WireSet):
        return WireSet(tuple(negate(v) for v in value.items))
    return value


def _is_decimal_number(expr) -> bool:
    """A number written in decimals: Floats combined by arithmetic, no constants or
    functions (``0.5*pi`` is an expression that needs a proof)."""
    import sympy

    if not getattr(expr, "is_number", False) or not expr.atoms(sympy.Float):
        return False
    return all(
        isinstance(node, sympy.Number | sympy.Add | sympy.Mul) or node is sympy.I
        for node in sympy.preorder_traversal(expr)
    )


def _as_number(value: ExactNumber | Expr) -> ExactNumber:
    import sympy

    if isinstance(value, ExactNumber):
        return value
    if isinstance(value.expr, sympy.Rational | sympy.Float):
        return from_sympy_number(value.expr)
    return evaluate_constant(value.expr)


def _string_as_math(ctx: CaseContext, text: str):
    reading = read_legacy(text)
    if reading.kind in ("number", "nonfinite"):
        return _from_legacy(ctx, reading)
    if reading.kind in ("refused", "relation"):
        return Unreadable("not an expression")
    return _read_expression(ctx, text)


def _is_int(expected) -> bool:
    """An exact integer expectation: an int, or legacy text that is an integer."""
    if isinstance(expected, Legacy):
        return (
            read_legacy(expected.text).kind == "number"
            and expected.text.strip().lstrip("+-").isdigit()
        )
    return type(expected) is int


def _to_sympy(value) -> Any:
    import sympy

    if isinstance(value, ExactNumber):
        return sympy.Rational(value.re.numerator, value.re.denominator) + sympy.I * sympy.Rational(
            value.im.numerator, value.im.denominator
        )
    return value


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


def _modulus_status(e: ExactNumber, o: ExactNumber, tolerance: Tolerance) -> Status:
    """``| |o| - |e| | <= width``, decided on squares so everything stays rational."""
    e2 = e.re**2 + e.im**2
    o2 = o.re**2 + o.im**2
    width = tolerance.width(e.scale())
    # |o| within [|e| - w, |e| + w]  <=>  o2 within [(|e|-w)^2, (|e|+w)^2] when |e| >= w;
    # |e| is irrational in general, so bound it by rationals around its square root.
    low, high = _sqrt_bounds(e2)
    upper = (high + width) ** 2
    lower = max(low - width, Fraction(0)) ** 2
    if o2 > upper or (low - width > 0 and o2 < lower):
        return "mismatch"
    tight_upper = (low + width) ** 2
    tight_lower = max(high - width, Fraction(0)) ** 2
    if tight_lower <= o2 <= tight_upper:
        return "equal"
    return "uncertain"


def _sqrt_bounds(square: Fraction) -> tuple[Fraction, Fraction]:
    from math import isqrt

    scale = 10**40
    root = isqrt(square.numerator * scale * scale // square.denominator)
    return Fraction(root, scale), Fraction(root + 1, scale)


def _numbers_flat(value) -> list[ExactNumber] | None:
    flat = _flat_values(value)
    numbers = [number_of(v) for v in flat]
    if any(not isinstance(n, ExactNumber) for n in numbers):
        return None
    return numbers  # type: ignore[return-value]


def _flat_values(value) -> list[Any]:
    if isinstance(value, list | tuple):
        return [leaf for item in value for leaf in _flat_values(item)]
    return [value]


def _flat_paths(value, path: str) -> list[str]:
    if isinstance(value, list | tuple):
        return [p for i, item in enumerate(value) for p in _flat_paths(item, f"{path}/{i}")]
    return [path]


def _order_breach(values, order: str) -> int | None:
    numbers = [number_of(v) for v in values]
    if any(not isinstance(n, ExactNumber) or not n.is_real for n in numbers):
        return None  # order is checked only on real numbers
    for i in range(1, len(numbers)):
        a, b = numbers[i - 1].re, numbers[i].re  # type: ignore[union-attr]
        if (order == "ascending" and b < a) or (order == "descending" and b > a):
            return i
    return None


def _outcome_words(status: str) -> str:
    return {"equal": "equal", "mismatch": "differs", "uncertain": "undecided"}[status]


def _difference_text(e: ExactNumber, o: ExactNumber) -> str:
    diff = max(abs(o.re - e.re), abs(o.im - e.im))
    return f"{float(diff):.3g}"


def _kinds_differ(expected, observed) -> tuple[Status, str, None]:
    return "mismatch", f"expected {_shape(expected)}, got {_shape(observed)}", None


def _is_sympy_set(value) -> bool:
    sympy = sys.modules.get("sympy")  # a SymPy set exists only once SymPy is loaded
    return sympy is not None and isinstance(value, sympy.Set)


def _preference(e_items: list, o_items: list):
    """The order in which to try observed members for each expected one: an identical
    member first, then the nearest real value, then the same position, then the rest."""
    size = len(o_items)
    by_text: dict[str, list[int]] = {}
    for j, item in enumerate(o_items):
        by_text.setdefault(_identity_key(item), []).append(j)
    reals = [_real_key(item) for item in o_items]
    ordered = sorted((r, j) for j, r in enumerate(reals) if r is not None)
    keys = [r for r, _ in ordered]

    def prefer(i: int):
        yield from by_text.get(_identity_key(e_items[i]), ())
        target = _real_key(e_items[i])
        if target is not None and ordered:
            at = bisect.bisect_left(keys, target)
            low, high = at - 1, at
            while low >= 0 or high < len(ordered):
                if high >= len(ordered) or (low >= 0 and target - keys[low] <= keys[high] - target):
                    yield ordered[low][1]
                    low -= 1
                else:
                    yield ordered[high][1]
                    high += 1
        yield from same_position_first(i, size)

    return prefer


def _identity_key(value) -> str:
    return f"{type(value).__name__}:{value!r}"


def _real_key(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float | Fraction | Decimal):
        return None
    try:
        key = float(value)
    except (OverflowError, ValueError):
        return None
    return key if key == key else None


def _is_sequence(value) -> bool:
    return isinstance(value, list | tuple | WireSet)


def _is_container(value) -> bool:
    return isinstance(value, list | tuple | WireSet | dict)


def _kind(value) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "nonfinite" if value != value or value in (float("inf"), float("-inf")) else "float"
    if isinstance(value, Fraction | Decimal):
        return "float"
    if isinstance(value, complex | ExactComplex):
        return "complex"
    if isinstance(value, str):
        return "str"
    if isinstance(value, Symbolic):
        return "interval" if value.text.lstrip().startswith("Interval") else "symbolic"
    if isinstance(value, Legacy):
        return "legacy"
    return "structure"


def _shape(value) -> str:
    names = {
        type(None): "None",
        bool: "a boolean",
        int: "an int",
        float: "a float",
        Fraction: "a fraction",
        Decimal: "a decimal",
        complex: "a complex number",
        ExactComplex: "a complex number",
        str: "a string",
        list: "a list",
        tuple: "a tuple",
        dict: "a map",
        WireSet: "a set",
        Symbolic: "a symbolic value",
        Legacy: "a legacy string",
    }
    return names.get(type(value), type(value).__name__)


def _keys(keys: list[str]) -> str:
    return ", ".join(repr(k) for k in keys[:8]) + (" ..." if len(keys) > 8 else "")


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _leaf(
    path: str,
    kind: str,
    status: Status,
    reason: str,
    expected: Any,
    observed: Any,
    tolerance: Tolerance | None = None,
) -> LeafVerdict:
    return LeafVerdict(
        path, kind, status, reason, tolerance, render(_shown(expected)), render(_shown(observed))
    )


def _shown(value: Any) -> Any:
    """What a report shows for a value: the text or number, never an internal carrier."""
    if isinstance(value, Expr):
        return Symbolic(value.text or str(value.expr))
    if isinstance(value, ExactNumber):
        if value.im:
            return complex(float(value.re), float(value.im))
        return value.re if value.re.denominator != 1 else int(value.re)
    if isinstance(value, NonfiniteNumber):
        return Symbolic(value.label)
    if isinstance(value, Category):
        return value.text
    if isinstance(value, tuple):
        return tuple(_shown(v) for v in value)
    return value


def _expression_names(value: Any) -> set[str]:
    """Names used in the expected value's expressions (so a bare legacy ``x`` beside
    ``x**2`` reads as the symbol ``x``)."""
    names: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, list | tuple):
            stack.extend(item)
        elif isinstance(item, WireSet):
            stack.extend(item.items)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, Symbolic):
            names |= names_in(item.text)
        elif isinstance(item, Legacy):
            reading = read_legacy(item.text)
            if reading.kind == "expression":
                names |= names_in(item.text)
    return names
