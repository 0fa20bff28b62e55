"""Editing a reference's text at one node, so a changed program differs by that node alone.

What it assumes: ``source`` parses (``ast.parse``) and node positions come from that parse.
What it guarantees: :meth:`SourceText.splice` replaces exactly the characters of one node (its
``lineno``/``col_offset`` … ``end_lineno``/``end_col_offset``, which count UTF-8 bytes) and
leaves every other character, comment and blank line as written, so the diff of a mutant
against its reference shows the one change.
"""

from __future__ import annotations

import ast
import difflib


class SourceText:
    """A program's text with byte-exact node positions."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.tree = ast.parse(source)
        self._lines = source.splitlines(keepends=True)
        # Byte offset of each line's start in the UTF-8 text (ast columns are byte offsets).
        self._starts: list[int] = []
        offset = 0
        for line in self._lines:
            self._starts.append(offset)
            offset += len(line.encode("utf-8"))
        self._bytes = source.encode("utf-8")

    def offset(self, lineno: int, col: int) -> int:
        return self._starts[lineno - 1] + col

    def segment(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self._bytes[start:end].decode("utf-8")

    def span(self, node: ast.AST) -> tuple[int, int]:
        return (
            self.offset(node.lineno, node.col_offset),  # type: ignore[attr-defined]
            self.offset(node.end_lineno, node.end_col_offset),  # type: ignore[attr-defined]
        )

    def splice(self, start: int, end: int, text: str) -> str:
        """The source with bytes ``start:end`` replaced by ``text``."""
        return (self._bytes[:start] + text.encode("utf-8") + self._bytes[end:]).decode("utf-8")

    def replace(self, node: ast.AST, replacement: ast.AST | str) -> str:
        """The source with ``node`` replaced by ``replacement`` (a node is unparsed, in
        parentheses when it is an operation, so precedence around it cannot change)."""
        text = replacement if isinstance(replacement, str) else expression_text(replacement)
        return self.splice(*self.span(node), text)

    def insert_before(self, statement: ast.stmt, text: str) -> str:
        """The source with the simple statement ``text`` run just before ``statement``: on its
        own line at the same indentation for a compound statement, else ``text; `` in front."""
        start = self.offset(statement.lineno, statement.col_offset)
        if isinstance(statement, _COMPOUND):
            line = self._lines[statement.lineno - 1]
            indent = line[: len(line) - len(line.lstrip())]
            line_start = self._starts[statement.lineno - 1]
            return self.splice(line_start, line_start, f"{indent}{text}\n")
        return self.splice(start, start, f"{text}; ")


_COMPOUND = (
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.With,
    ast.AsyncWith,
    ast.Try,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Match,
    *((ast.TryStar,) if hasattr(ast, "TryStar") else ()),
)
_OPERATIONS = (ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Lambda)


def expression_text(node: ast.AST) -> str:
    text = ast.unparse(node)
    return f"({text})" if isinstance(node, _OPERATIONS) else text


def unified_diff(reference: str, changed: str) -> str:
    """A unified diff of two programs, labelled ``reference`` and ``mutant``."""
    return "".join(
        difflib.unified_diff(
            reference.splitlines(keepends=True),
            changed.splitlines(keepends=True),
            "reference",
            "mutant",
            n=1,
        )
    )
