"""Loader for CritPt's own challenge JSON (``problems[]`` with ``code_template``, ``answer_code``).

A challenge problem becomes one :class:`Task`:
  * the entry point is the function the template defines (``answer``);
  * the reference is ``answer_code``; its entry point is ``real_answer`` when it defines one
    (the worked example's gold answers), else the template's name;
  * the inputs are the template's module-level names matching the function's parameters:
    the template minus its function definitions becomes ``setup_source``, run inside the
    sandbox (``sp.symbols('m r0', positive=True)``, physical constants, derived values);
  * there are no stored expectations: the reference preflight supplies them;
  * the docstring's Outputs section is kept, since statement promises and conventions are
    read there too.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from critpt_grader.errors import TaskError
from critpt_grader.tasks.model import Case, Task

_OUTPUTS_HEADING = re.compile(r"^\s*Outputs?\s*\n\s*-{3,}\s*\n", re.MULTILINE)
_NEXT_HEADING = re.compile(r"\n\s*\n\s*[A-Z][A-Za-z ]*\n\s*-{3,}", re.MULTILINE)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ChallengeProblem(_Strict):
    problem_id: str
    problem_type: str | None = None
    problem_index: int | str | None = None
    problem_description: str
    code_template: str
    answer_code: str
    answer_only_code: str | None = None
    testcases: None = None  # the public files carry none; inputs come from the template
    metadata: dict[str, Any] | None = None


class ChallengeFile(_Strict):
    dataset_name: str | None = None
    source_notebook: str | None = None
    problems: list[dict[str, Any]]


def is_challenge(document: object) -> bool:
    return isinstance(document, dict) and "problems" in document


def load_challenge(document: object) -> list[Task]:
    try:
        challenge = ChallengeFile.model_validate(document)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise TaskError(None, ".".join(map(str, error["loc"])) or "file", error["msg"]) from None
    tasks = []
    for i, raw in enumerate(challenge.problems):
        problem_id = raw.get("problem_id") if isinstance(raw.get("problem_id"), str) else None
        try:
            problem = ChallengeProblem.model_validate(raw)
        except ValidationError as exc:
            error = exc.errors()[0]
            field = ".".join(map(str, error["loc"]))
            detail = "unknown field" if error["type"] == "extra_forbidden" else error["msg"]
            raise TaskError(problem_id, f"problems[{i}].{field}", detail) from None
        tasks.append(_to_task(problem))
    return tasks


def _to_task(problem: ChallengeProblem) -> Task:
    pid = problem.problem_id
    template = _parse(problem.code_template, pid, "code_template")
    function = _entry_function(template, pid)
    reference = _parse(problem.answer_code, pid, "answer_code")
    defined = {node.name for node in reference.body if isinstance(node, ast.FunctionDef)}
    reference_entry = "real_answer" if "real_answer" in defined else function.name
    if reference_entry not in defined:
        raise TaskError(pid, "answer_code", f"defines no function {function.name!r}")
    setup = _setup_source(problem.code_template, template)
    available = _module_names(template)
    params = tuple(arg.arg for arg in function.args.args)
    return Task(
        problem_id=pid,
        entrypoint=function.name,
        reference_source=problem.answer_code,
        reference_entrypoint=reference_entry,
        cases=(Case(names=params),),
        problem=problem.problem_description,
        code_template=problem.code_template,
        setup_source=setup,
        output_doc=outputs_section(ast.get_docstring(function) or ""),
        unresolved_inputs=tuple(p for p in params if p not in available),
        origin="critpt",
    )


def _parse(source: str, pid: str, field: str) -> ast.Module:
    try:
        return ast.parse(source)
    except SyntaxError as exc:
        raise TaskError(pid, field, f"syntax error on line {exc.lineno}: {exc.msg}") from None


def _entry_function(template: ast.Module, pid: str) -> ast.FunctionDef:
    functions = [node for node in template.body if isinstance(node, ast.FunctionDef)]
    if not functions:
        raise TaskError(pid, "code_template", "defines no function")
    named = [f for f in functions if f.name == "answer"]
    if named:
        return named[-1]
    if len(functions) == 1:
        return functions[0]
    names = ", ".join(f.name for f in functions)
    raise TaskError(pid, "code_template", f"several functions ({names}) and none named 'answer'")


def _setup_source(source: str, template: ast.Module) -> str:
    """The template without its function and class definitions: the code that builds the
    module-level inputs."""
    keep = [
        node
        for node in template.body
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    ]
    return "\n".join(ast.get_source_segment(source, node) or "" for node in keep) + "\n"


def _module_names(template: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in template.body:
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def outputs_section(docstring: str) -> str | None:
    """The text under the docstring's ``Outputs`` (or ``Output``) heading."""
    match = _OUTPUTS_HEADING.search(docstring)
    if not match:
        return None
    rest = docstring[match.end() :]
    end = _NEXT_HEADING.search(rest)
    return (rest[: end.start()] if end else rest).strip("\n") or None


_DECLARATION = re.compile(r"^([A-Za-z_][\w ,]*?)\s*:\s*(.*)$")


def declared_outputs(output_doc: str | None) -> list[tuple[str, str]]:
    """``[(name, declared type), ...]`` from an Outputs section, in return order.
    ``a, b: float`` declares two outputs of one type; a missing type reads as ``""``."""
    if not output_doc:
        return []
    lines = [line for line in output_doc.splitlines() if line.strip()]
    indent = min(len(line) - len(line.lstrip()) for line in lines)
    found: list[tuple[str, str]] = []
    for line in lines:
        if len(line) - len(line.lstrip()) > indent:
            continue  # continuation lines describe the output above
        match = _DECLARATION.match(line.strip())
        if match:
            kind = _leading_type(match.group(2))
            for name in match.group(1).split(","):
                if name.strip().isidentifier():
                    found.append((name.strip(), kind))
    return found


def _leading_type(text: str) -> str:
    """The type at the start of a declaration: up to the first comma outside brackets.
    Free prose (``total number of states.``) is not a type."""
    depth = 0
    for i, char in enumerate(text):
        depth += char in "[("
        depth -= char in "])"
        if char == "," and depth == 0:
            text = text[:i]
            break
    text = text.strip()
    return text if text and " " not in text.replace(", ", ",") else ""
