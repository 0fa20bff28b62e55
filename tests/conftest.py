"""Shared test fixtures: where the shared reference data lives."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# Beside the checkout, or beside the folder of worktrees a checkout sits in.
SHARED = next(
    (folder / "shared" for folder in REPO.parents if (folder / "shared").is_dir()),
    REPO.parent / "shared",
)
CRITPT_PUBLIC = SHARED / "critpt-public"
EXAMPLE_ROWS = SHARED / "reference" / "critpt_custom_grader_example.jsonl"


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
