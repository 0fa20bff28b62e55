"""The program that runs inside a sandbox: ``python -m critpt_grader.runner``.

It reads one job from stdin (:mod:`~critpt_grader.runner.protocol`), runs it
(:mod:`~critpt_grader.runner.job`) under the supervision described in
:mod:`~critpt_grader.runner.supervisor`, the program itself running in a
:mod:`~critpt_grader.runner.child` that the :mod:`~critpt_grader.runner.zygote` forks, and
writes one nonce-framed result to stdout. With ``--serve`` it is a warm sandbox's init
(:mod:`~critpt_grader.runner.warm`) and does that job after job.

**Job isolation, the invariant.** No job's process can read what another job computed:
every job process is forked by the zygote, which was itself forked before the first job and
never holds job data (the job reaches the child in a sealed memfd; reports and results go to
the supervisor, PID 1, which never forks a job process). A reference job and a candidate job
never run in the same sandbox. PID 1 and the zygote ignore every signal a job can send them
(:mod:`~critpt_grader.runner.signals`), and every byte a job sends back is parsed under the
size and nesting limits of :mod:`critpt_grader.jsonlimits` before anything recurses over it.

:mod:`~critpt_grader.runner.program` holds the logic shared with the in-process backend:
loading, entry point resolution, inputs, outcomes. Only the standard library, numpy, sympy,
mpmath and the package's codec and symbolic parser are imported inside the sandbox.
"""
