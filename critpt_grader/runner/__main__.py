"""``python -m critpt_grader.runner``: the program that runs inside the sandbox."""

import os

from critpt_grader.runner.supervisor import main

if __name__ == "__main__":
    # The frame is written unbuffered; skipping interpreter teardown (a warm SymPy heap)
    # saves tens of milliseconds per run.
    os._exit(main())
