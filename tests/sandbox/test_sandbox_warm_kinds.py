"""Warm sandboxes preload SciPy only for jobs whose text names it (the host's choice, from
the job's own source): every other job's sandbox forks a smaller image."""

from __future__ import annotations

import asyncio
import shutil

import pytest

from critpt_grader import codec
from critpt_grader.sandbox.base import Job
from critpt_grader.sandbox.containment import bwrap_works
from critpt_grader.sandbox.local import LocalBackend, _pool_key
from critpt_grader.settings import Settings

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(
        shutil.which("bwrap") is None or not bwrap_works(),
        reason="bubblewrap (bwrap) is not installed or cannot run here",
    ),
]

CASES = ({"args": [], "kwargs": {}},)
# The module's name is computed, so the text of this job does not name it.
PLAIN = "import sys\ndef f():\n    return ('sci' + 'py') in sys.modules\n"
NAMES_IT = "import sys\nimport scipy.special\ndef f():\n    return 'scipy.stats' in sys.modules\n"


def test_each_job_gets_a_sandbox_of_its_own_kind():
    async def go():
        async with LocalBackend(Settings()) as backend:
            outcomes = []
            for source in (PLAIN, NAMES_IT, PLAIN, NAMES_IT):
                job = Job(source=source, entrypoint="f", cases=CASES)
                outcomes.append(await backend.run(job))
            pools = {key: len(pool) for key, pool in backend._idle.items() if pool}
            return outcomes, pools

    outcomes, pools = asyncio.run(go())
    assert [o.status for o in outcomes] == ["ok"] * 4, [o.detail for o in outcomes]
    seen = [codec.decode(o.cases[0].value) for o in outcomes]
    assert seen == [False, True, False, True]  # stats preloaded only where SciPy is named
    assert pools == {"candidate": 1, "candidate+scipy": 1}


def test_the_kind_follows_the_job_text_and_role():
    def key(source: str, role: str = "candidate", setup: str | None = None) -> str:
        job = Job(source=source, entrypoint="f", cases=CASES, role=role, setup_source=setup)  # type: ignore[arg-type]
        return _pool_key(job)

    assert key(PLAIN) == "candidate"
    assert key(NAMES_IT) == "candidate+scipy"
    assert key(PLAIN, "reference") == "reference"
    assert key(PLAIN, setup="from scipy import constants") == "candidate+scipy"
