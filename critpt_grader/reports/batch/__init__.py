"""The results report of a graded batch: ``critpt-grader report OUT.jsonl [OUT2.jsonl]``.

:mod:`.summary` turns OUT rows into one plain dict (accuracy with a Wilson interval, pass@k /
majority@k, categories, per-problem rows, the slowest rows, the diff of two OUT files);
:mod:`.text` words its cells once; :mod:`.markdown` and :mod:`.html` only render it, with the
acceptance report's page, tables and charts (:mod:`critpt_grader.reports`).
"""
