"""Replays the public acceptance set through the real grader and the local sandbox: every
reference and equivalent passes, every canary and alternate is graded as declared, every
fault scores 0 — the same run researchers make with ``critpt-grader acceptance``."""

from __future__ import annotations

import json

import pytest

from critpt_grader.commands.acceptance import acceptance
from critpt_grader.settings import Settings
from tests.support.paths import CRITPT_PUBLIC, REPO

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

PUBLIC = REPO / "fixtures" / "public"
# Shorter limits than the defaults keep the hang faults cheap; every verdict is the same.
SETTINGS = Settings(case_seconds=10, wall_seconds=45)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("acceptance")
    sets = [PUBLIC]
    if CRITPT_PUBLIC.exists():
        sets.append(REPO / "acceptance" / "critpt-example")
    code = acceptance(sets, out=out, settings=SETTINGS)
    data = json.loads((out / "report.json").read_text())
    return code, data, out


def _candidates(data):
    return data["candidates"]


def test_every_expectation_of_the_public_set_is_met(report):
    code, data, out = report
    missed = [
        (c["task_id"], c["kind"], c.get("observed")) for c in _candidates(data) if not c["met"]
    ]
    assert missed == [] and code == 0
    assert {p.name for p in out.iterdir()} >= {"report.json", "report.md", "report.html"}


@pytest.mark.parametrize("kind", ["canary", "alternate", "fault"])
def test_each_rejecting_kind_was_replayed(report, kind):
    _, data, _ = report
    lines = [
        json.loads(line)
        for line in (PUBLIC / "candidates.jsonl").read_text().splitlines()
        if line.strip()
    ]
    expected = sum(1 for line in lines if line["kind"] == kind)
    graded = [c for c in _candidates(data) if c["kind"] == kind and c["set"] == "public"]
    assert expected > 0 and len(graded) == expected
    assert all(c["met"] for c in graded)
    if kind in ("canary", "fault"):
        assert all(
            c["result"]["reward"] == 0 and c["result"]["outcome"] == "scored" for c in graded
        )
