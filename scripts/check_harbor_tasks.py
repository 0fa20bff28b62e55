"""Load every rendered task folder of an exported Harbor dataset with the ``harbor``
package's own task model (not run in CI: ``harbor`` needs Python >= 3.12).

    python3.12 -m venv /tmp/harbor && /tmp/harbor/bin/pip install harbor
    critpt-grader export-harbor fixtures/public/tasks.jsonl --out /tmp/ds --org critpt
    # render the rows into task folders (Gym's prepare, or the test suite's stand-in):
    .venv/bin/python -c "from pathlib import Path; from tests.harbor_standin import prepare; \
        prepare(Path('/tmp/ds'), Path('/tmp/ds-tasks'))"
    /tmp/harbor/bin/python scripts/check_harbor_tasks.py /tmp/ds-tasks

Prints one line per folder that harbor refuses, then a count; exits 1 when any was refused.
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
            # The verifier is Gym's Python verifier (tests/verifier.py), run by Gym's runner:
            # harbor's own check for a tests/test.sh does not apply to it.
            task = Task(folder, disable_verification=True)
            assert task.instruction.strip(), "empty instruction"
        except Exception as exc:  # report every folder, whatever harbor says
            refused += 1
            print(f"{folder.name}: {type(exc).__name__}: {exc}")
    print(f"{len(folders) - refused} of {len(folders)} task folders load with harbor's Task")
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
