"""The critpt_grader resources server as NeMo Gym runs it: its config, its example rows, and
/verify and /aggregate_metrics through the app Gym builds (``setup_webserver``), with a mocked
``ServerClient`` as Gym's own server tests use. Needs ``nemo_gym`` (Python >= 3.12) and this
server's requirements (critpt-grader[server]); skipped elsewhere.

    pytest resources_servers/critpt_grader/tests   # from a NeMo Gym checkout
"""

from __future__ import annotations

import json
from pathlib import Path
from unittest.mock import MagicMock

import pytest

pytest.importorskip("nemo_gym", reason="NeMo Gym is not installed (Python >= 3.12)")

from fastapi.testclient import TestClient
from nemo_gym.openai_utils import NeMoGymResponse
from nemo_gym.server_utils import ServerClient
from omegaconf import OmegaConf

from critpt_grader.server.gym import CritPtGraderConfig, CritPtGraderResourcesServer

HERE = Path(__file__).resolve().parents[1]
CONFIG = HERE / "configs" / "critpt_grader.yaml"
EXAMPLE = HERE / "data" / "example.jsonl"


def rows() -> list[dict]:
    return [json.loads(line) for line in EXAMPLE.read_text().splitlines() if line.strip()]


def rollout(index: int) -> dict:
    """Gym's keys naming a rollout (echoed; /aggregate_metrics aligns rows by them)."""
    return {"_ng_task_index": 0, "_ng_rollout_index": index}


def response(text: str) -> dict:
    return NeMoGymResponse.model_validate(
        {
            "id": "resp-1",
            "created_at": 0,
            "model": "policy",
            "object": "response",
            "parallel_tool_calls": False,
            "tool_choice": "none",
            "tools": [],
            "status": "completed",
            "output": [
                {
                    "id": "msg-1",
                    "type": "message",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": text, "annotations": []}],
                }
            ],
        }
    ).model_dump(mode="json", exclude_none=True)


@pytest.fixture(scope="module")
def http(tmp_path_factory):
    overrides = {"critpt_grader_tasks": [], "critpt_grader_journal_dir": None}
    merged = OmegaConf.merge(OmegaConf.load(CONFIG), OmegaConf.create(overrides))
    block = merged["critpt_grader_resources_server"]["resources_servers"]["critpt_grader"]
    config = CritPtGraderConfig.model_validate(
        OmegaConf.to_container(block, resolve=True)
        | {"name": "critpt_grader_resources_server", "host": "127.0.0.1", "port": 0}
        # in-process: no sandbox needed for the server's own test (production: local)
        | {"settings": {"backend": "in-process"}}
    )
    server = CritPtGraderResourcesServer(config=config, server_client=MagicMock(spec=ServerClient))
    with TestClient(server.setup_webserver()) as client:
        yield client


def test_example_rows_are_gym_rows():
    found = rows()
    assert 1 <= len(found) <= 10
    for row in found:
        assert row["responses_create_params"]["input"][0]["role"] == "user"
        assert row["task_data"]["schema_version"] == 1


def test_the_reference_scores_1_and_a_wrong_answer_0(http):
    row = rows()[0]
    task = row["task_data"]
    solution = task["reference_source"].rstrip() + "\n"
    if task.get("reference_entrypoint") not in (None, task["entrypoint"]):
        solution += f"{task['entrypoint']} = {task['reference_entrypoint']}\n"
    right = http.post(
        "/verify", json={**row, **rollout(0), "response": response(f"```python\n{solution}```")}
    )
    assert right.status_code == 200
    assert (right.json()["reward"], right.json()["category"]) == (1.0, "passed")
    entry = task["entrypoint"]
    wrong_source = f"def {entry}(*args, **kwargs):\n    return None\n"
    wrong = http.post(
        "/verify", json={**row, **rollout(1), "response": response(f"```python\n{wrong_source}```")}
    )
    assert wrong.json()["reward"] == 0.0 and wrong.json()["outcome"] == "scored"
    metrics = http.post(
        "/aggregate_metrics", json={"verify_responses": [right.json(), wrong.json()]}
    ).json()
    assert metrics["agent_metrics"]["scored"] == 2


def test_a_task_typo_is_a_masked_row_never_a_crash(http):
    row = rows()[0]
    typo = {**row, "task_data": {**row["task_data"], "test_case": []}}
    out = http.post("/verify", json={**typo, "response": response("```python\npass\n```")})
    assert out.status_code in (200, 422)
    if out.status_code == 200:
        assert out.json()["mask_sample"] is True
