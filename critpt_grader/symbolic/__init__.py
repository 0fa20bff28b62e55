"""Symbolic answers: the restricted grammar (text → SymPy) and the equivalence prover.

    >>> from critpt_grader.symbolic import parse, decide
    >>> decide(parse("(x+2)**2"), parse("x**2 + 4*x + 4")).status
    'equal'
    >>> decide(parse("x + sin(840*pi*x)"), parse("x")).status
    'different'

``parse`` never evaluates the text; ``decide`` says ``equal`` only with a proof and uses random
high-precision points only to show that two values differ.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from critpt_grader.symbolic.parse import DEFAULT_LIMITS, Limits, parse
    from critpt_grader.symbolic.prove import Decision, decide

__all__ = ["DEFAULT_LIMITS", "Decision", "Limits", "decide", "parse"]

# Loaded on first use: SymPy takes half a second to import, and the grader process itself
# (which only runs the pipeline; comparisons run in workers) imports submodules such as
# ``cpu_cap`` that need none of it.
_HOMES = {
    "DEFAULT_LIMITS": "parse",
    "Limits": "parse",
    "parse": "parse",
    "Decision": "prove",
    "decide": "prove",
}


class _Package(types.ModuleType):
    """This package, whose names load on first use. Importing the submodule ``parse`` binds
    the package's ``parse`` to that module; the function keeps the name, as it did when this
    package imported it eagerly."""

    def __getattr__(self, name: str) -> Any:
        home = _HOMES.get(name)
        if home is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
        super().__setattr__(name, value)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _HOMES and isinstance(value, types.ModuleType):
            return  # the submodule of that name: the function (loaded on use) keeps it
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
