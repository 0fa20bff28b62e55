"""MkDocs hook: the docstrings' Sphinx roles read as plain code on the API pages.

The docstrings cross-reference in Sphinx's dialect (``:class:`~critpt_grader.verdict.Category```),
which the API pages would print as ``:class:`` followed by the code. Here the role is dropped and
a ``~`` name is shortened to its last part, as Sphinx shows it.
"""

from __future__ import annotations

import re
from typing import Any

ROLE = re.compile(r":(?:func|class|meth|mod|attr|data|exc|obj|const):(?=<code>)")
SHORT = re.compile(r"<code>~\.?(?:\w+\.)*(\w+)</code>")


def on_page_content(html: str, page: Any, **_: Any) -> str:
    if ":::" not in (page.markdown or ""):
        return html  # no docstrings on this page (mkdocstrings' ::: blocks)
    return SHORT.sub(r"<code>\1</code>", ROLE.sub("", html))
