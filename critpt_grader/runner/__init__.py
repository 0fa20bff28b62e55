"""The program that runs inside a sandbox: ``python -m critpt_grader.runner``.

It reads one job from stdin (see :mod:`critpt_grader.runner.protocol`), runs it under the
supervision described in :mod:`critpt_grader.runner.supervisor`, and writes one
nonce-framed result to stdout. :mod:`critpt_grader.runner.program` holds the logic shared
with the in-process backend: loading, entry point resolution, inputs, outcomes.
Only the standard library, numpy, sympy, mpmath and the package's codec and symbolic
parser are imported inside the sandbox.
"""
