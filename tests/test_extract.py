"""Candidate code extraction from text and Responses API objects."""

from __future__ import annotations

import pytest

from critpt_grader.extract import extract


def responses(text: str | None = None, **changes) -> dict:
    content = [{"type": "output_text", "text": text}] if text is not None else []
    body = {
        "status": "completed",
        "output": [
            {"type": "reasoning", "summary": []},
            {"type": "message", "role": "assistant", "status": "completed", "content": content},
        ],
    }
    body.update(changes)
    return body


def test_first_python_fence_wins_over_bare_fences():
    text = (
        "Intro\n```\nnot this\n```\n```python  \ndef f():\n    return 1\n```\n```python\nx=2\n```"
    )
    assert extract(text).source == "def f():\n    return 1"


def test_bare_fence_when_no_python_fence():
    assert extract("See:\n```\ndef g():\n    return 2\n```\n").source == "def g():\n    return 2"


def test_raw_code_without_fence():
    assert extract("def h(x):\n    return x\n").source == "def h(x):\n    return x"


def test_unclosed_fence_takes_the_rest():
    assert extract("Answer:\n```python\ndef f():\n    return 3\n").source.startswith("def f()")


def test_prose_without_code_is_missing():
    result = extract("I believe the energy is about three electron volts.")
    assert result.status == "missing" and result.reason


@pytest.mark.parametrize("text", ["", "   ", "```python\n```"])
def test_empty_is_missing(text):
    assert extract(text).status == "missing"


def test_nul_and_oversize_sources():
    assert extract("x = '\x00'").status == "missing"
    assert extract("x = 1\n" * 100, max_bytes=50).status == "too_large"


def test_responses_api_text_is_joined_and_extracted():
    body = responses("Here it is:\n```python\ndef f():\n    return 1\n```")
    assert extract(body).source == "def f():\n    return 1"


@pytest.mark.parametrize(
    "changes",
    [
        {"status": "incomplete"},
        {"incomplete_details": {"reason": "max_output_tokens"}},
        {"error": {"code": "server_error"}},
    ],
)
def test_incomplete_responses_are_flagged(changes):
    assert extract(responses("def f(): pass", **changes)).status == "incomplete"


def test_last_message_marked_incomplete():
    body = responses("def f(): pass")
    body["output"][-1]["status"] = "in_progress"
    assert extract(body).status == "incomplete"


def test_refusal_part_or_no_message_is_missing():
    body = responses("x")
    body["output"][-1]["content"] = [{"type": "refusal", "refusal": "no"}]
    assert extract(body).status == "missing"
    assert extract({"status": "completed", "output": []}).status == "missing"
    assert extract(42).status == "missing"
