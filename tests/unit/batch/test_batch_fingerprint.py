"""Resume and diff by fingerprint: every OUT row names the IN row it answers (``input_hash``)
and the IN file it came from (``in_fingerprint``); resuming refuses an OUT file written from
another IN before grading anything, and the two-file diff pairs rows by input, not by number.

The batch runs go through :func:`run_batch`, the resume / grade / write sequence of
``critpt-grader batch`` (:mod:`critpt_grader.commands.batch`) with the fingerprint check
wired in; the last test holds the command itself to it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from critpt_grader.batch import grade_indexed
from critpt_grader.batch.fingerprint import in_fingerprint, input_hash
from critpt_grader.batch.outfile import OutWriter, resume
from critpt_grader.errors import InputError
from critpt_grader.reports.batch.markdown import render_markdown
from critpt_grader.reports.batch.summary import read_out, summarize
from critpt_grader.settings import Settings
from tests.support.paths import PUBLIC_FIXTURES

PUBLIC_TASKS = PUBLIC_FIXTURES / "tasks.jsonl"
CANDIDATES = PUBLIC_TASKS.with_name("candidates.jsonl")
FAST = Settings(backend="in-process", compare_in_process=True, case_seconds=5)
SLOW = ("candidate_timeout", "candidate_memory")


def public_bodies(count: int = 8) -> list[dict]:
    """``count`` distinct quick public rows (``problem_id`` + ``response``), passes and
    mismatches mixed, a few per problem."""
    bodies, seen = [], set()
    with CANDIDATES.open() as file:
        for line in file:
            candidate = json.loads(line)
            if candidate["expect"].get("category") in SLOW or candidate["response"] in seen:
                continue
            seen.add(candidate["response"])
            bodies.append({"problem_id": candidate["against"], "response": candidate["response"]})
            if len(bodies) == count:
                break
    return bodies


def write_in(path: Path, bodies: list[dict], **dumps) -> Path:
    path.write_text("".join(json.dumps(b, **dumps) + "\n" for b in bodies))
    return path


def run_batch(source: Path, out: Path) -> list[int]:
    """One ``critpt-grader batch source --out out`` run; the rows it graded."""
    state = resume(out, source)  # refuses a foreign OUT before anything is graded
    graded: list[int] = []

    def pairs():
        with source.open("rb") as file:
            for index, line in enumerate(file):
                if index not in state.done:
                    yield index, line

    async def go() -> None:
        with OutWriter(out, in_fingerprint=state.in_fingerprint) as writer:
            async for row in grade_indexed(pairs(), settings=FAST, tasks=[PUBLIC_TASKS]):
                writer.write(row)
                graded.append(row["row"])

    asyncio.run(go())
    return sorted(graded)


def keep_lines(out: Path, count: int) -> None:
    """Keep the first ``count`` OUT lines, as an interrupted run leaves them."""
    out.write_text("".join(out.read_text().splitlines(keepends=True)[:count]))


def done_in(out: Path) -> set[int]:
    return {r["row"] for r in read_out(out)[0]}


# --- input_hash / in_fingerprint ---------------------------------------------------------


def test_input_hash_ignores_whitespace_and_key_order_but_not_content():
    body = {"problem_id": "p", "response": "x = 1\n", "n": [1, 2.5]}
    compact = json.dumps(body, separators=(",", ":"))
    spaced = "  " + json.dumps(dict(reversed(body.items())), indent=2) + " \r\n"
    assert input_hash(compact) == input_hash(spaced) == input_hash(compact.encode())
    assert input_hash(compact) == input_hash(body)  # a dict row hashes as its JSON text
    assert input_hash(compact) != input_hash(json.dumps({**body, "response": "x = 2\n"}))
    # A line that does not parse is its raw bytes, without the line ending.
    assert input_hash(b"not json\n") == input_hash(b"not json") != input_hash(b"not  json")
    assert len(input_hash(b"[" * 200_000)) == 64  # past the nesting limit: raw, never a crash


def test_every_out_row_carries_its_input_hash_and_the_in_fingerprint(tmp_path):
    source = write_in(tmp_path / "in.jsonl", public_bodies(4))
    with source.open("a") as file:
        file.write("not json\n")  # a rejected row is fingerprinted too
    out = tmp_path / "out.jsonl"
    assert run_batch(source, out) == [0, 1, 2, 3, 4]
    lines = source.read_bytes().splitlines(keepends=True)
    fingerprint = in_fingerprint(source)
    for row in read_out(out)[0]:
        assert row["input_hash"] == input_hash(lines[row["row"]])
        assert row["in_fingerprint"] == fingerprint
    assert {r["row"]: r.get("rejected") for r in read_out(out)[0]}[4] is True


# --- resume --------------------------------------------------------------------------------


def test_resume_with_the_same_in_skips_the_done_rows(tmp_path):
    source, out = write_in(tmp_path / "in.jsonl", public_bodies()), tmp_path / "out.jsonl"
    assert run_batch(source, out) == list(range(8))
    verdicts = {r["row"]: r["category"] for r in read_out(out)[0]}
    keep_lines(out, 3)
    kept = done_in(out)
    assert run_batch(source, out) == sorted(set(range(8)) - kept)  # only the rest is graded
    rows = read_out(out)[0]
    assert len(rows) == 8 == len(out.read_text().splitlines())  # each row exactly once
    assert {r["row"]: r["category"] for r in rows} == verdicts
    assert run_batch(source, out) == []  # all done: nothing to grade, nothing refused


def test_resume_against_an_in_with_one_answered_line_changed_is_refused_naming_it(tmp_path):
    bodies = public_bodies()
    source, out = write_in(tmp_path / "in.jsonl", bodies), tmp_path / "out.jsonl"
    run_batch(source, out)
    keep_lines(out, 5)
    answered = sorted(done_in(out))
    changed = answered[2]
    bodies[changed] = {**bodies[changed], "response": bodies[changed]["response"] + "\n# edit"}
    write_in(source, bodies)
    before = out.read_bytes()
    with pytest.raises(InputError) as refused:
        run_batch(source, out)
    message = str(refused.value)
    assert str(out) in message and f"row {changed} " in message and "input_hash" in message
    assert out.read_bytes() == before  # refused before grading: OUT untouched


def test_a_changed_line_not_yet_answered_is_refused_by_the_file_fingerprint(tmp_path):
    bodies = public_bodies()
    source, out = write_in(tmp_path / "in.jsonl", bodies), tmp_path / "out.jsonl"
    run_batch(source, out)
    keep_lines(out, 3)
    pending = min(set(range(8)) - done_in(out))
    bodies[pending] = {**bodies[pending], "response": "nothing here"}
    write_in(source, bodies)
    before = out.read_bytes()
    with pytest.raises(InputError, match="in_fingerprint") as refused:
        run_batch(source, out)
    assert str(out) in str(refused.value) and "not yet answered" in str(refused.value)
    assert out.read_bytes() == before


def test_whitespace_only_changes_to_in_lines_do_not_count(tmp_path):
    bodies = public_bodies()
    source, out = write_in(tmp_path / "in.jsonl", bodies), tmp_path / "out.jsonl"
    run_batch(source, out)
    keep_lines(out, 4)
    kept = done_in(out)
    # Spaced out, keys reordered, CRLF line endings: the same content.
    source.write_bytes(
        b"".join(
            (
                " " + json.dumps(dict(reversed(b.items())), indent=1).replace("\n", " ") + "\r\n"
            ).encode()
            for b in bodies
        )
    )
    assert run_batch(source, out) == sorted(set(range(8)) - kept)
    assert sorted(r["row"] for r in read_out(out)[0]) == list(range(8))


def test_an_out_file_from_a_different_in_entirely_is_refused(tmp_path):
    bodies = public_bodies(12)
    first = write_in(tmp_path / "first.jsonl", bodies[:6])
    second = write_in(tmp_path / "second.jsonl", bodies[6:])
    out = tmp_path / "out.jsonl"
    run_batch(first, out)
    before = out.read_bytes()
    with pytest.raises(InputError, match=r"row 0 \(IN line 1\) differs") as refused:
        run_batch(second, out)
    assert f"not written from {second}" in str(refused.value)
    assert out.read_bytes() == before


def test_an_out_file_written_before_fingerprints_is_refused(tmp_path):
    source, out = write_in(tmp_path / "in.jsonl", public_bodies(3)), tmp_path / "out.jsonl"
    run_batch(source, out)
    legacy = [
        {k: v for k, v in json.loads(line).items() if k not in ("input_hash", "in_fingerprint")}
        for line in out.read_text().splitlines()
    ]
    out.write_text("".join(json.dumps(r) + "\n" for r in legacy[:2]))
    with pytest.raises(InputError, match=r"before batch fingerprints.*new OUT file"):
        run_batch(source, out)


def test_an_answered_row_past_the_end_of_in_is_refused(tmp_path):
    bodies = public_bodies(4)
    source, out = write_in(tmp_path / "in.jsonl", bodies), tmp_path / "out.jsonl"
    run_batch(source, out)
    write_in(source, bodies[:2])
    with pytest.raises(InputError, match=r"answers row [23] but .* has only 2 rows"):
        run_batch(source, out)


def test_an_empty_or_missing_out_file_resumes_from_nothing(tmp_path):
    source = write_in(tmp_path / "in.jsonl", public_bodies(2))
    state = resume(tmp_path / "none.jsonl", source)
    assert state.done == set() and state.total == 2
    assert state.in_fingerprint == in_fingerprint(source)


# --- the two-file diff --------------------------------------------------------------------


def test_the_diff_pairs_rows_by_input_hash_across_reordered_in_files(tmp_path):
    bodies = public_bodies(10)
    first = write_in(tmp_path / "in1.jsonl", bodies[:8])
    # IN2: IN1 reversed, row 0 of IN1 left out, one new row added first.
    second = write_in(tmp_path / "in2.jsonl", [bodies[9], *reversed(bodies[1:8])])
    out1, out2 = tmp_path / "out1.jsonl", tmp_path / "out2.jsonl"
    run_batch(first, out1)
    run_batch(second, out2)
    a, b = read_out(out1)[0], read_out(out2)[0]
    d = summarize(a, b, names=("one", "two"))["diff"]
    assert (d["matched"], d["matched_by_hash"], d["matched_by_row"]) == (7, 7, 0)
    assert d["only_first_rows"] == [{"row": 0, "problem_id": bodies[0]["problem_id"]}]
    assert d["only_second_rows"] == [{"row": 0, "problem_id": bodies[9]["problem_id"]}]
    assert d["unchanged"] == 7 and d["changed"] == []  # one grader: the same verdicts
    # Pairing by row number would have compared different inputs.
    by_number = {r["row"]: r["category"] for r in b}
    assert any(by_number.get(r["row"]) != r["category"] for r in a)

    # A verdict that does change is reported with its row in each file.
    moved = next(r for r in b if r["row"] == 3)  # IN1 row 8 - 3 = 5
    original = next(r for r in a if r["input_hash"] == moved["input_hash"])
    assert original["row"] == 5
    flipped = "candidate_mismatch" if original["category"] == "passed" else "passed"
    moved.update(category=flipped, reward=1.0 if flipped == "passed" else 0.0)
    summary = summarize(a, b, names=("one", "two"))
    (change,) = summary["diff"]["changed"]
    assert (change["row"], change["other_row"]) == (5, 3)
    markdown = render_markdown(summary)
    assert "| 5 → 3 |" in markdown and "### Rows in one file only" in markdown
    assert "7 rows matched by input hash (1 only in one, 1 only in two)" in markdown


def test_rows_without_a_hash_fall_back_to_row_and_problem_id(tmp_path):
    def row(index, problem, category, row_hash=None):
        out = {"row": index, "problem_id": problem, "category": category, "outcome": "scored"}
        out["reward"] = 1.0 if category == "passed" else 0.0
        return {**out, "input_hash": row_hash} if row_hash else out

    old = [row(0, "p", "passed"), row(1, "q", "passed"), row(2, "r", "passed")]
    new = [
        row(0, "p", "candidate_mismatch", "h0"),  # no hash on the old side: paired by row
        row(1, "q", "passed"),  # neither has a hash: paired by row
        row(5, "r", "passed", "h5"),  # another row number: in one file each
    ]
    d = summarize(old, new)["diff"]
    assert (d["matched"], d["matched_by_hash"], d["matched_by_row"]) == (2, 0, 2)
    assert [(c["row"], c["change"]) for c in d["changed"]] == [(0, "lost")]
    assert (d["only_first"], d["only_second"]) == (1, 1)
    # Two different hashes at the same row number are two inputs, never a pair.
    d = summarize([row(0, "p", "passed", "h1")], [row(0, "p", "passed", "h2")])["diff"]
    assert (d["matched"], d["only_first"], d["only_second"]) == (0, 1, 1)


def test_repeated_inputs_pair_in_row_order():
    def row(index, category):
        reward = 1.0 if category == "passed" else 0.0
        return {
            "row": index,
            "problem_id": "p",
            "category": category,
            "outcome": "scored",
            "reward": reward,
            "input_hash": "same",
        }

    a = [row(0, "passed"), row(1, "candidate_mismatch")]
    b = [row(7, "candidate_mismatch"), row(4, "passed")]
    d = summarize(a, b)["diff"]
    assert d["matched_by_hash"] == 2 and d["changed"] == []  # 0 ↔ 4, 1 ↔ 7


# --- the command ---------------------------------------------------------------------------


def test_the_batch_command_refuses_an_out_file_from_another_in(tmp_path):
    from critpt_grader.commands.batch import batch

    bodies = public_bodies(4)
    first = write_in(tmp_path / "first.jsonl", bodies[:2])
    second = write_in(tmp_path / "second.jsonl", bodies[2:])
    out = tmp_path / "out.jsonl"
    assert batch(first, out, tasks=[str(PUBLIC_TASKS)], settings=FAST, progress=False) == 0
    assert all("in_fingerprint" in r for r in read_out(out)[0])
    before = out.read_bytes()
    with pytest.raises(InputError, match="row 0"):
        batch(second, out, tasks=[str(PUBLIC_TASKS)], settings=FAST, progress=False)
    assert out.read_bytes() == before
