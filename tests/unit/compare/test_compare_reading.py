"""Regression: telling a SymPy set while another thread is still importing SymPy."""

from __future__ import annotations

import sys
import types

import sympy

from critpt_grader.compare.reading import is_sympy_set


def test_a_half_imported_sympy_package_does_not_break_the_set_check(monkeypatch):
    # What another thread's first `import sympy` looks like mid-way: a package without `Set`.
    monkeypatch.setitem(sys.modules, "sympy", types.ModuleType("sympy"))
    assert is_sympy_set(sympy.Interval(0, 1))
    assert not is_sympy_set([0, 1])
