"""SymPy value → text in the restricted grammar the symbolic parser reads.

The output is SymPy's own ``str()`` form (a well-kept printer) with the changes the grammar
needs: ``Float`` prints losslessly, relations and logic print as calls (``Lt(x, 1)``,
``And(a, b)``) rather than operators, finite sets as ``FiniteSet(1, 2)``, and unit quantities
by their abbreviation (``hbar``, ``c``). Forms the grammar does not read (``Derivative``,
``Integral``, ``Piecewise``…) keep their SymPy names and stay opaque to the parser;
``oo``, ``-oo``, ``zoo``, ``nan`` and ``Interval(...)`` are printed and left to the comparator.

    >>> import sympy
    >>> to_text(sympy.Rational(1, 3) * sympy.Symbol("x") ** 2 + sympy.Float(0.1))
    'x**2/3 + 0.1'
"""

from __future__ import annotations

from typing import Any

from mpmath import libmp
from sympy import Float, default_sort_key
from sympy.printing.str import StrPrinter

_RELATION_NAMES = {"==": "Eq", "!=": "Ne", "<": "Lt", "<=": "Le", ">": "Gt", ">=": "Ge"}
_BINARY64_PRECISION = 53


def to_text(expr: Any) -> str:
    """Print ``expr`` (any SymPy value) as grammar text."""
    return _GrammarPrinter().doprint(expr)


def float_text(value: Float) -> str:
    """Shortest decimal that reads back as the same ``Float`` at its own precision.

    A 53-bit Float is a binary64, so Python's shortest round-trip ``repr`` applies (unless the
    exponent is outside binary64's range); other precisions take the fewest digits, from the
    precision's nominal ``dps`` up to mpmath's always-sufficient count, that read back exactly.
    The exponent is written without ``+`` (``1e100``).
    """
    mpf = value._mpf_  # always finite: SymPy turns non-finite Floats into oo, -oo and nan
    precision = value._prec
    if precision == _BINARY64_PRECISION and Float(float(value))._mpf_ == mpf:
        text = repr(float(value))
    else:
        text = _shortest_round_trip(mpf, precision)
    return text.replace("e+", "e")


def _shortest_round_trip(mpf: tuple, precision: int) -> str:
    enough = libmp.repr_dps(precision)
    for digits in range(max(1, libmp.prec_to_dps(precision)), enough):
        text = libmp.to_str(mpf, digits, strip_zeros=True)
        if libmp.from_str(text, precision, libmp.round_nearest) == mpf:
            return text
    return libmp.to_str(mpf, enough, strip_zeros=True)


class _GrammarPrinter(StrPrinter):
    def _print_Exp1(self, expr: Any) -> str:
        # Not "E": a task may declare a symbol E (a field amplitude), and the text must
        # not depend on which symbols the reader declares.
        return "exp(1)"

    def _print_Float(self, expr: Float) -> str:
        return float_text(expr)

    def _print_Relational(self, expr: Any) -> str:
        name = _RELATION_NAMES.get(expr.rel_op, type(expr).__name__)
        return f"{name}({self._print(expr.lhs)}, {self._print(expr.rhs)})"

    def _print_call(self, expr: Any) -> str:
        return f"{type(expr).__name__}({self.stringify(expr.args, ', ')})"

    def _print_commutative_call(self, expr: Any) -> str:
        # sorted as SymPy's own printer sorts them, so equal expressions print the same
        args = sorted(expr.args, key=default_sort_key)
        return f"{type(expr).__name__}({self.stringify(args, ', ')})"

    _print_And = _print_Or = _print_Xor = _print_commutative_call
    _print_Not = _print_call
    _print_Union = _print_Intersection = _print_Complement = _print_call
    _print_SymmetricDifference = _print_call

    def _print_FiniteSet(self, expr: Any) -> str:
        # args are in SymPy's canonical order, so equal sets print the same
        return f"FiniteSet({self.stringify(expr.args, ', ')})"

    def _print_Quantity(self, expr: Any) -> str:
        return expr.abbrev.name


def safe_str(expr: Any) -> str:
    """``str(expr)``, or, when printing fails (SymPy orders the terms of a sum by evaluating
    their numbers, and ``exp(exp(exp(9)))`` overflows), a structural text that evaluates
    nothing: ``Add(Symbol(x), sin(exp(exp(exp(9)))))``. Deterministic either way."""
    try:
        return str(expr)
    except Exception:
        return structural_text(expr)


def structural_text(expr: Any) -> str:
    """The tree of ``expr`` as text, from class names and atoms, without evaluating."""
    out: list[str] = []
    stack: list[Any] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            out.append(node)
            continue
        args = getattr(node, "args", ())
        if not args:
            name = getattr(node, "name", None)
            out.append(name if isinstance(name, str) else _atom_text(node))
            continue
        func = getattr(node, "func", type(node))
        out.append(f"{getattr(func, '__name__', type(node).__name__)}(")
        stack.append(")")
        for index, arg in enumerate(reversed(args)):
            stack.append(arg)
            if index < len(args) - 1:
                stack.append(", ")
    return "".join(out)


def _atom_text(node: Any) -> str:
    if getattr(node, "is_Rational", False):
        return f"{node.p}/{node.q}" if node.q != 1 else str(node.p)
    if isinstance(node, Float):
        return float_text(node)
    return type(node).__name__
