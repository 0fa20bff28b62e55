"""Check the NeMo Gym integration in a Python 3.12 venv that has ``nemo-gym`` (0.4.0).

    python3.12 -m venv /tmp/ng && /tmp/ng/bin/pip install "nemo-gym==0.4.0" \
        sympy numpy mpmath scipy lark pydantic-settings rich markdown-it-py
    /tmp/ng/bin/python integrations/nemo_gym/check_nemo_gym.py

Not part of the pytest run (nemo-gym needs Python >= 3.12 and pulls in ray, pandas, wandb...;
the project's own runtime is 3.11). It loads the config YAML as NeMo Gym does (OmegaConf, the
server's config model), builds :class:`critpt_grader.server.gym.CritPtGraderResourcesServer` with a
mocked ``ServerClient`` (as NeMo Gym's own server tests do), and sends ``/verify`` rows built
from NeMo Gym's request models (``NeMoGymResponseCreateParamsNonStreaming``,
``NeMoGymResponse``) through the app NeMo Gym builds (``setup_webserver``): a correct row, a
wrong one, an incomplete response, the stock ``accuracy``/``timeout_rate`` fields, null keys
echoed, a task typo (a masked ``verifier_error`` row, not a 4xx), a problem_id-only CritPt row
(when the shared CritPt data is present), ``/aggregate_metrics``, and the grader closed at
shutdown. Exits 0 when every check holds.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from unittest.mock import MagicMock

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from fastapi.testclient import TestClient  # noqa: E402
from nemo_gym.openai_utils import (  # noqa: E402
    NeMoGymResponse,
    NeMoGymResponseCreateParamsNonStreaming,
)
from nemo_gym.server_utils import ServerClient  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402

from critpt_grader.server.gym import (  # noqa: E402
    CritPtGraderConfig,
    CritPtGraderResourcesServer,
    CritPtGraderVerifyRequest,
)

CONFIG = REPO / "integrations/nemo_gym/resources_servers/critpt_grader/configs/critpt_grader.yaml"
EXAMPLE = REPO.parent / "shared/critpt-public/example_challenges"


def response(text: str, status: str = "completed") -> NeMoGymResponse:
    return NeMoGymResponse.model_validate(
        {
            "id": "resp-1",
            "created_at": 0,
            "model": "policy",
            "object": "response",
            "parallel_tool_calls": False,
            "tool_choice": "none",
            "tools": [],
            "status": status,
            "incomplete_details": {"reason": "max_output_tokens"}
            if status != "completed"
            else None,
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
    )


def request(task: dict, text: str, status: str = "completed", **extra) -> dict:
    params = NeMoGymResponseCreateParamsNonStreaming(input=[{"role": "user", "content": "q"}])
    body = CritPtGraderVerifyRequest(
        responses_create_params=params, response=response(text, status), **task, **extra
    )
    return body.model_dump(mode="json", exclude_none=True)


def main() -> int:
    journal = tempfile.mkdtemp(prefix="critpt-gym-")
    overrides = {
        "critpt_grader_tasks": [str(EXAMPLE)] if EXAMPLE.exists() else [],
        "critpt_grader_journal_dir": journal,
    }
    global_config = OmegaConf.merge(OmegaConf.load(CONFIG), OmegaConf.create(overrides))
    server_dict = global_config["critpt_grader_resources_server"]["resources_servers"][
        "critpt_grader"
    ]
    settings = {"backend": "in-process"}
    config = CritPtGraderConfig.model_validate(
        OmegaConf.to_container(server_dict, resolve=True)
        | {"name": "critpt_grader_resources_server", "host": "127.0.0.1", "port": 0}
        | {"settings": settings}
    )
    server = CritPtGraderResourcesServer(config=config, server_client=MagicMock(spec=ServerClient))
    rows = [json.loads(line) for line in (REPO / "fixtures/public/tasks.jsonl").open()][:1]
    task = {"task_data": rows[0]["task_data"]}
    candidates = [json.loads(line) for line in (REPO / "fixtures/public/candidates.jsonl").open()]
    mine = [c for c in candidates if c["against"] == task["task_data"]["problem_id"]]
    right = next(c for c in mine if c["kind"] == "reference")["response"]
    wrong = next(c for c in mine if c["kind"] == "canary")["response"]
    checks: list[tuple[str, bool]] = []
    with TestClient(server.setup_webserver()) as http:
        out = http.post(
            "/verify", json=request(task, right, _ng_task_index=0, _ng_rollout_index=0)
        ).json()
        checks.append(("correct row: 1", (out["reward"], out["category"]) == (1.0, "passed")))
        checks.append(("_ng_ keys echoed", out.get("_ng_task_index") == 0))
        checks.append(
            ("stock fields", (out.get("accuracy"), out.get("timeout_rate")) == (1.0, 0.0))
        )
        nulls = http.post(
            "/verify", json={**request(task, right, _ng_task_index=0), "note": None}
        ).json()
        checks.append(("null keys echoed", "note" in nulls and nulls["note"] is None))
        bad = http.post(
            "/verify", json=request(task, wrong, _ng_task_index=0, _ng_rollout_index=1)
        ).json()
        checks.append(("wrong row: 0", (bad["reward"], bad["outcome"]) == (0.0, "scored")))
        cut = http.post(
            "/verify",
            json=request(task, right, status="incomplete", _ng_task_index=0, _ng_rollout_index=2),
        ).json()
        checks.append(
            (
                "incomplete: failure",
                cut["_ng_failure_class"] == "critpt_grader:response_incomplete"
                and cut["mask_sample"] is True,
            )
        )
        typo = {"task_data": dict(task["task_data"], test_case=[])}
        masked = http.post("/verify", json=request(typo, right))
        error = masked.json()
        checks.append(
            (
                "task typo: a masked verifier_error row naming the field, never a 4xx",
                masked.status_code == 200
                and error["mask_sample"] is True
                and error["_ng_failure_class"] == "verifier_error"
                and error["critpt_grader"]["error"]["field"] == "task_data.test_case",
            )
        )
        if EXAMPLE.exists():
            problem = next(
                p
                for p in json.loads((EXAMPLE / "quantum_error_correction.json").read_text())[
                    "problems"
                ]
                if p["problem_id"] == "quantum_error_correction_main"
            )
            gold = problem["answer_code"].replace("def real_answer(", "def answer(")
            stock = {"problem_id": "quantum_error_correction_main"}
            critpt = http.post("/verify", json=request(stock, f"```python\n{gold}\n```")).json()
            checks.append(("problem_id-only CritPt row: 1", critpt["reward"] == 1.0))
        metrics = http.post("/aggregate_metrics", json={"verify_responses": [out, bad, cut]}).json()
        agent = metrics["agent_metrics"]
        checks.append(
            (
                "aggregate_metrics: scored rows only",
                agent.get("scored") == 2
                and agent.get("failure") == 1
                and "pass@1/accuracy" in agent,
            )
        )
    # Leaving the TestClient ran the app's shutdown: the grader is closed.
    checks.append(("grader closed at shutdown", server._service.grader._closed))
    width = max(len(name) for name, _ in checks)
    for name, ok in checks:
        print(f"{name:<{width}}  {'ok' if ok else 'FAILED'}")
    failed = [name for name, ok in checks if not ok]
    print(f"{len(checks) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
