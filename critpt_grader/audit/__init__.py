"""``critpt-grader audit``: which tasks cannot tell a wrong answer from the right one.

A grader is only as strict as its tasks. A task whose cases sit where ``sin``, ``tan`` and
``x`` agree, whose inputs are symmetric, or whose tolerance admits a constant off by 5% hands
reward 1 to wrong answers whatever the comparator does. The audit derives wrong answers from
each task's reference (:mod:`.mutate`), runs them as candidates through the ordinary pipeline,
and reports every one that scores 1 although it differs from the reference somewhere: a
**survivor**, with the diff, the cases that did not tell it apart and what would (a probe
input, :mod:`.probes`; a tighter tolerance). Beside it: the preflight, the cases and distinct
inputs, the reference's branches no case reaches (:mod:`.branches`), the statement's promises
as ``explain`` reads them and any promise looser than the stored tolerance (:mod:`.checks`),
and the inputs no case tells apart (:mod:`.diversity`). Sandbox start-up is timed apart
(:mod:`.warmup`).

    from critpt_grader.audit import audit
    report = asyncio.run(audit(load_tasks("fixtures/public/tasks.jsonl")))
    [t.problem_id for t in report.tasks if t.weak]

Layout: ``mutate``, ``branches``, ``probes``, ``oracle``, ``checks`` and ``diversity`` are
pure; ``run`` (with ``warmup``) is the one module that runs code (through
:class:`~critpt_grader.pipeline.Grader`); ``findings`` holds the results. The reports are
drawn by :mod:`critpt_grader.reports.audit`.
"""

from critpt_grader.audit.findings import AuditReport, Survivor, TaskAudit
from critpt_grader.audit.run import AuditOptions, audit

__all__ = ["AuditOptions", "AuditReport", "Survivor", "TaskAudit", "audit"]
