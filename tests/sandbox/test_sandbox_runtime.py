"""The sandbox runtime: numpy, scipy, sympy and mpmath are importable by every program, and
a warm sandbox has scipy's common modules imported already."""

from __future__ import annotations

import asyncio
import textwrap

import pytest

from critpt_grader import codec
from critpt_grader.runner.program import SANDBOX_RUNTIME, SCIPY_MODULES
from critpt_grader.sandbox.base import Job, Limits
from critpt_grader.sandbox.local import LocalBackend
from critpt_grader.settings import Settings
from tests.support.paths import REPO

pytestmark = pytest.mark.sandbox

SCIPY_ANSWER = """
    import sys
    warm = sorted(name for name in {modules!r} if name in sys.modules)
    import numpy as np
    from scipy import constants, integrate, special, linalg, optimize
    def f():
        area, _ = integrate.quad(lambda x: np.exp(-x * x), -np.inf, np.inf)
        root = optimize.brentq(lambda x: special.jv(0, x), 2.0, 3.0)
        eigen = linalg.eigvalsh(np.array([[2.0, 1.0], [1.0, 2.0]]))
        return [area, root, [float(e) for e in eigen], constants.hbar, warm]
    """


@pytest.mark.parametrize("warm", [False, True], ids=["fresh", "warm"])
def test_a_scipy_answer_runs(warm):
    source = textwrap.dedent(SCIPY_ANSWER).format(modules=SCIPY_MODULES)
    job = Job(
        source=source,
        entrypoint="f",
        cases=({"args": [], "kwargs": {}},),
        limits=Limits(wall_seconds=60, case_seconds=30),
    )

    async def go():
        async with LocalBackend(Settings(warm_sandboxes=warm)) as backend:
            return await backend.run(job)

    outcome = asyncio.run(go())
    assert outcome.status == "ok", (outcome.detail, outcome.stderr[-500:])
    assert outcome.cases[0].kind == "value", outcome.cases[0].message
    area, root, eigen, hbar, preloaded = codec.decode(outcome.cases[0].value)
    assert area == pytest.approx(1.7724538509055159)  # sqrt(pi)
    assert root == pytest.approx(2.404825557695773)  # the first zero of J0
    assert eigen == pytest.approx([1.0, 3.0])
    assert hbar == pytest.approx(1.054571817e-34)
    # A warm sandbox imported them before the job; a fresh one leaves that to the program.
    assert preloaded == (sorted(SCIPY_MODULES) if warm else [])


def test_the_runtime_is_declared():
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    declared = {
        dep.split(">")[0].split("=")[0].strip() for dep in project["project"]["dependencies"]
    }
    assert set(SANDBOX_RUNTIME) <= declared
