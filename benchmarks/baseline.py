"""An earlier commit checked out beside this tree, for benchmarks that measure both in one run
(``--against REV``)."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


@contextlib.contextmanager
def baseline_tree(revision: str) -> Iterator[Path]:
    """``revision`` in a temporary worktree the sandbox user can read, removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="critpt-baseline-"))
    folder.chmod(0o755)  # the sandbox user reads the baseline's package
    tree = folder / "tree"
    git = ["git", "-C", str(HERE), "worktree"]
    subprocess.run([*git, "add", "--detach", "-q", str(tree), revision], check=True)
    try:
        yield tree
    finally:
        subprocess.run([*git, "remove", "--force", str(tree)], check=False)
        shutil.rmtree(folder, ignore_errors=True)
