"""Render report.html in headless Chromium and check the page actually draws.

The screenshot is decoded with zlib and numpy (no imaging library): it must hold many
distinct colours (text, tables, charts) and the chart's own segment colours, which a blank
or unstyled page would not.
"""

from __future__ import annotations

import struct
import subprocess
import zlib
from datetime import UTC, datetime

import numpy as np
import pytest

from critpt_grader.acceptance.sets import Expected, load_set
from critpt_grader.reports.acceptance.document import RunContext, build_report
from critpt_grader.reports.acceptance.html import write_html
from critpt_grader.reports.charts import SEGMENTS
from critpt_grader.result import GradeResult
from critpt_grader.verdict import Category
from tests.support.acceptance_fakes import MINI_SET, fake_loader, graded, mismatch
from tests.support.png import CHROMIUM, png_pixels

ZERO = Expected("scored", 0.0, "candidate_mismatch")


def _report() -> dict:
    acceptance_set = load_set(MINI_SET, load_tasks=fake_loader)
    items = []
    for line in range(1, 41):
        labels = (("float", "promise"), ("int",), ("set_expr",))[line % 3]
        if line % 2:
            result = GradeResult.of(Category.PASSED)
            items.append(graded("reference", result, labels=labels, line=line, set_name="mini"))
        else:
            wrong = line % 10 == 0  # a canary that passed: a disagreement
            result = GradeResult.of(Category.PASSED) if wrong else mismatch()
            items.append(
                graded("canary", result, expect=ZERO, labels=labels, line=line, set_name="mini")
            )
    context = RunContext([acceptance_set], [], None, None, datetime(2026, 11, 30, tzinfo=UTC), 2.0)
    return build_report(context, items)


@pytest.mark.slow
@pytest.mark.skipif(not CHROMIUM.exists(), reason="chromium is not installed (/usr/bin/chromium)")
def test_report_renders_with_text_tables_and_charts(tmp_path):
    page = tmp_path / "report.html"
    write_html(_report(), page)
    screenshot = tmp_path / "report.png"
    subprocess.run(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}",
            f"--screenshot={screenshot}",
            "--window-size=1280,2000",
            page.as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    assert screenshot.exists() and screenshot.stat().st_size > 10_000
    pixels = png_pixels(screenshot.read_bytes())[:, :, :3]
    assert pixels.shape[:2] == (2000, 1280)
    colours = {tuple(int(v) for v in p) for p in np.unique(pixels.reshape(-1, 3), axis=0)}
    assert len(colours) > 100, f"only {len(colours)} distinct colours: the page looks blank"
    for segment in SEGMENTS[:2]:  # reward 1 and reward 0 bars are drawn as solid fills
        rgb = tuple(int(segment.color[i : i + 2], 16) for i in (1, 3, 5))
        assert rgb in colours, f"chart colour {segment.color} ({segment.label}) not on screen"


def test_png_decoder_reads_every_filter_type():
    # One 3x5 RGB image with each row filtered differently, checked against its raw pixels.
    rng = np.random.default_rng(7)
    pixels = rng.integers(0, 256, size=(5, 3, 3), dtype=np.uint8)
    rows, previous = [], np.zeros(9, dtype=np.int32)
    for kind, row in enumerate(pixels.reshape(5, 9).astype(np.int32)):
        left = np.concatenate([np.zeros(3, dtype=np.int32), row[:-3]])
        upper_left = np.concatenate([np.zeros(3, dtype=np.int32), previous[:-3]])
        predictor = {
            0: np.zeros(9, dtype=np.int32),
            1: left,
            2: previous,
            3: (left + previous) // 2,
            4: np.array(
                [_paeth(a, b, c) for a, b, c in zip(left, previous, upper_left, strict=True)]
            ),
        }[kind]
        rows.append(bytes([kind]) + bytes(((row - predictor) % 256).astype(np.uint8)))
        previous = row
    ihdr = struct.pack(">IIBBBBB", 3, 5, 8, 2, 0, 0, 0)
    png = b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr)
    png += _chunk(b"IDAT", zlib.compress(b"".join(rows))) + _chunk(b"IEND", b"")
    assert np.array_equal(png_pixels(png), pixels)


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else (b if pb <= pc else c)


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
