"""``-o ll144-csv=FILE``: the LL144 summary of results as CSV (formatters/_ll144.py), one
row per control, level and category; the data period, distribution date, comparator and
unknown-category count as leading ``#`` comment lines."""

from __future__ import annotations

import csv
import io
from typing import TYPE_CHECKING

from fairpolicy.formatters import _ll144

if TYPE_CHECKING:
    from fairpolicy.formatters import RenderOptions
    from fairpolicy.results import Results


def render(results: Results, opts: RenderOptions) -> str:
    buf = io.StringIO()
    for label, value in _ll144.about(results):
        buf.write(f"# {label}: {value}\n")
    sums = _ll144.summaries(results)
    for s in sums:
        for line in _ll144.lines(s):
            buf.write(f"# {s.control_id}: {line}\n")
    if not sums:
        buf.write("# no LL144 impact-ratio control in this run\n")
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(_ll144.COLUMNS)
    for s in sums:
        for row in s.rows:
            w.writerow(["" if v is None else (repr(v) if isinstance(v, float) else v) for v in row])
    return buf.getvalue()
