"""Load an exported Harbor dataset with the ``harbor`` package's own models: every rendered
task folder with its ``Task`` (its check for ``tests/test.sh`` on), and, when the dataset
folder is given, ``dataset.toml`` with its ``DatasetManifest`` (the ``org/name`` check).
``harbor`` needs Python >= 3.12: ``bash .ci/gym-check`` runs this in CI where one exists.

    python3.12 -m venv /tmp/harbor && /tmp/harbor/bin/pip install harbor
    critpt-grader export-harbor fixtures/public --out /tmp/ds
    # render the rows into task folders (Gym's prepare, or the test suite's stand-in):
    .venv/bin/python -c "from pathlib import Path; \
        from tests.support.harbor_standin import prepare; \
        prepare(Path('/tmp/ds'), Path('/tmp/ds-tasks'))"
    /tmp/harbor/bin/python scripts/check_harbor_tasks.py /tmp/ds-tasks /tmp/ds

Prints one line per folder or file that harbor refuses, then a count; exits 1 when any was
refused.
"""

from __future__ import annotations

import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    from harbor.models.task.task import Task

    root = Path(argv[0])
    folders = sorted(p for p in root.iterdir() if p.is_dir())
    refused = 0
    for folder in folders:
        try:
            task = Task(folder)
            assert task.instruction.strip(), "empty instruction"
            assert (folder / "tests" / "test.sh").is_file(), "no tests/test.sh"
        except Exception as exc:  # report every folder, whatever harbor says
            refused += 1
            print(f"{folder.name}: {type(exc).__name__}: {exc}")
    print(f"{len(folders) - refused} of {len(folders)} task folders load with harbor's Task")
    if len(argv) > 1:
        from harbor.models.dataset.manifest import DatasetManifest

        try:
            manifest = DatasetManifest.from_toml_file(Path(argv[1]) / "dataset.toml")
            print(f"dataset.toml loads with harbor's DatasetManifest: {manifest.dataset.name}")
        except Exception as exc:
            refused += 1
            print(f"dataset.toml: {type(exc).__name__}: {exc}")
    return 1 if refused or not folders else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
