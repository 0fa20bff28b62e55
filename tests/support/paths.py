"""Where things are, for every test and helper: the checkout, the tests folder, the shared
reference data beside the checkout (or beside the folder of worktrees it sits in)."""

from __future__ import annotations

from pathlib import Path

SUPPORT = Path(__file__).resolve().parent  # helpers, attack programs (attacks/), data (data/)
TESTS = SUPPORT.parent
REPO = TESTS.parent
# Beside the checkout, or beside the folder of worktrees a checkout sits in.
SHARED = next(
    (folder / "shared" for folder in REPO.parents if (folder / "shared").is_dir()),
    REPO.parent / "shared",
)
CRITPT_PUBLIC = SHARED / "critpt-public"
EXAMPLE_ROWS = SHARED / "reference" / "critpt_custom_grader_example.jsonl"
PUBLIC_FIXTURES = REPO / "fixtures" / "public"
PUBLIC_TASKS = PUBLIC_FIXTURES / "tasks.jsonl"
