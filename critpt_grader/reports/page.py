"""The HTML page every report is drawn in: one stylesheet, inline, nothing fetched.

What :func:`page` assumes: ``title`` and every section are HTML already (the caller escapes
its texts); sections use the stylesheet's vocabulary (``header``, ``.meta``, ``.pill``,
``.cards``/``.card``, ``section``, ``.charts``, tables with ``num``/``bad``/``code``/``id``
cells, ``.sub``, ``.mark``, ``ul.sets``, ``.skipped``, ``.empty``, ``details``, ``h3``,
``pre.code``).

What it guarantees: a complete UTF-8 document with the style inline and no script, font,
image or stylesheet from anywhere, so the file reads the same offline, attached to a CI run,
or years later; the same input gives the same bytes.
"""

from __future__ import annotations

_CSS = """
:root{--ink:#212529;--muted:#6c757d;--line:#dee2e6;--soft:#f8f9fa;--ok:#2b8a3e;--bad:#c92a2a}
*{box-sizing:border-box}
body{margin:0;background:#f1f3f5;color:var(--ink);
 font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1180px;margin:0 auto;padding:32px 28px 56px}
header{display:flex;align-items:center;gap:16px;flex-wrap:wrap;margin-bottom:6px}
h1{font-size:26px;margin:0;font-weight:650;letter-spacing:-.01em}
h2{font-size:17px;margin:0 0 12px;font-weight:620}
.meta{color:var(--muted);margin:0 0 22px}
.pill{display:inline-block;padding:3px 12px;border-radius:999px;font-weight:650;font-size:13px;
 letter-spacing:.04em;color:#fff}
.pill.ok{background:var(--ok)}.pill.bad{background:var(--bad)}
.cards{display:grid;grid-template-columns:repeat(4,1fr);gap:14px;margin-bottom:22px}
.card{background:#fff;border:1px solid var(--line);border-radius:10px;padding:14px 18px}
.card .n{font-size:28px;font-weight:650;line-height:1.2}
.card .l{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.06em}
.card.bad .n{color:var(--bad)}.card.ok .n{color:var(--ok)}
section{background:#fff;border:1px solid var(--line);border-radius:10px;padding:20px 22px;
 margin-bottom:18px;overflow-x:auto}
.charts{display:grid;grid-template-columns:1fr;gap:18px}
table{border-collapse:collapse;width:100%;font-size:13px}
th{text-align:left;font-weight:600;color:var(--muted);font-size:12px;text-transform:uppercase;
 letter-spacing:.04em;border-bottom:2px solid var(--line);padding:8px 10px;white-space:nowrap}
td{border-bottom:1px solid #edf0f2;padding:7px 10px;vertical-align:top}
tbody tr:nth-child(even){background:var(--soft)}
th.num,td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.bad{color:var(--bad);font-weight:650}
td.id{white-space:nowrap}
.sub{color:var(--muted);font-weight:400;font-size:12px}
td.bad .sub{color:#e35d5d}
td.code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px;
 word-break:break-word}
.mark.ok{color:var(--ok);font-weight:700}.mark.bad{color:var(--bad);font-weight:700}
ul.sets{margin:0;padding-left:18px}ul.sets li{margin:2px 0}
.skipped{color:var(--muted)}
.empty{color:var(--muted);margin:0}
h3{font-size:14px;margin:18px 0 6px;font-weight:620}
pre.code{background:var(--soft);border:1px solid var(--line);border-radius:6px;padding:10px 12px;
 font:12px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;overflow-x:auto}
details summary{cursor:pointer;font-weight:620;font-size:17px}
details[open] summary{margin-bottom:12px}
"""


def page(title: str, sections: list[str]) -> str:
    """A self-contained page: the report style inline, nothing fetched (``title`` is HTML)."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{title}</title><style>{_CSS}</style></head>"
        f"<body><main>{''.join(sections)}</main></body></html>\n"
    )
