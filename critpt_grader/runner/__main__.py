"""``python -m critpt_grader.runner``: the program that runs inside the sandbox."""

from critpt_grader.runner.supervisor import main

if __name__ == "__main__":
    raise SystemExit(main())
