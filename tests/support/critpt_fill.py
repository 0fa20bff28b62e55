"""Build a candidate for any CritPt template: the template's set-up plus an ``answer`` that
returns a value of each declared output type. Used to check that every public challenge runs
through the sandbox and encodes."""

from __future__ import annotations

import re

from critpt_grader.tasks import Task, declared_outputs

_SCALARS = {
    "float": "1.25",
    "int": "3",
    "integer": "3",
    "bool": "True",
    "str": "'A'",
    "complex": "(1+2j)",
    "sympy.Expr": "(sp.Rational(1, 3) + sp.pi)",
    "sympy.Symbol": "sp.Symbol('q')",
    "sympy.Interval": "sp.Interval.Lopen(0, sp.pi)",
    "": "'N/A'",
}


def value_for(kind: str) -> str:
    """Python source text for a value of a declared type such as ``set[tuple[int, str]]``."""
    kind = kind.strip().replace("tuples[", "tuple[")
    if kind in _SCALARS:
        return _SCALARS[kind]
    match = re.fullmatch(r"(list|set|tuple)\[(.*)\]", kind)
    if match:
        outer, inner = match.groups()
        items = [value_for(part) for part in _split(inner)]
        if outer == "list":
            return f"[{items[0]}, {items[0]}]"
        if outer == "set":
            return "{" + items[0] + "}"
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    match = re.fullmatch(r"\((.*)\)", kind)
    if match:
        return "(" + ", ".join(value_for(p) for p in _split(match.group(1))) + ")"
    return _SCALARS[""]


def _split(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in text:
        depth += char in "[("
        depth -= char in "])"
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [*parts, current]


def filled_candidate(task: Task) -> str:
    outputs = declared_outputs(task.output_doc) or [("result", "")]
    values = [value_for(kind) for _, kind in outputs]
    returned = values[0] if len(values) == 1 else "(" + ", ".join(values) + ")"
    params = ", ".join(task.cases[0].names or ())
    return (
        f"import sympy as sp\n{task.setup_source}\n\ndef answer({params}):\n    return {returned}\n"
    )


def input_values(task: Task) -> str:
    """Set-up lines giving the template's unresolved inputs a value (CritPt supplies them
    from hidden test cases): ints for names like ``k_value``, floats otherwise."""
    return "".join(
        f"{name} = {3 if name.endswith('value') else 1.5}\n" for name in task.unresolved_inputs
    )
