"""``critpt-grader export-harbor``: the dataset a NeMo Gym user publishes, rendered as Gym's
prepare would and verified through a local stand-in of Gym's runner
(tests/support/harbor_standin.py, written from the documented contract: no Docker, no Gym
here)."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import shutil
import sys
import threading
from pathlib import Path

import pytest
from pydantic import ValidationError

from critpt_grader.cli import main
from critpt_grader.errors import InputError, TaskError
from critpt_grader.harbor import verifier as verifier_module
from critpt_grader.harbor.braces import BracesError, safe_prose, safe_source
from critpt_grader.harbor.export import export
from critpt_grader.pipeline import Grader
from tests.support.harbor_standin import prepare, run_verifier
from tests.support.paths import REPO, SHARED

PUBLIC = REPO / "fixtures" / "public" / "tasks.jsonl"
CRITPT = SHARED / "critpt-public" / "public_test_challenges"
EXAMPLE = SHARED / "reference" / "critpt_custom_grader_example.jsonl"


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> Path:
    """The grader's wheel, built once for the session the way the exporter builds it."""
    out = tmp_path_factory.mktemp("built") / "dataset"
    export([EXAMPLE if EXAMPLE.exists() else PUBLIC], out)  # a worktree may lack ../shared
    (built,) = (out / "environment").glob("critpt_grader-*.whl")
    return built


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _task_data_model(dataset: Path):
    spec = importlib.util.spec_from_file_location("exported_task_data", dataset / "task_data.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.TaskData


# --- the files ------------------------------------------------------------------------------


def test_the_dataset_has_every_file_of_the_contract(tmp_path, wheel):
    out = tmp_path / "public"
    done = export([PUBLIC], out, org="critpt", wheel=wheel)
    for name in (
        "dataset.toml",
        "task.toml",
        "tasks.jsonl",
        "task_data.py",
        "instruction.template.md",
        "environment/Dockerfile",
        f"environment/{wheel.name}",
        "tests/verifier.py",
        "solution/answer.template.md",
    ):
        assert (out / name).is_file(), name
    rows = _rows(out / "tasks.jsonl")
    assert done.tasks == len(rows) == len(_rows(PUBLIC))
    assert [set(r) for r in rows] == [{"task_id", "task_data"}] * len(rows)
    assert 'name = "critpt/public"' in (out / "task.toml").read_text()
    assert f"COPY {wheel.name} " in (out / "environment" / "Dockerfile").read_text()
    # the verifier grades through this package
    assert (
        "from critpt_grader.harbor.verifier import verify"
        in (out / "tests" / "verifier.py").read_text()
    )


def test_task_data_accepts_every_row_and_refuses_an_unknown_key(tmp_path, wheel):
    for source, name in ((PUBLIC, "public"), (EXAMPLE, "example")):
        if not source.exists():
            continue
        out = tmp_path / name
        export([source], out, wheel=wheel)
        model = _task_data_model(out)
        for row in _rows(out / "tasks.jsonl"):
            model.model_validate(row["task_data"])
        data = dict(_rows(out / "tasks.jsonl")[0]["task_data"])
        with pytest.raises(ValidationError):
            model.model_validate({**data, "surprise": 1})
        with pytest.raises(ValidationError):  # values are checked as JSON: "1" is no int
            model.model_validate({**data, "schema_version": "1"})
        if name == "public":  # as strict as the grader's loader
            for bad in (
                {"schema_version": 7},
                {"test_cases": []},
                {"entrypoint": "not an identifier"},
                {"test_cases": [{"args": [], "expected": {"kind": "maybe"}}]},
            ):
                with pytest.raises(ValidationError):
                    model.model_validate({**data, **bad})


def test_the_dataset_name_is_valid_without_org(tmp_path, wheel):
    import tomllib

    out = tmp_path / "My Public Set"
    export([PUBLIC.parent], out, wheel=wheel)
    manifest = tomllib.loads((out / "dataset.toml").read_text())
    assert manifest["dataset"]["name"] == "critpt-grader/my-public-set"
    assert "[task]" not in (out / "task.toml").read_text()  # tasks keep their bare ids
    assert (out / "tests" / "test.sh").stat().st_mode & 0o111
    assert (out / "tests" / "task_data.template.b64").is_file()


def test_critpt_challenges_export_with_their_braces_carried(tmp_path, wheel):
    if not CRITPT.exists():
        pytest.skip("CritPt public data is not available")
    out = tmp_path / "critpt"
    done = export(sorted(CRITPT.glob("*.json")), out, wheel=wheel)
    assert (done.tasks, done.task_format) == (70, "critpt")
    model = _task_data_model(out)
    for row in _rows(out / "tasks.jsonl"):
        model.model_validate(row["task_data"])
        assert "{{" not in row["task_data"]["instruction"]
        assert "{{" not in row["task_data"]["solution"]


# --- refusals, naming the task and the field ----------------------------------------------------


def _row(problem_id: str, source: str = "def f(x):\n    return x\n") -> dict:
    value = {"format": "critpt-value-v1", "value": ["int", "1"]}
    return {
        "schema_version": 1,
        "problem_id": problem_id,
        "reference_source": source,
        "entrypoint": "f",
        "test_cases": [{"args": [value], "expected": {"kind": "value", "value": value}}],
    }


def _write_rows(path: Path, *rows: dict) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_export_refuses_what_it_cannot_carry(tmp_path, wheel):
    duplicate = _write_rows(tmp_path / "dup.jsonl", _row("a"), _row("a"))
    with pytest.raises(TaskError, match=r"'a'.*problem_id.*two tasks"):
        export([duplicate], tmp_path / "o1", wheel=wheel)
    invalid = _write_rows(tmp_path / "bad-id.jsonl", _row("-starts-with-dash"))
    with pytest.raises(TaskError, match=r"problem_id.*Harbor task id"):
        export([invalid], tmp_path / "o2", wheel=wheel)
    fstring = _write_rows(
        tmp_path / "f.jsonl", _row("fs", 'def f(x):\n    return x if f"{{x}}" else x\n')
    )
    with pytest.raises(TaskError, match=r"'fs'.*reference_source.*f-string"):
        export([fstring], tmp_path / "o3", wheel=wheel)
    broken = _write_rows(tmp_path / "broken.jsonl", {**_row("b"), "entrypoint": 3})
    with pytest.raises(TaskError, match=r"'b'.*entrypoint"):
        export([broken], tmp_path / "o4", wheel=wheel)
    if CRITPT.exists():
        with pytest.raises(InputError, match="mixes"):
            export([PUBLIC, CRITPT / "Challenge_1.json"], tmp_path / "o5", wheel=wheel)
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("")
    with pytest.raises(InputError, match="not an empty folder"):
        export([PUBLIC], tmp_path / "full", wheel=wheel)
    with pytest.raises(InputError, match="--org"):
        export([PUBLIC], tmp_path / "o6", org="a/b", wheel=wheel)
    with pytest.raises(InputError, match="--wheel"):
        export([PUBLIC], tmp_path / "o7", wheel=PUBLIC)


def test_the_cli_names_the_task_and_field_and_exits_2(tmp_path, wheel, capsys):
    duplicate = _write_rows(tmp_path / "dup.jsonl", _row("a"), _row("a"))
    args = ["export-harbor", str(duplicate), "--out", str(tmp_path / "o"), "--wheel", str(wheel)]
    assert main(args) == 2
    assert "task 'a': field 'problem_id'" in capsys.readouterr().err
    # A folder, as every command takes one: an acceptance set's tasks.jsonl, not its candidates
    folder = PUBLIC.parent
    ok = ["export-harbor", str(folder), "--out", str(tmp_path / "ok"), "--wheel", str(wheel)]
    assert main([*ok, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["tasks"] == len(_rows(PUBLIC)) and summary["format"] == "task_data"


# --- braces -------------------------------------------------------------------------------------


def test_braces_in_prose_and_source_are_carried_unchanged_in_meaning():
    assert safe_prose(r"m{{\ddot z}_1} and {{{x}}}") == r"m{ {\ddot z}_1} and { { {x}}}"
    source = (
        'def f(x):\n    """<{{{x}}}>"""\n    s = "a{{b}}" + r"{{raw}}"  # {{c}}\n'
        '    return {"k": {"v": s}}\n'
    )
    safe = safe_source(source)
    assert "{{" not in safe
    namespace: dict = {}
    exec(compile(safe, "<safe>", "exec"), namespace)
    assert namespace["f"].__doc__ == "<{{{x}}}>"
    assert namespace["f"](1) == {"k": {"v": "a{{b}}{{raw}}"}}
    with pytest.raises(BracesError, match="f-string"):
        safe_source('x = f"{{1}}"\n')
    with pytest.raises(BracesError, match="outside a string"):
        safe_source("y = {{1: 2}[1]}\n")


# --- rendered as Gym's prepare would, verified through the runner stand-in -----------------------


@pytest.fixture(scope="module")
def public_tasks(tmp_path_factory, wheel) -> Path:
    """The public set exported and prepared: one task folder per row."""
    root = tmp_path_factory.mktemp("harbor")
    export([PUBLIC], root / "dataset", org="critpt", wheel=wheel)
    prepare(root / "dataset", root / "tasks")
    return root / "tasks"


def test_prepare_renders_every_task_with_nothing_left_to_fill(public_tasks):
    folders = sorted(p for p in public_tasks.iterdir() if p.is_dir())
    assert len(folders) == len(_rows(PUBLIC))
    for folder in folders:
        instruction = (folder / "instruction.md").read_text()
        assert "{{" not in instruction and "## How to answer" in instruction
        assert (folder / "solution" / "answer.md").read_text().startswith("```python\n")
        assert f'name = "critpt/{folder.name}"' in (folder / "task.toml").read_text()
        assert json.loads((folder / "task_data.json").read_text())["problem_id"] == folder.name


def test_critpt_challenges_prepare_too(tmp_path, wheel):
    if not CRITPT.exists():
        pytest.skip("CritPt public data is not available")
    export(sorted(CRITPT.glob("*.json")), tmp_path / "dataset", org="critpt", wheel=wheel)
    folders = prepare(tmp_path / "dataset", tmp_path / "tasks")
    assert len(folders) == 70


def _candidates() -> list[dict]:
    return [
        r for r in _rows(PUBLIC.parent / "candidates.jsonl") if r["kind"] in ("reference", "canary")
    ]


def test_the_oracle_and_a_canary_through_the_runner(public_tasks, tmp_path):
    """The runner's own path: a separate process, arguments by signature, reward.json."""
    task = public_tasks / "pub-at-e1-selection-rules"
    workspace, rewards = tmp_path / "app", tmp_path / "logs"
    workspace.mkdir()
    shutil.copy(task / "solution" / "answer.md", workspace / "answer.md")
    done = run_verifier(task, workspace, rewards)
    assert (done.exit_code, done.reward) == (0, 1.0), done.stderr
    assert done.metrics["passed"] == 1 and done.metrics["scored"] == 1
    (canary,) = [c for c in _candidates() if c["task_id"] == task.name and c["kind"] == "canary"][
        :1
    ]
    # answer.md, as the instruction asks, wins over the reply Gym always passes as response
    reply = "I have written my answer to answer.md."
    for response in (reply, "", {"output_text": canary["response"]}):
        done = run_verifier(task, workspace, rewards, response)
        assert (done.exit_code, done.reward) == (0, 1.0), done.stderr
        assert "answer from: answer.md" in done.stderr
    # Without the file, the response is graded.
    (workspace / "answer.md").unlink()
    done = run_verifier(task, workspace, rewards, {"output_text": canary["response"]})
    assert (done.exit_code, done.reward) == (0, 0.0), done.stderr
    done = run_verifier(task, workspace, rewards, canary["response"])
    assert (done.exit_code, done.reward) == (0, 0.0), done.stderr
    assert "answer from: response" in done.stderr
    (workspace / "answer.md").write_text("  \n")  # a blank file is no answer
    oracle = (task / "solution" / "answer.md").read_text()
    done = run_verifier(task, workspace, rewards, oracle)
    assert (done.exit_code, done.reward) == (0, 1.0), done.stderr


def test_plain_harbor_runs_tests_test_sh_and_writes_the_reward_file(public_tasks, tmp_path):
    """Plain Harbor (no Gym runner): tests/test.sh reads the prepared task_data.b64, grades
    answer.md in the workspace and writes reward.json, removing one the agent planted."""
    import os
    import subprocess

    task = public_tasks / "pub-at-e1-selection-rules"
    workspace, rewards = tmp_path / "app", tmp_path / "logs"
    workspace.mkdir()
    rewards.mkdir()
    (rewards / "reward.txt").write_text("1.0")  # planted
    shutil.copy(task / "solution" / "answer.md", workspace / "answer.md")
    env = {**os.environ, "CRITPT_WORKSPACE": str(workspace), "CRITPT_REWARD_DIR": str(rewards)}
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"
    done = subprocess.run(
        ["sh", str(task / "tests" / "test.sh")], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert not (rewards / "reward.txt").exists()
    metrics = json.loads((rewards / "reward.json").read_text())
    assert metrics["reward"] == 1.0 and metrics["scored"] == 1.0
    (workspace / "answer.md").write_text("no code here")
    done = subprocess.run(
        ["sh", str(task / "tests" / "test.sh")], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert json.loads((rewards / "reward.json").read_text())["reward"] == 0.0


@pytest.fixture(scope="module")
def one_grader():
    """One warm Grader on a loop of its own, standing in for the Grader each verifier run
    opens (the verdicts are the same; a fresh sandbox per answer would take minutes)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    grader = Grader()

    def grade(task, answer, *, settings=None):
        return asyncio.run_coroutine_threadsafe(grader.grade(task, answer), loop).result()

    yield grade
    asyncio.run_coroutine_threadsafe(grader.aclose(), loop).result()
    loop.call_soon_threadsafe(loop.stop)
    thread.join()


@pytest.mark.slow  # every reference and canary of the public set
def test_every_reference_scores_1_and_every_canary_0_with_and_without_response(
    public_tasks, tmp_path, one_grader, monkeypatch
):
    """Each answer goes through the task's own tests/verifier.py, as the runner calls it,
    twice: as ``response`` and as ``answer.md`` in the workspace (no response); only the
    Grader is shared between answers."""
    monkeypatch.setattr(verifier_module, "grade", one_grader)
    wrong = []
    for index, candidate in enumerate(_candidates()):
        folder = public_tasks / candidate["task_id"]
        verify = _verifier(folder)
        task_data = json.loads((folder / "task_data.json").read_text())
        workspace = tmp_path / f"ws{index}"
        workspace.mkdir()
        given = verify(workspace, task_data, candidate["response"])
        (workspace / "answer.md").write_text(candidate["response"])
        from_file = verify(workspace, task_data)
        want = 1.0 if candidate["kind"] == "reference" else 0.0
        for how, metrics in (("response", given), ("answer.md", from_file)):
            if metrics["reward"] != want or not metrics["scored"]:
                wrong.append((candidate["task_id"], candidate["kind"], how, metrics))
    assert wrong == []


def _verifier(folder: Path):
    spec = importlib.util.spec_from_file_location(
        f"verifier_{folder.name}", folder / "tests" / "verifier.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.verify


# --- hostile agents -----------------------------------------------------------------------------

PLANT = """
```python
import json, os, shutil

def e1_allowed(*args):
    for folder in ({workspace!r}, {rewards!r}, os.getcwd()):
        for name, how in (("reward.json", "file"), ("reward.txt", "dir")):
            path = os.path.join(folder, name)
            try:
                if how == "file":
                    with open(path, "w") as out:
                        json.dump({{"reward": 1.0}}, out)
                else:
                    os.makedirs(path, exist_ok=True)
                os.symlink("/etc/hostname", path + ".lnk")
            except OSError:
                pass
    return "wrong"
```
"""


@pytest.mark.parametrize("left", ["file", "link", "folder"])
def test_reward_files_planted_by_the_agent_or_the_candidate_change_nothing(
    public_tasks, tmp_path, left
):
    task = public_tasks / "pub-at-e1-selection-rules"
    workspace, rewards = tmp_path / "app", tmp_path / "logs"
    workspace.mkdir()
    rewards.mkdir()
    # What the agent left behind: a reward of 1 in every form, in both folders.
    for folder in (workspace, rewards):
        for name in ("reward.json", "reward.txt"):
            path = folder / name
            if left == "file":
                path.write_text('{"reward": 1.0}' if name.endswith("json") else "1.0")
            elif left == "link":
                target = tmp_path / f"one-{folder.name}-{name}"
                target.write_text('{"reward": 1.0}' if name.endswith("json") else "1.0")
                path.symlink_to(target)
            else:
                path.mkdir()
                (path / "reward").write_text("1.0")
    # The candidate tries to plant rewards while it is graded, and answers wrongly.
    answer = PLANT.format(workspace=str(workspace), rewards=str(rewards))
    (workspace / "answer.md").unlink(missing_ok=True)
    done = run_verifier(task, workspace, rewards, answer)
    assert (done.exit_code, done.reward) == (0, 0.0), done.stderr
    assert json.loads((rewards / "reward.json").read_text())["reward"] == 0.0
    assert not (rewards / "reward.txt").exists()


@pytest.mark.sandbox
def test_without_bubblewrap_the_verifier_runs_weaker_and_says_so(public_tasks, tmp_path):
    """A container without user namespaces: no bubblewrap on PATH. The candidate still runs
    apart (another uid, rlimits, a fresh process), the verdict is the same, and the metrics
    say the containment was weak."""
    task = public_tasks / "pub-at-e1-selection-rules"
    workspace, rewards = tmp_path / "app", tmp_path / "logs"
    workspace.mkdir()
    shutil.copy(task / "solution" / "answer.md", workspace / "answer.md")
    no_bwrap = tmp_path / "bin"
    no_bwrap.mkdir()
    env = {"PATH": str(no_bwrap), "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    env["PYTHONPATH"] = str(REPO)  # the tree under test, not another install
    done = run_verifier(task, workspace, rewards, env=env)
    assert (done.exit_code, done.reward) == (0, 1.0), done.stderr
    assert done.metrics["strong_containment"] == 0.0
    assert "WARNING" in done.stderr
