"""Shared test fixtures: where the shared reference data lives."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.paths import CRITPT_PUBLIC, EXAMPLE_ROWS


@pytest.fixture
def example_rows_path() -> Path:
    if not EXAMPLE_ROWS.exists():
        pytest.skip(f"shared reference rows absent ({EXAMPLE_ROWS})")
    return EXAMPLE_ROWS


@pytest.fixture
def critpt_public() -> Path:
    if not CRITPT_PUBLIC.exists():
        pytest.skip(f"CritPt public data absent ({CRITPT_PUBLIC})")
    return CRITPT_PUBLIC
