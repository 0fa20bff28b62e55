"""Task loading: the five example rows, every CritPt public file, strict validation."""

from __future__ import annotations

import copy
import json

import pytest

from critpt_grader.errors import InputError, TaskError
from critpt_grader.tasks import load_row, load_task, load_tasks
from critpt_grader.tasks.critpt import declared_outputs

ROW = {
    "responses_create_params": {"input": [{"role": "user", "content": "Implement f(n)."}]},
    "task_data": {
        "schema_version": 1,
        "problem_id": "t-1",
        "reference_source": "def f(n):\n    return n + 1\n",
        "entrypoint": "f",
        "test_cases": [
            {
                "args": [{"format": "critpt-value-v1", "value": ["int", "1"]}],
                "expected": {
                    "kind": "value",
                    "value": {"format": "critpt-value-v1", "value": ["int", "2"]},
                },
            }
        ],
    },
}


def row(**changes):
    result = copy.deepcopy(ROW)
    result["task_data"].update(changes)
    return result


def test_all_five_example_rows_load_unchanged(example_rows_path):
    tasks = load_tasks(example_rows_path)
    assert [t.problem_id for t in tasks] == [
        "original-integer-step-v1",
        "original-rational-half-v1",
        "original-reciprocal-tolerance-v1",
        "original-pair-summary-v1",
        "original-symbolic-offset-square-v1",
    ]
    reciprocal = tasks[2]
    assert (reciprocal.rtol, reciprocal.atol) == ("0", "1e-12")
    assert tasks[0].cases[0].expected.value["value"] == ["int", "18446744073709551617"]


def test_wrapped_bare_and_verifier_metadata_rows_agree():
    bare = {**ROW["task_data"], "responses_create_params": ROW["responses_create_params"]}
    meta = {
        "responses_create_params": ROW["responses_create_params"],
        "verifier_metadata": ROW["task_data"],
    }
    assert load_row(ROW) == load_row(bare) == load_row(meta)


def test_unknown_key_names_task_and_field():
    with pytest.raises(TaskError) as err:
        load_row(row(colour="blue"))
    assert err.value.task_id == "t-1" and err.value.field == "colour"
    assert "t-1" in str(err.value) and "colour" in str(err.value)


def test_unknown_key_inside_a_case_names_its_place():
    bad = row()
    bad["task_data"]["test_cases"][0]["extra"] = 1
    with pytest.raises(TaskError) as err:
        load_row(bad)
    assert err.value.field.startswith("test_cases[0]")


def test_framework_bookkeeping_keys_are_stripped():
    marked = row(_ng_attempt=3)
    marked["_ng_row_id"] = "abc"
    assert load_row(marked).problem_id == "t-1"


def test_alias_with_canonical_name_is_an_error():
    with pytest.raises(TaskError) as err:
        load_row(row(entry="f"))
    assert err.value.field == "entry"


def test_field_aliases_are_accepted():
    spec = dict(ROW["task_data"])
    spec["reference_code"] = spec.pop("reference_source")
    spec["entry"] = spec.pop("entrypoint")
    spec["testcases"] = spec.pop("test_cases")
    task = load_row({"task_data": spec})
    assert task.entrypoint == "f" and task.reference_source.startswith("def f")


def test_case_aliases_become_canonical():
    task = load_row(
        row(
            test_cases=[
                {"input": [1, 2.5, "x"], "output": "x-1"},
                {"input": [0], "expected_error": "ZeroDivisionError"},
                {
                    "inputs": {"n": "7/19"},
                    "expected_output": [1, {"__complex__": [1, 2]}],
                    "comparison_type": "numeric",
                },
            ]
        )
    )
    first, second, third = task.cases
    assert [a["value"] for a in first.args] == [["int", "1"], ["float", (2.5).hex()], ["str", "x"]]
    assert first.expected.value["value"] == ["legacy", "x-1"]
    assert second.expected.kind == "exception" and second.expected.message == "ZeroDivisionError"
    assert third.kwargs["n"]["value"] == ["legacy", "7/19"]
    assert third.expected.value["value"] == [
        "list",
        [["int", "1"], ["complex", ["int", "1"], ["int", "2"]]],
    ]


def test_an_exception_expectation_may_state_its_type():
    task = load_row(
        row(
            test_cases=[
                {"input": [0], "expected_error": "division by zero"},
                {"input": [0], "expected_error": "m", "error_type": "ZeroDivisionError"},
                {"args": [], "expected": {"kind": "exception", "error_type": "builtins.OSError"}},
                {"args": [], "expected": {"kind": "exception"}},
            ]
        )
    )
    assert [c.expected.error_type for c in task.cases] == [
        None,
        "ZeroDivisionError",
        "OSError",
        None,
    ]


@pytest.mark.parametrize("stated", ["NameError", "SystemExit", "NoSuchError", 7])
def test_an_unmeetable_stated_exception_type_is_refused(stated):
    with pytest.raises(TaskError) as err:
        load_row(row(test_cases=[{"input": [0], "expected_error": "m", "error_type": stated}]))
    assert err.value.field == "test_cases[0].expected.error_type"


def test_mixed_case_shape_is_rejected():
    with pytest.raises(TaskError) as err:
        load_row(row(test_cases=[{"input": [1], "expected_output": 2}]))
    assert err.value.field == "test_cases[0]"


@pytest.mark.parametrize("bad", [True, "nan", -1, "1e999999", "abc", float("inf")])
def test_bad_tolerances_are_rejected(bad):
    with pytest.raises(TaskError) as err:
        load_row(row(rtol=bad))
    assert err.value.field == "rtol"


def test_tolerances_stay_exact_text_and_zero_is_kept():
    task = load_row(row(rtol="0", atol=1e-12, tolerances=[{"path": "root", "rtol": 0.5}]))
    assert (task.rtol, task.atol) == ("0", "1e-12")
    assert task.tolerances[0].path == "" and task.tolerances[0].rtol == "0.5"


def test_leaf_paths_normalize_and_duplicates_are_rejected():
    task = load_row(row(tolerances=[{"path": "a~1b", "atol": "1"}, {"path": "/x/0", "rtol": 1}]))
    assert [t.path for t in task.tolerances] == ["/a~1b", "/x/0"]
    with pytest.raises(TaskError):
        load_row(row(tolerances=[{"path": "/x", "atol": 1}, {"path": "x", "rtol": 1}]))
    with pytest.raises(TaskError):
        load_row(row(tolerances=[{"path": "/x~2", "atol": 1}]))
    with pytest.raises(TaskError):
        load_row(row(tolerances=[{"path": "/x"}]))


@pytest.mark.parametrize("name", ["class", "1f", "_f", "f-g", ""])
def test_bad_entrypoints_are_rejected(name):
    with pytest.raises(TaskError) as err:
        load_row(row(entrypoint=name))
    assert err.value.field == "entrypoint"


def test_bad_wire_value_names_its_place():
    bad = row()
    bad["task_data"]["test_cases"][0]["args"][0]["value"] = ["int", 1]  # raw JSON number
    with pytest.raises(TaskError) as err:
        load_row(bad)
    assert err.value.field == "test_cases[0].args[0]"


def test_too_many_cases_and_no_cases_are_rejected():
    case = ROW["task_data"]["test_cases"][0]
    with pytest.raises(TaskError):
        load_row(row(test_cases=[]))
    with pytest.raises(TaskError):
        load_row(row(test_cases=[case] * 65))


def test_jsonl_rejects_duplicate_keys(tmp_path):
    path = tmp_path / "tasks.jsonl"
    path.write_text('{"a": 1, "a": 2}\n')
    with pytest.raises(InputError) as err:
        load_tasks(path)
    assert "tasks.jsonl:1" in str(err.value) and "duplicate" in str(err.value)


def test_every_critpt_public_file_loads(critpt_public):
    files = sorted(critpt_public.glob("*/*.json"))
    assert len(files) >= 72
    tasks = [task for path in files for task in load_tasks(path)]
    assert len(tasks) >= 74
    for task in tasks:
        assert task.origin == "critpt" and task.entrypoint == "answer"
        assert task.cases[0].names is not None and task.cases[0].expected is None
    example = {
        t.problem_id: t
        for t in load_tasks(critpt_public / "example_challenges" / "quantum_error_correction.json")
    }
    main = example["quantum_error_correction_main"]
    assert main.reference_entrypoint == "real_answer"
    assert main.cases[0].names == ("p",) and "sp.symbols('p')" in main.setup_source
    assert declared_outputs(main.output_doc)[0][0] == "F_logical"


def test_critpt_templates_declare_inputs_and_outputs(critpt_public):
    c3 = load_tasks(critpt_public / "public_test_challenges" / "Challenge_3.json")[0]
    assert c3.cases[0].names == ("m", "eta", "r0") and c3.unresolved_inputs == ()
    assert "positive=True" in c3.setup_source
    c62 = load_tasks(critpt_public / "public_test_challenges" / "Challenge_62.json")[0]
    assert c62.unresolved_inputs == ("k_value",)
    assert [kind for _, kind in declared_outputs(c62.output_doc)] == [
        "sympy.Expr",
        "sympy.Interval",
        "sympy.Expr",
    ]


def test_unknown_key_in_a_challenge_names_problem_and_field(critpt_public):
    document = json.loads(
        (critpt_public / "public_test_challenges" / "Challenge_3.json").read_text()
    )
    document["problems"][0]["difficulty"] = "hard"
    with pytest.raises(TaskError) as err:
        load_task(document)
    assert err.value.task_id == "Challenge_3_main" and "difficulty" in err.value.field
