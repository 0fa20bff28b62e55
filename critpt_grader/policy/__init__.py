"""The comparison policy: what a task's statement and its author allow a comparison to use.

One layer between the statement reader (:mod:`critpt_grader.statement`, which finds sentences,
clauses and outputs and knows no tolerance) and the comparator (:mod:`critpt_grader.compare`,
which asks this layer, per leaf, which tolerance and which conventions hold):

* :mod:`~critpt_grader.policy.tolerance`: tolerances as exact numbers, and their precedence —
  a statement promise tied to the output, then a per-leaf entry, the task's, the default;
* :mod:`~critpt_grader.policy.promises`: the precision promises a statement makes;
* :mod:`~critpt_grader.policy.conventions`: the conventions it grants (order, sign, phase…);
* :mod:`~critpt_grader.policy.context`: :class:`Policy` (what the task says) and
  :class:`CaseContext` (the policy bound to one expected value's paths);
* :mod:`~critpt_grader.policy.explain`: how a statement was read, output by output.
"""

from critpt_grader.policy.context import CaseContext, Policy

__all__ = ["CaseContext", "Policy"]
