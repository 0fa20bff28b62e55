"""The resources server over real HTTP: a real uvicorn server on loopback (a subprocess),
real requests (issue 11, "done when")."""

from __future__ import annotations

import asyncio
import json
import socket
import sqlite3
import time
from pathlib import Path

import httpx
import pytest

from tests.support.grading import HALF, task_row, value_case
from tests.support.paths import CRITPT_PUBLIC
from tests.support.server_harness import RunningServer, completed, fenced

EXAMPLE = CRITPT_PUBLIC / "example_challenges"
CRITPT_MAIN = "quantum_error_correction_main"
BODY_CAP = 65_536


def row(task: dict, response: dict, **extra) -> dict:
    return {**task, "response": response, **extra}


def gated_half(folder: Path) -> tuple[dict, Path, Path]:
    """A task whose reference (run in the in-process server) creates ``started`` when it
    runs, then waits until the test creates ``gate`` (60 s at most): its preflight holds
    until the test lets it go. Its own folder makes it its own task (its own preflight)."""
    started, gate = folder / "started", folder / "gate"
    reference = (
        "import os, time\n\n"
        "def half(n):\n"
        f"    open({str(started)!r}, 'a').close()\n"
        "    deadline = time.monotonic() + 60\n"
        f"    while not os.path.exists({str(gate)!r}) and time.monotonic() < deadline:\n"
        "        time.sleep(0.01)\n"
        "    return n / 2\n"
    )
    task = task_row(reference, "half", [value_case([["int", "1"]], ["float", (0.5).hex()])])
    return task, started, gate


def wait_for(condition, seconds: float = 60.0, what: str = "the condition") -> None:
    """Poll ``condition()`` until it is true, or fail once ``seconds`` have passed."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"{what} did not hold within {seconds} s"
        time.sleep(0.01)


BROKEN_HALF = task_row(
    "def half(n):\n    return n / 3\n",
    "half",
    [value_case([["int", "1"]], ["float", (0.5).hex()])],
)


# A task the server holds and clients name by problem_id only: its answer stays hidden.
HIDDEN_VALUE = 0.123456789
HIDDEN = task_row(
    f"def third(n):\n    return {HIDDEN_VALUE!r}\n",
    "third",
    [value_case([["int", "1"]], ["float", HIDDEN_VALUE.hex()])],
)
# What would give it away: the value, its hex, and its difference from a wrong 0.5.
GIVEAWAYS = ("0.1234", "0.123", HIDDEN_VALUE.hex(), "0.3765", "0.377", "1.23", "3.77")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    journal = tmp_path_factory.mktemp("journal")
    hidden = tmp_path_factory.mktemp("hidden") / "hidden.jsonl"
    hidden.write_text(json.dumps(HIDDEN) + "\n")
    args = ["--backend", "in-process", "--journal", str(journal)]
    args += ["--max-body-bytes", str(BODY_CAP), "--tasks", str(hidden)]
    if EXAMPLE.exists():
        args += ["--tasks", str(EXAMPLE)]
    with RunningServer(*args) as running:
        running.journal = journal
        yield running


@pytest.fixture
def client(server):
    with httpx.Client(base_url=server.url, timeout=120) as http:
        yield http


def verdict(out: dict) -> tuple:
    return out["reward"], out["category"], out["outcome"], out["mask_sample"]


def test_a_correct_row_is_1_and_echoes_the_request(client):
    body = row(HALF, fenced("def half(n):\n    return n / 2"), _ng_task_index=7)
    body["_ng_rollout_index"] = 2
    body["_ng_failure_class"] = "stale from an earlier attempt"
    response = client.post("/verify", json=body)
    assert response.status_code == 200
    out = response.json()
    assert verdict(out) == (1.0, "passed", "scored", False)
    assert (out["failure_kind"], out["terminal"]) == (None, True)
    assert out["_ng_task_index"] == 7 and out["_ng_rollout_index"] == 2
    assert out["task_data"] == HALF["task_data"] and out["response"] == body["response"]
    assert out["responses_create_params"] == HALF["responses_create_params"]
    assert not any(key.startswith("_ng_failure") for key in out)  # a clean score
    assert out["problem_id"] == "test-half" and out["critpt_grader"]["row_id"]


def test_a_wrong_row_is_0(client):
    out = client.post("/verify", json=row(HALF, fenced("def half(n):\n    return n / 3"))).json()
    assert verdict(out) == (0.0, "candidate_mismatch", "scored", False)
    assert "_ng_failure_class" not in out


def test_an_incomplete_response_is_a_failure_to_regenerate(client):
    response = completed("```python\ndef half(n):\n    return n /")
    response["status"] = "incomplete"
    response["incomplete_details"] = {"reason": "max_output_tokens"}
    out = client.post("/verify", json=row(HALF, response)).json()
    assert verdict(out) == (0.0, "response_incomplete", "failure", True)
    assert out["failure_kind"] == "critpt_grader:response_incomplete"
    assert out["_ng_failure_class"] == "critpt_grader:response_incomplete"
    assert out["_ng_failure_subcategory"] == "response_incomplete"
    assert out["_ng_failure_terminal"] is False


def test_a_reference_fault_is_unscorable(client):
    out = client.post("/verify", json=row(BROKEN_HALF, fenced("def half(n): return n/2"))).json()
    assert verdict(out) == (0.0, "reference_mismatch", "unscorable", True)
    assert out["_ng_failure_class"] == "verifier_error"
    assert out["_ng_failure_subcategory"] == "reference_mismatch"
    assert out["_ng_failure_terminal"] is True


def test_a_task_typo_is_a_4xx_naming_the_field(client):
    body = row(HALF, fenced("def half(n):\n    return n / 2"))
    body["task_data"] = dict(body["task_data"], refrence_source="def half(n): return n")
    response = client.post("/verify", json=body)
    assert response.status_code == 422
    error = response.json()
    assert error["category"] == "task_invalid"
    assert error["field"] == "task_data.refrence_source"
    assert "Traceback" not in response.text and "return n / 2" not in response.text


def test_malformed_requests_are_4xx_with_a_category(client):
    cases = [
        (b"{not json", 400, "request_invalid", None),
        (b"[]", 422, "request_invalid", None),
        # responses_create_params is optional (as in batch): this row's fault is its task
        (json.dumps({"response": {}, "task_data": {}}).encode(), 422, "task_invalid", None),
        (json.dumps({"task_data": {}}).encode(), 422, "request_invalid", "response"),
        (
            json.dumps({"response": 3, "task_data": {}}).encode(),
            422,
            "request_invalid",
            "response",
        ),
        (
            json.dumps({"response": "x", "responses_create_params": [], "task_data": {}}).encode(),
            422,
            "request_invalid",
            "responses_create_params",
        ),
        (
            json.dumps({"responses_create_params": {}, "response": completed("x")}).encode(),
            422,
            "request_invalid",
            "task_data",
        ),
        (
            json.dumps(
                {"responses_create_params": {}, "response": completed("x"), "problem_id": "nope"}
            ).encode(),
            404,
            "unknown_problem_id",
            "problem_id",
        ),
    ]
    for content, status, category, field in cases:
        response = client.post(
            "/verify", content=content, headers={"content-type": "application/json"}
        )
        assert response.status_code == status, (content, response.text)
        error = response.json()
        assert error["category"] == category
        if field:
            assert error["field"] == field
        assert "Traceback" not in response.text
    assert (
        client.post("/verify", content=b'{"responses_create_params": {}}').json()["field"]
        == "response"
    )
    missing = client.get("/no-such-route")
    assert missing.status_code == 404 and missing.json()["category"] == "not_found"


def test_an_oversized_body_is_413_declared_or_streamed(client):
    body = row(HALF, fenced("def half(n):\n    return n / 2\n" + "#" * BODY_CAP))
    response = client.post("/verify", json=body)
    assert response.status_code == 413
    assert response.json()["category"] == "body_too_large"
    data = json.dumps(body).encode()

    def chunks():  # no Content-Length: counted as it streams in
        for start in range(0, len(data), 8192):
            yield data[start : start + 8192]

    streamed = client.post("/verify", content=chunks())
    assert streamed.status_code == 413 and streamed.json()["category"] == "body_too_large"


def test_critpt_worked_example_by_problem_id_gold_and_canary(client):
    if not EXAMPLE.exists():
        pytest.skip(f"CritPt public data absent ({EXAMPLE})")
    problem = next(
        p
        for p in json.loads((EXAMPLE / "quantum_error_correction.json").read_text())["problems"]
        if p["problem_id"] == CRITPT_MAIN
    )
    gold = problem["answer_code"].replace("def real_answer(", "def answer(")
    canary = gold.replace("F_logical = 1 - (", "F_logical = 1 + (")
    assert canary != gold
    stock = {  # the stock critpt data row's shape: no task, only its problem_id
        "problem_id": CRITPT_MAIN,
        "problem": problem["problem_description"],
        "code_template": problem["code_template"],
        "uuid": CRITPT_MAIN,
        "responses_create_params": {"input": [{"role": "user", "content": "..."}]},
    }
    good = client.post("/verify", json=row(stock, fenced(gold))).json()
    bad = client.post("/verify", json=row(stock, fenced(canary))).json()
    assert verdict(good) == (1.0, "passed", "scored", False), good["critpt_grader"]
    assert verdict(bad) == (0.0, "candidate_mismatch", "scored", False), bad["critpt_grader"]
    assert good["problem_id"] == CRITPT_MAIN and good["uuid"] == CRITPT_MAIN


def _raw_post(url: str, body: dict) -> socket.socket:
    """Send a /verify request on a raw socket and leave it open (to close it mid-grade)."""
    host, port = url.removeprefix("http://").split(":")
    data = json.dumps(body).encode()
    sock = socket.create_connection((host, int(port)))
    head = (
        f"POST /verify HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(data)}\r\n\r\n"
    )
    sock.sendall(head.encode() + data)
    return sock


def test_a_client_that_disconnects_cancels_only_its_own_row(server, tmp_path):
    gated, started, gate = gated_half(tmp_path)
    metrics = httpx.get(f"{server.url}/metrics").json()
    answer = fenced("def half(n):\n    return n / 2")
    leaving = _raw_post(server.url, row(gated, answer, _ng_task_index=100))
    wait_for(started.exists, what="its row started the task's preflight")

    async def others():
        async with httpx.AsyncClient(base_url=server.url, timeout=120) as http:
            sent = [
                http.post("/verify", json=row(gated, answer, _ng_task_index=101 + i))
                for i in range(8)
            ]
            pending = asyncio.gather(*sent)

            async def now() -> dict:
                return (await http.get("/metrics")).json()

            # All nine rows grading: the eight others wait on the same, still held preflight.
            while (await now())["in_flight"] < metrics["in_flight"] + 9:
                assert not pending.done(), "a row finished while the preflight was held"
                await asyncio.sleep(0.01)
            leaving.close()  # mid-grade: the preflight is still running
            while (await now())["cancelled"] == metrics["cancelled"]:  # the server saw it go
                await asyncio.sleep(0.01)
            assert not pending.done()
            gate.touch()  # now let the preflight finish
            return await pending

    responses = asyncio.run(asyncio.wait_for(others(), 120))
    assert [r.status_code for r in responses] == [200] * 8
    assert [r.json()["reward"] for r in responses] == [1.0] * 8
    after = httpx.get(f"{server.url}/metrics").json()
    assert after["cancelled"] == metrics["cancelled"] + 1
    with sqlite3.connect(server.journal / "journal.sqlite3") as db:
        states = dict(db.execute("SELECT state, COUNT(*) FROM rows GROUP BY state").fetchall())
    assert states.get("cancelled") == 1


@pytest.mark.slow  # starts a server of its own
def test_past_the_queue_a_row_is_answered_at_once_with_a_retryable_failure(tmp_path):
    gated, started, gate = gated_half(tmp_path)
    answer = fenced("def half(n):\n    return n / 2")
    with RunningServer("--backend", "in-process", "--max-in-flight", "1", "--max-queue", "0") as s:

        async def burst():
            async with httpx.AsyncClient(base_url=s.url, timeout=120) as http:
                # Warm: the in-process backend's first run imports SymPy in the server.
                assert (await http.post("/verify", json=row(HALF, answer))).status_code == 200
                first = asyncio.ensure_future(http.post("/verify", json=row(gated, answer)))
                while not started.exists():  # the first row holds the one slot
                    assert not first.done(), first.result().text
                    await asyncio.sleep(0.01)
                # The first row cannot finish before the gate opens: the second is answered
                # without waiting for the slot, or not until the gate opens by itself (60 s).
                # (another rollout: an identical request would wait for the first's verdict)
                second = await http.post("/verify", json=row(gated, answer, _ng_rollout_index=1))
                assert not first.done()
                gate.touch()
                return await first, second

        first, second = asyncio.run(asyncio.wait_for(burst(), 120))
        assert first.json()["reward"] == 1.0
        busy = second.json()
        assert second.status_code == 200  # answered while the first still held the slot
        assert verdict(busy) == (0.0, "provider_unavailable", "failure", True)
        assert busy["_ng_failure_class"] == "provider_unavailable"
        assert busy["_ng_failure_terminal"] is False and "busy" in busy["critpt_grader"]["reason"]
        assert httpx.get(f"{s.url}/metrics").json()["refused_busy"] == 1


def test_operator_routes(client):
    assert client.post("/seed_session", json={}).json() == {}
    assert client.get("/reverify_mode").json() == "stateless"
    health = client.get("/healthz").json()
    assert health["status"] == "ok" and health["backend"] == "in-process"
    metrics = client.get("/metrics").json()
    assert {"rows_graded", "by_category", "in_flight", "queued", "latency_seconds"} <= set(metrics)
    assert metrics["rows_graded"] >= 1 and metrics["latency_seconds"]["p50"] is not None


def test_aggregate_metrics_counts_scored_rows_only(client):
    answers = ["return n / 2", "return n / 3", "return n / 2"]
    rows = [
        client.post(
            "/verify", json=row(HALF, fenced(f"def half(n):\n    {a}"), _ng_task_index=0)
        ).json()
        for a in answers
    ]
    rows.append(client.post("/verify", json=row(BROKEN_HALF, fenced("x"), _ng_task_index=1)).json())
    stripped = [{k: v for k, v in r.items() if k not in ("response",)} for r in rows]
    out = client.post("/aggregate_metrics", json={"verify_responses": stripped}).json()
    agent = out["agent_metrics"]
    assert (agent["attempted"], agent["scored"], agent["unscorable"], agent["failure"]) == (
        4,
        3,
        1,
        0,
    )
    assert agent["pass@1/accuracy"] == pytest.approx(100 * 2 / 3)
    assert agent["pass@3/accuracy"] == 100.0
    assert agent["category/reference_mismatch"] == 1
    assert "pass@3/accuracy" in out["key_metrics"] and "majority@3/accuracy" in out["key_metrics"]


def test_aggregate_metrics_bodies_are_capped_at_a_few_mib(client):
    """A run's stripped rows fit (8 MiB by default); more is a 413 before the server parses
    it (the cap was 64 request bodies, 1 GiB)."""
    rows = [
        {"problem_id": f"p{i % 700}", "row": i, "reward": float(i % 2), "category": "passed"}
        for i in range(70 * 256)
    ]
    for r in rows:
        r["category"] = "passed" if r["reward"] else "candidate_mismatch"
    body = json.dumps({"verify_responses": rows})
    assert len(body) < 8 << 20
    out = client.post(
        "/aggregate_metrics", content=body, headers={"content-type": "application/json"}
    )
    assert out.status_code == 200, out.text
    agent = out.json()["agent_metrics"]
    assert agent["attempted"] == 70 * 256 and agent["problems@25"] == 700
    too_large = b'{"verify_responses": [' + b'{"reward": 1.0},' * (600_000) + b"{}]}"
    assert len(too_large) > 8 << 20
    refused = client.post(
        "/aggregate_metrics", content=too_large, headers={"content-type": "application/json"}
    )
    assert refused.status_code == 413
    assert client.get("/healthz").json()["status"] == "ok"


def test_a_retried_request_gets_its_verdict_back_not_a_second_row(client):
    body = row(HALF, fenced("def half(n):\n    return n / 2"), _ng_task_index=42)
    first = client.post("/verify", json=body).json()
    again = client.post("/verify", json=body).json()
    key = first["critpt_grader"]["request_key"]
    assert key.startswith("sha256:") and again["critpt_grader"]["request_key"] == key
    assert again["critpt_grader"]["row_id"] == first["critpt_grader"]["row_id"]
    assert verdict(again) == verdict(first) == (1.0, "passed", "scored", False)
    timings = first["critpt_grader"]["timings"]
    assert {"queue", "run", "compare", "total"} <= set(timings)  # where the row's time went
    stored = client.get(f"/verdict/{key}").json()
    assert (stored["row_id"], stored["state"], stored["category"]) == (
        first["critpt_grader"]["row_id"],
        "done",
        "passed",
    )
    assert stored["result"]["reward"] == 1.0


def test_concurrent_copies_of_one_request_are_graded_once(server):
    body = row(HALF, fenced("def half(n):\n    return n / 2  # concurrent"), _ng_task_index=43)

    async def both():
        async with httpx.AsyncClient(base_url=server.url, timeout=120) as http:
            return await asyncio.gather(*(http.post("/verify", json=body) for _ in range(3)))

    answers = [r.json() for r in asyncio.run(both())]
    assert len({a["critpt_grader"]["row_id"] for a in answers}) == 1
    assert {verdict(a) for a in answers} == {(1.0, "passed", "scored", False)}


def test_a_client_key_names_one_request(client, server):
    """Issue 30, item 1: a wrong answer sent with the key of a right one is refused (422),
    never given that verdict; nothing is graded or journaled for it."""
    right = row(HALF, fenced("def half(n):\n    return n / 2  # keyed"))
    wrong = row(HALF, fenced("def half(n):\n    return n / 3  # keyed"))
    headers = {"Idempotency-Key": "rollout-7"}
    first = client.post("/verify", json=right, headers=headers).json()
    assert verdict(first) == (1.0, "passed", "scored", False)
    assert first["critpt_grader"]["request_key"] == "rollout-7"  # as the client sent it
    rows_before = journal_rows(server.journal)
    refused = client.post("/verify", json=wrong, headers=headers)
    assert refused.status_code == 422
    error = refused.json()
    assert error["category"] == "idempotency_key_reused"
    assert (error["request_key"], error["first_request"]) == ("rollout-7", "graded")
    assert error["field"] == "Idempotency-Key" and "rollout-7" in error["detail"]
    assert "reward" not in error and "row_id" not in refused.text
    assert journal_rows(server.journal) == rows_before  # nothing journaled
    # The same body (whatever its key order and white space) is the same request.
    same = json.dumps(dict(reversed(list(right.items()))), indent=2)
    retry = client.post(
        "/verify", content=same, headers={**headers, "content-type": "application/json"}
    ).json()
    assert retry["critpt_grader"]["row_id"] == first["critpt_grader"]["row_id"]
    assert verdict(retry) == verdict(first)
    stored = client.get("/verdict/rollout-7").json()
    assert (stored["request_key"], stored["category"]) == ("rollout-7", "passed")
    # The body's own key is bound to it just the same.
    forged = client.post(
        "/verify",
        json=wrong,
        headers={"Idempotency-Key": retry["critpt_grader"]["request_key"]},
    ).json()
    assert forged["category"] == "idempotency_key_reused"
    missing = client.get("/verdict/no-such-request")
    assert missing.status_code == 404 and missing.json()["category"] == "unknown_request"
    for bad in ("x" * 201, "has space", "caf\u00e9".encode()):
        invalid = client.post("/verify", json=wrong, headers={"Idempotency-Key": bad})
        assert invalid.status_code == 422 and invalid.json()["field"] == "Idempotency-Key"


def test_a_key_in_flight_is_not_taken_by_another_body(server, tmp_path):
    gated, started, gate = gated_half(tmp_path)
    right = row(gated, fenced("def half(n):\n    return n / 2"))
    wrong = row(gated, fenced("def half(n):\n    return n / 3"))
    headers = {"Idempotency-Key": "in-flight-1"}

    async def go():
        async with httpx.AsyncClient(base_url=server.url, timeout=120) as http:
            first = asyncio.ensure_future(http.post("/verify", json=right, headers=headers))
            while not started.exists():  # the first request holds its task's preflight
                assert not first.done(), first.result().text
                await asyncio.sleep(0.01)
            second = await http.post("/verify", json=wrong, headers=headers)
            assert not first.done()  # refused at once, while the first is in flight
            gate.touch()
            return await first, second

    first, second = asyncio.run(asyncio.wait_for(go(), 120))
    assert first.json()["reward"] == 1.0
    assert second.status_code == 422
    assert second.json()["first_request"] == "in_flight"


def journal_rows(folder: Path) -> int:
    with sqlite3.connect(folder / "journal.sqlite3") as db:
        return db.execute("SELECT COUNT(*) FROM rows").fetchone()[0]


@pytest.mark.slow  # starts two servers of its own
def test_a_key_stays_bound_to_its_body_across_a_restart(tmp_path):
    right = row(HALF, fenced("def half(n):\n    return n / 2  # restart"))
    wrong = row(HALF, fenced("def half(n):\n    return n / 3  # restart"))
    headers = {"Idempotency-Key": "restart-1"}
    args = ("--backend", "in-process", "--journal", str(tmp_path))
    with RunningServer(*args) as first_run:
        first = httpx.post(f"{first_run.url}/verify", json=right, headers=headers, timeout=120)
    with RunningServer(*args) as second_run:
        again = httpx.post(f"{second_run.url}/verify", json=wrong, headers=headers, timeout=120)
        assert again.status_code == 422 and again.json()["first_request"] == "graded"
        retry = httpx.post(f"{second_run.url}/verify", json=right, headers=headers, timeout=120)
        stored = httpx.get(f"{second_run.url}/verdict/restart-1", timeout=60).json()
    assert retry.json()["critpt_grader"]["row_id"] == first.json()["critpt_grader"]["row_id"]
    assert retry.json()["reward"] == 1.0 and stored["category"] == "passed"
    assert journal_rows(tmp_path) == 1


def test_no_answer_reveals_a_hidden_expected_value(client):
    """Issue 30, item 2, as a client would try it: wrong answers to a task held by the
    server, the verdict fetched back, a key reused, an error: nothing carries the expected
    value or a difference from it (the default view, ``rules``)."""
    texts = []
    answers = ("return 0.5", "return [0.5, 0.5]", "return 'x + 1'", "return {'a': 1}")
    for number, answer in enumerate(answers):
        key = f"hidden-{number}"
        body = {"problem_id": "test-third", "response": fenced(f"def third(n):\n    {answer}")}
        response = client.post("/verify", json=body, headers={"Idempotency-Key": key})
        out = response.json()
        assert out["reward"] == 0.0 and out["outcome"] == "scored", out
        texts += [response.text, client.get(f"/verdict/{key}").text]
        reused = client.post(
            "/verify",
            json={**body, "_ng_rollout_index": 1},
            headers={"Idempotency-Key": key},
        )
        assert reused.status_code == 422
        texts.append(reused.text)
    (leaf,) = json.loads(texts[1])["result"]["cases"][0]["leaves"]
    assert leaf == {
        "path": "",
        "kind": "float",
        "status": "mismatch",
        "reason": "beyond rtol=5e-12 (default)",
        "tolerance": "rtol=5e-12 (default)",
        "tolerance_source": "default",
        "expected": None,
        "observed": None,
    }
    texts.append(client.post("/verify", json={"problem_id": "nope", "response": "x"}).text)
    for text in map(untimed, texts):
        for giveaway in GIVEAWAYS:
            assert giveaway not in text, (giveaway, text)


def untimed(text: str) -> str:
    """A response's JSON without its timings (numbers that could match anything)."""

    def drop(value):
        if isinstance(value, dict):
            return {k: drop(v) for k, v in value.items() if k not in ("timings", "seconds")}
        if isinstance(value, list):
            return [drop(v) for v in value]
        return value

    return json.dumps(drop(json.loads(text)))


def test_verify_takes_the_rows_batch_takes(client):
    """One input contract: a text response, and no responses_create_params, as in batch."""
    text = client.post(
        "/verify", json={**HALF, "response": "```python\ndef half(n):\n    return n / 2\n```"}
    )
    assert text.status_code == 200 and text.json()["reward"] == 1.0
    missing = client.post("/verify", json={**HALF})
    assert missing.status_code == 422
    assert missing.json()["detail"].startswith("the row has no response")


UNDECIDED = " + ".join(f"sp.sin({k}*x)**2 + sp.cos({k}*x)**2" for k in range(1, 21))
COSTLY_TASK = task_row(
    "import sympy as sp\n\ndef f(n):\n    return (sp.Integer(20),) * 3\n",
    "f",
    [value_case([["int", str(n)]], ["tuple", [["symbolic", "20"]] * 3]) for n in range(5)],
)


@pytest.mark.slow  # starts a server of its own
def test_a_costly_row_in_flight_does_not_hold_up_an_honest_one():
    """Issue 30, item 3, over HTTP: one fast and one slow comparison worker; while a row
    whose values are costly to compare (undecidable identities) spends its budget in the slow
    lane, an honest row is answered; the costly row still gets its verdict."""
    costly = row(
        COSTLY_TASK,
        fenced(
            "import sympy as sp\n\ndef f(n):\n"
            f"    x = sp.Symbol('x')\n    return ({UNDECIDED},) * 3"
        ),
    )
    env = {
        "CRITPT_GRADER_COMPARE_SECONDS": "3",
        "CRITPT_GRADER_COMPARE_WORKERS": "1",
        "CRITPT_GRADER_COMPARE_SLOW_WORKERS": "1",
    }
    with RunningServer("--backend", "in-process", env=env) as s:

        async def go():
            async with httpx.AsyncClient(base_url=s.url, timeout=300) as http:
                honest = row(HALF, fenced("def half(n):\n    return n / 2"))
                assert (await http.post("/verify", json=honest)).json()["reward"] == 1.0
                pending = asyncio.ensure_future(http.post("/verify", json=costly))

                async def slow_busy() -> bool:
                    lanes = (await http.get("/metrics")).json()["comparisons"]
                    return lanes["slow"]["busy"] == 1

                while not await slow_busy():  # past its first pass, in the slow lane
                    assert not pending.done(), pending.result().text
                    await asyncio.sleep(0.02)
                again = await http.post("/verify", json={**honest, "_ng_rollout_index": 1})
                assert not pending.done(), "the honest row waited for the costly one"
                return again.json(), (await pending).json()

        honest, slow = asyncio.run(asyncio.wait_for(go(), 300))
    assert honest["reward"] == 1.0
    assert slow["category"] == "comparator_uncertain", slow["critpt_grader"]["reason"]
