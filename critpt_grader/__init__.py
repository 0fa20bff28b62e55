"""critpt-grader: a strict, sandboxed grader for CritPt-style physics problems."""
