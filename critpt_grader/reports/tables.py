"""Tables of text cells, drawn as HTML or as GitHub-flavoured Markdown.

What the renderers assume: a table is a header row and body rows of plain text, one cell per
header (HTML body rows may also come pre-drawn, as ``<tr>`` markup, when a view needs its own
cell classes); which headers are numeric is the caller's choice.

What they guarantee: in HTML every header and text cell is escaped and the numeric columns
are right-aligned (class ``num``, see :mod:`critpt_grader.reports.page`). In Markdown a body
cell can never end its cell or its row (pipes and backslashes are escaped, newlines become
spaces; headers are written as given), and every table ends with a blank line, so tables
stack between paragraphs.
"""

from __future__ import annotations

from collections.abc import Collection
from html import escape


def html_table(headers: list[str], body_rows: list[str], numeric: Collection[str]) -> str:
    """A ``<table>`` of ``body_rows`` (``<tr>`` markup) under escaped ``headers``."""
    head = "".join(
        f"<th class='num'>{escape(h)}</th>" if h in numeric else f"<th>{escape(h)}</th>"
        for h in headers
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body_rows)}</tbody></table>"


def html_rows(rows: list[list[str]], headers: list[str], numeric: Collection[str]) -> list[str]:
    """Text rows as ``<tr>`` markup: every cell escaped, a numeric header's column ``num``."""
    right = [h in numeric for h in headers]
    return [
        "<tr>"
        + "".join(
            f"<td class='num'>{escape(c)}</td>" if right[i] else f"<td>{escape(c)}</td>"
            for i, c in enumerate(row)
        )
        + "</tr>"
        for row in rows
    ]


def markdown_table(headers: list[str], rows: list[list[str]]) -> list[str]:
    """The lines of a Markdown table, then one blank line."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return [*lines, ""]


def _cell(text: str) -> str:
    # A pipe would end the cell and a newline the row; backticks keep leaf values readable.
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
