"""Every report the grader writes: the shared drawing pieces and two views built on them.

Layout:
  * :mod:`.page`, :mod:`.tables`, :mod:`.charts` draw and know neither report:
    an HTML page shell with the one stylesheet, tables of text cells in HTML and
    Markdown, inline SVG stacked bar charts of verdict counts;
  * :mod:`.acceptance` is the report of ``critpt-grader acceptance`` (a JSON document, and its
    Markdown, HTML and console views);
  * :mod:`.batch` is the results report of ``critpt-grader report OUT.jsonl`` (a summary of
    OUT rows, and its Markdown and HTML views).

What the package assumes: a view is handed plain data (the acceptance report document, the
batch summary dict) and renders it; computing that data is the only place that looks at
grading types (:mod:`critpt_grader.acceptance`, :mod:`critpt_grader.verdict`, the server's
metrics).

What it guarantees: every HTML page is self-contained (inline CSS and SVG, no script, no
URL), every text taken from the data is escaped, and the views of one report word their
tables alike (the cell texts are made once per report, in its ``text`` module).
Nothing here imports the server, the batch runner or the commands, except that the batch
summary reuses the server's ``/aggregate_metrics`` arithmetic.
"""
