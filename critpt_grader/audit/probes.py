"""Probe inputs: the task's own inputs moved a little, to find what its cases cannot see.

A task whose cases sit at one point (``x = 0``, where ``sin``, ``tan`` and ``x`` agree) or
whose inputs are symmetric (``a = b``, where ``a**2*b`` and ``a*b**2`` agree) cannot tell
some wrong answers from the right one. A mutant that matches the reference on every case but
not at a probe input is a survivor, and the probe input is the case that would catch it.

Each case gives up to four probes, built on the wire (``critpt-value-v1`` nodes), so the
inputs keep their types exactly:

* ``floats``: every float leaf ``x`` becomes ``x·(1 + 0.0625 + 0.0371·i)`` (``i``: the
  leaf's index in the case), a zero becomes ``0.1371·(i + 1)`` — distinct factors, so equal
  inputs stop being equal, and a point at zero moves off it; fractions likewise, exactly;
* ``even ints`` / ``odd ints``: the int leaves at even (odd) positions take the value the
  same leaf has in the next case that differs there (bools stay). Ints are often quantum
  numbers, parities or counts with a domain the reference need not check (a parity of 2);
  values the author already used stay inside it, and taking half of them from another case
  makes combinations no case has;
* ``both``: the floats moved and the even ints taken.

Pure: the reference decides which probes count. A probe at which the reference does not
return what it returns at the case it came from (a value where a value was returned, a raise
where it raised) is dropped, so a probe never leaves the reference's domain silently.
Symbolic, string and CritPt (named) inputs stay as they are.
"""

from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

MODES = ("floats", "even ints", "odd ints", "both")
PROBE_LIMIT = 24  # probes per task at most: the first cases first


def probe_cases(cases: list[dict[str, Any]], limit: int = PROBE_LIMIT) -> list[tuple[int, dict]]:
    """``(case index, probe inputs)`` for the job-shaped ``cases`` (``{"args", "kwargs"}``),
    at most ``limit``, none equal to a case or to another probe."""
    seen = {_key(case) for case in cases}
    found: list[tuple[int, dict]] = []
    for mode in MODES:
        for index, case in enumerate(cases):
            if "args" not in case:
                continue
            donors = [other for other in cases[index + 1 :] + cases[:index] if "args" in other]
            move = _Move(mode, donors)
            probe = {
                "args": [move.envelope(arg, ("a", k)) for k, arg in enumerate(case["args"])],
                "kwargs": {k: move.envelope(v, ("k", k)) for k, v in case["kwargs"].items()},
            }
            key = _key(probe)
            if key in seen:
                continue
            seen.add(key)
            found.append((index, probe))
    found.sort(key=lambda item: item[0])
    return found[:limit]


def _key(case: dict[str, Any]) -> str:
    return json.dumps(case, sort_keys=True)


class _Move:
    """One probe's changes: floats scaled by distinct factors, ints taken from a donor case."""

    def __init__(self, mode: str, donors: list[dict[str, Any]]) -> None:
        self.mode = mode
        self.donors = donors
        self.floats = 0
        self.ints = 0

    def envelope(self, envelope: dict[str, Any], where: tuple[str, Any]) -> dict[str, Any]:
        return {**envelope, "value": self._node(envelope["value"], [where])}

    def _node(self, node: list[Any], where: list[Any]) -> list[Any]:
        tag = node[0]
        if tag in ("list", "tuple", "set"):
            return [tag, [self._node(item, [*where, k]) for k, item in enumerate(node[1])]]
        if tag == "map":
            return [tag, [[key, self._node(item, [*where, key])] for key, item in node[1]]]
        if tag == "complex":
            return [tag, self._node(node[1], [*where, "re"]), self._node(node[2], [*where, "im"])]
        if tag == "int":
            position = self.ints
            self.ints += 1
            parity = 1 if self.mode == "odd ints" else 0
            if self.mode in ("even ints", "odd ints", "both") and position % 2 == parity:
                return self._donated(node, where)
            return node
        if tag == "float" and self.mode in ("floats", "both"):
            index = self._next()
            value = float.fromhex(node[1])
            moved = value * (1.0625 + 0.0371 * index) if value else 0.1371 * (index + 1)
            return ["float", moved.hex()]
        if tag == "fraction" and self.mode in ("floats", "both"):
            index = self._next()
            value = Fraction(int(node[1]), int(node[2]))
            factor = Fraction(10625, 10000) + Fraction(371, 10000) * index
            moved = value * factor if value else Fraction(1371, 10000) * (index + 1)
            return ["fraction", str(moved.numerator), str(moved.denominator)]
        return node

    def _donated(self, node: list[Any], where: list[Any]) -> list[Any]:
        for donor in self.donors:
            found = _at(donor, where)
            if found is not None and found[0] == "int" and found != node:
                return found
        return node

    def _next(self) -> int:
        self.floats += 1
        return self.floats - 1


def _at(case: dict[str, Any], where: list[Any]) -> list[Any] | None:
    """The node of ``case`` at ``where`` (``[("a", 2), 0, "re"]``), if it has one."""
    (side, key), rest = where[0], where[1:]
    container = case["args"] if side == "a" else case["kwargs"]
    if (side == "a" and key >= len(container)) or (side == "k" and key not in container):
        return None
    node = container[key]["value"]
    for step in rest:
        if node[0] in ("list", "tuple", "set") and isinstance(step, int):
            node = node[1][step] if step < len(node[1]) else None
        elif node[0] == "map":
            node = dict((k, v) for k, v in node[1]).get(step)
        elif node[0] == "complex" and step in ("re", "im"):
            node = node[1] if step == "re" else node[2]
        else:
            return None
        if node is None:
            return None
    return node


def usable(reference_case: Any, reference_probe: Any) -> bool:
    """Does the probe keep the reference in its domain? The same kind of outcome as at the
    case it came from: a value for a value, a raise for a raise."""
    return reference_probe.kind == reference_case.kind and reference_probe.kind in (
        "value",
        "exception",
    )
