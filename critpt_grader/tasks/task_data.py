"""Loader for NeMo Gym CritPt ``task_data`` schema v1 rows.

A row is ``{"responses_create_params", "task_data": spec}``, or the spec under
``verifier_metadata``, or flat at the top level ("bare"). Validation is strict: unknown
keys are rejected with an error naming the task and the field; keys starting with ``_ng_``
are framework bookkeeping and are stripped. Accepted case aliases (``{input, output}``,
``{input, expected_error[, error_type]}``, ``{inputs, expected_output[, comparison_type]}``)
and field aliases (``reference_code``, ``entry``, ``testcases``) are normalized here, so
everything downstream sees one canonical shape. An exception expectation's optional
``error_type`` must name a builtin exception class that a raise can meet
(:func:`critpt_grader.raised.expected_type`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from critpt_grader import raised
from critpt_grader.errors import CodecError, TaskError
from critpt_grader.tasks import fields
from critpt_grader.tasks.model import Case, Expectation, LeafTolerance, Task

ENVELOPE_FORMAT = "critpt-value-v1"
_FIELD_ALIASES = {
    "reference_code": "reference_source",
    "entry": "entrypoint",
    "testcases": "test_cases",
}
_SPEC_CONTAINERS = ("task_data", "verifier_metadata")
_ROW_KEYS = {"responses_create_params", *_SPEC_CONTAINERS}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class LeafToleranceModel(_Strict):
    path: str
    rtol: str | int | float | None = None
    atol: str | int | float | None = None
    quantity: str | None = None

    @field_validator("path", mode="before")
    @classmethod
    def _path(cls, value: object) -> str:
        return fields.json_pointer(value)

    @field_validator("rtol", "atol", mode="before")
    @classmethod
    def _tolerance(cls, value: object) -> str | None:
        return None if value is None else fields.tolerance_text(value)

    def to_leaf(self) -> LeafTolerance:
        if self.rtol is None and self.atol is None:
            raise ValueError("a leaf tolerance needs rtol or atol")
        return LeafTolerance(self.path, self.rtol, self.atol, self.quantity)


class ExpectedValue(_Strict):
    kind: Literal["value"]
    value: dict[str, Any]


class ExpectedException(_Strict):
    kind: Literal["exception"]
    message: str | None = None
    error_type: str | None = None  # a builtin exception class name; absent: the reference's

    @field_validator("error_type", mode="before")
    @classmethod
    def _error_type(cls, value: object) -> str | None:
        return None if value is None else raised.expected_type(value)


class CaseModel(_Strict):
    args: list[dict[str, Any]] = Field(default_factory=list, max_length=128)
    kwargs: dict[str, dict[str, Any]] = Field(default_factory=dict, max_length=128)
    expected: ExpectedValue | ExpectedException = Field(discriminator="kind")
    tolerances: list[LeafToleranceModel] = Field(default_factory=list)


class TaskDataV1(_Strict):
    schema_version: Literal[1]
    problem_id: str = Field(min_length=1, max_length=256)
    reference_source: str = Field(min_length=1, max_length=262_144)
    entrypoint: str
    reference_entrypoint: str | None = None
    test_cases: list[CaseModel] = Field(min_length=1, max_length=64)
    problem: str | None = Field(default=None, max_length=131_072)
    code_template: str | None = None
    uuid: str | None = None
    rtol: str | int | float | None = None
    atol: str | int | float | None = None
    tolerances: list[LeafToleranceModel] = Field(default_factory=list)
    input_conversions: list[Literal["symbol", "function"] | None] | None = Field(
        default=None, max_length=128
    )

    @field_validator("entrypoint", "reference_entrypoint", mode="before")
    @classmethod
    def _identifier(cls, value: object) -> object:
        return value if value is None else fields.identifier(value)

    @field_validator("rtol", "atol", mode="before")
    @classmethod
    def _tolerance(cls, value: object) -> str | None:
        return None if value is None else fields.tolerance_text(value)


def load_row(row: object, *, where: str = "") -> Task:
    """Validate one task row (wrapped or bare) and return the internal :class:`Task`."""
    if not isinstance(row, dict):
        raise TaskError(None, where or "row", "a task row must be a JSON object")
    row = _strip_bookkeeping(row)
    spec, prompt = _unwrap(row)
    task_id = spec.get("problem_id") if isinstance(spec.get("problem_id"), str) else None
    try:
        spec = _canonical_fields(spec)
        cases = spec.get("test_cases")
        if isinstance(cases, list):
            spec["test_cases"] = [
                _canonical_case(case, f"test_cases[{i}]") for i, case in enumerate(cases)
            ]
        model = TaskDataV1.model_validate(spec)
        task = _to_task(model, prompt)
    except ValidationError as exc:
        raise _task_error(task_id, exc) from None
    except _FieldError as exc:
        raise TaskError(task_id, exc.field, exc.detail) from None
    _check_wire_values(task)
    return task


class _FieldError(Exception):
    def __init__(self, field: str, detail: str) -> None:
        self.field, self.detail = field, detail
        super().__init__(f"{field}: {detail}")


def _strip_bookkeeping(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: _strip_bookkeeping(v)
            for k, v in value.items()
            if not (isinstance(k, str) and k.startswith("_ng_"))
        }
    return value


def _unwrap(row: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    containers = [key for key in _SPEC_CONTAINERS if key in row]
    if len(containers) > 1:
        raise TaskError(None, containers[1], "a row holds its spec in one place only")
    if containers:
        extra = sorted(set(row) - _ROW_KEYS)
        spec = row[containers[0]]
        task_id = spec.get("problem_id") if isinstance(spec, dict) else None
        if extra:
            raise TaskError(task_id, extra[0], "unknown field")
        if not isinstance(spec, dict):
            raise TaskError(None, containers[0], "must be a JSON object")
        return dict(spec), row.get("responses_create_params")
    spec = {k: v for k, v in row.items() if k != "responses_create_params"}
    return spec, row.get("responses_create_params")


def _canonical_fields(spec: dict[str, Any]) -> dict[str, Any]:
    spec = dict(spec)
    for alias, name in _FIELD_ALIASES.items():
        if alias in spec:
            if name in spec:
                raise _FieldError(alias, f"give either {alias!r} or {name!r}, not both")
            spec[name] = spec.pop(alias)
    return spec


def _canonical_case(case: object, where: str) -> object:
    """Map the delivered case aliases onto the canonical ``{args, kwargs, expected}``."""
    if not isinstance(case, dict):
        return case  # pydantic names the type error
    keys = set(case) - {"tolerances"}
    tolerances = {"tolerances": case["tolerances"]} if "tolerances" in case else {}
    if keys == {"input", "output"}:
        return {
            "args": _native_args(case["input"], f"{where}.input"),
            "expected": {
                "kind": "value",
                "value": _envelope(_native(case["output"], f"{where}.output", top_string="legacy")),
            },
            **tolerances,
        }
    if keys in ({"input", "expected_error"}, {"input", "expected_error", "error_type"}):
        message = case["expected_error"]
        stated = {"error_type": case["error_type"]} if "error_type" in case else {}
        return {
            "args": _native_args(case["input"], f"{where}.input"),
            "expected": {
                "kind": "exception",
                "message": message if isinstance(message, str) else None,
                **stated,
            },
            **tolerances,
        }
    if keys in ({"inputs", "expected_output"}, {"inputs", "expected_output", "comparison_type"}):
        comparison = case.get("comparison_type")
        if comparison is not None and (
            not isinstance(comparison, str) or len(comparison.encode()) > 64
        ):
            raise _FieldError(f"{where}.comparison_type", "must be text of at most 64 bytes")
        inputs = case["inputs"]
        if not isinstance(inputs, dict):
            raise _FieldError(f"{where}.inputs", "must be an object of named inputs")
        return {
            "kwargs": {
                name: _envelope(_native(v, f"{where}.inputs.{name}", strings="legacy"))
                for name, v in inputs.items()
            },
            "expected": {
                "kind": "value",
                "value": _envelope(
                    _native(case["expected_output"], f"{where}.expected_output", strings="legacy")
                ),
            },
            **tolerances,
        }
    if keys <= {"args", "kwargs", "expected"} and "expected" in keys:
        return case
    raise _FieldError(where, f"unrecognized case shape with keys {sorted(case)}")


def _envelope(node: list[Any]) -> dict[str, Any]:
    return {"format": ENVELOPE_FORMAT, "value": node}


def _native_args(values: object, where: str) -> list[dict[str, Any]]:
    if not isinstance(values, list):
        raise _FieldError(where, "must be a list of positional inputs")
    return [_envelope(_native(v, f"{where}[{i}]")) for i, v in enumerate(values)]


def _native(
    value: object, where: str, *, strings: str = "str", top_string: str | None = None
) -> list[Any]:
    """A delivered plain JSON value as a wire node (JSON types only; nothing evaluated)."""
    if value is None:
        return ["null"]
    if isinstance(value, bool):
        return ["bool", value]
    if isinstance(value, int):
        return ["int", str(value)]
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise _FieldError(where, "a non-finite number cannot be given as a plain value")
        return ["float", value.hex()]
    if isinstance(value, str):
        return [top_string or strings, value]
    if isinstance(value, list):
        return ["list", [_native(v, f"{where}[{i}]", strings=strings) for i, v in enumerate(value)]]
    if isinstance(value, dict):
        if set(value) == {"__complex__"}:
            return _native_complex(value["__complex__"], where)
        return ["map", [[k, _native(v, f"{where}.{k}", strings=strings)] for k, v in value.items()]]
    raise _FieldError(where, f"unsupported value of type {type(value).__name__}")


def _native_complex(parts: object, where: str) -> list[Any]:
    ok = (
        isinstance(parts, list)
        and len(parts) == 2
        and all(isinstance(p, int | float) and not isinstance(p, bool) for p in parts)
    )
    if not ok:
        raise _FieldError(where, "__complex__ takes two finite numbers")
    return ["complex", *(_native(p, where) for p in parts)]


def _to_task(model: TaskDataV1, prompt: Any) -> Task:
    cases = []
    for i, case in enumerate(model.test_cases):
        try:
            case_tolerances = _leaves(case.tolerances)
        except ValueError as exc:
            raise _FieldError(f"test_cases[{i}].tolerances", str(exc)) from None
        expected = (
            Expectation("value", value=case.expected.value)
            if isinstance(case.expected, ExpectedValue)
            else Expectation(
                "exception", message=case.expected.message, error_type=case.expected.error_type
            )
        )
        cases.append(
            Case(
                args=tuple(case.args),
                kwargs=dict(case.kwargs),
                expected=expected,
                tolerances=case_tolerances,
            )
        )
    try:
        task_tolerances = _leaves(model.tolerances)
    except ValueError as exc:
        raise _FieldError("tolerances", str(exc)) from None
    return Task(
        problem_id=model.problem_id,
        entrypoint=model.entrypoint,
        reference_source=model.reference_source,
        reference_entrypoint=model.reference_entrypoint or model.entrypoint,
        cases=tuple(cases),
        problem=model.problem or "",
        code_template=model.code_template,
        rtol=model.rtol,
        atol=model.atol,
        tolerances=task_tolerances,
        input_conversions=tuple(model.input_conversions or ()),
        uuid=model.uuid,
        origin="task_data",
        prompt=prompt,
    )


def _leaves(entries: list[LeafToleranceModel]) -> tuple[LeafTolerance, ...]:
    leaves = tuple(entry.to_leaf() for entry in entries)
    paths = [leaf.path for leaf in leaves]
    duplicates = sorted({p for p in paths if paths.count(p) > 1})
    if duplicates:
        raise ValueError(f"duplicate path {duplicates[0]!r}")
    return leaves


def _check_wire_values(task: Task) -> None:
    """Decode every envelope once so a malformed value is reported at load, with its place."""
    from critpt_grader import codec

    for i, case in enumerate(task.cases):
        values = [(f"test_cases[{i}].args[{j}]", v) for j, v in enumerate(case.args)]
        values += [(f"test_cases[{i}].kwargs.{k}", v) for k, v in case.kwargs.items()]
        if case.expected and case.expected.kind == "value":
            values.append((f"test_cases[{i}].expected.value", case.expected.value))
        for where, envelope in values:
            try:
                codec.decode(envelope)
            except CodecError as exc:
                raise TaskError(task.problem_id, where, str(exc)) from None


def _task_error(task_id: str | None, exc: ValidationError) -> TaskError:
    errors = exc.errors()
    # An unknown key is the likeliest typo, and it often causes the "missing" errors too.
    error = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"]).lstrip(".")
    # Discriminated unions add the tag name to the location; it is noise for a reader.
    loc = loc.replace(".value.value", ".value").replace(".exception.", ".")
    detail = "unknown field" if error["type"] == "extra_forbidden" else error["msg"]
    return TaskError(task_id, loc or "row", detail)
