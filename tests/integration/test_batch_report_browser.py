"""Render the batch results report in headless Chromium, as the acceptance report is: the
DOM Chromium builds holds every table and both charts, and the screenshot shows the chart's
segment colours and the tables' striped rows (a blank or unstyled page would not)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from critpt_grader.reports.batch.html import write_html
from critpt_grader.reports.batch.summary import summarize
from critpt_grader.reports.charts import SEGMENTS
from tests.support.batch_out import public_problems, synthetic_out
from tests.support.png import CHROMIUM, png_pixels

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="chromium is not installed"),
]

_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(CHROMIUM), *_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args],
        check=True,
        capture_output=True,
        timeout=120,
    )


@pytest.fixture
def page(tmp_path: Path) -> Path:
    problems = public_problems(16)
    summary = summarize(synthetic_out(problems), synthetic_out(problems, flip=7))
    path = tmp_path / "report.html"
    write_html(summary, path)
    return path


def test_chromium_builds_every_table_and_both_charts(tmp_path, page):
    dom = _chromium(tmp_path, "--dump-dom", page.as_uri()).stdout.decode()
    # pass@k, categories, reasons, per problem, slowest, side by side, transitions, changed
    assert dom.count("<table>") == 8
    assert dom.count("<svg") == 2 and dom.count("<rect") > 40
    for text in ("Per problem (17)", "Slowest rows", "rows that changed", "95% CI"):
        assert text.lower() in dom.lower()


def test_the_screenshot_shows_charts_and_striped_tables(tmp_path, page):
    screenshot = tmp_path / "report.png"
    _chromium(tmp_path, f"--screenshot={screenshot}", "--window-size=1280,2400", page.as_uri())
    pixels = png_pixels(screenshot.read_bytes())[:, :, :3]
    assert pixels.shape[:2] == (2400, 1280)
    colours = {tuple(int(v) for v in p) for p in np.unique(pixels.reshape(-1, 3), axis=0)}
    assert len(colours) > 100, f"only {len(colours)} distinct colours: the page looks blank"
    for segment in SEGMENTS[:4]:  # reward 1, reward 0, unscorable, failure
        rgb = tuple(int(segment.color[i : i + 2], 16) for i in (1, 3, 5))
        assert rgb in colours, f"chart colour {segment.color} ({segment.label}) not on screen"
    assert (248, 249, 250) in colours  # the even table rows' background (--soft)
