"""Does a raise meet an exception expectation? The one rule, pure and host-side.

An exception expectation names a **builtin exception type** ``T`` (``"ValueError"``): stated
by the task row (``error_type``), or else the type the reference raised in the preflight (for
a class of its own, the most derived genuine builtin it derives from). A call meets it when
the class it raised **is a** ``T`` by its genuine builtin bases: the **genuine builtins** in
its MRO (the very classes ``builtins`` held before the program ran, as the runner reports
them) contain ``T``. So ``T`` itself, a builtin subclass (expected ``ArithmeticError``,
raised ``ZeroDivisionError``: met), a class the program defines (``class BadInput(
ValueError)`` for an expected ``ValueError``: met; ``except ValueError`` catches it) and a
library's class (numpy's ``LinAlgError`` derives from ``ValueError``: met) are judged alike.
Forging such a class gains nothing a program could not have by raising ``T`` itself, and the
runner reads the MRO that ``except`` uses, through ``type``'s own descriptors, against
builtins captured before the program ran; a class whose MRO leaves out a builtin its bases
derive from (a metaclass's ``mro()``) is reported with no builtin bases at all. A class
merely named like a builtin (``class ValueError(Exception)``) is judged by its bases too: it
is no ``ValueError``. The message is never compared.

Some raises never meet any expectation, because they say the code is broken or the process
is being stopped, not that the input was refused; this holds for a subclass of them too,
whoever defines it:

* anything that is not an ``Exception`` (``SystemExit``, ``KeyboardInterrupt``,
  ``GeneratorExit``, a bare ``BaseException``, a program's ``class Stop(BaseException)``);
* ``NameError`` (and ``UnboundLocalError``): a typo or an undefined name;
* ``SyntaxError`` (and ``IndentationError``, ``TabError``): code that does not compile;
* ``ImportError`` (and ``ModuleNotFoundError``): a missing module;
* ``RecursionError``: runaway recursion;
* ``NotImplementedError``: a stub that says the work was not done (it derives from
  ``RuntimeError``, so it would otherwise meet a ``RuntimeError`` expectation);
* a class whose builtin bases are unknown (a backend that cannot tell, a forged MRO).

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

    @property
    def builtin_type(self) -> str | None:
        """The builtin type this raise stands for as an expectation: its own name for a
        genuine builtin, else the most derived genuine builtin it derives from (``None``:
        nothing known)."""
        if self.builtin:
            return self.qualname
        return self.builtin_mro[0] if self.builtin_mro else None


def never_passes(raised: Raised) -> str | None:
    """Why this raise can meet no expectation at all, or None. A class that is not a genuine
    builtin is judged by the genuine builtins it derives from, as a builtin is."""
    if not raised.builtin_mro:
        return "not a builtin exception class, and nothing is known of its builtin bases"
    if not raised.builtin and not _consistent(raised.builtin_mro):
        # a foreign class is judged by its reported bases alone: they must be a builtin MRO
        return "its reported builtin bases are no builtin class's bases"
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
        return False, f"{head} ({why}{_whose(raised)})"
    if expected not in raised.builtin_mro:
        return False, f"{head}, which is not a {expected}{_namesake(raised)}"
    if raised.builtin:
        if raised.qualname != expected:
            return True, f"{head}, a builtin subclass of it"
        return True, head
    return True, f"{head}, a subclass of it by its builtin bases ({_whose(raised)[2:]})"


def _consistent(mro: tuple[str, ...]) -> bool:
    """Each name a builtin exception class whose own builtin bases are all listed after it,
    as in any class's MRO (fail closed on anything else a backend might report)."""
    for position, name in enumerate(mro):
        cls = getattr(builtins, name, None)
        if not (isinstance(cls, type) and issubclass(cls, BaseException)):
            return False
        later = set(mro[position:])
        if any(base.__name__ not in later for base in cls.__mro__ if base is not object):
            return False
    return True


def _whose(raised: Raised) -> str:
    """``; a class the program defines`` for a class that is not a genuine builtin."""
    if raised.builtin:
        return ""
    if raised.module in _PROGRAM_MODULES:
        return "; a class the program defines"
    return "; a library's class, or one dressed as it"


def _namesake(raised: Raised) -> str:
    namesake = getattr(builtins, raised.qualname, None)
    if not raised.builtin and isinstance(namesake, type) and issubclass(namesake, BaseException):
        return f" (a class named like the builtin {raised.qualname}, not the builtin)"
    return ""


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
