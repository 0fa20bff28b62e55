"""``python -m critpt_grader.runner [--serve]``: the program that runs inside the sandbox.

Without arguments it runs one job (stdin → framed result on stdout). With ``--serve`` it is a
warm sandbox's init and serves jobs until stdin closes (see :mod:`critpt_grader.runner.warm`);
``--serve --scipy`` also preloads SciPy's common modules.
"""

import os
import sys

if __name__ == "__main__":
    if sys.argv[1:] in (["--serve"], ["--serve", "--scipy"]):
        from critpt_grader.runner.warm import serve

        code = serve(scipy=sys.argv[2:] == ["--scipy"])
    else:
        from critpt_grader.runner import signals
        from critpt_grader.runner.job import run_job

        if os.getpid() == 1:  # a fresh sandbox's init: nothing a job sends it may end it
            signals.ignore_all()
        code = run_job()
    # The frame is written unbuffered; skipping interpreter teardown (a warm SymPy heap)
    # saves tens of milliseconds per run.
    os._exit(code)
