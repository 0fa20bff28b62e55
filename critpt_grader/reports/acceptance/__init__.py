"""The report of ``critpt-grader acceptance``: where verdicts differ from expectations.

:mod:`.document` turns one run's grades into the report document (written as
``report.json``); :mod:`.text` words its cells once; :mod:`.markdown`, :mod:`.html` and
:mod:`.console` only draw it (``report.md``, the self-contained ``report.html``, the tables
on stdout and the progress on stderr). Running the sets is :mod:`critpt_grader.acceptance`'s
job, not this package's.
"""
