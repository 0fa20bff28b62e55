"""The audit report: a terminal table (``console``), ``report.md`` (``markdown``) and a
self-contained ``report.html`` (``html``), all from the cells of ``text``."""

from critpt_grader.reports.audit.console import AuditProgress, print_tables
from critpt_grader.reports.audit.html import write_html
from critpt_grader.reports.audit.markdown import write_markdown

__all__ = ["AuditProgress", "print_tables", "write_html", "write_markdown"]
