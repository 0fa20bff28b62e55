"""Does a raise meet an exception expectation? The one rule, pure and host-side.

An exception expectation names a **builtin exception type** ``T`` (``"ValueError"``): stated
by the task row (``error_type``), or else the type the reference raised in the preflight. A
call meets it only when it raised a **genuine builtin** class (the very class ``builtins``
held before the program ran, as the runner reports it) whose MRO contains ``T``: ``T``
itself or a builtin subclass (expected ``ArithmeticError``, raised ``ZeroDivisionError``:
met). The message is never compared.

Some raises never meet any expectation, because they say the code is broken or the process
is being stopped, not that the input was refused:

* anything that is not an ``Exception`` (``SystemExit``, ``KeyboardInterrupt``,
  ``GeneratorExit``, a bare ``BaseException``);
* ``NameError`` (and ``UnboundLocalError``): a typo or an undefined name;
* ``SyntaxError`` (and ``IndentationError``, ``TabError``): code that does not compile;
* ``ImportError`` (and ``ModuleNotFoundError``): a missing module;
* ``RecursionError``: runaway recursion;
* ``NotImplementedError``: a stub that says the work was not done (it derives from
  ``RuntimeError``, so it would otherwise meet a ``RuntimeError`` expectation);
* a class that is not a genuine builtin: one the program defines (even one named
  ``ValueError``, even a subclass of the right builtin) or a library's (``numpy``'s
  ``LinAlgError``). The runner cannot tell a library's class from a program's class
  dressed up as it, so neither counts.

(``MemoryError`` is never an ``exception`` outcome at all: the runner reports it as
``memory``.) The same rule judges the reference in the preflight: a reference whose raise
could not meet its own expectation makes the task unscorable, never a candidate's 0.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from typing import Any

# Genuine builtins in a raise's MRO that make it fail whatever is expected, and why.
NEVER_PASS = {
    "NameError": "an undefined name is a bug, not a refusal",
    "SyntaxError": "code that does not compile is a bug, not a refusal",
    "ImportError": "a missing module is a bug, not a refusal",
    "RecursionError": "runaway recursion is a bug, not a refusal",
    "NotImplementedError": "a stub that was never written is not a refusal",
}
_NOT_AN_EXCEPTION = "it is not an Exception: it stops the program, it does not refuse an input"
_PROGRAM_MODULES = ("critpt_program", "critpt_setup")


@dataclass(frozen=True, slots=True)
class Raised:
    """A raised exception's class as the runner described it (``CaseOutcome.error_*``)."""

    module: str
    qualname: str
    builtin: bool  # the genuine builtin class, not a look-alike
    builtin_mro: tuple[str, ...]  # genuine builtins in its MRO, most derived first

    @classmethod
    def of(cls, outcome: Any) -> Raised:
        """From a case outcome. Missing or inconsistent fields read as "not a builtin"."""
        module = getattr(outcome, "error_module", None) or "?"
        qualname = getattr(outcome, "error_qualname", None) or outcome.error_type or "?"
        mro = tuple(getattr(outcome, "error_builtin_mro", None) or ())
        builtin = (
            getattr(outcome, "error_builtin", False) is True
            and module == "builtins"
            and bool(mro)
            and mro[0] == qualname
        )
        return cls(module, qualname, builtin, mro)

    @property
    def name(self) -> str:
        """``ValueError`` for a genuine builtin, ``module.qualname`` for anything else."""
        return self.qualname if self.builtin else f"{self.module}.{self.qualname}"


def never_passes(raised: Raised) -> str | None:
    """Why this raise can meet no expectation at all, or None."""
    if not raised.builtin:
        namesake = getattr(builtins, raised.qualname, None)
        if isinstance(namesake, type) and issubclass(namesake, BaseException):
            return f"a class named like the builtin {raised.qualname}, not the builtin"
        if raised.module in _PROGRAM_MODULES:
            return "a class the program defines, not a builtin exception"
        return "not a builtin exception class"
    if "Exception" not in raised.builtin_mro:
        return _NOT_AN_EXCEPTION
    for base, why in NEVER_PASS.items():
        if base in raised.builtin_mro:
            return why
    return None


def judge(expected: str | None, raised: Raised) -> tuple[bool, str]:
    """Whether ``raised`` meets an expectation of type ``expected``, and a one-line reason
    that names both ("expected ValueError, raised NameError (...)")."""
    if expected is None:  # every expectation gets a type before judging; fail closed
        return False, f"no expected exception type to hold {raised.name} against"
    head = f"expected {expected}, raised {raised.name}"
    why = never_passes(raised)
    if why is not None:
        return False, f"{head} ({why})"
    if expected not in raised.builtin_mro:
        return False, f"{head}, which is not a {expected}"
    if raised.qualname != expected:
        return True, f"{head}, a builtin subclass of it"
    return True, head


def expected_type(name: object) -> str:
    """A task row's stated exception type, checked: the name of a builtin exception class
    that some raise can meet (``"ValueError"``; ``"builtins.ValueError"`` is read the same).
    Returns the class's own name (``IOError`` → ``OSError``); raises ValueError otherwise."""
    if not isinstance(name, str):
        raise ValueError("must be the name of a builtin exception class, as text")
    bare = name.removeprefix("builtins.")
    cls = getattr(builtins, bare, None) if bare.isidentifier() else None
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        raise ValueError(f"{name!r} is not a builtin exception class")
    if issubclass(cls, MemoryError):
        raise ValueError(f"{name!r} can never be met: running out of memory is not a raise")
    mro = tuple(base.__name__ for base in cls.__mro__ if base is not object)
    why = never_passes(Raised("builtins", cls.__name__, True, mro))
    if why is not None:
        raise ValueError(f"{name!r} can never be met: {why}")
    return cls.__name__
