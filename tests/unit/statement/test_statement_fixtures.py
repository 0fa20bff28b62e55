"""The statement-reading acceptance tasks (``fixtures/sources/public/c_statement.py``) test
what they claim: every canary is rejected under the statement as written, yet would pass if a
clause were lent to its output (or a decoy were read), and every equivalent passes."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from critpt_grader.codec import decode
from critpt_grader.compare import Policy, compare_values
from tests.support.paths import REPO

SOURCE = REPO / "fixtures" / "sources" / "public" / "c_statement.py"
BUILDER = REPO / "fixtures" / "sources" / "build_public.py"


def _module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


SPECS = {spec["id"]: spec for spec in _module(SOURCE, "_c_statement").TASKS}
builder = _module(BUILDER, "_build_public_for_statement_tests")


def _outputs(spec, source):
    fn = builder.load_entrypoint(source, spec["entrypoint"], spec["id"])
    return [builder.call_case(fn, case, None) for case in spec["cases"]]


def _expected(spec):
    return _outputs(spec, spec["reference"])


def _statuses(problem, expected, got):
    # the comparator sees values as they come off the wire
    from critpt_grader.codec import encode

    return [
        compare_values(decode(encode(e)), decode(encode(g)), Policy(problem=problem)).status
        for e, g in zip(expected, got, strict=True)
    ]


def _canary(spec, start: str) -> str:
    return next(source for label, source in spec["canaries"] if label.startswith(start))


# Per canary: the reading that would wrongly pass it (a clause lent to its output, a decoy
# read, the old significant-figure rule), as a statement the grader reads that way.
LENT = [
    ("optics-etalon-figures-per-output", "fsr off", "Report every output to 3 decimal places."),
    (
        "optics-etalon-figures-per-output",
        "finesse off",
        "Report every output to 4 significant figures.",
    ),
    (
        "optics-etalon-figures-per-output",
        "contrast off",
        "Report every output with relative error below 5e-4.",
    ),
    ("optics-etalon-figures-per-output", "F off", "Report every output to 4 significant figures."),
    ("compton-decoy-precision", "rest energy", "Report it to within 0.1%."),
    ("compton-decoy-precision", "off by 0.05%", "Report it to within 0.1%."),
    ("compton-decoy-precision", "rounded to three", "Report it to three decimal places."),
    (
        "qm-two-level-decoy-conventions",
        "energy with",
        "Return the tuple (E0, sz, populations). E0 is defined only up to an overall sign.",
    ),
    (
        "qm-two-level-decoy-conventions",
        "sz with",
        "Return the tuple (E0, sz, populations). sz is defined only up to an overall sign.",
    ),
    (
        "qm-two-level-decoy-conventions",
        "populations in",
        "Return the tuple (E0, sz, populations). Return populations in any order.",
    ),
    (
        "qm-two-level-decoy-conventions",
        "the whole answer",
        "Return the answer up to an overall sign.",
    ),
]


@pytest.mark.parametrize(("task", "canary", "lent"), LENT, ids=[f"{t}:{c}" for t, c, _ in LENT])
def test_canary_is_caught_only_by_the_right_reading(task, canary, lent):
    spec = SPECS[task]
    expected, got = _expected(spec), _outputs(spec, _canary(spec, canary))
    as_written = _statuses(builder.problem_text(spec), expected, got)
    assert "mismatch" in as_written and "uncertain" not in as_written
    assert set(_statuses(lent, expected, got)) == {"equal"}, "inside the lent reading everywhere"


@pytest.mark.parametrize("task", sorted(SPECS))
def test_equivalents_pass_under_the_statement(task):
    spec = SPECS[task]
    expected = _expected(spec)
    for source in spec["equivalents"]:
        statuses = _statuses(builder.problem_text(spec), expected, _outputs(spec, source))
        assert set(statuses) == {"equal"}


def test_the_rounded_etalon_equivalent_needs_each_promise_on_its_output():
    spec = SPECS["optics-etalon-figures-per-output"]
    expected = _expected(spec)
    rounded = _outputs(spec, spec["equivalents"][1])
    assert set(_statuses("", expected, rounded)) == {"mismatch"}  # no promise: rejected
    assert set(_statuses(builder.problem_text(spec), expected, rounded)) == {"equal"}


def test_the_tasks_are_in_the_public_set():
    rows = [json.loads(line) for line in (REPO / "fixtures/public/tasks.jsonl").open()]
    ids = {row["task_data"]["problem_id"] for row in rows}
    assert {f"pub-{task}" for task in SPECS} <= ids
