"""Loading acceptance set folders: candidates, labels, set.json and tasks_from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from critpt_grader.acceptance.sets import AcceptanceSet, SkippedSet, load_set
from critpt_grader.errors import InputError
from tests.support.acceptance_fakes import MINI_SET, fake_loader


def _row(problem_id: str) -> dict:
    return {"task_data": {"problem_id": problem_id}}


def _write_set(
    folder: Path, tasks: list[str], candidates: list[dict | str], **extra: object
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tasks.jsonl").write_text("".join(json.dumps(_row(t)) + "\n" for t in tasks))
    lines = [c if isinstance(c, str) else json.dumps(c) for c in candidates]
    (folder / "candidates.jsonl").write_text("".join(line + "\n" for line in lines))
    for name, content in extra.items():
        (folder / name.replace("_", ".")).write_text(json.dumps(content))
    return folder


def _candidate_row(**overrides: object) -> dict:
    row = {
        "task_id": "t1",
        "kind": "reference",
        "response": "```python\ndef f():\n    return 1\n```",
        "expect": {"outcome": "scored", "reward": 1, "category": "passed"},
    }
    row.update(overrides)
    return row


def test_mini_set_loads_with_names_lines_and_labels():
    loaded = load_set(MINI_SET, load_tasks=fake_loader)
    assert isinstance(loaded, AcceptanceSet)
    assert loaded.name == "mini"  # from set.json, not the folder name
    assert "mini-kinetic-energy" in loaded.tasks
    lines = [c.line for c in loaded.candidates]
    assert lines == sorted(lines) and lines[0] == 1
    alternates = [c for c in loaded.candidates if c.kind == "alternate"]
    assert {c.against for c in alternates} == {
        "mini-kinetic-energy-vis-viva",
        "mini-kinetic-energy",
    }
    assert loaded.labels["mini-inverse"] == ("float", "exception")


def test_against_defaults_to_task_id_and_reward_becomes_float(tmp_path):
    folder = _write_set(tmp_path / "s", ["t1"], [_candidate_row()])
    (candidate,) = load_set(folder, load_tasks=fake_loader).candidates
    assert candidate.against == "t1"
    assert candidate.expect.reward == 1.0 and isinstance(candidate.expect.reward, float)
    assert candidate.expect.category == "passed"


def test_category_is_optional(tmp_path):
    row = _candidate_row(expect={"outcome": "scored", "reward": 0})
    folder = _write_set(tmp_path / "s", ["t1"], [row])
    (candidate,) = load_set(folder, load_tasks=fake_loader).candidates
    assert candidate.expect.category is None


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (_candidate_row(kind="golden"), "kind"),
        (_candidate_row(against="nowhere"), "against 'nowhere'"),
        (_candidate_row(task_id="nowhere"), "task_id 'nowhere'"),
        (_candidate_row(expected={"outcome": "scored"}), "expected"),
        (_candidate_row(expect={"outcome": "scored", "reward": True}), "reward"),
        (_candidate_row(expect={"outcome": "won", "reward": 1}), "outcome"),
        (_candidate_row(expect={"outcome": "scored", "reward": 1, "category": "fine"}), "category"),
        ("{not json", "not JSON"),
    ],
)
def test_a_bad_candidate_line_names_file_and_line(tmp_path, row, message):
    folder = _write_set(tmp_path / "s", ["t1"], [_candidate_row(), row])
    with pytest.raises(InputError, match=message) as info:
        load_set(folder, load_tasks=fake_loader)
    assert "candidates.jsonl:2" in str(info.value)


def test_missing_or_empty_candidates_are_errors(tmp_path):
    folder = _write_set(tmp_path / "s", ["t1"], [])
    with pytest.raises(InputError, match="no candidates"):
        load_set(folder, load_tasks=fake_loader)
    (folder / "candidates.jsonl").unlink()
    with pytest.raises(InputError, match="missing"):
        load_set(folder, load_tasks=fake_loader)


def test_missing_tasks_file_is_an_error(tmp_path):
    folder = _write_set(tmp_path / "s", ["t1"], [_candidate_row()])
    (folder / "tasks.jsonl").unlink()
    with pytest.raises(InputError, match=r"tasks\.jsonl: missing"):
        load_set(folder, load_tasks=fake_loader)


def test_not_a_folder_is_an_error(tmp_path):
    with pytest.raises(InputError, match="not a folder"):
        load_set(tmp_path / "absent", load_tasks=fake_loader)


def test_duplicate_task_ids_are_an_error(tmp_path):
    folder = _write_set(tmp_path / "s", ["t1", "t1"], [_candidate_row()])
    with pytest.raises(InputError, match="appears twice"):
        load_set(folder, load_tasks=fake_loader)


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        ({"t9": ["float"]}, "not a task"),
        ({"t1": "float"}, "list of non-empty strings"),
        ({"t1": [""]}, "list of non-empty strings"),
        (["float"], "expected an object"),
    ],
)
def test_bad_labels_are_errors(tmp_path, labels, message):
    folder = _write_set(tmp_path / "s", ["t1"], [_candidate_row()], labels_json=labels)
    with pytest.raises(InputError, match=message):
        load_set(folder, load_tasks=fake_loader)


def test_labels_are_optional(tmp_path):
    folder = _write_set(tmp_path / "s", ["t1"], [_candidate_row()])
    assert load_set(folder, load_tasks=fake_loader).labels == {}


def test_tasks_from_missing_skips_the_set_with_a_reason(tmp_path):
    folder = _write_set(
        tmp_path / "s", [], [_candidate_row()], set_json={"tasks_from": "../gone/tasks.jsonl"}
    )
    loaded = load_set(folder, load_tasks=fake_loader)
    assert isinstance(loaded, SkippedSet)
    assert "../gone/tasks.jsonl" in loaded.reason and "not found" in loaded.reason


def test_tasks_from_a_folder_relative_to_the_set(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    for name in ("b", "a"):
        (shared / f"{name}.json").write_text(json.dumps(_row(f"task-{name}")))
    (shared / "notes.txt").write_text("ignored")
    folder = _write_set(
        tmp_path / "s",
        [],
        [_candidate_row(task_id="task-a"), _candidate_row(task_id="task-b")],
        set_json={"name": "shared-data", "tasks_from": "../shared"},
    )
    loaded = load_set(folder, load_tasks=fake_loader)
    assert isinstance(loaded, AcceptanceSet)
    assert loaded.name == "shared-data"
    assert list(loaded.tasks) == ["task-a", "task-b"]


def test_tasks_from_relative_to_the_repository(tmp_path):
    repo = tmp_path / "repo"
    (repo / "data").mkdir(parents=True)
    (repo / "pyproject.toml").write_text("")
    (repo / "data" / "rows.jsonl").write_text(json.dumps(_row("t1")) + "\n")
    folder = _write_set(
        repo / "sets" / "deep", [], [_candidate_row()], set_json={"tasks_from": "data/rows.jsonl"}
    )
    loaded = load_set(folder, load_tasks=fake_loader)
    assert isinstance(loaded, AcceptanceSet) and list(loaded.tasks) == ["t1"]


def test_unknown_manifest_field_is_an_error(tmp_path):
    folder = _write_set(tmp_path / "s", ["t1"], [_candidate_row()], set_json={"nmae": "typo"})
    with pytest.raises(InputError, match=r"set\.json"):
        load_set(folder, load_tasks=fake_loader)


def test_the_real_loader_reads_the_mini_set(tmp_path):
    # The committed rows are strict task_data v1: the real loader must accept every one.
    loaded = load_set(MINI_SET)
    assert isinstance(loaded, AcceptanceSet)
    assert len(loaded.tasks) == 5
    assert loaded.tasks["mini-double-symbol"].input_conversions == ("symbol",)
