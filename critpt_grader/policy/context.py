"""The comparison policy (what the task says) and its per-case compiled form."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from critpt_grader.policy.conventions import BoundConventions, bind_conventions, read_conventions
from critpt_grader.policy.promises import BoundPromises, bind, read_promises
from critpt_grader.policy.tolerance import (
    AuthorTolerances,
    Exactness,
    PromisedPair,
    Tolerance,
    exact_fraction,
    is_integer_exactness,
    resolve,
)
from critpt_grader.symbolic.cpu_cap import STEP_CPU_SECONDS
from critpt_grader.tasks.model import LeafTolerance

_MATCHING_STEPS = 50_000


@dataclass(frozen=True)
class Policy:
    """What a comparison may use from the task: statement text (promises, conventions), the
    author's tolerances, symbol assumptions, the default, and the CPU cap of one proof step
    (generous: only a costly value reaches it; see :mod:`critpt_grader.symbolic.prove`)."""

    problem: str = ""
    output_doc: str | None = None  # the template docstring's Outputs section
    task_rtol: str | None = None
    task_atol: str | None = None
    leaf_tolerances: tuple[LeafTolerance, ...] = ()
    symbols: Mapping[str, Mapping[str, bool]] = field(default_factory=dict)
    default_rtol: str = "5e-12"
    default_atol: str = "0"
    proof_step_cpu_seconds: float = STEP_CPU_SECONDS
    # False: the statement's conventions hold but its precision promises do not (the audit's
    # strict oracle: "equal but for the tolerance").
    promises: bool = True

    def __post_init__(self) -> None:
        # Fail on a bad tolerance here, once, rather than at the first numeric leaf.
        for text in (self.task_rtol, self.task_atol, self.default_rtol, self.default_atol):
            if text is not None:
                exact_fraction(text)
        for entry in self.leaf_tolerances:
            for text in (entry.rtol, entry.atol):
                if text is not None:
                    exact_fraction(text)

    __hash__ = None  # type: ignore[assignment]  # symbols is a mapping


class CaseContext:
    """The policy compiled against one expected value: promises and conventions bound to its
    paths (the statement itself is read once per policy text and cached), a parse cache and
    the matching step budget. Nothing here reads a clock: a verdict never depends on load."""

    def __init__(self, policy: Policy, expected: Any) -> None:
        self.policy = policy
        promised = (policy.problem or "", policy.output_doc) if policy.promises else ("", None)
        self.promises: BoundPromises = bind(read_promises(*promised), expected)
        self.conventions: BoundConventions = bind_conventions(
            read_conventions(policy.problem or "", policy.output_doc), expected
        )
        self._authors = {
            entry.path: self._author(entry.rtol, entry.atol) for entry in policy.leaf_tolerances
        }
        self._no_entry = self._author(None, None)
        self.parsed: dict[str, Any] = {}  # symbolic text -> SymPy value or GrammarError
        self.matching_steps = _MATCHING_STEPS

    @property
    def cpu_seconds(self) -> float:
        """The CPU cap of one proof step or one evaluation."""
        return self.policy.proof_step_cpu_seconds

    def _author(self, leaf_rtol: str | None, leaf_atol: str | None) -> AuthorTolerances:
        return AuthorTolerances(
            leaf_rtol=leaf_rtol,
            leaf_atol=leaf_atol,
            task_rtol=self.policy.task_rtol,
            task_atol=self.policy.task_atol,
            default_rtol=self.policy.default_rtol,
            default_atol=self.policy.default_atol,
        )

    def tolerance(
        self,
        path: str,
        scale: Fraction,
        *,
        expected_exact: Exactness | None = None,
        expected_is_int: bool = False,
        candidate_exact: bool = True,
    ) -> Tolerance:
        """The tolerance of the numeric leaf at ``path``. ``expected_exact``: how its expected
        value is exact (:data:`~critpt_grader.policy.tolerance.Exactness`, ``None``: it is
        not); ``expected_is_int=True`` is the older spelling of ``expected_exact="int"``. The
        promises hear whether the expected value is an exact integer, in whatever form, and
        whatever the candidate is. ``candidate_exact=False``: the candidate is inexact (a
        float, decimal text), so an exact expected value gets the tolerance an inexact one
        would get here instead of none."""
        if expected_exact is None and expected_is_int:
            expected_exact = "int"
        promise: PromisedPair | None = self.promises.for_leaf(
            path, scale=scale, is_int=is_integer_exactness(expected_exact)
        )
        return resolve(
            scale=scale,
            expected_exact=expected_exact,
            promise=promise,
            author=self._authors.get(path) or self._no_entry,
            why="" if promise else self.promises.note_for(path),
            candidate_exact=candidate_exact,
        )
