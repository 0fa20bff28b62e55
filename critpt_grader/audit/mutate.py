"""Mutation canaries: small, physics-plausible wrong answers derived from a reference.

Each operator looks at one node of the reference's syntax tree (the standard ``ast``) and
proposes a changed node: a numeric constant scaled (×2, ×1.05, ×(1+1e-3)), a sign flipped
(``+``↔``-``, a unary minus dropped, a returned value negated), one additive term dropped, an
exponent changed by one, a function swapped for a sibling (sin/cos/tan, exp/sinh/cosh,
log/log10), an integer constant ±1, a factor of π or 2 removed, two call arguments swapped.
Given the entry point, also two of its parameters swapped (``def f(a, b)`` → ``def f(b, a)``:
the answer called with those arguments the other way round), so cases that never tell two
inputs apart show up. A :class:`Mutant` is the reference's text with that node's characters
replaced (:mod:`critpt_grader.audit.source`), so its diff is the one change.

Pure: no code runs here. Guarantees: every mutant parses, differs from the reference's tree
and from every other mutant's, and the list is the same for the same source (the order is
the tree's, operators in table order), so an audit is reproducible. Constants in annotations,
function defaults, f-strings and docstrings are left alone.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from critpt_grader.audit.source import SourceText, unified_diff

# Sibling functions a slip of the pen swaps in (only where the sibling exists: a bare name
# only when the module names it too, log10 never on SymPy, which has none).
SIBLINGS: dict[str, tuple[str, ...]] = {
    "sin": ("cos", "tan"),
    "cos": ("sin", "tan"),
    "tan": ("sin", "cos"),
    "sinh": ("cosh", "tanh"),
    "cosh": ("sinh",),
    "tanh": ("sinh",),
    "exp": ("sinh", "cosh"),
    "log": ("log10",),
    "log10": ("log",),
    "asin": ("acos",),
    "acos": ("asin",),
    "arcsin": ("arccos",),
    "arccos": ("arcsin",),
}
_SYMPY = frozenset({"sp", "sympy"})
SCALES: tuple[tuple[str, float], ...] = (("×2", 2.0), ("×1.05", 1.05), ("×(1+1e-3)", 1.001))


@dataclass(frozen=True, slots=True)
class Mutant:
    """One changed program. ``id`` is stable for the same reference (``m007``)."""

    id: str
    operator: str  # scale-constant, flip-sign, drop-term, change-exponent, swap-function,
    #                shift-integer, drop-factor, swap-arguments, swap-parameters
    description: str  # "2.5 → 5.0 (×2)"
    line: int
    source: str

    def diff(self, reference: str) -> str:
        return unified_diff(reference, self.source)


Proposal = tuple[str, str, ast.AST | str]  # operator, description, replacement


def mutants(source: str, limit: int | None = None, entrypoint: str | None = None) -> list[Mutant]:
    """The mutants of ``source`` (a reference that parses), at most ``limit`` of them, spread
    evenly over the list when there are more (same source → same mutants). With
    ``entrypoint``, the swaps of its parameters come first (they change its ``def`` line)."""
    text = SourceText(source)
    reference_dump = ast.dump(text.tree)
    seen = {reference_dump}
    found: list[Mutant] = []
    edits = [*_parameter_swaps(text, entrypoint), *_node_edits(text)]
    for line, operator, description, changed in edits:
        try:
            dump = ast.dump(ast.parse(changed))
        except SyntaxError:
            continue
        if dump in seen:
            continue
        seen.add(dump)
        found.append(Mutant("", operator, description, line, changed))
    if limit is not None and len(found) > limit:
        step = len(found) / limit
        found = [found[int(k * step)] for k in range(limit)]
    return [
        Mutant(f"m{k:03d}", m.operator, m.description, m.line, m.source)
        for k, m in enumerate(found)
    ]


def _node_edits(text: SourceText) -> Iterator[tuple[int, str, str, str]]:
    for node, (operator, description, replacement) in _proposals(text):
        yield node.lineno, operator, description, text.replace(node, replacement)  # type: ignore[attr-defined]


def swap_description(first: str, second: str) -> str:
    """The description of the mutant that swaps two parameters (the audit looks it up)."""
    return f"parameters '{first}' and '{second}' swapped"


def _parameter_swaps(
    text: SourceText, entrypoint: str | None
) -> Iterator[tuple[int, str, str, str]]:
    """Every pair of the entry point's positional parameters without a default, their names
    exchanged in its ``def``: the body then sees each argument where the other was meant.
    Two parameters annotated differently are of different kinds and are not swapped."""
    function = _entry_function(text.tree, entrypoint) if entrypoint else None
    if function is None:
        return
    positional = [*function.args.posonlyargs, *function.args.args]
    plain = positional[: len(positional) - len(function.args.defaults)]
    for k, first in enumerate(plain):
        for second in plain[k + 1 :]:
            if _annotation(first) != _annotation(second):
                continue
            description = swap_description(first.arg, second.arg)
            yield function.lineno, "swap-parameters", description, _swapped(text, first, second)


def _entry_function(tree: ast.Module, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The module-level ``def name`` that counts (the last one, as Python binds it)."""
    found = None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            found = node
    return found


def _annotation(arg: ast.arg) -> str | None:
    return ast.dump(arg.annotation) if arg.annotation is not None else None


def _swapped(text: SourceText, first: ast.arg, second: ast.arg) -> str:
    """``text`` with the names of two parameters (the first characters of their nodes, the
    annotations stay) exchanged; ``first`` stands before ``second``."""
    spans = []
    for arg in (first, second):
        start = text.offset(arg.lineno, arg.col_offset)
        spans.append((start, start + len(arg.arg.encode("utf-8"))))
    (s1, e1), (s2, e2) = spans
    data = text.source.encode("utf-8")
    return b"".join(
        [data[:s1], second.arg.encode(), data[e1:s2], first.arg.encode(), data[e2:]]
    ).decode("utf-8")


def _proposals(text: SourceText) -> Iterator[tuple[ast.AST, Proposal]]:
    names = {node.id for node in ast.walk(text.tree) if isinstance(node, ast.Name)}
    names |= {
        alias.asname or alias.name
        for node in ast.walk(text.tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    star = any(
        isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names)
        for node in ast.walk(text.tree)
    )
    skipped = _untouchable(text.tree)
    located = [n for n in ast.walk(text.tree) if hasattr(n, "lineno") and id(n) not in skipped]
    # In reading order (outer nodes first where two start at one place), so ids follow the text.
    for node in sorted(located, key=lambda n: (n.lineno, n.col_offset, -n.end_col_offset)):
        for operator in _OPERATORS:
            for proposal in operator(node, names, star):
                yield node, proposal


def _untouchable(tree: ast.AST) -> set[int]:
    """Nodes no operator changes: annotations, defaults, f-strings, docstrings, decorators."""
    roots: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            roots += node.args.defaults + [d for d in node.args.kw_defaults if d is not None]
            if not isinstance(node, ast.Lambda):
                roots += node.decorator_list
                roots += [a.annotation for a in _arguments(node.args) if a.annotation]
                if node.returns is not None:
                    roots.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            roots.append(node.annotation)
        elif isinstance(node, ast.JoinedStr) or _is_docstring(node):
            roots.append(node)
    return {id(inner) for root in roots for inner in ast.walk(root)}


def _is_docstring(node: ast.AST) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)


def _arguments(args: ast.arguments) -> list[ast.arg]:
    extra = [a for a in (args.vararg, args.kwarg) if a is not None]
    return [*args.posonlyargs, *args.args, *args.kwonlyargs, *extra]


# -- operators: each yields proposals for one node ---------------------------------------------


def _number(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int | float)
        and not isinstance(node.value, bool)
    )


def scale_constant(node: ast.AST, names: set[str], star: bool) -> Iterator[Proposal]:
    if not _number(node) or node.value == 0:  # type: ignore[attr-defined]
        return
    value = node.value  # type: ignore[attr-defined]
    for label, factor in SCALES:
        # To 12 significant digits: 1.5 ×1.05 is 1.575, not the product's 1.5750000000000002
        # (in the mutant and its description alike; the factor moves by < 1e-11).
        scaled = float(f"{value * factor:.12g}")
        if isinstance(value, int) and factor == 2.0:
            scaled = value * 2  # an int stays an int
        yield "scale-constant", f"{value!r} → {scaled!r} ({label})", repr(scaled)


def shift_integer(node: ast.AST, names: set[str], star: bool) -> Iterator[Proposal]:
    if not _number(node) or not isinstance(node.value, int):  # type: ignore[attr-defined]
        return
    value = node.value  # type: ignore[attr-defined]
    for shifted in (value + 1, value - 1):
        text = repr(shifted) if shifted >= 0 else f"({shifted})"
        yield "shift-integer", f"{value} → {shifted}", text


def flip_sign(node: ast.AST, names: set[str], star: bool) -> Iterator[Proposal]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
        flipped = copy.copy(node)
        flipped.op = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
        was, now = ("+", "-") if isinstance(node.op, ast.Add) else ("-", "+")
        yield "flip-sign", f"'{was}' → '{now}'", flipped
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        yield "flip-sign", "unary minus dropped", node.operand
    elif isinstance(node, ast.Return) and node.value is not None and _negatable(node.value):
        negated = ast.Return(ast.UnaryOp(ast.USub(), node.value))
        yield "flip-sign", "returned value negated", ast.unparse(negated)


# Returned values that are no number to negate (a tuple of outputs, a flag, a text).
_NOT_NUMBERS = (
    ast.Tuple,
    ast.List,
    ast.Dict,
    ast.Set,
    ast.Compare,
    ast.BoolOp,
    ast.JoinedStr,
    ast.ListComp,
    ast.DictComp,
    ast.SetComp,
)


def _negatable(value: ast.expr) -> bool:
    if isinstance(value, _NOT_NUMBERS):
        return False
    return not (isinstance(value, ast.Constant) and not _number(value))


def drop_term(node: ast.AST, names: set[str], star: bool) -> Iterator[Proposal]:
    if not isinstance(node, ast.BinOp) or not isinstance(node.op, ast.Add | ast.Sub):
        return
    right = node.right if isinstance(node.op, ast.Add) else ast.UnaryOp(ast.USub(), node.right)
    yield "drop-term", f"term '{ast.unparse(node.right)}' dropped", node.left
    yield "drop-term", f"term '{ast.unparse(node.left)}' dropped", right


def change_exponent(node: ast.AST, names: set[str], star: bool) -> Iterator[Proposal]:
    if not isinstance(node, ast.BinOp) or not isinstance(node.op, ast.Pow):
        return
    exponent = node.right
    for delta in (1, -1):
        changed = copy.copy(node)
        if _number(exponent):
            new_value = exponent.value + delta  # type: ignore[attr-defined]
            changed.right = ast.Constant(new_value)
            shown = repr(new_value)
        else:
            op = ast.Add() if delta > 0 else ast.Sub()
            changed.right = ast.BinOp(exponent, op, ast.Constant(1))
            shown = ast.unparse(changed.right)
        yield "change-exponent", f"exponent {ast.unparse(exponent)} → {shown}", changed


def swap_function(node: ast.AST, names: set[str], star: bool) -> Iterator[Proposal]:
    if not isinstance(node, ast.Call):
        return
    func = node.func
    if isinstance(func, ast.Name) and func.id in SIBLINGS:
        for sibling in SIBLINGS[func.id]:
            if sibling in names or star:
                yield "swap-function", f"{func.id} → {sibling}", _called(node, ast.Name(sibling))
    elif isinstance(func, ast.Attribute) and func.attr in SIBLINGS:
        base = func.value.id if isinstance(func.value, ast.Name) else ""
        for sibling in SIBLINGS[func.attr]:
            if sibling == "log10" and base in _SYMPY:
                continue
            swapped = ast.Attribute(func.value, sibling, ast.Load())
            yield "swap-function", f"{func.attr} → {sibling}", _called(node, swapped)


def _called(node: ast.Call, func: ast.expr) -> ast.Call:
    changed = copy.copy(node)
    changed.func = func
    return changed


def _is_pi(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id == "pi") or (
        isinstance(node, ast.Attribute) and node.attr == "pi"
    )


def _is_two(node: ast.AST) -> bool:
    return _number(node) and node.value == 2  # type: ignore[attr-defined]


def drop_factor(node: ast.AST, names: set[str], star: bool) -> Iterator[Proposal]:
    """``2*x``, ``x*pi``, ``x/(2)``, ``x/pi`` → ``x``: the factor of π or 2 forgotten."""
    if not isinstance(node, ast.BinOp) or not isinstance(node.op, ast.Mult | ast.Div):
        return
    sides = [(node.right, node.left)]
    if isinstance(node.op, ast.Mult):
        sides.append((node.left, node.right))
    for factor, rest in sides:
        if _is_pi(factor) or _is_two(factor):
            yield "drop-factor", f"factor {ast.unparse(factor)} removed", rest


def swap_arguments(node: ast.AST, names: set[str], star: bool) -> Iterator[Proposal]:
    if not isinstance(node, ast.Call) or any(isinstance(a, ast.Starred) for a in node.args):
        return
    for k in range(len(node.args) - 1):
        first, second = node.args[k], node.args[k + 1]
        if ast.dump(first) == ast.dump(second):
            continue
        changed = copy.copy(node)
        changed.args = [*node.args[:k], second, first, *node.args[k + 2 :]]
        yield (
            "swap-arguments",
            f"arguments '{ast.unparse(first)}' and '{ast.unparse(second)}' swapped",
            changed,
        )


_OPERATORS: tuple[Callable[[ast.AST, set[str], bool], Iterator[Proposal]], ...] = (
    scale_constant,
    shift_integer,
    flip_sign,
    drop_term,
    change_exponent,
    swap_function,
    drop_factor,
    swap_arguments,
)
