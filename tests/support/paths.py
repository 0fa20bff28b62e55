"""Where things are, for every test and helper: the checkout, the tests folder, the shared
reference data beside the checkout (or beside the folder of worktrees it sits in)."""

from __future__ import annotations

import sys
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


def runtime_folders_in_tmp() -> set[str]:
    """The folders right under /tmp that hold the checkout or the venv (none when both are
    elsewhere, as in CI): a sandbox that binds the runtime at its own path shows them in its
    own /tmp."""
    tops = set()
    for path in (Path(sys.prefix), REPO):
        resolved = path.resolve()
        if resolved.is_relative_to("/tmp") and resolved != Path("/tmp"):
            tops.add(str(Path("/tmp") / resolved.relative_to("/tmp").parts[0]))
    return tops
