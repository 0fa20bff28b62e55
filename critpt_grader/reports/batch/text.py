"""The batch report's cell texts, shared by the Markdown and HTML views: one wording for both.

What it assumes: the parts of the dict of :func:`critpt_grader.reports.batch.summary.summarize`.

What it guarantees: plain text only, never markup (the HTML view strips the backticks of
the two notes that carry them), and "–" for a value that does not exist (no scored rows, a
pass@k with k below 2).
"""

from __future__ import annotations

import re
from typing import Any

from critpt_grader.rows.metrics import COUNT_KEYS, COUNT_WORDS, counts_sentence

_PASS_K = re.compile(r"^pass@(\d+)/accuracy$")

PROBLEM_HEADERS = [
    "problem",
    "rollouts",
    "scored",
    "scored 1",
    "unscorable",
    "failure",
    "rejected",
    "mean reward",
    "pass@k",
    "majority@k",
]
CATEGORY_HEADERS = ["category", "outcome", "rows", "share", "meaning"]
REASON_HEADERS = ["outcome", "category", "rows", "reason"]
SLOWEST_HEADERS = ["row", "problem", "category", "seconds"]
CHANGED_HEADERS = ["row", "problem", "change", "before", "after"]
NO_TIMING = "The OUT rows carry no timing (`critpt_grader.seconds`): no slowest rows to show."


def percent(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{100 * value:.{digits}f}%"


def accuracy_text(totals: dict[str, Any]) -> str:
    if totals["accuracy"] is None:
        return "no scored rows"
    low, high = totals["accuracy_ci95"]
    clustered = totals.get("accuracy_ci95_clustered")
    by_problem = (
        f"; clustered by problem {percent(clustered[0])}–{percent(clustered[1])}"
        if clustered
        else ""
    )
    return (
        f"{percent(totals['accuracy'])} of {totals['scored']} scored rows "
        f"(95% Wilson CI {percent(low)}–{percent(high)}{by_problem})"
    )


def counts_text(totals: dict[str, Any]) -> str:
    return (
        f"{totals['rows']} rows over {totals['problem_count']} problems: {counts_sentence(totals)}"
    )


def pass_majority_rows(family: dict[str, Any]) -> list[list[str]]:
    """``[k, problems, pass@k, pass@1[avg-of-k], majority@k]`` per k, values in percent."""
    metrics = family.get("metrics", {})
    ks = sorted({int(m.group(1)) for name in metrics if (m := _PASS_K.match(name))})
    rows = []
    for k in ks:
        rows.append(
            [
                str(k),
                str(metrics.get(f"problems@{k}", "")),
                _pc(metrics.get(f"pass@{k}/accuracy")),
                _pc(metrics.get(f"pass@1[avg-of-{k}]/accuracy")),
                _pc(metrics.get(f"majority@{k}/accuracy")),
            ]
        )
    return rows


PASS_MAJORITY_NOTE = (
    "Over scored rollouts, in percent, as `/aggregate_metrics` computes them, for k up to what "
    "every problem with a scored rollout supports (rollouts in input order, never completion "
    "order): pass@k (unbiased estimate), pass@1[avg-of-k] the mean of the first k, majority@k "
    "the score of the most frequent outcome of the first k."
)
PASS_MAJORITY_HEADERS = ["k", "problems", "pass@k", "pass@1[avg-of-k]", "majority@k"]


def problem_rows(problems: list[dict[str, Any]]) -> list[list[str]]:
    return [
        [
            p["problem_id"],
            str(p["rollouts"]),
            str(p["scored"]),
            str(p["scored_1"]),
            str(p["unscorable"]),
            str(p["failure"]),
            str(p["rejected"]),
            "–" if p["mean_reward"] is None else f"{p['mean_reward']:.2f}",
            _at_k(p["pass_at_k"], p["k"]),
            _at_k(p["majority_at_k"], p["k"]),
        ]
        for p in problems
    ]


def category_rows(categories: list[dict[str, Any]]) -> list[list[str]]:
    return [
        [c["category"], c["outcome"], str(c["rows"]), percent(c["share"]), c["meaning"]]
        for c in categories
    ]


def reason_rows(reasons: list[dict[str, Any]]) -> list[list[str]]:
    return [[r["outcome"], r["category"], str(r["rows"]), r["reason"] or "–"] for r in reasons]


PHASE_HEADERS = ["phase", "rows", "median s", "p95 s"]


def phase_rows(phases: list[dict[str, Any]]) -> list[list[str]]:
    return [[p["phase"], str(p["rows"]), f"{p['median']:.3f}", f"{p['p95']:.3f}"] for p in phases]


def slowest_rows(slowest: list[dict[str, Any]]) -> list[list[str]]:
    return [
        [str(s["row"]), s["problem_id"], str(s["category"]), f"{s['seconds']:.3f}"] for s in slowest
    ]


def diff_text(summary: dict[str, Any]) -> str:
    d = summary["diff"]
    a, b = summary["name"], summary["other"]["name"]
    return (
        f"{d['matched']} rows matched{_matched_how(d)} ({d['only_first']} only in {a}, "
        f"{d['only_second']} only in {b}): {d['unchanged']} unchanged, {d['gained']} gained "
        f"(now passed), {d['lost']} lost (passed before), {d['other_changes']} other changes."
    )


def _matched_how(d: dict[str, Any]) -> str:
    by_hash, by_row = d.get("matched_by_hash", 0), d.get("matched_by_row", d["matched"])
    if not by_row:
        return " by input hash"
    if not by_hash:
        return " by row and problem_id"
    return f" ({by_hash} by input hash, {by_row} by row and problem_id)"


ONLY_HEADERS = ["file", "row", "problem"]
ONLY_SHOWN = 50


def only_rows(summary: dict[str, Any]) -> list[list[str]]:
    """The rows found in one file only (the first :data:`ONLY_SHOWN` of each file)."""
    d = summary["diff"]
    rows = []
    for name, key in (
        (summary["name"], "only_first_rows"),
        (summary["other"]["name"], "only_second_rows"),
    ):
        rows += [[name, str(r["row"]), r["problem_id"]] for r in d.get(key, [])[:ONLY_SHOWN]]
    return rows


def side_by_side_rows(summary: dict[str, Any]) -> list[list[str]]:
    a, b = summary, summary["other"]
    lines = [
        ("rows", "rows"),
        ("scored", "scored"),
        *((COUNT_WORDS[key], key) for key in COUNT_KEYS),
    ]
    rows = [[label, str(a[key]), str(b[key])] for label, key in lines]
    rows.append(["accuracy (95% Wilson CI)", _short_accuracy(a), _short_accuracy(b)])
    return rows


def _short_accuracy(totals: dict[str, Any]) -> str:
    if totals["accuracy"] is None:
        return "–"
    low, high = totals["accuracy_ci95"]
    return f"{percent(totals['accuracy'])} ({percent(low)}–{percent(high)})"


def changed_rows(changed: list[dict[str, Any]]) -> list[list[str]]:
    return [[_rows(c), c["problem_id"], c["change"], c["before"], c["after"]] for c in changed]


def _rows(change: dict[str, Any]) -> str:
    """``3``, or ``3 → 5`` when the input sits at another row of the second file."""
    row, other = change["row"], change.get("other_row", change["row"])
    return str(row) if other == row else f"{row} → {other}"


def _pc(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}%"


def _at_k(value: float | None, k: int) -> str:
    return "–" if value is None or k < 2 else f"{value:.0f}% (k={k})"
