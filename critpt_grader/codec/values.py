"""Inert carriers for decoded wire values.

Decoding never evaluates anything: symbolic text stays text until the comparator parses it
through the restricted grammar, and sets keep their members in wire order because Python's
own ``set`` would merge members such as ``1`` and ``1.0`` and cannot hold lists.

A decoded value is built from: ``None``, ``bool``, ``int``, ``float`` (including ``nan``,
``inf`` and ``-0.0``), ``fractions.Fraction``, ``decimal.Decimal``, ``complex`` (both parts
binary64), :class:`ExactComplex` (a part is int, fraction or decimal), ``str``, ``list``,
``tuple``, ``dict[str, value]`` (map, wire order), :class:`WireSet`, :class:`Symbolic` and
:class:`Legacy`.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

Real = int | float | Fraction | Decimal


@dataclass(frozen=True, slots=True)
class Symbolic:
    """A SymPy value as text in the restricted grammar (``["symbolic", text]``)."""

    text: str


@dataclass(frozen=True, slots=True)
class Legacy:
    """A delivered string expectation whose reading (number, expression, category) is the
    comparator's decision (``["legacy", text]``)."""

    text: str


@dataclass(frozen=True, slots=True)
class ExactComplex:
    """A complex value whose parts are not both binary64 (``["complex", re, im]``)."""

    re: Real
    im: Real


@dataclass(frozen=True, slots=True)
class WireSet:
    """An unordered collection (``["set", [...]]``); ``items`` keeps the wire order, which
    carries no meaning."""

    items: tuple[Any, ...]

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self):
        return iter(self.items)
