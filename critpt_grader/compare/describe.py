"""How values and differences are named in leaf verdicts."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from typing import Any

from critpt_grader.codec.values import ExactComplex, Legacy, Symbolic, WireSet
from critpt_grader.compare.numbers import (
    ExactNumber,
    NonfiniteNumber,
)
from critpt_grader.compare.reading import Categorical, Expr
from critpt_grader.compare.verdicts import LeafVerdict, Status, render
from critpt_grader.policy.tolerance import Tolerance


def is_sequence(value) -> bool:
    return isinstance(value, list | tuple | WireSet)


def is_container(value) -> bool:
    return isinstance(value, list | tuple | WireSet | dict)


def kind_of(value) -> str:
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
    if isinstance(value, Expr):  # a member of a tuple or set written as symbolic text
        return "symbolic"
    if isinstance(value, NonfiniteNumber):
        return "nonfinite"
    return "structure"


def shape(value) -> str:
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


def keys_text(keys: list[str]) -> str:
    return ", ".join(repr(k) for k in keys[:8]) + (" ..." if len(keys) > 8 else "")


def escape_key(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def make_leaf(
    path: str,
    kind: str,
    status: Status,
    reason: str,
    expected: Any,
    observed: Any,
    tolerance: Tolerance | None = None,
) -> LeafVerdict:
    return LeafVerdict(
        path, kind, status, reason, tolerance, render(shown(expected)), render(shown(observed))
    )


def shown(value: Any) -> Any:
    """What a report shows for a value: the text or number, never an internal carrier."""
    if isinstance(value, Expr):
        from critpt_grader.symbolic.printer import safe_str

        return Symbolic(value.text or safe_str(value.expr))
    if isinstance(value, ExactNumber):
        if value.im:
            return complex(float(value.re), float(value.im))
        return value.re if value.re.denominator != 1 else int(value.re)
    if isinstance(value, NonfiniteNumber):
        return Symbolic(value.label)
    if isinstance(value, Categorical):
        return value.text
    if isinstance(value, tuple):
        return tuple(shown(v) for v in value)
    return value


def difference_text(e: ExactNumber, o: ExactNumber) -> str:
    diff = max(abs(o.re - e.re), abs(o.im - e.im))
    # Decimal keeps differences such as 1e-800 that a float would show as 0
    return f"{Decimal(diff.numerator) / Decimal(diff.denominator):.3g}"


def outcome_words(status: str) -> str:
    return {"equal": "equal", "mismatch": "differs", "uncertain": "undecided"}[status]


def kinds_differ(expected, observed) -> tuple[Status, str, None]:
    return "mismatch", f"expected {shape(expected)}, got {shape(observed)}", None
