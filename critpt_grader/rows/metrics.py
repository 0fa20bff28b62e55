"""The pass@k / majority@k family over ``/verify`` rows, for ``POST /aggregate_metrics``,
``critpt-grader report`` and NeMo Gym alike.

``/aggregate_metrics`` follows the stock ``critpt`` server's keys: ``pass@{k}/accuracy``
(the unbiased combinatorial estimate for 0/1 rewards), ``pass@1[avg-of-{k}]/accuracy`` (the
mean of the first k rollouts) and ``majority@{k}/accuracy`` (the answer being the
``problem_id``, as there), in percent, with the highest k of each family as key metrics. Two
differences, both on purpose: they are computed over **scored rows only** (a row masked as
unscorable or failed says nothing about the model, so it neither counts as 0 nor shrinks a
task's k), and counts of attempted / scored / unscorable / failure rows (the outcomes' own
words, as in :data:`COUNT_KEYS`), and of rows by category, are added. Rollouts are grouped
into tasks by ``_ng_task_index`` when NeMo Gym sent it, else by ``problem_id``.

**Reproducible**: within a task, rollouts are taken in the order of their input identity
(``_ng_rollout_index``, else the IN row number ``row`` of a batch OUT file), never in the order
they finished, so a resumed or reordered file gives the same numbers. **k** runs only up to
what every task supports (the fewest scored rollouts any task with a scored rollout has), and
``problems@{k}`` says how many tasks stand behind each k: the headline never comes from the few
tasks that happen to have more rollouts.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from critpt_grader.verdict import Category, count_key, disposition, verdict_key

# How rows are counted everywhere (batch --json, the batch report): by the label of what each
# came to (critpt_grader.verdict), and rows never graded (refused, or a grader error) apart.
REJECTED = "rejected"
COUNT_KEYS = ("scored_1", "scored_0", "unscorable", "failure", REJECTED)
# The same counts in a sentence ("6 passed, 3 scored 0, ...").
COUNT_WORDS = {key: "passed" if key == "scored_1" else key.replace("_", " ") for key in COUNT_KEYS}


def counts_sentence(counts: dict[str, int]) -> str:
    return ", ".join(f"{counts.get(key, 0)} {COUNT_WORDS[key]}" for key in COUNT_KEYS)


def row_count_key(row: dict[str, Any]) -> str:
    """The :data:`COUNT_KEYS` entry of a ``/verify`` or batch OUT row."""
    if row.get("rejected"):
        return REJECTED
    return count_key(verdict_key(row_outcome(row), row_reward(row)))


def row_reward(row: dict[str, Any]) -> float:
    """A row's reward as a number (a missing or unreadable one is 0)."""
    try:
        return float(row.get("reward") or 0.0)
    except (TypeError, ValueError):
        return 0.0


def row_outcome(row: dict[str, Any]) -> str:
    """``scored``, ``unscorable`` or ``failure`` of a verify response (ours, or another
    server's: then a row without ``_ng_failure_class`` counts as scored)."""
    category = row.get("category")
    if category in Category.__members__.values():
        return disposition(Category(category)).outcome
    if row.get("_ng_failure_class") or row.get("mask_sample"):
        return "failure"
    return "scored"


def aggregate(verify_responses: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``AggregateMetrics`` body for a list of verify responses."""
    outcomes = Counter(row_outcome(row) for row in verify_responses)
    categories = Counter(str(row.get("category", "unknown")) for row in verify_responses)
    groups: dict[Any, list[dict[str, Any]]] = {}
    for row in verify_responses:
        key = row.get("_ng_task_index", row.get("problem_id"))
        groups.setdefault(key, []).append(row)
    for rows in groups.values():
        rows.sort(key=input_order)

    tasks = [
        [float(r.get("reward", 0.0)) for r in rows if row_outcome(r) == "scored"]
        for rows in groups.values()
    ]
    answers = [
        [r.get("problem_id") for r in rows if row_outcome(r) == "scored"]
        for rows in groups.values()
    ]
    agent: dict[str, Any] = pass_majority(tasks, answers)
    agent.update(
        {
            "attempted": len(verify_responses),
            "scored": outcomes["scored"],
            "unscorable": outcomes["unscorable"],
            "failure": outcomes["failure"],
            **{f"category/{name}": count for name, count in sorted(categories.items())},
        }
    )
    rewards = [reward for task in tasks for reward in task]
    if rewards:
        agent["mean/reward"] = sum(rewards) / len(rewards)
        interval = clustered_interval(tasks)
        if interval is not None:  # percent, as the accuracy metrics
            # Clustered by problem (not Wilson, as the batch report's card): the qualified
            # keys say so; the bare ones stay for readers that predate them.
            for name in ("accuracy/ci95_clustered", "accuracy/ci95"):
                agent[f"{name}_low"] = 100.0 * interval[0]
                agent[f"{name}_high"] = 100.0 * interval[1]
    group_level = []
    for key, rows in groups.items():
        scored = [float(r.get("reward", 0.0)) for r in rows if row_outcome(r) == "scored"]
        entry = {
            "problem_id": rows[0].get("problem_id"),
            "attempted": len(rows),
            "scored": len(scored),
            "mean/reward": sum(scored) / len(scored) if scored else None,
        }
        if "_ng_task_index" in rows[0]:
            entry["_ng_task_index"] = key
        group_level.append(entry)
    return {
        "group_level_metrics": group_level,
        "agent_metrics": agent,
        "key_metrics": key_metrics(agent),
    }


Z95 = 1.959963984540054


def quantile(ordered: list[float], q: float) -> float | None:
    """The ``q`` quantile of sorted values (nearest rank), None for none."""
    if not ordered:
        return None
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def clustered_interval(groups: list[list[float]]) -> tuple[float, float] | None:
    """A 95% interval for the mean reward over every scored rollout, clustered by problem:
    rollouts of one problem are not independent draws, so the spread is that of the
    per-problem sums (the cluster-robust variance, with the G/(G-1) correction), clipped to
    [0, 1]. None with fewer than two problems."""
    groups = [g for g in groups if g]
    total = sum(len(g) for g in groups)
    if len(groups) < 2 or total == 0:
        return None
    mean = sum(sum(g) for g in groups) / total
    spread = sum(sum(r - mean for r in g) ** 2 for g in groups)
    variance = spread * len(groups) / (len(groups) - 1) / total**2
    half = Z95 * math.sqrt(variance)
    return max(0.0, mean - half), min(1.0, mean + half)


def input_order(row: dict[str, Any]) -> tuple[int, int]:
    """Where a rollout stands among its task's: its input identity, never its completion."""
    for key in ("_ng_rollout_index", "row"):
        value = row.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return (0, value)
    return (1, 0)  # no identity: kept in the given order (the sort is stable)


def pass_majority(tasks: list[list[float]], answers: list[list[Any]]) -> dict[str, float | int]:
    """pass@k, pass@1[avg-of-k] and majority@k of ``accuracy`` in percent, for k up to what
    every task with a scored rollout supports, and ``problems@{k}``: how many tasks count."""
    metrics: dict[str, float | int] = {}
    tasks_with = [(t, a) for t, a in zip(tasks, answers, strict=True) if t]
    if not tasks_with:
        return metrics
    top = min(len(t) for t, _ in tasks_with)
    for k in range(1, top + 1):
        passes = [_pass_at_k(t, k) for t, _ in tasks_with]
        metrics[f"pass@{k}/accuracy"] = 100.0 * sum(passes) / len(passes)
        averages = [sum(t[:k]) / k for t, _ in tasks_with]
        metrics[f"pass@1[avg-of-{k}]/accuracy"] = 100.0 * sum(averages) / len(averages)
        votes = [_majority(t[:k], a[:k]) for t, a in tasks_with]
        metrics[f"majority@{k}/accuracy"] = 100.0 * sum(votes) / len(votes)
        metrics[f"problems@{k}"] = len(tasks_with)
    return metrics


def _pass_at_k(rewards: list[float], k: int) -> float:
    if not all(r in (0.0, 1.0) for r in rewards):
        return max(rewards[:k])
    wrong = sum(1 for r in rewards if r == 0.0)
    if wrong < k:
        return 1.0
    return 1.0 - math.comb(wrong, k) / math.comb(len(rewards), k)


def _majority(rewards: list[float], answers: list[Any]) -> float:
    """The score of the most frequent (answer, score) pair; ties share."""
    counts = Counter(zip(answers, rewards, strict=True))
    most = max(counts.values())
    tied = [score for (_, score), count in counts.items() if count == most]
    return sum(tied) / len(tied)


def key_metrics(agent: dict[str, Any]) -> dict[str, Any]:
    """The headline metrics: the row counts, and the highest k of each family with the number
    of problems behind it (every problem supports that k)."""
    key = {k: agent[k] for k in ("attempted", "scored", "unscorable", "failure") if k in agent}
    for family in ("pass@1[avg-of-{k}]", "pass@{k}", "majority@{k}", "problems@{k}"):
        key.update(_highest_k(agent, family))
    return key


def _highest_k(metrics: dict[str, Any], family: str) -> dict[str, Any]:
    prefix, _, suffix = family.partition("{k}")
    found: dict[int, dict[str, Any]] = {}
    for name, value in metrics.items():
        head, _, _ = name.partition("/")
        if head.startswith(prefix) and head.endswith(suffix):
            middle = head[len(prefix) : len(head) - len(suffix)]
            if middle.isdigit():
                found.setdefault(int(middle), {})[name] = value
    return found[max(found)] if found else {}
