"""The runner's wire protocols: job input, framed result, child reports."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from critpt_grader import jsonlimits
from critpt_grader.runner import protocol
from critpt_grader.runner.limits import process_limit
from critpt_grader.runner.supervisor import BoundedCapture


def test_job_is_read_exactly_and_the_nonce_stays_in_the_pipe():
    nonce = protocol.new_nonce()
    read_end, write_end = os.pipe()
    os.write(write_end, protocol.encode_job_input({"source": "x = 1"}, nonce))
    os.close(write_end)
    try:
        assert protocol.read_job(read_end, max_bytes=1 << 20) == {"source": "x = 1"}
        assert protocol.read_nonce(read_end) == nonce
    finally:
        os.close(read_end)


def test_oversized_job_is_refused_before_reading_it():
    read_end, write_end = os.pipe()
    os.write(write_end, b"999999\n{")
    os.close(write_end)
    try:
        with pytest.raises(protocol.ProtocolError, match="outside"):
            protocol.read_job(read_end, max_bytes=1000)
    finally:
        os.close(read_end)


def test_only_a_frame_with_our_nonce_is_accepted():
    ours, theirs = protocol.new_nonce(), protocol.new_nonce()
    stdout = (
        b"noise\n"
        + protocol.format_frame(theirs, {"status": "forged"})
        + protocol.format_frame(ours, {"status": "ok"})
    )
    assert protocol.find_frame(stdout, ours) == {"status": "ok"}
    assert protocol.find_frame(b"noise only\n", ours) is None
    assert protocol.find_frame(b"CRITPT-RESULT " + ours.encode() + b" {broken\n", ours) is None


@settings(max_examples=50, deadline=None)
@given(
    messages=st.lists(
        st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=20), max_size=4),
        max_size=6,
    ),
    cuts=st.lists(st.integers(min_value=1, max_value=40), max_size=30),
)
def test_reports_survive_any_chunking(messages, cuts):
    stream = b"".join(protocol.pack_message(m) for m in messages)
    reader = protocol.MessageReader(max_bytes=1 << 16)
    received, position = [], 0
    for cut in [*cuts, len(stream)]:
        received += reader.feed(stream[position : position + cut])
        position += cut
    assert received == messages


def test_oversized_report_is_refused():
    reader = protocol.MessageReader(max_bytes=10)
    with pytest.raises(protocol.ProtocolError, match="exceeds"):
        reader.feed(protocol.pack_message({"value": "x" * 100}))


@pytest.mark.parametrize(
    "raw",
    [
        None,
        {"kind": "won"},
        {"kind": "value"},  # a value outcome without a value
        {"kind": "exception", "value": {"format": "critpt-value-v1"}},
        {"kind": "exception", "message": 5},
        {"kind": "exception", "error_module": ["builtins"]},
        {"kind": "exception", "error_builtin": 1},
        {"kind": "exception", "error_builtin_mro": "ValueError"},
        {"kind": "exception", "error_builtin_mro": ["Value Error"]},
        {"kind": "exception", "error_builtin_mro": ["ValueError"] * 65},
    ],
)
def test_malformed_case_outcomes_are_refused(raw):
    with pytest.raises(protocol.ProtocolError):
        protocol.validated_outcome(raw)


def test_an_exception_outcome_keeps_what_its_class_is():
    raw = {
        "kind": "exception",
        "error_type": "ValueError",
        "error_module": "builtins",
        "error_qualname": "ValueError",
        "error_builtin": True,
        "error_builtin_mro": ["ValueError", "Exception", "BaseException"],
        "message": "m",
    }
    assert protocol.validated_outcome(raw) == {**raw, "seconds": 0.0}
    # A child that says nothing of the class leaves it "not a genuine builtin".
    bare = protocol.validated_outcome({"kind": "exception", "error_type": "ValueError"})
    assert "error_builtin" not in bare


def test_capture_keeps_the_head_and_marks_the_cut():
    capture = BoundedCapture(limit=100)
    for _ in range(50):
        capture.add(b"0123456789")
    text = capture.text()
    assert len(text.encode()) <= 100
    assert text.startswith("0123456789") and text.endswith("[output truncated]")


@pytest.mark.parametrize(("told", "expected"), [("none", None), ("40", 40), ("", 32), ("x", 32)])
def test_the_host_decides_the_process_rlimit(monkeypatch, told, expected):
    monkeypatch.setenv(protocol.NPROC_VARIABLE, told)
    assert process_limit({"max_processes": 32}) == expected


# --- hostile nesting (issue 16): one limit, checked where the bytes arrive ----------------


def nested_text(depth: int) -> str:
    return "[" * depth + "]" * depth


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=1, max_value=3000), st.integers(min_value=1, max_value=200))
def test_bounded_json_takes_exactly_what_nests_within_the_limit(depth, limit):
    text = nested_text(depth)
    if depth <= limit:
        assert jsonlimits.loads_bounded(text, limit) is not None
    else:
        with pytest.raises(jsonlimits.TooDeep):
            jsonlimits.loads_bounded(text, limit)


def test_json_past_the_parsers_own_recursion_is_too_deep_not_a_recursion_error():
    with pytest.raises(jsonlimits.TooDeep):
        jsonlimits.loads_bounded(nested_text(200_000), jsonlimits.BODY_NESTING)


def value_report(brackets: int) -> dict:
    """A case report whose value envelope nests ``brackets`` deep (the envelope counts)."""
    node: list = ["int", "1"]
    for _ in range(brackets - 2):  # the envelope and the int node are two
        node = [node]
    return {"kind": "value", "value": {"format": "critpt-value-v1", "value": node}}


def test_a_case_value_nested_past_the_wire_limit_is_an_encode_error():
    within = protocol.validated_outcome(value_report(jsonlimits.MAX_JSON_NESTING))
    assert within["kind"] == "value"
    over = protocol.validated_outcome(value_report(jsonlimits.MAX_JSON_NESTING + 1))
    assert (over["kind"], over["error_type"]) == ("encode_error", "depth_limit")
    assert "value" not in over


def test_a_frame_nested_too_deep_is_no_result():
    nonce = protocol.new_nonce()
    deep = protocol.FRAME_TAG + b" " + nonce.encode() + b" " + nested_text(5000).encode()
    assert protocol.find_frame(deep, nonce) is None
    shallow = protocol.format_frame(nonce, {"status": "ok", "cases": []})
    assert protocol.find_frame(shallow, nonce) == {"status": "ok", "cases": []}


@pytest.mark.parametrize("depth", [jsonlimits.FRAME_NESTING + 1, 960, 200_000])
def test_a_report_nested_too_deep_keeps_the_stream_in_step(depth):
    reader = protocol.MessageReader(1 << 22)
    deep = protocol.MESSAGE_HEADER.pack(2 * depth) + nested_text(depth).encode()
    after = protocol.pack_message({"t": "loaded"})
    assert reader.feed(deep + after) == [{"t": protocol.TOO_DEEP}, {"t": "loaded"}]
