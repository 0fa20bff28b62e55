"""The program that runs inside a sandbox: ``python -m critpt_grader.runner``.

It reads one job from stdin (:mod:`~critpt_grader.runner.protocol`), runs it
(:mod:`~critpt_grader.runner.job`) under the supervision described in
:mod:`~critpt_grader.runner.supervisor`, the program itself running in a forked
:mod:`~critpt_grader.runner.child`, and writes one nonce-framed result to stdout. With
``--serve`` it is a warm sandbox's init (:mod:`~critpt_grader.runner.warm`) and does that
job after job. :mod:`~critpt_grader.runner.program` holds the logic shared with the
in-process backend: loading, entry point resolution, inputs, outcomes.
Only the standard library, numpy, sympy, mpmath and the package's codec and symbolic
parser are imported inside the sandbox.
"""
