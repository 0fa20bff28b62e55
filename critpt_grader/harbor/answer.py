"""Which answer a Harbor task's verifier grades: ``answer.md`` first, then ``response``.

The exported instruction tells the agent to write its answer to ``answer.md``; Gym's
environment server also always passes the agent's final reply as ``response`` (often a line
such as "I have written my answer to answer.md."), and a plain Harbor run passes none. So an
agent that did what it was told is graded on its file whatever the runner passes:

* ``answer.md`` holds non-blank text → that file is graded, whatever ``response`` holds;
* else a ``response`` that is not None and not blank (a Responses API object, a dict or its
  text) → the response is graded (an agent that answered in its reply instead);
* else → an empty answer (scored 0, as no answer).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

FILE, RESPONSE, NONE = "answer.md", "response", "none"


def chosen_answer(response: Any, read_file: Callable[[], str]) -> tuple[Any, str]:
    """The answer to grade and the channel it came from (``answer.md``, ``response``,
    ``none``). ``read_file`` returns the text of ``answer.md`` ("" when there is none)."""
    text = read_file()
    if isinstance(text, str) and text.strip():
        return text, FILE
    if response is None or (isinstance(response, str) and not response.strip()):
        return "", NONE
    return response, RESPONSE
