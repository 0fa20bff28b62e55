"""Inline SVG stacked bar charts of verdict counts: no script, no external resources.

One chart type: horizontal stacked bars, a row per group (a kind, an output type, a problem,
an OUT file), a segment per verdict, drawn to a common count scale so group sizes stay
comparable, with round gridlines (:func:`tick_step`) and a legend of the segments present.

What :func:`stacked_bar_chart` assumes: each row's ``counts`` are keyed by the verdict keys of
:data:`SEGMENTS` (``scored 1``, ``scored 0``, ``unscorable``, ``failure``, ``grader error``);
any other key is drawn, summed, as one grey "other" segment.

What it guarantees: every label and note is escaped; the colours of :data:`SEGMENTS` are
fixed (the browser tests look for them); the SVG is meant to sit inside HTML, which needs no
namespace declaration, and leaving it out keeps the chart free of any URL at all.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

from critpt_grader.verdict import GRADER_ERROR, SCORED_0, SCORED_1


@dataclass(frozen=True, slots=True)
class Segment:
    key: str  # verdict key as in the report's distributions
    label: str
    color: str


# Reward 0 is not a bad sign by itself (canaries must get it), so it is blue, not red.
SEGMENTS = (
    Segment(SCORED_1, "scored, reward 1", "#2f9e44"),
    Segment(SCORED_0, "scored, reward 0", "#4263eb"),
    Segment("unscorable", "unscorable", "#f08c00"),
    Segment("failure", "failure", "#e03131"),
    Segment(GRADER_ERROR, GRADER_ERROR, "#343a40"),
)
_OTHER = Segment("other", "other", "#adb5bd")


@dataclass(frozen=True, slots=True)
class BarRow:
    label: str
    counts: dict[str, int]  # verdict key → candidates
    not_met: int
    note: str | None = None  # replaces the "N · all met" note after the bar


_LABEL_W, _BAR_W, _NOTE_W = 190, 440, 130
_ROW_H, _BAR_H, _TOP, _LEGEND_H = 28, 18, 26, 34
_FONT = "font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif"


def stacked_bar_chart(title: str, rows: list[BarRow]) -> str:
    width = _LABEL_W + _BAR_W + _NOTE_W
    height = _TOP + _ROW_H * len(rows) + _LEGEND_H
    largest = max((sum(r.counts.values()) for r in rows), default=0)
    step = tick_step(largest)
    scale_max = max(step * math.ceil(largest / step), 1)
    unit = _BAR_W / scale_max
    parts = [
        f'<svg viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" style="{_FONT};max-width:100%">',
        f"<title>{escape(title)}</title>",
    ]
    parts += _grid(scale_max, step, unit, height - _LEGEND_H)
    for i, row in enumerate(rows):
        parts += _bar(row, _TOP + i * _ROW_H, unit)
    parts += _legend(rows, height - _LEGEND_H + 14)
    parts.append("</svg>")
    return "".join(parts)


def tick_step(largest: int) -> int:
    """A round step giving about five gridlines: 1, 2, 5, 10, 20, 50, ..."""
    if largest <= 5:
        return 1
    raw = largest / 5
    magnitude = 10 ** math.floor(math.log10(raw))
    return next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)


def _grid(scale_max: int, step: int, unit: float, bottom: int) -> list[str]:
    parts = []
    for value in range(0, scale_max + 1, step):
        x = _LABEL_W + value * unit
        parts.append(
            f'<line x1="{x:.1f}" y1="{_TOP - 6}" x2="{x:.1f}" y2="{bottom - 6}" '
            'stroke="#e9ecef" stroke-width="1"/>'
            f'<text x="{x:.1f}" y="{_TOP - 10}" font-size="10" fill="#868e96" '
            f'text-anchor="middle">{value}</text>'
        )
    return parts


def _bar(row: BarRow, y: int, unit: float) -> list[str]:
    total = sum(row.counts.values())
    parts = [
        f'<text x="{_LABEL_W - 10}" y="{y + _BAR_H - 4}" font-size="12" fill="#212529" '
        f'text-anchor="end">{escape(_clip(row.label, 28))}</text>'
    ]
    x = float(_LABEL_W)
    for segment, count in _segments_of(row.counts):
        w = count * unit
        parts.append(
            f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{_BAR_H}" fill="{segment.color}">'
            f"<title>{escape(row.label)}: {count} {escape(segment.label)}</title></rect>"
        )
        if w >= 8 * len(str(count)) + 6:
            parts.append(
                f'<text x="{x + w / 2:.1f}" y="{y + _BAR_H - 5}" font-size="11" fill="#fff" '
                f'text-anchor="middle">{count}</text>'
            )
        x += w
    note_color = "#c92a2a" if row.not_met else "#495057"
    note = f"{total} · {row.not_met} not met" if row.not_met else f"{total} · all met"
    if row.note is not None:
        note = row.note
    parts.append(
        f'<text x="{x + 8:.1f}" y="{y + _BAR_H - 5}" font-size="11" fill="{note_color}">'
        f"{escape(note)}</text>"
    )
    return parts


def _legend(rows: list[BarRow], y: int) -> list[str]:
    present = {key for row in rows for key, n in row.counts.items() if n}
    shown = [s for s in SEGMENTS if s.key in present]
    if present - {s.key for s in SEGMENTS}:
        shown.append(_OTHER)
    parts, x = [], float(_LABEL_W)
    for segment in shown:
        parts.append(
            f'<rect x="{x:.1f}" y="{y - 9}" width="10" height="10" rx="2" fill="{segment.color}"/>'
            f'<text x="{x + 14:.1f}" y="{y}" font-size="11" fill="#495057">'
            f"{escape(segment.label)}</text>"
        )
        x += 24 + 6.5 * len(segment.label)
    return parts


def _segments_of(counts: dict[str, int]) -> list[tuple[Segment, int]]:
    known = {s.key for s in SEGMENTS}
    ordered = [(s, counts.get(s.key, 0)) for s in SEGMENTS]
    other = sum(n for key, n in counts.items() if key not in known)
    ordered.append((_OTHER, other))
    return [(segment, n) for segment, n in ordered if n > 0]


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
