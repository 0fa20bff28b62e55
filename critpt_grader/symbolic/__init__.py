"""Symbolic answers: the restricted grammar (text → SymPy) and the equivalence prover.

    >>> from critpt_grader.symbolic import parse, decide
    >>> decide(parse("(x+2)**2"), parse("x**2 + 4*x + 4")).status
    'equal'
    >>> decide(parse("x + sin(840*pi*x)"), parse("x")).status
    'different'

``parse`` never evaluates the text; ``decide`` says ``equal`` only with a proof and uses random
high-precision points only to show that two values differ.
"""

from critpt_grader.symbolic.parse import DEFAULT_LIMITS, Limits, parse
from critpt_grader.symbolic.prove import Decision, decide

__all__ = ["DEFAULT_LIMITS", "Decision", "Limits", "decide", "parse"]
