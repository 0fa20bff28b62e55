"""Grading candidates and judging verdicts against expectations (with a scripted grader)."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from critpt_grader.acceptance.run import expectation_met, grade_all, select_candidates
from critpt_grader.acceptance.sets import Expected, load_set
from critpt_grader.result import GradeResult
from critpt_grader.verdict import Category
from tests.support.acceptance_fakes import (
    MINI_SET,
    ScriptedGrader,
    candidate,
    fake_loader,
    fake_task,
)

categories = st.sampled_from(list(Category))


@settings(max_examples=200, deadline=None)
@given(
    category=categories,
    outcome=st.sampled_from(["scored", "unscorable", "failure"]),
    reward=st.sampled_from([0.0, 1.0, 0.5]),
    expected_category=st.none() | categories,
)
def test_met_iff_outcome_and_reward_equal_and_category_when_given(
    category, outcome, reward, expected_category
):
    result = GradeResult.of(category)
    expect = Expected(outcome, reward, expected_category and str(expected_category))
    should = (
        result.outcome == outcome
        and result.reward == reward
        and (expected_category is None or expected_category == category)
    )
    assert expectation_met(expect, result) is should


def test_a_right_outcome_with_the_wrong_category_is_not_met():
    result = GradeResult.of(Category.CANDIDATE_TIMEOUT)
    assert not expectation_met(Expected("scored", 0.0, "candidate_exception"), result)
    assert expectation_met(Expected("scored", 0.0, None), result)


def _mini():
    return load_set(MINI_SET, load_tasks=fake_loader)


def test_selection_filters_by_kind():
    selected = select_candidates([_mini()], kinds=["canary"])
    assert selected and {c.kind for c, _, _ in selected} == {"canary"}


def test_task_filter_keeps_candidates_graded_against_the_task():
    selected = select_candidates([_mini()], task_ids=["mini-kinetic-energy"])
    pairs = {(c.task_id, c.against) for c, _, _ in selected}
    # the alternate written for the variant but replayed against the primary stays in
    assert ("mini-kinetic-energy-vis-viva", "mini-kinetic-energy") in pairs
    assert all("mini-kinetic-energy" in pair for pair in pairs)


def test_selection_pairs_each_candidate_with_the_task_it_is_graded_against():
    for c, task, labels in select_candidates([_mini()]):
        assert task.problem_id == c.against
        if c.against == "mini-inverse":
            assert labels == ("float", "exception")


def test_grade_all_keeps_input_order_and_bounds_concurrency():
    selected = [(candidate(line=i), fake_task("t1"), ()) for i in range(1, 13)]
    grader = ScriptedGrader(delay=0.01)
    seen = []
    results = asyncio.run(grade_all(selected, grader, jobs=3, on_done=seen.append))
    assert [g.candidate.line for g in results] == list(range(1, 13))
    assert len(seen) == 12
    assert grader.most_in_flight == 3
    assert all(g.met for g in results)


def test_a_grader_exception_is_recorded_and_never_met():
    def verdict(task, response):
        raise RuntimeError("backend exploded")

    selected = [(candidate(), fake_task("t1"), ())]
    (result,) = asyncio.run(grade_all(selected, ScriptedGrader(verdict), jobs=1))
    assert result.result is None
    assert result.error == "RuntimeError: backend exploded"
    assert not result.met


def test_jobs_must_be_positive():
    with pytest.raises(ValueError, match="jobs"):
        asyncio.run(grade_all([], ScriptedGrader(), jobs=0))
