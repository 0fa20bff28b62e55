"""Which branches of a reference no test case reaches: one reach probe per branch.

A probe is the reference with one statement put at the start of one branch that ends the
process at once (``os._exit``), so a case that enters the branch comes back ``crashed`` and
a branch no case enters leaves every outcome as the reference's own. No tracing hook runs
inside the sandbox and nothing the reference does can catch the exit (``except BaseException``
included), so "reached" is read off ordinary case outcomes.

Pure: this module only writes the probes; :mod:`critpt_grader.audit.run` runs them. Branches:
both arms of an ``if`` (an ``elif`` is its own ``if``), both arms of a conditional
expression, loop bodies (a loop that never iterates) and their ``else``, ``except`` handlers
and a ``try``'s ``else``, ``match`` cases, and the bodies of functions other than the entry
point (a helper nobody calls).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from critpt_grader.audit.source import SourceText

EXIT_STATUS = 97
_EXIT = f"__import__('os')._exit({EXIT_STATUS})"


@dataclass(frozen=True, slots=True)
class Branch:
    line: int  # where the branch's first statement (or expression) is
    what: str  # "the else branch of the if at line 4"
    probe: str  # the reference with the exit at the start of this branch


def branches(source: str, entrypoint: str | None) -> list[Branch]:
    """The reach probes of ``source``, in reading order."""
    text = SourceText(source)
    found: list[Branch] = []
    for line, what, first in _sites(text.tree, entrypoint, source.splitlines()):
        if isinstance(first, ast.stmt):
            probe = text.insert_before(first, _EXIT)
        else:
            probe = text.replace(first, f"({_EXIT})")
        found.append(Branch(line, what, probe))
    return sorted(found, key=lambda b: b.line)


def _sites(
    tree: ast.AST, entrypoint: str | None, lines: list[str]
) -> Iterator[tuple[int, str, ast.AST]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            at = f"the if at line {node.lineno}"
            yield node.body[0].lineno, f"the body of {at}", node.body[0]
            if node.orelse and not _is_elif(node, lines):
                yield node.orelse[0].lineno, f"the else branch of {at}", node.orelse[0]
        elif isinstance(node, ast.IfExp):
            at = f"the conditional expression at line {node.lineno}"
            yield node.body.lineno, f"the first value of {at}", node.body
            yield node.orelse.lineno, f"the else value of {at}", node.orelse
        elif isinstance(node, ast.For | ast.AsyncFor | ast.While):
            loop = "while" if isinstance(node, ast.While) else "for"
            at = f"the {loop} loop at line {node.lineno}"
            yield node.body[0].lineno, f"the body of {at}", node.body[0]
            if node.orelse:
                yield node.orelse[0].lineno, f"the else branch of {at}", node.orelse[0]
        elif isinstance(node, ast.Try | getattr(ast, "TryStar", ast.Try)):
            for handler in node.handlers:
                caught = ast.unparse(handler.type) if handler.type else "everything"
                what = f"the handler of {caught} at line {handler.lineno}"
                yield handler.body[0].lineno, what, handler.body[0]
            if node.orelse:
                what = f"the else branch of the try at line {node.lineno}"
                yield node.orelse[0].lineno, what, node.orelse[0]
        elif isinstance(node, ast.Match):
            for case in node.cases:
                what = f"the case {ast.unparse(case.pattern)} at line {case.pattern.lineno}"
                yield case.body[0].lineno, what, case.body[0]
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name != entrypoint:
            yield node.body[0].lineno, f"the function {node.name} (never called)", node.body[0]


def _is_elif(node: ast.If, lines: list[str]) -> bool:
    """``elif``: the else branch is one ``if`` whose line starts with the ``elif`` keyword
    (an ``if`` inside an ``else:`` block is an ``else`` branch of its own)."""
    if len(node.orelse) != 1 or not isinstance(node.orelse[0], ast.If):
        return False
    return lines[node.orelse[0].lineno - 1].lstrip().startswith("elif")
