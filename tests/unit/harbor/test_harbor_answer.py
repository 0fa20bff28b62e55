"""The Harbor verifier reads at most 1 MiB of ``answer.md`` and never raises for whatever an
agent leaves in its workspace (issue 29: a 7 GiB sparse ``answer.md`` raised MemoryError)."""

from __future__ import annotations

import os
import socket

import pytest

from critpt_grader.harbor import verifier
from critpt_grader.harbor.verifier import ANSWER_BYTES, ANSWER_FILE, Oversized, read_answer

FENCED = "```python\ndef f():\n    return 1\n```\n"


@pytest.fixture
def workspace(tmp_path):
    folder = tmp_path / "app"
    folder.mkdir()
    return folder


def test_an_answer_within_the_limit_is_read_whole(workspace):
    (workspace / ANSWER_FILE).write_text(FENCED)
    assert read_answer(workspace) == FENCED
    (workspace / ANSWER_FILE).write_bytes(b"x" * ANSWER_BYTES)
    assert read_answer(workspace) == "x" * ANSWER_BYTES
    assert not isinstance(read_answer(workspace), Oversized)


@pytest.mark.parametrize("size", [ANSWER_BYTES + 1, 7 << 30])
def test_a_longer_answer_is_not_read_and_scores_0_with_its_reason(workspace, size, capsys):
    with open(workspace / ANSWER_FILE, "wb") as sparse:
        sparse.truncate(size)  # no disk used: a hole
    answer = read_answer(workspace)
    assert isinstance(answer, Oversized) and "longer than 1048576 bytes" in answer
    metrics = verifier.verify(workspace, {"problem_id": "p"})
    assert metrics["reward"] == 0.0 and metrics["scored"] == 1.0
    assert metrics["unscorable"] == metrics["failure"] == 0.0
    assert "longer than" in capsys.readouterr().err


def _fifo(path):
    os.mkfifo(path)


def _socket(path):
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.close()


def _link(path):
    target = path.parent.parent / "elsewhere.md"
    target.write_text(FENCED)
    path.symlink_to(target)


def _loop(path):
    path.symlink_to(path)


def _folder(path):
    path.mkdir()
    (path / "answer.md").write_text(FENCED)


def _device(path):
    path.symlink_to("/dev/zero")  # endless: a link, not followed


def _invalid_utf8(path):
    path.write_bytes(b"```python\n\xff\xfe\n```\n")


LEFT = {
    "nothing": lambda path: None,
    "a FIFO with no writer": _fifo,
    "a unix socket": _socket,
    "a link to an answer elsewhere": _link,
    "a link to itself": _loop,
    "a folder": _folder,
    "a link to /dev/zero": _device,
}


@pytest.mark.parametrize("left", LEFT.values(), ids=LEFT.keys())
def test_whatever_else_is_left_there_is_no_answer_never_an_exception(workspace, left):
    left(workspace / ANSWER_FILE)
    assert read_answer(workspace) == ""


def test_bytes_that_are_not_utf8_are_replaced(workspace):
    _invalid_utf8(workspace / ANSWER_FILE)
    assert read_answer(workspace) == "```python\n\ufffd\ufffd\n```\n"


def test_a_missing_or_unusable_workspace_is_no_answer(tmp_path):
    assert read_answer(tmp_path / "absent") == ""
    (tmp_path / "a-file").write_text("x")
    assert read_answer(tmp_path / "a-file") == ""


def test_the_verifier_grades_what_it_read(workspace, monkeypatch):
    seen = []

    class Result:
        category, reward, reason, outcome, containment = "passed", 1.0, "ok", "scored", ""

    def grade(task, answer, settings):
        seen.append(answer)
        return Result

    monkeypatch.setattr(verifier, "grade", grade)
    os.mkfifo(workspace / ANSWER_FILE)
    verifier.verify(workspace, {"problem_id": "p"})
    assert seen == [""]
