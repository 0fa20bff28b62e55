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


def test_first_rule_takes_the_first_python_fence_over_bare_fences():
    text = (
        "Intro\n```\nnot this\n```\n```python  \ndef f():\n    return 1\n```\n```python\nx=2\n```"
    )
    assert extract(text, fence="first").source == "def f():\n    return 1"


def test_bare_fence_when_no_python_fence():
    assert extract("See:\n```\ndef g():\n    return 2\n```\n").source == "def g():\n    return 2"


def test_raw_code_without_fence():
    assert extract("def h(x):\n    return x\n").source == "def h(x):\n    return x"


def test_unclosed_fence_takes_the_rest():
    assert extract("Answer:\n```python\ndef f():\n    return 3\n").source == (
        "def f():\n    return 3"
    )


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


# --- which fence is the answer --------------------------------------------------------------


def fenced(code: str, tag: str = "python", fence: str = "```") -> str:
    return f"{fence}{tag}\n{code}\n{fence}"


DRAFT = "def energy(n):\n    return n  # first try"
FINAL = "def energy(n):\n    return -13.6 / n**2"
USAGE = "print(energy(2))"


def test_draft_then_final_grades_the_final():
    text = "\n\n".join(["Draft:", fenced(DRAFT), "Fixed:", fenced(FINAL)])
    assert extract(text, entrypoint="energy").source == FINAL


def test_final_then_usage_example_grades_the_final():
    text = "\n\n".join(["Answer:", fenced(FINAL), "Usage:", fenced(USAGE)])
    assert extract(text, entrypoint="energy").source == FINAL


@pytest.mark.parametrize(
    ("fence", "source"), [("last-defining", FINAL), ("last", USAGE), ("first", DRAFT)]
)
def test_the_three_fence_rules(fence, source):
    text = "\n\n".join([fenced(DRAFT), fenced(FINAL), fenced(USAGE)])
    assert extract(text, entrypoint="energy", fence=fence).source == source


def test_without_a_defining_block_or_a_name_the_last_block_is_graded():
    text = "\n\n".join([fenced("x = 1"), fenced("y = 2")])
    assert extract(text, entrypoint="energy").source == "y = 2"
    assert extract("\n".join([fenced(FINAL), fenced(USAGE)])).source == USAGE


@pytest.mark.parametrize(
    "definition",
    [
        "async def energy(n):\n    return n",
        "energy = lambda n: -13.6 / n**2",
        "energy: object = make()",
        "def energy(n):\n    return (",  # does not parse: found by the line-start fallback
    ],
)
def test_what_defines_the_entry_point(definition):
    text = "\n".join([fenced(definition), fenced(USAGE)])
    assert extract(text, entrypoint="energy").source == definition


@pytest.mark.parametrize(
    "not_a_definition",
    [
        "class Solver:\n    def energy(self, n):\n        return n",  # not top level
        "if energy == 1:\n    pass",
        "print(energy)\n# def energy(n): in a comment",
        "energies = [1]",
    ],
)
def test_what_does_not_define_it(not_a_definition):
    text = "\n".join([fenced(FINAL), fenced(not_a_definition)])
    assert extract(text, entrypoint="energy").source == FINAL


@pytest.mark.parametrize(
    "tag", ["python", "Python", "py", "python3", "PY3", "python3.11", "ipython", "{.python}", ""]
)
@pytest.mark.parametrize("fence", ["```", "~~~", "````"])
def test_every_fence_spelling_is_a_fence(tag, fence):
    text = f"Here:\n{fenced(FINAL, tag, fence)}\nDone."
    assert extract(text, entrypoint="energy").source == FINAL


def test_tag_with_trailing_words_is_read_by_its_first_word():
    assert extract(fenced(FINAL, "python title=energy.py")).source == FINAL


def test_other_languages_lose_to_python_blocks_but_count_alone():
    bash = fenced("def energy():\n    pip install x", "bash")
    text = "\n".join([fenced(FINAL), bash, fenced("energy = 3", "text")])
    assert extract(text, entrypoint="energy").source == FINAL
    assert extract(text, entrypoint="energy", fence="last").source == FINAL
    alone = "\n".join([fenced("pip install numpy", "bash"), fenced(FINAL, "text")])
    assert extract(alone, entrypoint="energy").source == FINAL


def test_an_indented_fence_in_a_list_item_is_dedented():
    text = (
        "Steps:\n\n1. Derive the levels.\n2. Code them:\n\n"
        "   ```python\n   def energy(n):\n       return -13.6 / n**2\n   ```\n\n3. Done.\n"
    )
    assert extract(text, entrypoint="energy").source == FINAL


def test_a_fence_in_a_block_quote():
    text = "> ```python\n> def energy(n):\n>     return -13.6 / n**2\n> ```\n"
    assert extract(text, entrypoint="energy").source == FINAL


def test_a_four_backtick_fence_keeps_three_backticks_inside():
    code = 'DOC = """\n```python\nenergy(1)\n```\n"""\n' + FINAL
    text = f"Answer:\n````python\n{code}\n````\nThat is all."
    assert extract(text, entrypoint="energy").source == code


def test_a_shorter_fence_does_not_close_a_longer_one():
    text = f"````python\n{FINAL}\n```\nstill code\n````"
    assert extract(text).source == f"{FINAL}\n```\nstill code"


def test_an_unclosed_last_fence_runs_to_the_end():
    text = "\n".join([fenced(DRAFT), "Final:", "```python", FINAL])
    assert extract(text, entrypoint="energy").source == FINAL
    assert extract(text, entrypoint="energy", fence="first").source == DRAFT


def test_think_tags_do_not_hide_fences():
    text = f"<think>\n{fenced(DRAFT)}\n</think>\n{fenced(FINAL)}\n{fenced(USAGE)}"
    assert extract(text, entrypoint="energy").source == FINAL


def test_no_fence_takes_the_raw_text_whatever_the_rule():
    for rule in ("last-defining", "last", "first"):
        assert extract(FINAL + "\n", entrypoint="energy", fence=rule).source == FINAL


def test_a_nul_inside_the_chosen_fence_is_refused_and_elsewhere_ignored():
    assert extract(fenced("x = '\x00'")).status == "missing"
    assert extract("note \x00\n" + fenced(FINAL)).source == FINAL


def test_responses_api_objects_use_the_same_rule():
    text = "\n\n".join(["Draft:", fenced(DRAFT), "Final:", fenced(FINAL), fenced(USAGE)])
    body = responses(text)
    assert extract(body, entrypoint="energy").source == FINAL
    assert extract(body, entrypoint="energy", fence="last").source == USAGE
    # Parts are joined before fences are read: a fence may span two parts.
    split = responses()
    split["output"][-1]["content"] = [
        {"type": "output_text", "text": "```python\ndef energy(n):"},
        {"type": "output_text", "text": "    return -13.6 / n**2\n```"},
    ]
    assert extract(split, entrypoint="energy").source == FINAL
