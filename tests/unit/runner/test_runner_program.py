"""The runner logic every backend shares: loading, entry points, inputs, outcomes."""

from __future__ import annotations

import json

import pytest

from critpt_grader import codec
from critpt_grader.runner.program import SourceError, load_program, resolve_entrypoint, run_case


def job(source: str, cases: list[dict], **extra) -> dict:
    """A job as the runner receives it: plain JSON."""
    return (
        json.loads(
            json.dumps({"source": source, "entrypoint": "f", "cases": cases, "role": "candidate"})
        )
        | extra
    )


def call(*args, **kwargs) -> dict:
    return {
        "args": [codec.encode(a) for a in args],
        "kwargs": {k: codec.encode(v) for k, v in kwargs.items()},
    }


def outcome_of(source: str, case: dict, **extra) -> dict:
    program = load_program(job(source, [case], **extra))
    return run_case(program, 0, value_bytes=1 << 20)


def test_value_is_encoded_with_the_codec():
    outcome = outcome_of("def f(a, b=0):\n    return [a, b, 1/3]\n", call(2, b=5))
    assert outcome["kind"] == "value"
    assert codec.decode(outcome["value"]) == [2, 5, 1 / 3]


def test_exception_type_and_message():
    outcome = outcome_of("def f():\n    raise KeyError('k')\n", call())
    assert (outcome["kind"], outcome["error_type"]) == ("exception", "KeyError")
    assert "k" in outcome["message"]


def test_exit_inside_a_call_is_an_exception_not_an_exit():
    outcome = outcome_of("import sys\ndef f():\n    sys.exit(3)\n", call())
    assert (outcome["kind"], outcome["error_type"]) == ("exception", "SystemExit")


def test_long_messages_are_truncated():
    outcome = outcome_of("def f():\n    raise ValueError('x' * 100000)\n", call())
    assert len(outcome["message"]) <= 2000


def test_unencodable_value_is_an_encode_error_with_the_codec_code():
    outcome = outcome_of("def f():\n    return f\n", call())
    assert (outcome["kind"], outcome["error_type"]) == ("encode_error", "invalid_type")


def test_value_over_the_output_budget_is_refused():
    program = load_program(job("def f():\n    return 'x' * 5000\n", [call()]))
    outcome = run_case(program, 0, value_bytes=1000)
    assert (outcome["kind"], outcome["error_type"]) == ("encode_error", "output_limit")


def test_memory_error_is_memory():
    outcome = outcome_of("def f():\n    raise MemoryError\n", call())
    assert outcome["kind"] == "memory"


@pytest.mark.parametrize(
    ("source", "fragment"),
    [
        ("def f(:\n  pass\n", "line 1"),
        ("x = 1\ny = 1/0\ndef f():\n  pass\n", "ZeroDivisionError: division by zero (line 2)"),
        ("raise SystemExit(1)\n", "SystemExit"),
        ("f = 3\n", "'f' is a int, not a function"),
        ("def g():\n  pass\ndef h():\n  pass\n", "public functions defined: g, h"),
    ],
)
def test_source_errors_say_what_and_where(source, fragment):
    with pytest.raises(SourceError, match=None) as error:
        load_program(job(source, [call()]))
    assert fragment in str(error.value)


def test_fallback_takes_the_only_public_function_defined_by_the_source():
    namespace = {}
    exec(compile("from math import sqrt\ndef _p():\n  pass\ndef g():\n  return 1\n", "<c>", "exec"),
         namespace)  # fmt: skip
    assert resolve_entrypoint(namespace, "answer", "<c>", allow_fallback=True) is namespace["g"]
    with pytest.raises(SourceError):
        resolve_entrypoint(namespace, "answer", "<c>", allow_fallback=False)


def test_arguments_are_fresh_for_every_case():
    source = "def f(items):\n    items.append(1)\n    return len(items)\n"
    program = load_program(job(source, [call([0]), call([0])]))
    first = run_case(program, 0, value_bytes=1 << 20)
    second = run_case(program, 0, value_bytes=1 << 20)
    assert codec.decode(first["value"]) == codec.decode(second["value"]) == 2


def test_symbolic_arguments_are_parsed_into_sympy():
    case = {"args": [{"format": "critpt-value-v1", "value": ["symbolic", "x**2 + 1"]}]}
    outcome = outcome_of("import sympy\ndef f(e):\n    return sympy.diff(e, 'x')\n", case)
    assert codec.decode(outcome["value"]).text == "2*x"


def test_input_conversions_make_symbols_and_functions():
    source = "import sympy\ndef f(x, g):\n    return [type(x).__name__, str(g(x))]\n"
    outcome = outcome_of(source, call("x", "g"), input_conversions=["symbol", "function"])
    assert codec.decode(outcome["value"]) == ["Symbol", "g(x)"]


def test_bad_input_envelope_is_a_source_error():
    case = {"args": [{"format": "critpt-value-v1", "value": ["int", 5]}]}
    with pytest.raises(SourceError, match="case 0: unusable input"):
        load_program(job("def f(x):\n    return x\n", [case]))


def test_setup_builds_named_inputs_and_their_assumptions():
    setup = "import sympy as sp\nm, r0 = sp.symbols('m r0', positive=True)\nk = sp.Integer(2)\n"
    source = setup + "def answer(m, r0, k):\n    return sp.sqrt(m**2) * r0 * k\n"
    program = load_program(
        job(source, [{"names": ["m", "r0", "k"]}], entrypoint="answer", setup_source=setup)
    )
    outcome = run_case(program, 0, value_bytes=1 << 20)
    # sqrt(m**2) collapsed to m because the setup declared m positive.
    assert codec.decode(outcome["value"]).text == "2*m*r0"
    assert program.symbols == {"m": {"positive": True}, "r0": {"positive": True}}


def test_named_input_missing_from_the_setup_is_a_source_error():
    with pytest.raises(SourceError, match="does not define q"):
        load_program(job("def f(q):\n    return q\n", [{"names": ["q"]}], setup_source="p = 1\n"))


def test_the_program_is_a_real_module_for_dataclasses_and_pickle():
    source = (
        "from __future__ import annotations\n"
        "import dataclasses, pickle\n"
        "from typing import ClassVar\n"
        "@dataclasses.dataclass\n"
        "class Point:\n"
        "    dims: ClassVar[int] = 2\n"
        "    x: float = 0.0\n"
        "def f():\n"
        "    return pickle.loads(pickle.dumps(Point(1.5))).x\n"
    )
    assert codec.decode(outcome_of(source, call())["value"]) == 1.5


def test_setup_values_are_fresh_for_every_case():
    setup = "values = [1, 2]\n"
    source = "def f(values):\n    values.append(3)\n    return len(values)\n"
    program = load_program(
        job(source, [{"names": ["values"]}, {"names": ["values"]}], setup_source=setup)
    )
    lengths = [codec.decode(run_case(program, i, value_bytes=1 << 20)["value"]) for i in (0, 1)]
    assert lengths == [3, 3]
