"""The Harbor stand-in itself (tests/support/harbor_standin.py): prepare and the verifier runner,
rule by rule, on tiny throwaway datasets."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.support.harbor_standin import (
    MISSING,
    PrepareError,
    RunResult,
    prepare,
    read_reward,
    rename_task,
    render,
    run_verifier,
)

TASK_TOML = """\
version = "1.0"

[task]
# the shared name; prepare names each task after its row
name = "critpt/physics"  # kept comment
description = "name = \\"not this one\\""

[verifier]
timeout_sec = 600.0
"""

VERIFIER_READS_ANSWER = """\
from pathlib import Path

def verify(workspace: Path, task_data: dict) -> float:
    answer = (workspace / "answer.md").read_text().strip()
    return 1.0 if answer == str(task_data["answer"]) else 0.0
"""


def write_files(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(textwrap.dedent(content), encoding="utf-8")


def make_dataset(root: Path, rows: list[Any], files: dict[str, str | bytes] | None = None) -> Path:
    """A dataset folder: the given files (a small default set if None), ``rows`` as JSONL
    (a str row is written as it is)."""
    if files is None:
        files = {
            "dataset.toml": '[dataset]\nname = "critpt/physics"\n',
            "task.toml": TASK_TOML,
            "instruction.template.md": "Problem {{ task_data.id }}: {{statement}}\n",
            "environment/Dockerfile": "FROM python:3.12-slim\n",
            "tests/verifier.py": VERIFIER_READS_ANSWER,
            "solution/answer.template.md": "{{ answer }}\n",
        }
    root.mkdir(parents=True, exist_ok=True)
    write_files(root, files)
    lines = [row if isinstance(row, str) else json.dumps(row) for row in rows]
    (root / "tasks.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return root


def row(task_id: str, **task_data: Any) -> dict[str, Any]:
    return {"task_id": task_id, "task_data": task_data}


def tree(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


def fails(dataset: Path, out: Path, *fragments: str) -> str:
    with pytest.raises(PrepareError) as caught:
        prepare(dataset, out)
    message = str(caught.value)
    for fragment in fragments:
        assert fragment in message, message
    return message


# --------------------------------------------------------------------------- prepare: output


def test_one_task_folder_per_row_in_row_order(tmp_path: Path) -> None:
    rows = [row(f"q{i}", id=i, statement=f"s{i}", answer=str(i)) for i in (3, 1, 2)]
    dataset = make_dataset(tmp_path / "ds", rows)
    tasks = prepare(dataset, tmp_path / "out")
    assert tasks == [tmp_path / "out" / name for name in ("q3", "q1", "q2")]
    assert tree(tasks[0]) == {
        "task.toml",
        "instruction.md",
        "environment",
        "environment/Dockerfile",
        "tests",
        "tests/verifier.py",
        "solution",
        "solution/answer.md",
        "task_data.json",
    }


def test_dataset_files_at_the_root_are_not_copied_but_in_subfolders_are(
    tmp_path: Path,
) -> None:
    files = {
        "dataset.toml": "[dataset]\n",
        "task_data.py": "X = 1\n",
        "task.toml": "[task]\n",
        "data/tasks.jsonl": "kept\n",
        "data/dataset.toml": "kept\n",
        "data/task_data.py": "kept\n",
    }
    dataset = make_dataset(tmp_path / "ds", [row("a")], files)
    (task,) = prepare(dataset, tmp_path / "out")
    assert tree(task) == {
        "task.toml",
        "task_data.json",
        "data",
        "data/tasks.jsonl",
        "data/dataset.toml",
        "data/task_data.py",
    }
    assert not (dataset / "__pycache__").exists()  # importing task_data.py wrote no bytecode


def test_task_data_json_is_the_rows_task_data(tmp_path: Path) -> None:
    data = {"answer": "x^2", "n": 3, "nested": {"list": [1, 2.5, None, True]}, "ü": "é"}
    dataset = make_dataset(tmp_path / "ds", [row("a", **data)], {"task.toml": "[task]\n"})
    (task,) = prepare(dataset, tmp_path / "out")
    assert json.loads((task / "task_data.json").read_text(encoding="utf-8")) == data


def test_placeholders_both_spellings_with_or_without_spaces(tmp_path: Path) -> None:
    template = "{{task_data.a}}|{{ task_data.a }}|{{a}}|{{   a   }}|{{\ttask_data.b\n}}\n"
    files = {"task.toml": "[task]\n", "instruction.template.md": template}
    dataset = make_dataset(tmp_path / "ds", [row("t", a="A", b="B")], files)
    (task,) = prepare(dataset, tmp_path / "out")
    assert (task / "instruction.md").read_text() == "A|A|A|A|B\n"


def test_strings_go_in_raw_other_values_as_json(tmp_path: Path) -> None:
    values = {
        "s": 'say "hi" \\ é',
        "i": 3,
        "f": 0.5,
        "t": True,
        "z": None,
        "l": [1, "two"],
        "d": {"k": "v"},
        "e": "",
    }
    template = "".join(f"{key}={{{{ {key} }}}}\n" for key in values)
    files = {"task.toml": "[task]\n", "instruction.template.md": template}
    dataset = make_dataset(tmp_path / "ds", [row("t", **values)], files)
    (task,) = prepare(dataset, tmp_path / "out")
    assert (task / "instruction.md").read_text(encoding="utf-8") == (
        's=say "hi" \\ é\ni=3\nf=0.5\nt=true\nz=null\nl=[1, "two"]\nd={"k": "v"}\ne=\n'
    )


def test_values_are_not_rendered_again(tmp_path: Path) -> None:
    files = {"task.toml": "[task]\n", "instruction.template.md": "{{ a }}\n"}
    dataset = make_dataset(tmp_path / "ds", [row("t", a="{ {b} }", b="no")], files)
    (task,) = prepare(dataset, tmp_path / "out")
    assert (task / "instruction.md").read_text() == "{ {b} }\n"


def test_template_suffix_is_dropped_and_others_copied_unchanged(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {
        "task.toml": "[task]\n",
        "solution/answer.template.md": "{{ x }}",
        "tests/config.template.json": '{"x": {{ x }}}',
        "notes.md": "{{ x }} is not rendered here\n",
        "plain.template": "{{ x }} (no suffix: not a template)",
        "archive.template.tar.gz": b"\x1f\x8b{{ x }}",
        "blob.bin": b"\xff\x00{{",
    }
    dataset = make_dataset(tmp_path / "ds", [row("t", x=7)], files)
    (task,) = prepare(dataset, tmp_path / "out")
    assert (task / "solution/answer.md").read_text() == "7"
    assert (task / "tests/config.json").read_text() == '{"x": 7}'
    assert not (task / "solution/answer.template.md").exists()
    for rel in ("notes.md", "plain.template", "archive.template.tar.gz", "blob.bin"):
        assert (task / rel).read_bytes() == (dataset / rel).read_bytes()


def test_file_modes_are_kept(tmp_path: Path) -> None:
    files = {
        "task.toml": "[task]\n",
        "solution/solve.template.sh": "#!/bin/sh\necho {{ x }}\n",
        "environment/setup.sh": "#!/bin/sh\n",
        "readonly.txt": "r\n",
    }
    dataset = make_dataset(tmp_path / "ds", [row("t", x=1)], files)
    os.chmod(dataset / "solution/solve.template.sh", 0o755)
    os.chmod(dataset / "environment/setup.sh", 0o750)
    os.chmod(dataset / "readonly.txt", 0o444)
    (task,) = prepare(dataset, tmp_path / "out")
    assert (task / "solution/solve.sh").stat().st_mode & 0o777 == 0o755
    assert (task / "environment/setup.sh").stat().st_mode & 0o777 == 0o750
    assert (task / "readonly.txt").stat().st_mode & 0o777 == 0o444


def test_task_name_is_rewritten_and_the_rest_kept(tmp_path: Path) -> None:
    dataset = make_dataset(tmp_path / "ds", [row("q-1.a_b", id=1, statement="s", answer="1")])
    (task,) = prepare(dataset, tmp_path / "out")
    text = (task / "task.toml").read_text()
    assert text == TASK_TOML.replace('"critpt/physics"', '"critpt/q-1.a_b"')
    document = tomllib.loads(text)
    assert document["task"]["name"] == "critpt/q-1.a_b"
    assert document["task"]["description"] == 'name = "not this one"'


def test_task_name_in_a_literal_string_or_a_rendered_task_toml(tmp_path: Path) -> None:
    assert rename_task("[task]\nname='a/b'\n", "t") == '[task]\nname="a/t"\n'
    assert rename_task("[x]\nname = 'kept'\n[ task ]\r\nname = 'a/b'\r\n", "t") == (
        "[x]\nname = 'kept'\n[ task ]\r\nname = \"a/t\"\r\n"
    )
    files = {"task.template.toml": '[task]\nname = "org/x"\nkind = "{{ kind }}"\n'}
    dataset = make_dataset(tmp_path / "ds", [row("t", kind="k")], files)
    (task,) = prepare(dataset, tmp_path / "out")
    assert (task / "task.toml").read_text() == '[task]\nname = "org/t"\nkind = "k"\n'


def test_task_toml_without_a_name_is_copied_as_is(tmp_path: Path) -> None:
    toml = '# no name\n[task]\ndescription = "x"\n\n[metadata]\nname = "not the task"\n'
    dataset = make_dataset(tmp_path / "ds", [row("t")], {"task.toml": toml})
    (task,) = prepare(dataset, tmp_path / "out")
    assert (task / "task.toml").read_bytes() == (dataset / "task.toml").read_bytes()


@pytest.mark.parametrize("name", ["physics", "a/b/c", "/b", "a/", "a b/c", 3])
def test_task_name_must_be_org_slash_name(tmp_path: Path, name: object) -> None:
    toml = f"[task]\nname = {json.dumps(name)}\n"
    dataset = make_dataset(tmp_path / "ds", [row("t")], {"task.toml": toml})
    fails(dataset, tmp_path / "out", "task.toml", "<org>/<name>")


def test_task_name_that_cannot_be_rewritten_in_place_fails(tmp_path: Path) -> None:
    toml = 'task = { name = "a/b" }\n'
    dataset = make_dataset(tmp_path / "ds", [row("t")], {"task.toml": toml})
    fails(dataset, tmp_path / "out", "'t'", "task.toml", "cannot rewrite")


def test_task_data_py_without_task_data_skips_the_check(tmp_path: Path) -> None:
    files = {"task.toml": "[task]\n", "task_data.py": "HELPER = 1\n"}
    dataset = make_dataset(tmp_path / "ds", [row("t", anything=[1])], files)
    assert len(prepare(dataset, tmp_path / "out")) == 1


def test_task_data_models_do_not_leak_across_datasets(tmp_path: Path) -> None:
    model = """\
    from pydantic import BaseModel, ConfigDict

    class TaskData(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True)
        {field}: {kind}
    """
    before = set(sys.modules)
    a = make_dataset(
        tmp_path / "a",
        [row("t", a=1)],
        {"task.toml": "[task]\n", "task_data.py": model.format(field="a", kind="int")},
    )
    b = make_dataset(
        tmp_path / "b",
        [row("t", b="x")],
        {"task.toml": "[task]\n", "task_data.py": model.format(field="b", kind="str")},
    )
    assert len(prepare(a, tmp_path / "out-a")) == 1
    assert len(prepare(b, tmp_path / "out-b")) == 1
    new_modules = [sys.modules[name] for name in set(sys.modules) - before]
    assert not [m for m in new_modules if str(getattr(m, "__file__", "")).endswith("task_data.py")]
    (a / "tasks.jsonl").write_text(json.dumps(row("t", b="x")) + "\n")
    fails(a, tmp_path / "out-a2", "'t'", "TaskData")


# --------------------------------------------------------------------------- prepare: failures


def test_a_placeholder_naming_no_field_fails(tmp_path: Path) -> None:
    files = {"task.toml": "[task]\n", "solution/answer.template.md": "{{ task_data.nope }}"}
    dataset = make_dataset(tmp_path / "ds", [row("t1", yes=1)], files)
    fails(dataset, tmp_path / "out", "'t1'", "solution/answer.template.md", "nope", "no field")


@pytest.mark.parametrize(
    "template",
    [
        "{{ a b }}",
        "{{}}",
        "{{ task_data.a.b }}",
        "{{ other.a }}",
        "{{ a | upper }}",
        "{{ a }} and {{\nspanning lines }}",
    ],
)
def test_any_other_braces_left_after_rendering_fail(tmp_path: Path, template: str) -> None:
    files = {"task.toml": "[task]\n", "tests/prompt.template.txt": template}
    dataset = make_dataset(tmp_path / "ds", [row("t2", a="x")], files)
    fails(dataset, tmp_path / "out", "'t2'", "tests/prompt.template.txt", "left after rendering")


def test_braces_brought_in_by_a_value_fail_too(tmp_path: Path) -> None:
    files = {"task.toml": "[task]\n", "instruction.template.md": "{{ a }}"}
    dataset = make_dataset(tmp_path / "ds", [row("t3", a=r"$x^{{2}}$")], files)
    fails(dataset, tmp_path / "out", "'t3'", "instruction.template.md", "left after rendering")


def test_a_lone_double_brace_is_no_placeholder() -> None:
    assert render("a {{ b", {}) == "a {{ b"
    assert render("}} {x}", {}) == "}} {x}"


def test_duplicate_task_id_fails(tmp_path: Path) -> None:
    dataset = make_dataset(tmp_path / "ds", [row("same"), row("other"), row("same")], {})
    fails(dataset, tmp_path / "out", "'same'", "duplicate")


@pytest.mark.parametrize("task_id", ["", "-a", ".a", "_a", "a/b", "a b", "é", "a\n", "../x"])
def test_invalid_task_id_fails(tmp_path: Path, task_id: str) -> None:
    dataset = make_dataset(tmp_path / "ds", [row(task_id)], {})
    fails(dataset, tmp_path / "out", repr(task_id), "invalid task id")


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ("not json", "not a JSON row"),
        ("[1, 2]", "list"),
        ('{"task_id": "a"}', "['task_id']"),
        ('{"task_id": "a", "task_data": {}, "extra": 1}', "extra"),
        ('{"task_id": 7, "task_data": {}}', "task_id is 7"),
        ('{"task_id": "a", "task_data": [1]}', "task_data must be an object"),
        ('{"task_id": "a", "task_data": {"x": NaN}}', "NaN"),
    ],
)
def test_a_malformed_row_fails(tmp_path: Path, line: str, fragment: str) -> None:
    dataset = make_dataset(tmp_path / "ds", [row("ok"), line], {})
    fails(dataset, tmp_path / "out", "tasks.jsonl line 2", fragment)


def test_a_reserved_key_fails(tmp_path: Path) -> None:
    dataset = make_dataset(tmp_path / "ds", [row("t", _ng_seed=1)], {})
    fails(dataset, tmp_path / "out", "'t'", "_ng_seed", "reserved")


@pytest.mark.parametrize(
    "task_data",
    [{"n": "3"}, {"n": 3, "unknown": 1}, {}, {"n": 3.5}, {"n": True}],
    ids=["string-for-int", "unknown-key", "missing-key", "float-for-int", "bool-for-int"],
)
def test_a_row_task_data_rejects_fails(tmp_path: Path, task_data: dict[str, Any]) -> None:
    model = """\
    from pydantic import BaseModel, ConfigDict

    class TaskData(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True)
        n: int
    """
    files = {"task.toml": "[task]\n", "task_data.py": model}
    dataset = make_dataset(tmp_path / "ds", [row("good", n=3), row("bad", **task_data)], files)
    fails(dataset, tmp_path / "out", "'bad'", "TaskData rejects")
    assert not (tmp_path / "out").exists()  # nothing written for the good row either


def test_a_task_data_py_that_does_not_import_or_is_no_model_fails(tmp_path: Path) -> None:
    files = {"task.toml": "[task]\n", "task_data.py": "raise RuntimeError('boom')\n"}
    dataset = make_dataset(tmp_path / "ds", [row("t")], files)
    fails(dataset, tmp_path / "out", "task_data.py", "boom")
    (dataset / "task_data.py").write_text("TaskData = dict\n")
    fails(dataset, tmp_path / "out", "task_data.py", "not a Pydantic model")


@pytest.mark.parametrize("kind", ["file", "folder", "dangling", "root-dataset-file"])
def test_a_symlink_in_the_template_fails(tmp_path: Path, kind: str) -> None:
    dataset = make_dataset(tmp_path / "ds", [row("t")], {"task.toml": "[task]\n"})
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text("x")
    link, target = {
        "file": ("tests/data.txt", outside / "f.txt"),
        "folder": ("environment/files", outside),
        "dangling": ("x.template.md", tmp_path / "nowhere"),
        "root-dataset-file": ("dataset.toml", outside / "f.txt"),
    }[kind]
    (dataset / link).parent.mkdir(parents=True, exist_ok=True)
    (dataset / link).symlink_to(target)
    fails(dataset, tmp_path / "out", link, "symlink")


def test_a_task_data_json_at_the_template_root_fails(tmp_path: Path) -> None:
    files = {"task.toml": "[task]\n", "task_data.json": "{}"}
    dataset = make_dataset(tmp_path / "ds", [row("t")], files)
    fails(dataset, tmp_path / "out", "task_data.json", "template root")


def test_a_template_rendering_to_task_data_json_fails(tmp_path: Path) -> None:
    files = {"task.toml": "[task]\n", "task_data.template.json": "{}"}
    dataset = make_dataset(tmp_path / "ds", [row("t")], files)
    fails(dataset, tmp_path / "out", "task_data.template.json", "template root")


def test_a_task_data_json_in_a_subfolder_is_a_plain_file(tmp_path: Path) -> None:
    files = {"task.toml": "[task]\n", "tests/task_data.json": '{"fixture": 1}'}
    dataset = make_dataset(tmp_path / "ds", [row("t")], files)
    (task,) = prepare(dataset, tmp_path / "out")
    assert (task / "tests/task_data.json").read_text() == '{"fixture": 1}'


@pytest.mark.parametrize(
    "names",
    [
        ("a.md", "a.template.md"),
        ("solution/answer.md", "solution/answer.template.md"),
        ("task.toml", "task.template.toml"),
    ],
)
def test_two_files_rendering_to_one_name_fail(tmp_path: Path, names: tuple[str, str]) -> None:
    files = {"task.toml": "[task]\n", **{name: "x" for name in names}}
    dataset = make_dataset(tmp_path / "ds", [row("t")], files)
    fails(dataset, tmp_path / "out", *names, "both render to")


def test_a_template_rendering_onto_a_folder_fails(tmp_path: Path) -> None:
    files = {"task.toml": "[task]\n", "docs.template.d": "x", "docs.d/readme": "y"}
    dataset = make_dataset(tmp_path / "ds", [row("t")], files)
    fails(dataset, tmp_path / "out", "docs.d", "docs.template.d", "both render to")


def test_a_non_empty_output_folder_fails(tmp_path: Path) -> None:
    dataset = make_dataset(tmp_path / "ds", [row("t")], {"task.toml": "[task]\n"})
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "stale").write_text("x")
    fails(dataset, tmp_path / "out", "absent or empty")


def test_a_failure_in_a_later_row_writes_nothing(tmp_path: Path) -> None:
    files = {"task.toml": "[task]\n", "instruction.template.md": "{{ a }}"}
    dataset = make_dataset(tmp_path / "ds", [row("ok", a=1), row("bad", b=1)], files)
    fails(dataset, tmp_path / "out", "'bad'", "instruction.template.md")
    assert not (tmp_path / "out").exists()


# --------------------------------------------------------------------------- runner


@pytest.fixture
def task(tmp_path: Path) -> dict[str, Path]:
    task_dir = tmp_path / "task"
    (task_dir / "tests").mkdir(parents=True)
    (task_dir / "task_data.json").write_text(json.dumps({"answer": "42", "n": 2}))
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    return {"task_dir": task_dir, "workspace": workspace, "reward_dir": tmp_path / "logs"}


def run(task: dict[str, Path], verifier: str, response: object = MISSING) -> RunResult:
    (task["task_dir"] / "tests" / "verifier.py").write_text(textwrap.dedent(verifier))
    return run_verifier(task["task_dir"], task["workspace"], task["reward_dir"], response)


def reward_files(task: dict[str, Path]) -> set[str]:
    return {p.name for p in task["reward_dir"].iterdir()} if task["reward_dir"].exists() else set()


def test_a_number_is_written_to_reward_txt(task: dict[str, Path]) -> None:
    result = run(task, "def verify():\n    return 1.0\n")
    assert (result.exit_code, result.reward, result.metrics) == (0, 1.0, {}), result.stderr
    assert (task["reward_dir"] / "reward.txt").read_text() == "1.0"
    assert reward_files(task) == {"reward.txt"}


def test_an_int_is_a_number(task: dict[str, Path]) -> None:
    result = run(task, "def verify():\n    return 0\n")
    assert (result.exit_code, result.reward) == (0, 0.0)
    assert (task["reward_dir"] / "reward.txt").read_text() == "0"


def test_a_dict_is_written_to_reward_json(task: dict[str, Path]) -> None:
    result = run(task, "def verify():\n    return {'reward': 0.5, 'exact': 1, 'close': 0.25}\n")
    assert result.exit_code == 0, result.stderr
    assert result.reward == 0.5
    assert result.metrics == {"reward": 0.5, "exact": 1, "close": 0.25}
    assert reward_files(task) == {"reward.json"}


@pytest.mark.parametrize(
    "value",
    [
        "True",
        "'1.0'",
        "None",
        "[1.0]",
        "float('nan')",
        "float('inf')",
        "{'score': 1.0}",
        "{'reward': True}",
        "{'reward': 1.0, 'note': 'text'}",
        "{'reward': 1.0, 2: 1.0}",
    ],
)
def test_a_bad_return_value_exits_2(task: dict[str, Path], value: str) -> None:
    result = run(task, f"def verify():\n    return {value}\n")
    assert (result.exit_code, result.reward) == (2, None)
    assert "not a number" in result.stderr
    assert reward_files(task) == set()


def test_verify_raising_exits_1(task: dict[str, Path]) -> None:
    result = run(task, "def verify():\n    raise ValueError('bad workspace')\n")
    assert (result.exit_code, result.reward) == (1, None)
    assert "ValueError: bad workspace" in result.stderr
    assert reward_files(task) == set()


def test_verify_exiting_counts_as_raising(task: dict[str, Path]) -> None:
    result = run(task, "import sys\ndef verify():\n    sys.exit(0)\n")
    assert (result.exit_code, result.reward) == (1, None)


def test_a_reward_file_verify_wrote_before_raising_is_removed(task: dict[str, Path]) -> None:
    verifier = """\
    from pathlib import Path

    def verify(workspace):
        Path(workspace, "..", "logs", "reward.txt").write_text("1")
        raise RuntimeError("late")
    """
    result = run(task, verifier)
    assert (result.exit_code, result.reward) == (1, None)
    assert reward_files(task) == set()


def test_a_reward_file_verify_wrote_itself_is_replaced(task: dict[str, Path]) -> None:
    verifier = """\
    from pathlib import Path

    def verify(workspace):
        Path(workspace, "..", "logs", "reward.txt").write_text("1")
        return {"reward": 0.0}
    """
    result = run(task, verifier)
    assert (result.exit_code, result.reward) == (0, 0.0)
    assert reward_files(task) == {"reward.json"}


@pytest.mark.parametrize(
    "verifier",
    ["def check():\n    return 1.0\n", "verify = 1.0\n", "raise ImportError('no helper')\n"],
    ids=["no-verify", "not-callable", "import-raises"],
)
def test_no_usable_verify_exits_2(task: dict[str, Path], verifier: str) -> None:
    result = run(task, verifier)
    assert (result.exit_code, result.reward) == (2, None)
    assert "runner:" in result.stderr


def test_no_verifier_module_exits_2(task: dict[str, Path]) -> None:
    result = run_verifier(task["task_dir"], task["workspace"], task["reward_dir"])
    assert result.exit_code == 2
    assert "no verifier module" in result.stderr


def test_an_unknown_argument_exits_2(task: dict[str, Path]) -> None:
    result = run(task, "def verify(workspace, answer_key):\n    return 1.0\n")
    assert (result.exit_code, result.reward) == (2, None)
    assert "'answer_key'" in result.stderr


def test_an_unknown_argument_with_a_default_keeps_it(task: dict[str, Path]) -> None:
    result = run(task, "def verify(scale=0.25, *, task_data):\n    return scale * task_data['n']\n")
    assert (result.exit_code, result.reward) == (0, 0.5), result.stderr


def test_only_declared_arguments_are_passed(task: dict[str, Path]) -> None:
    verifier = """\
    from pathlib import Path

    def verify(task_data, *args, **kwargs):
        assert task_data == {"answer": "42", "n": 2}
        assert args == () and kwargs == {}
        return 1
    """
    result = run(task, verifier)
    assert (result.exit_code, result.reward) == (0, 1.0), result.stderr


def test_workspace_state_and_task_data_are_what_the_contract_says(task: dict[str, Path]) -> None:
    (task["workspace"] / "answer.md").write_text("42\n")
    verifier = """\
    import os
    from pathlib import Path

    def verify(*, state, workspace, task_data):
        assert isinstance(workspace, Path) and workspace.is_absolute()
        assert state == {"workspace": workspace}
        assert Path.cwd() == workspace
        return 1.0 if (workspace / "answer.md").read_text().strip() == task_data["answer"] else 0.0
    """
    result = run(task, verifier)
    assert (result.exit_code, result.reward) == (0, 1.0), result.stderr


def test_response_without_a_default_and_none_given_exits_2(task: dict[str, Path]) -> None:
    result = run(task, "def verify(response):\n    return 1.0\n")
    assert (result.exit_code, result.reward) == (2, None)
    assert "'response'" in result.stderr


def test_response_with_a_default_and_none_given_keeps_it(task: dict[str, Path]) -> None:
    result = run(task, "def verify(response=None):\n    return 0.0 if response is None else 1\n")
    assert (result.exit_code, result.reward) == (0, 0.0), result.stderr


def test_a_given_response_is_passed_as_json(task: dict[str, Path]) -> None:
    verifier = """\
    def verify(response):
        text = response["output"][0]["content"][0]["text"]
        return 1.0 if text == "E = mc^2" else 0.0
    """
    response = {"output": [{"type": "message", "content": [{"text": "E = mc^2"}]}]}
    result = run(task, verifier, response)
    assert (result.exit_code, result.reward) == (0, 1.0), result.stderr
    result = run(
        task, "def verify(response=1):\n    return 1.0 if response is None else 0.0\n", None
    )
    assert (result.exit_code, result.reward) == (0, 1.0), result.stderr


def test_positional_only_parameters_get_positions(task: dict[str, Path]) -> None:
    verifier = """\
    from pathlib import Path

    def verify(workspace, task_data, /, state=None):
        assert isinstance(workspace, Path) and task_data["n"] == 2
        assert state == {"workspace": workspace}
        return {"reward": 1.0}
    """
    result = run(task, verifier)
    assert (result.exit_code, result.reward) == (0, 1.0), result.stderr


def test_a_positional_only_parameter_after_a_left_out_one_exits_2(task: dict[str, Path]) -> None:
    result = run(task, "def verify(scale=1, workspace=None, /):\n    return 1.0\n")
    assert result.exit_code == 2
    assert "by position" in result.stderr


def test_async_verify_is_awaited(task: dict[str, Path]) -> None:
    verifier = """\
    import asyncio

    async def verify(task_data):
        await asyncio.sleep(0)
        return {"reward": 0.75, "n": task_data["n"]}
    """
    result = run(task, verifier)
    assert (result.exit_code, result.reward, result.metrics) == (0, 0.75, {"reward": 0.75, "n": 2})


def test_async_verify_raising_exits_1(task: dict[str, Path]) -> None:
    result = run(task, "async def verify():\n    raise KeyError('late')\n")
    assert (result.exit_code, result.reward) == (1, None)


def test_the_verifier_imports_its_sibling_modules(task: dict[str, Path]) -> None:
    (task["task_dir"] / "tests" / "helpers.py").write_text("def half():\n    return 0.5\n")
    result = run(task, "from helpers import half\n\ndef verify():\n    return half()\n")
    assert (result.exit_code, result.reward) == (0, 0.5), result.stderr


def test_the_workspace_is_not_importable(task: dict[str, Path]) -> None:
    (task["workspace"] / "helpers.py").write_text("def half():\n    return 1.0\n")
    result = run(task, "from helpers import half\n\ndef verify():\n    return half()\n")
    assert result.exit_code == 2
    assert "ModuleNotFoundError" in result.stderr


def test_stale_reward_folder_and_symlink_are_removed_and_replaced(
    task: dict[str, Path], tmp_path: Path
) -> None:
    reward_dir = task["reward_dir"]
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    (reward_dir / "reward.json" / "inner").mkdir(parents=True)
    (reward_dir / "reward.json" / "inner" / "f").write_text("x")
    (reward_dir / "reward.json" / "link").symlink_to(outside)  # rmtree must not follow it
    (reward_dir / "reward.txt").symlink_to(outside / "keep.txt")
    (reward_dir / "other.log").write_text("kept")
    result = run(task, "def verify():\n    return 1.0\n")
    assert (result.exit_code, result.reward, result.metrics) == (0, 1.0, {}), result.stderr
    assert not (reward_dir / "reward.txt").is_symlink()
    assert (reward_dir / "reward.txt").read_text() == "1.0"
    assert not (reward_dir / "reward.json").exists()
    assert (outside / "keep.txt").read_text() == "keep"
    assert (reward_dir / "other.log").read_text() == "kept"


def test_stale_reward_files_are_removed_even_when_verify_fails(task: dict[str, Path]) -> None:
    reward_dir = task["reward_dir"]
    reward_dir.mkdir()
    (reward_dir / "reward.txt").write_text("1")
    (reward_dir / "reward.json").write_text('{"reward": 1}')
    result = run(task, "def verify():\n    raise RuntimeError\n")
    assert (result.exit_code, result.reward) == (1, None)
    assert reward_files(task) == set()
    (reward_dir / "reward.txt").mkdir()
    result = run(task, "def nothing():\n    pass\n")
    assert (result.exit_code, result.reward) == (2, None)
    assert reward_files(task) == set()


def test_a_verify_that_runs_too_long_is_killed(task: dict[str, Path]) -> None:
    (task["task_dir"] / "tests" / "verifier.py").write_text(
        "import time\ndef verify():\n    time.sleep(60)\n"
    )
    with pytest.raises(subprocess.TimeoutExpired):
        run_verifier(task["task_dir"], task["workspace"], task["reward_dir"], timeout=1)


def test_read_reward_prefers_reward_json(tmp_path: Path) -> None:
    assert read_reward(tmp_path) == (None, {})
    (tmp_path / "reward.txt").write_text("0.25\n")
    assert read_reward(tmp_path) == (0.25, {})
    (tmp_path / "reward.json").write_text('{"exact": 1}')
    assert read_reward(tmp_path) == (0.25, {"exact": 1})
    (tmp_path / "reward.json").write_text('{"reward": 1, "exact": 1}')
    assert read_reward(tmp_path) == (1.0, {"reward": 1, "exact": 1})


# --------------------------------------------------------------------------- end to end


def test_a_prepared_task_runs_its_verifier_against_the_oracle_answer(tmp_path: Path) -> None:
    rows = [row("q1", id=1, statement="2+2?", answer="4"), row("q2", id=2, statement="?", answer=5)]
    dataset = make_dataset(tmp_path / "ds", rows)
    for task_dir in prepare(dataset, tmp_path / "out"):
        workspace = tmp_path / f"ws-{task_dir.name}"
        workspace.mkdir()
        (workspace / "answer.md").write_bytes((task_dir / "solution/answer.md").read_bytes())
        result = run_verifier(task_dir, workspace, tmp_path / f"logs-{task_dir.name}")
        assert (result.exit_code, result.reward) == (0, 1.0), result.stderr
        assert not (task_dir / "tests" / "__pycache__").exists()
    assert (tmp_path / "out/q2/instruction.md").read_text() == "Problem 2: ?\n"
