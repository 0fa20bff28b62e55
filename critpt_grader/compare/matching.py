"""One-to-one matching of unordered collections under a step budget.

Members are matched by augmenting paths (Kuhn's algorithm) over a pair-status matrix that
is filled lazily: a pair is compared only when the search asks for it, and each expected
member tries its own position first, so collections in the same order cost n comparisons.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable
from decimal import Decimal
from fractions import Fraction


class BudgetExhausted(Exception):
    """The search took more steps than allowed; the caller reports *uncertain*."""


class StepBudget:
    def __init__(self, steps: int) -> None:
        self.remaining = steps

    def spend(self, steps: int = 1) -> None:
        self.remaining -= steps
        if self.remaining < 0:
            raise BudgetExhausted


Preference = Callable[[int], Iterable[int]]


def perfect_matching(
    size: int,
    edge: Callable[[int, int], bool],
    budget: StepBudget,
    preference: Preference | None = None,
) -> list[int] | None:
    """A perfect matching ``expected i -> observed match[i]`` of a square bipartite graph
    whose edges are queried with ``edge(i, j)``, or ``None`` when none exists.

    ``preference(i)`` lists observed members in the order to try them (each at least once);
    a good guess first (the same position, the nearest value) keeps the search near n queries.
    """
    order = preference or (lambda i: same_position_first(i, size))
    owner: list[int | None] = [None] * size  # observed j -> expected i

    def augment(i: int, visited: set[int]) -> bool:
        for j in order(i):
            if j in visited:
                continue
            budget.spend()
            if not edge(i, j):
                continue
            visited.add(j)
            current = owner[j]
            if current is None or augment(current, visited):
                owner[j] = i
                return True
        return False

    for i in range(size):
        if not augment(i, set()):
            return None
    match = [0] * size
    for j, i in enumerate(owner):
        assert i is not None
        match[i] = j
    return match


def same_position_first(i: int, size: int) -> Iterable[int]:
    yield i
    yield from (j for j in range(size) if j != i)


def preference(e_items: list, o_items: list):
    """The order in which to try observed members for each expected one: an identical
    member first, then the nearest real value, then the same position, then the rest."""
    size = len(o_items)
    by_text: dict[str, list[int]] = {}
    for j, item in enumerate(o_items):
        by_text.setdefault(_identity_key(item), []).append(j)
    reals = [_real_key(item) for item in o_items]
    ordered = sorted((r, j) for j, r in enumerate(reals) if r is not None)
    keys = [r for r, _ in ordered]

    def prefer(i: int):
        yield from by_text.get(_identity_key(e_items[i]), ())
        target = _real_key(e_items[i])
        if target is not None and ordered:
            at = bisect.bisect_left(keys, target)
            low, high = at - 1, at
            while low >= 0 or high < len(ordered):
                if high >= len(ordered) or (low >= 0 and target - keys[low] <= keys[high] - target):
                    yield ordered[low][1]
                    low -= 1
                else:
                    yield ordered[high][1]
                    high += 1
        yield from same_position_first(i, size)

    return prefer


def _identity_key(value) -> str:
    return f"{type(value).__name__}:{value!r}"


def _real_key(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float | Fraction | Decimal):
        return None
    try:
        key = float(value)
    except (OverflowError, ValueError):
        return None
    return key if key == key else None
