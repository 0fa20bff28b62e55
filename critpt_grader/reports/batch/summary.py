"""The summary of one or two OUT files of ``critpt-grader batch``: a pure function of the rows.

Accuracy is the mean reward over **scored** rows only (an unscorable or failed row says
nothing about the model), with a Wilson 95% interval. pass@k / majority@k come from the
server's own :func:`~critpt_grader.rows.metrics.pass_majority` (the ``/aggregate_metrics``
numbers), overall and per problem. Rows the batch rejected (``"rejected": true``: not JSON,
an unknown problem, a grader error) are counted apart from the grader's verdicts.

What it assumes: OUT rows as ``critpt-grader batch`` (or another NeMo Gym verify server)
writes them; a missing field or a reward that is not a number gets a default (no
``problem_id``, no timing, reward 0).

What it guarantees: :func:`summarize` is a pure function of the rows and returns plain JSON
data, everything the Markdown and HTML views show; :func:`read_out` keeps the last line of
each ``row`` and counts the unreadable lines instead of failing on them.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

from critpt_grader.rows.metrics import (
    COUNT_KEYS,
    aggregate,
    clustered_interval,
    key_metrics,
    pass_majority,
    quantile,
    row_count_key,
    row_outcome,
    row_reward,
)
from critpt_grader.rows.resolve import PHASES
from critpt_grader.verdict import SCORED_1, Category, disposition, verdict_key

Z95 = 1.959963984540054
SLOWEST = 10
REASONS = 10
NO_PROBLEM = "(no problem_id)"


def read_out(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The OUT rows of ``path`` (a later line for the same ``row`` wins) and how many lines
    were skipped as unreadable (a torn last line, say)."""
    rows: dict[Any, dict[str, Any]] = {}
    skipped = 0
    with path.open("rb") as file:
        for number, line in enumerate(file):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError:
                skipped += 1
                continue
            if not isinstance(row, dict):
                skipped += 1
                continue
            rows[row.get("row", f"line {number}")] = row
    return list(rows.values()), skipped


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval of a proportion, or None for no trials."""
    if n <= 0:
        return None
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def outcome(row: dict[str, Any]) -> str:
    """``scored``, ``unscorable``, ``failure`` or ``rejected`` (never graded)."""
    if row.get("rejected"):
        return "rejected"
    return row_outcome(row)


def chart_label(row: dict[str, Any]) -> str:
    """The chart segment of a row: ``scored 1``, ``scored 0``, ``unscorable`` or ``failure``
    (a rejected row counts as a failure: it has no verdict)."""
    kind = outcome(row)
    return "failure" if kind == "rejected" else verdict_key(kind, row_reward(row))


def summarize(
    rows: list[dict[str, Any]],
    other: list[dict[str, Any]] | None = None,
    *,
    names: tuple[str, str] = ("A", "B"),
) -> dict[str, Any]:
    """Everything the report shows, for OUT rows ``rows`` and, optionally, a second OUT
    file ``other`` to diff against (rows matched by ``input_hash``, else by ``row`` and
    ``problem_id``: :func:`diff`)."""
    summary: dict[str, Any] = {
        "name": names[0],
        **totals(rows),
        "pass_majority": overall_pass_majority(rows),
        "categories": categories(rows),
        "reasons": reasons(rows),
        "problems": problems(rows),
        "slowest": slowest(rows),
        "phases": phase_times(rows),
    }
    if other is not None:
        summary["other"] = {"name": names[1], **totals(other)}
        summary["diff"] = diff(rows, other)
    return summary


def totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    counts = Counter(row_count_key(r) for r in rows)
    scored = [row_reward(r) for r in rows if outcome(r) == "scored"]
    accuracy = sum(scored) / len(scored) if scored else None
    interval = wilson(sum(scored), len(scored))
    by_problem: dict[str, list[float]] = {}
    for r in rows:
        if outcome(r) == "scored":
            by_problem.setdefault(_problem(r), []).append(row_reward(r))
    clustered = clustered_interval(list(by_problem.values()))
    return {
        "rows": len(rows),
        "scored": len(scored),
        **{key: counts[key] for key in COUNT_KEYS},  # the counts batch --json gives too
        "accuracy": accuracy,
        "accuracy_ci95": list(interval) if interval else None,  # Wilson, kept for readers
        "accuracy_ci95_wilson": list(interval) if interval else None,
        "accuracy_ci95_clustered": list(clustered) if clustered else None,
        "problem_count": len({_problem(r) for r in rows}),
        "verdicts": dict(Counter(chart_label(r) for r in rows)),
        "max_rollouts": max(Counter(_problem(r) for r in rows).values(), default=0),
    }


def overall_pass_majority(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``/aggregate_metrics`` pass@k / majority@k family (percent), and its key metrics;
    empty unless every problem with a scored rollout has at least two (k stops at what every
    problem supports)."""
    graded = [r for r in rows if not r.get("rejected")]
    agent = aggregate(graded)["agent_metrics"]
    family = {k: v for k, v in agent.items() if k.startswith(("pass@", "majority@", "problems@"))}
    if not any(k.startswith("pass@2") for k in family):
        return {}
    return {"metrics": family, "key": key_metrics(family)}


def categories(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per category seen: outcome, count, share of all rows, and its meaning."""
    counts = Counter(str(r.get("category", "unknown")) for r in rows)
    kinds = {str(r.get("category", "unknown")): outcome(r) for r in rows}
    order = {"scored": 0, "unscorable": 1, "failure": 2, "rejected": 3}
    entries = [
        {
            "category": name,
            "outcome": kinds[name],
            "rows": n,
            "share": n / len(rows),
            "meaning": _meaning(name),
        }
        for name, n in counts.items()
    ]
    return sorted(entries, key=lambda e: (order.get(e["outcome"], 9), -e["rows"], e["category"]))


def reasons(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The commonest reasons of rows that were not scored: why they failed."""
    counts = Counter(
        (outcome(r), str(r.get("category", "unknown")), _reason(r))
        for r in rows
        if outcome(r) != "scored"
    )
    return [
        {"outcome": kind, "category": category, "reason": reason, "rows": n}
        for (kind, category, reason), n in counts.most_common(REASONS)
    ]


def problems(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per problem: rollouts by outcome, mean reward, pass@k and majority@k with k
    its number of scored rollouts."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(_problem(row), []).append(row)
    entries = []
    for problem, group in sorted(groups.items()):
        counts = Counter(row_count_key(r) for r in group)
        scored = [row_reward(r) for r in group if outcome(r) == "scored"]
        k = len(scored)
        family = pass_majority([scored], [[problem] * k]) if k else {}
        entries.append(
            {
                "problem_id": problem,
                "rollouts": len(group),
                "scored": k,
                **{key: counts[key] for key in COUNT_KEYS},
                "mean_reward": sum(scored) / k if k else None,
                "k": k,
                "pass_at_k": family.get(f"pass@{k}/accuracy"),
                "majority_at_k": family.get(f"majority@{k}/accuracy"),
                "verdicts": dict(Counter(chart_label(r) for r in group)),
            }
        )
    return entries


def phase_times(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per phase (queue, preflight, run, compare, total): how many rows went through it and
    the median and 95th percentile of its seconds, from ``critpt_grader.timings``."""
    seen: dict[str, list[float]] = {}
    for row in rows:
        timings = (row.get("critpt_grader") or {}).get("timings") or {}
        for name, seconds in timings.items():
            if isinstance(seconds, int | float):
                seen.setdefault(name, []).append(float(seconds))
    order = [name for name, _ in PHASES]
    out = []
    for name in sorted(seen, key=lambda n: order.index(n) if n in order else len(order)):
        values = sorted(seen[name])
        out.append(
            {
                "phase": name,
                "rows": len(values),
                "median": values[len(values) // 2],
                "p95": quantile(values, 0.95),
            }
        )
    return out


def slowest(rows: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The :data:`SLOWEST` slowest rows by ``critpt_grader.seconds``; None when no row
    carries a timing."""
    timed = [(r, _seconds(r)) for r in rows]
    timed = [(r, s) for r, s in timed if s is not None]
    if not timed:
        return None
    timed.sort(key=lambda pair: -pair[1])
    return [
        {
            "row": r.get("row"),
            "problem_id": _problem(r),
            "category": r.get("category"),
            "seconds": s,
        }
        for r, s in timed[:SLOWEST]
    ]


def diff(rows: list[dict[str, Any]], other: list[dict[str, Any]]) -> dict[str, Any]:
    """Which rows changed verdict between two OUT files: gained (now passed), lost (passed
    before), and other changes; and the rows found in one file only.

    Rows are paired by ``input_hash`` (the same IN row content in both files, whatever its row
    number: IN2 may reorder IN1); equal hashes pair in row order. A row without a hash (an OUT
    file written before batch fingerprints) pairs by ``row`` and ``problem_id`` with a row of
    the other file left unpaired, never with a row whose different hash says it is another
    input. Each change names the row in both files (``row``, ``other_row``)."""
    pairs, only_a, only_b, by_hash = _pair(rows, other)
    changed = []
    for a, b in sorted(pairs, key=lambda pair: _sort_key(_match_key(pair[0]))):
        if _verdict(a) == _verdict(b):
            continue
        a_passed, b_passed = chart_label(a) == SCORED_1, chart_label(b) == SCORED_1
        change = "gained" if b_passed and not a_passed else "lost" if a_passed else "changed"
        changed.append(
            {
                "row": a.get("row"),
                "other_row": b.get("row"),
                "problem_id": _problem(a),
                "change": change,
                "before": _verdict_text(a),
                "after": _verdict_text(b),
            }
        )
    kinds = Counter(c["change"] for c in changed)
    transitions = Counter(f"{c['before']} → {c['after']}" for c in changed)
    return {
        "matched": len(pairs),
        "matched_by_hash": by_hash,
        "matched_by_row": len(pairs) - by_hash,
        "only_first": len(only_a),
        "only_second": len(only_b),
        "only_first_rows": [_where(r) for r in only_a],
        "only_second_rows": [_where(r) for r in only_b],
        "unchanged": len(pairs) - len(changed),
        "gained": kinds["gained"],
        "lost": kinds["lost"],
        "other_changes": kinds["changed"],
        "transitions": [{"transition": t, "rows": n} for t, n in transitions.most_common()],
        "changed": changed,
    }


Pair = tuple[dict[str, Any], dict[str, Any]]


def _pair(
    rows: list[dict[str, Any]], other: list[dict[str, Any]]
) -> tuple[list[Pair], list[dict[str, Any]], list[dict[str, Any]], int]:
    """``(pairs, only in rows, only in other, pairs made by hash)`` (see :func:`diff`)."""
    first = sorted(rows, key=lambda r: _sort_key(_match_key(r)))
    second = sorted(other, key=lambda r: _sort_key(_match_key(r)))
    queues: dict[str, list[dict[str, Any]]] = {}
    for row in reversed(second):  # popped from the end: in row order
        if (h := _hash(row)) is not None:
            queues.setdefault(h, []).append(row)
    pairs: list[Pair] = []
    paired_b: set[int] = set()
    left_a: list[dict[str, Any]] = []
    for row in first:
        h = _hash(row)
        if h is not None and queues.get(h):
            match = queues[h].pop()
            pairs.append((row, match))
            paired_b.add(id(match))
        else:
            left_a.append(row)
    by_hash = len(pairs)
    left_b = {_match_key(r): r for r in second if id(r) not in paired_b}
    only_a = []
    for row in left_a:
        match = left_b.get(_match_key(row))
        if match is not None and (_hash(row) is None or _hash(match) is None):
            pairs.append((row, match))
            del left_b[_match_key(row)]
        else:
            only_a.append(row)
    return pairs, only_a, list(left_b.values()), by_hash


def _hash(row: dict[str, Any]) -> str | None:
    value = row.get("input_hash")
    return value if isinstance(value, str) and value else None


def _where(row: dict[str, Any]) -> dict[str, Any]:
    return {"row": row.get("row"), "problem_id": _problem(row)}


def _problem(row: dict[str, Any]) -> str:
    problem = row.get("problem_id")
    return str(problem) if problem is not None else NO_PROBLEM


def _seconds(row: dict[str, Any]) -> float | None:
    info = row.get("critpt_grader")
    seconds = info.get("seconds") if isinstance(info, dict) else None
    return float(seconds) if isinstance(seconds, int | float) else None


def _reason(row: dict[str, Any]) -> str:
    info = row.get("critpt_grader")
    text = info.get("reason") if isinstance(info, dict) else None
    text = text or row.get("detail") or ""
    line = " ".join(str(text).split())
    return line if len(line) <= 140 else line[:139] + "…"


def _meaning(category: str) -> str:
    if category in Category.__members__.values():
        return disposition(Category(category)).meaning
    return {
        "grader_error": "the grader failed on this row (a bug): never graded",
        "request_invalid": "the IN row is not a usable /verify body",
        "task_invalid": "the row's task is malformed",
        "unknown_problem_id": "no task set given with --tasks holds this problem_id",
    }.get(category, "")


def _match_key(row: dict[str, Any]) -> tuple[Any, str]:
    return row.get("row"), _problem(row)


def _sort_key(key: tuple[Any, str]) -> tuple[int, Any, str]:
    index, problem = key
    return (0, index, problem) if isinstance(index, int) else (1, str(index), problem)


def _verdict(row: dict[str, Any]) -> tuple[str, float, str]:
    return outcome(row), row_reward(row), str(row.get("category"))


def _verdict_text(row: dict[str, Any]) -> str:
    kind, reward, category = _verdict(row)
    if kind == "scored":
        return f"{category} ({reward:g})"
    return f"{category} ({kind})"
