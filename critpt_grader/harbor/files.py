"""The fixed files of an exported Harbor dataset (the same for every task).

Placeholders ``{{ task_data.<key> }}`` are filled by Gym's prepare from each row; the
exporter adds the derived, brace-safe keys (``instruction``, ``solution``) so that the
templates stay trivial.
"""

from __future__ import annotations

INSTRUCTION_TEMPLATE = "{{ task_data.instruction }}\n"

ANSWER_TEMPLATE = "{{ task_data.solution }}\n"

TASK_TOML = """\
{name_line}
[metadata]
source = "critpt-grader export-harbor"
grader = "critpt-grader {version}"

[verifier]
timeout_sec = {verifier_timeout}

[agent]
timeout_sec = {agent_timeout}

[environment]
cpus = 2
memory_mb = 4096
"""

DATASET_TOML = """\
[dataset]
name = "{name}"
description = "{description}"
tasks = {count}
format = "{task_format}"
grader = "critpt-grader {version}"
"""

DOCKERFILE = """\
# The task's environment: Python with the scientific stack, bubblewrap for the strongest
# containment a container allows, and the grader from the wheel beside this file. The build
# needs the network: apt-get fetches bubblewrap from Debian's mirror and pip fetches the
# wheel's dependencies (numpy, scipy, sympy, mpmath, pydantic, ...) from the package index
# (PIP_INDEX_URL names a mirror). Only critpt-grader itself comes from this folder.
FROM python:3.11-slim
RUN apt-get update \\
    && apt-get install -y --no-install-recommends bubblewrap \\
    && rm -rf /var/lib/apt/lists/*
COPY {wheel} /tmp/wheels/
RUN pip install --no-cache-dir /tmp/wheels/{wheel} \\
    && useradd --system --no-create-home --shell /usr/sbin/nologin critpt-sandbox
WORKDIR /app
"""

VERIFIER = '''\
"""Grades the agent's answer with critpt-grader (installed in this task's image).

The answer is ``answer.md`` in the workspace when it holds text (as the instruction asks),
else the runner's ``response`` when there is one; the candidate's code runs in a sandbox,
never in this process.
"""

from critpt_grader.harbor.verifier import verify

__all__ = ["verify"]
'''

TEST_SH = """\
#!/bin/sh
# Plain Harbor's verifier (Gym's Python-verifier runner calls verifier.py's verify() itself
# and does not run this): grade the agent's answer.md in the working directory through
# verifier.py and write Harbor's reward file, reward.json in /logs/verifier. A reward file
# already there (the folder is shared with the agent) is removed first; when grading fails,
# none is written (a missing reward), and the exit status is 1.
#   CRITPT_WORKSPACE   the agent's working directory (default: /app, the image's WORKDIR)
#   CRITPT_REWARD_DIR  where the reward goes (default: /logs/verifier)
here=$(cd "$(dirname "$0")" && pwd) || exit 1
rewards=${CRITPT_REWARD_DIR:-/logs/verifier}
mkdir -p "$rewards" || exit 1
rm -f "$rewards/reward.json" "$rewards/reward.txt" || exit 1
exec python3 - "$here" "${CRITPT_WORKSPACE:-/app}" "$rewards" <<'PY'
import base64, json, os, sys
from pathlib import Path

here, workspace, rewards = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
sys.path.insert(0, str(here))
from verifier import verify

task_data = json.loads(base64.b64decode((here / "task_data.b64").read_text().strip()))
metrics = verify(workspace, task_data)
text = json.dumps({key: float(value) for key, value in metrics.items()})
flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
fd = os.open(rewards / "reward.json", flags, 0o644)
with os.fdopen(fd, "w") as handle:
    handle.write(text + "\\n")
print(f"reward {metrics['reward']:g}", file=sys.stderr)
PY
"""

TASK_DATA_HEADER = '''\
"""The rows of this dataset, as typed by critpt-grader (Pydantic, strict: an unknown key or
a value of the wrong JSON type is refused, and so is every row the grader's own loader
refuses: ``schema_version`` other than 1, no test cases, an entry point that is no
identifier, a malformed case; where critpt-grader is importable the row also goes through
its loader). Keep this module to the model: Gym imports it on the host."""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

IDENTIFIER = r"^[A-Za-z_][A-Za-z0-9_]*$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class LeafTolerance(_Strict):
    path: str
    rtol: str | int | float | None = None
    atol: str | int | float | None = None
    quantity: str | None = None


class ExpectedValue(_Strict):
    kind: Literal["value"]
    value: dict[str, Any]


class ExpectedException(_Strict):
    kind: Literal["exception"]
    message: str | None = None
    error_type: str | None = None


class Case(_Strict):
    args: list[dict[str, Any]] = Field(default_factory=list, max_length=128)
    kwargs: dict[str, dict[str, Any]] = Field(default_factory=dict, max_length=128)
    expected: ExpectedValue | ExpectedException = Field(discriminator="kind")
    tolerances: list[LeafTolerance] = Field(default_factory=list)


class TaskData(_Strict):
'''

TASK_DATA_FOOTER = """
    @model_validator(mode="after")
    def _as_the_grader_loads_it(self):
        try:
            from critpt_grader.harbor.verifier import task_document
            from critpt_grader.tasks import load_document
        except ImportError:  # a host without critpt-grader: the fields above are the check
            return self
        try:
            load_document(task_document(self.model_dump(exclude_unset=True)))
        except Exception as exc:  # the grader's TaskError names the field
            raise ValueError(f"the grader refuses this row: {exc}") from None
        return self
"""
