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
# containment a container allows, and the grader, installed offline from the wheel beside
# this file.
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

The answer is the runner's ``response`` when there is one, else ``answer.md`` in the
workspace; the candidate's code runs in a sandbox, never in this process.
"""

from critpt_grader.harbor.verifier import verify

__all__ = ["verify"]
'''

TASK_DATA_HEADER = '''\
"""The rows of this dataset, as typed by critpt-grader (Pydantic, strict: an unknown key or
a value of the wrong JSON type is refused). Keep this module to the model: Gym imports it."""

from typing import Any

from pydantic import BaseModel, ConfigDict


class TaskData(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

'''
