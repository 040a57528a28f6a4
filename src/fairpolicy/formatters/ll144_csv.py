"""``-o ll144-csv=FILE``: the LL144 summary of results as CSV (formatters/_ll144.py), one
row per control, level and category; the data period, distribution date, comparator and
unknown-category count as leading ``#`` comment lines.

Category names and control ids are data: invisible control characters are shown as
escapes (``\x1b``, ``\u202e``), line breaks as ``\n``, and a text cell that a
spreadsheet would read as a formula (starting with ``=``, ``+``, ``-`` or ``@``) gets a
leading ``'``."""

from __future__ import annotations

import csv
import io
from typing import TYPE_CHECKING

from fairpolicy.formatters import _ci, _ll144

if TYPE_CHECKING:
    from fairpolicy.formatters import RenderOptions
    from fairpolicy.results import Results


def _line(text: object) -> str:
    return _ci.inert(str(text).replace("\r", "\\r").replace("\n", "\\n"))


def _cell(value: object) -> object:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        text = _line(value)
        return "'" + text if text[:1] in ("=", "+", "-", "@") else text
    return value


def render(results: Results, opts: RenderOptions) -> str:
    buf = io.StringIO()
    for label, value in _ll144.about(results):
        buf.write(f"# {label}: {_line(value)}\n")
    sums = _ll144.summaries(results)
    for s in sums:
        for line in _ll144.lines(s):
            buf.write(f"# {_line(s.control_id)}: {_line(line)}\n")
    if not sums:
        buf.write("# no LL144 impact-ratio control in this run\n")
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(_ll144.COLUMNS)
    for s in sums:
        for row in s.rows:
            w.writerow([_cell(v) for v in row])
    return buf.getvalue()
