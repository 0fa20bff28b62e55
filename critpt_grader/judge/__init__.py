"""Judging: from a sandbox's run to a verdict, within a comparison budget.

Below the pipeline (which runs sandboxes and caches preflights) and above the comparator:

* :mod:`~critpt_grader.judge.case`: the case rule, one outcome against its expectation (pure);
* :mod:`~critpt_grader.judge.reference`: the reference rule, a task's reference against its
  stored expectations, as a :class:`~critpt_grader.judge.reference.Preflight` (pure);
* :mod:`~critpt_grader.judge.row`: :class:`~critpt_grader.judge.row.RowJudge`, which runs
  those rules for a row in killable workers under the row's budget and decides who pays for
  a value too costly to compare;
* :mod:`~critpt_grader.judge.pool`: the warm, killable worker processes;
* :mod:`~critpt_grader.judge.warmup`: what those workers import before they fork.
"""
