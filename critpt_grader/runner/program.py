"""Load a job's program, build each case's inputs, call the entry point, encode the outcome.

This is the logic every backend shares: the sandboxed runner calls it in a forked child, the
in-process backend calls it directly. It does no process management and sets no limits.

Loading
  ``setup_source`` (CritPt: the template's preamble — imports, ``sp.symbols(...)``, constants,
  derived expressions) runs first as its own module (``critpt_setup``); it builds the named
  inputs of ``{"names": [...]}`` cases. ``source`` then runs as a separate module
  (``critpt_program``), so the program cannot change the inputs by redefining a name. A
  syntax error, an exception or ``exit()`` while loading either one is a
  :class:`SourceError` whose text names the line.

Entry point resolution (in this order)
  1. ``entrypoint`` names a callable top-level value: call it.
  2. It names something that is not callable: source error.
  3. It is absent (or ``entrypoint`` is None) and the job allows a fallback
     (``entrypoint_fallback``, or no name at all): if the source itself defines exactly one
     public (no leading underscore) top-level function, call that one. CritPt templates name
     the function ``answer``; a model that renamed it still gets graded.
  4. Otherwise: source error naming the public functions that were found.

Inputs
  ``args``/``kwargs`` envelopes are decoded with the codec into fresh values for every case
  (a program that mutates its argument cannot affect the next case); symbolic text is parsed
  with the restricted grammar into SymPy; ``input_conversions`` turn a positional ``str``
  argument into ``sympy.Symbol`` ("symbol") or ``sympy.Function`` ("function").

Outcomes
  A returned value is encoded with ``codec.encode`` (``kind="value"``); a codec refusal is
  ``encode_error`` with the codec's code; ``MemoryError`` is ``memory``; any other exception
  (``SystemExit`` included) is ``exception`` with its type name and truncated message, and
  what its class is (:func:`describe_raised`): module and qualified name, whether it is a
  genuine builtin, and the genuine builtins in its MRO. The host decides from these whether
  the raise meets an exception expectation (:mod:`critpt_grader.raised`).
"""

from __future__ import annotations

import builtins
import contextlib
import copy
import sys
import time
import traceback
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any

from critpt_grader import codec
from critpt_grader.codec.values import ExactComplex, Legacy, Symbolic, WireSet
from critpt_grader.errors import CodecError
from critpt_grader.runner.protocol import MESSAGE_CHARS, json_size

# The genuine builtin exception classes, by identity, taken when the runner is imported:
# before any program runs, so a program that rebinds ``builtins.ValueError`` or defines its
# own ``ValueError`` (whatever ``__module__`` it claims) cannot pass for the real one. Ids,
# not the classes, are the keys: a metaclass can fake ``==`` and ``hash``, never ``is``;
# builtin classes live as long as the interpreter, so their ids are never reused.
_BUILTIN_EXCEPTION_IDS = frozenset(
    id(value)
    for value in vars(builtins).values()
    if isinstance(value, type) and issubclass(value, BaseException)
)
_TYPE_NAME_CHARS = 200


class SourceError(Exception):
    """The program (or the task's setup or inputs) cannot be loaded; the text says why."""


@dataclass(slots=True)
class Program:
    """A loaded program ready to run cases. ``symbols`` collects the SymPy assumptions met
    while encoding inputs and outputs (``{name: {assumption: bool}}``)."""

    function: Callable[..., Any]
    cases: list[Callable[[], tuple[list[Any], dict[str, Any]]]]
    symbols: dict[str, dict[str, bool]] = field(default_factory=dict)


def truncate(text: str, limit: int = MESSAGE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe_exception(exc: BaseException, filename: str) -> str:
    """``Type: message (line N)``, with the innermost line of ``filename`` when known."""
    line = None
    if isinstance(exc, SyntaxError) and exc.filename == filename:
        line = exc.lineno
    else:
        for frame in traceback.extract_tb(exc.__traceback__):
            if frame.filename == filename:
                line = frame.lineno
    text = f"{type(exc).__name__}: {safe_str(exc)}"
    return truncate(text + (f" (line {line})" if line is not None else ""))


def safe_str(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:  # a program-defined __str__ may itself raise
        return "<message could not be rendered>"


def describe_raised(cls: type) -> dict[str, Any]:
    """What a raised exception's class is, as the ``error_*`` fields of an outcome.

    ``error_type`` stays the bare class name (``ValueError``). ``error_builtin`` is true only
    for a genuine builtin: the very class object ``builtins`` held before any program ran
    (``getattr(builtins, cls.__name__) is cls`` then, and ``cls.__module__ == "builtins"``).
    ``error_builtin_mro`` names the genuine builtins in its MRO, most derived first: the MRO
    ``except`` matches against, by which the host judges a class that is not a builtin (a
    program's ``class BadInput(ValueError)``) as it judges a builtin. The names are read
    through ``type``'s own descriptors, so a metaclass cannot dress them up; for a genuine
    builtin they are fixed anyway (builtin types are immutable). A metaclass can still make
    ``mro()`` leave out a builtin the class's bases derive from (a ``NameError`` subclass
    whose MRO shows only ``ValueError``): such a class is reported with no builtin bases,
    which never meets an expectation.
    """
    try:
        builtin = id(cls) in _BUILTIN_EXCEPTION_IDS
        module = type.__dict__["__module__"].__get__(cls)
        qualname = type.__dict__["__qualname__"].__get__(cls)
        name = type.__dict__["__name__"].__get__(cls)
        mro = [
            type.__dict__["__name__"].__get__(base)
            for base in type.__dict__["__mro__"].__get__(cls)
            if id(base) in _BUILTIN_EXCEPTION_IDS
        ]
        if not builtin and _builtin_ancestors(cls) != set(mro):
            mro = []  # an MRO that hides a builtin its bases derive from: nothing is known
    except Exception:  # nothing a program can do here may cost the report
        builtin, module, qualname, name, mro = False, "?", "?", "?", []

    def text(value: object) -> str:
        return value[:_TYPE_NAME_CHARS] if isinstance(value, str) else "?"

    return {
        "error_type": text(name),
        "error_module": text(module),
        "error_qualname": text(qualname),
        "error_builtin": builtin,
        "error_builtin_mro": [text(base) for base in mro],
    }


def _builtin_ancestors(cls: type) -> set[str]:
    """The names of the genuine builtins reachable from ``cls`` through ``__bases__`` (read
    through ``type``'s own descriptor), whatever its metaclass's ``mro()`` returned."""
    bases_of = type.__dict__["__bases__"].__get__
    name_of = type.__dict__["__name__"].__get__
    found: set[str] = set()
    seen: set[int] = set()
    stack = [cls]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if id(current) in _BUILTIN_EXCEPTION_IDS:
            found.add(name_of(current))
        stack.extend(bases_of(current))
    return found


def run_source(source: str, filename: str, module_name: str) -> dict[str, Any]:
    """Execute ``source`` as a fresh module named ``module_name``; any failure is a
    SourceError. The module is registered in ``sys.modules`` because code such as
    ``dataclasses``, ``pickle`` and ``typing.get_type_hints`` looks its classes' module up."""
    module = types.ModuleType(module_name)
    module.__dict__["__builtins__"] = builtins
    sys.modules[module_name] = module
    namespace = module.__dict__
    try:
        code = compile(source, filename, "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise SourceError(f"syntax error in {filename} at line {exc.lineno}: {exc.msg}") from None
    except (ValueError, MemoryError, RecursionError) as exc:  # NUL bytes, huge nesting
        detail = describe_exception(exc, filename)
        raise SourceError(f"{filename} cannot be compiled: {detail}") from None
    try:
        exec(code, namespace)
    except BaseException as exc:  # SystemExit and KeyboardInterrupt from the program too
        raise SourceError(
            f"loading {filename} raised {describe_exception(exc, filename)}"
        ) from None
    return namespace


def public_functions(namespace: dict[str, Any], filename: str) -> list[str]:
    return sorted(
        name
        for name, value in namespace.items()
        if not name.startswith("_")
        and isinstance(value, types.FunctionType)
        and value.__code__.co_filename == filename
    )


def resolve_entrypoint(
    namespace: dict[str, Any], name: str | None, filename: str, *, allow_fallback: bool
) -> Callable[..., Any]:
    """Apply the entry point rules of the module docstring."""
    if name is not None and name in namespace:
        value = namespace[name]
        if not callable(value):
            raise SourceError(f"{name!r} is a {type(value).__name__}, not a function")
        return value
    found = public_functions(namespace, filename)
    if (allow_fallback or name is None) and len(found) == 1:
        return namespace[found[0]]
    wanted = f"no function {name!r}" if name is not None else "no entry point named"
    listing = ", ".join(found[:20]) if found else "none"
    raise SourceError(f"{wanted}; public functions defined: {listing}")


def materialize(value: Any, symbols: dict[str, dict[str, bool]]) -> Any:
    """Turn a decoded wire value into the plain Python/SymPy value a program receives."""
    if isinstance(value, list):
        return [materialize(item, symbols) for item in value]
    if isinstance(value, tuple):
        return tuple(materialize(item, symbols) for item in value)
    if isinstance(value, dict):
        return {key: materialize(item, symbols) for key, item in value.items()}
    if isinstance(value, WireSet):
        return set(materialize(item, symbols) for item in value.items)
    if isinstance(value, Symbolic):
        from critpt_grader.symbolic.parse import parse

        return parse(value.text, symbols or None)
    if isinstance(value, Legacy):
        return value.text  # a delivered string argument is passed as the string it was
    if isinstance(value, ExactComplex):
        import sympy

        return exact_number(value.re) + sympy.I * exact_number(value.im)
    return value


def exact_number(value: int | float | Fraction | Decimal) -> Any:
    import sympy

    if isinstance(value, Fraction):
        return sympy.Rational(value.numerator, value.denominator)
    if isinstance(value, Decimal):
        return sympy.Rational(*value.as_integer_ratio())
    return sympy.Integer(value) if isinstance(value, int) else sympy.Float(value)


def convert_positional(value: Any, conversion: str | None) -> Any:
    if conversion is None or not isinstance(value, str):
        return value
    import sympy

    if conversion == "symbol":
        return sympy.Symbol(value)
    if conversion == "function":
        return sympy.Function(value)
    raise SourceError(f"unknown input conversion {conversion!r}")


def prepare_case(
    case: dict[str, Any],
    index: int,
    setup: dict[str, Any] | None,
    conversions: list[str | None],
    symbols: dict[str, dict[str, bool]],
) -> Callable[[], tuple[list[Any], dict[str, Any]]]:
    """Validate one case's inputs now; return a builder of fresh inputs for each call."""
    if case.get("names") is not None:
        if setup is None:
            raise SourceError(f"case {index} names setup inputs but the job has no setup")
        missing = [name for name in case["names"] if name not in setup]
        if missing:
            raise SourceError(f"case {index}: the setup does not define {', '.join(missing)}")
        named = [setup[name] for name in case["names"]]
        for value in named:
            record_symbols(value, symbols)
        return lambda: (fresh_copy(named), {})
    try:
        args = [codec.decode(envelope) for envelope in case.get("args", [])]
        kwargs = {key: codec.decode(env) for key, env in case.get("kwargs", {}).items()}
        build = _input_builder(args, kwargs, conversions, symbols)
        build()  # parse symbolic text and apply conversions once up front: errors surface now
    except Exception as exc:  # CodecError, GrammarError, unhashable set members, ...
        raise SourceError(f"case {index}: unusable input: {type(exc).__name__}: {exc}") from None
    return build


def fresh_copy(values: list[Any]) -> list[Any]:
    """A deep copy, so a call that mutates a setup value cannot change the next case's
    input; values that cannot be copied are passed as they are."""
    try:
        return copy.deepcopy(values)
    except Exception:
        return list(values)


def _input_builder(
    args: list[Any],
    kwargs: dict[str, Any],
    conversions: list[str | None],
    symbols: dict[str, dict[str, bool]],
) -> Callable[[], tuple[list[Any], dict[str, Any]]]:
    def build() -> tuple[list[Any], dict[str, Any]]:
        built_args = [
            convert_positional(
                materialize(arg, symbols), conversions[i] if i < len(conversions) else None
            )
            for i, arg in enumerate(args)
        ]
        return built_args, {key: materialize(value, symbols) for key, value in kwargs.items()}

    return build


def record_symbols(value: Any, symbols: dict[str, dict[str, bool]]) -> None:
    """Note the assumptions of symbols inside an input; inputs the codec refuses add none."""
    with contextlib.suppress(Exception):
        codec.encode(value, symbols=symbols)


def load_program(job: dict[str, Any]) -> Program:
    """Load setup and source and prepare every case; raise SourceError when that fails."""
    role = job.get("role", "candidate")
    symbols: dict[str, dict[str, bool]] = {}
    setup = None
    if job.get("setup_source"):
        setup = run_source(job["setup_source"], "<setup>", "critpt_setup")
    filename = f"<{role}>"
    namespace = run_source(job["source"], filename, "critpt_program")
    function = resolve_entrypoint(
        namespace,
        job.get("entrypoint"),
        filename,
        allow_fallback=bool(job.get("entrypoint_fallback", False)),
    )
    conversions = list(job.get("input_conversions") or ())
    cases = [
        prepare_case(case, index, setup, conversions, symbols)
        for index, case in enumerate(job["cases"])
    ]
    return Program(function=function, cases=cases, symbols=symbols)


def run_case(program: Program, index: int, *, value_bytes: int) -> dict[str, Any]:
    """Call the entry point on case ``index``; return the outcome as a CaseOutcome dict.

    ``value_bytes`` bounds the encoded value's JSON; a larger value is an ``encode_error``
    with code ``output_limit``.
    """
    started = time.perf_counter()
    try:
        args, kwargs = program.cases[index]()
        result = program.function(*args, **kwargs)
        envelope = codec.encode(result, symbols=program.symbols)
        size = json_size(envelope)
        if size > value_bytes:
            raise CodecError("output_limit", "$.value", f"{size} bytes > {value_bytes}")
        outcome: dict[str, Any] = {"kind": "value", "value": envelope}
    except CodecError as exc:
        outcome = {"kind": "encode_error", "error_type": exc.code, "message": truncate(str(exc))}
    except MemoryError:
        outcome = {"kind": "memory", "error_type": "MemoryError", "message": "out of memory"}
    except BaseException as exc:
        outcome = {
            "kind": "exception",
            **describe_raised(type(exc)),
            "message": truncate(safe_str(exc)),
        }
    outcome["seconds"] = time.perf_counter() - started
    return outcome


# The sandbox runtime: what a program may import besides the standard library (declared in
# pyproject.toml; the install puts them where the sandbox user can read them).
SANDBOX_RUNTIME = ("numpy", "scipy", "sympy", "mpmath")
# What physics answers and CritPt templates import from scipy, warmed in warm sandboxes.
SCIPY_MODULES = (
    "scipy.constants", "scipy.integrate", "scipy.special", "scipy.linalg", "scipy.optimize",
    "scipy.interpolate", "scipy.stats",
)  # fmt: skip


def preload_libraries(*, scipy: bool = True) -> None:
    """Import what programs use, so forked children start warm. ``scipy`` (about as costly
    as the rest together) only where the cost is paid once: a warm sandbox's init."""
    import importlib

    import mpmath  # noqa: F401
    import numpy  # noqa: F401
    import sympy
    import sympy.physics.units

    if scipy:
        for module in SCIPY_MODULES:
            importlib.import_module(module)

    # Build the grammar's parser and the printer once, here, rather than in every child.
    # A parser that cannot be built (grammar file missing) fails the cases that need it,
    # with its own error, instead of every job.
    with contextlib.suppress(Exception):
        from critpt_grader.symbolic.parse import parse

        parse("x + 1")
    with contextlib.suppress(Exception):
        codec.encode(sympy.Symbol("x") / 2 + sympy.physics.units.hbar)
