"""The LL144 summary of results (6 RCNY §5-301, §5-303): per category and intersection the
applicants, the selected (or scored above the median), the rate and the impact ratio; the
unknown-category count; the categories kept out under the 2 % rule; the comparator reading;
the data period and distribution date (``--meta data_period=… --meta distribution_date=…``).

Built from the findings' recorded ``details["levels"]`` only (the metric wrote them): the
formatters render them, they never recompute a ratio."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fairpolicy.results import Results

#: the columns of the summary (the CSV header)
COLUMNS = (
    "control_id",
    "level",
    "category",
    "applicants",
    "selected",
    "rate",
    "impact_ratio",
    "kept_out_under_2pct",
    "rate_low",
    "rate_high",
    "impact_ratio_low",
    "impact_ratio_high",
    "comparator",
    "compared_with",
    "bounds_sharp",
)


@dataclass(frozen=True)
class Summary:
    control_id: str
    mode: str  # selection | scoring
    reading: str
    unknown: int | float
    kept_out: list[str]
    rows: list[tuple[Any, ...]]
    bounds: dict[str, Any]


def _num(x: Any, digits: int = 4) -> str:
    if x is None:
        return ""
    if isinstance(x, int) or (isinstance(x, float) and x.is_integer() and abs(x) >= 1):
        return str(int(x))
    return f"{float(x):.{digits}f}"


def summaries(results: Results) -> list[Summary]:
    out = []
    for f in results.findings:
        d = f.details or {}
        levels = d.get("levels")
        if not isinstance(levels, list) or "reading" not in d:
            continue
        rows = []
        kept_out = []
        for lv in levels:
            for c in lv["categories"]:
                if c["excluded"]:
                    kept_out.append(f"{lv['level']}: {c['category']}")
                rows.append(
                    (
                        f.control_id,
                        lv["level"],
                        c["category"],
                        c["n"],
                        c["selected"],
                        c["rate"],
                        c["impact_ratio"],
                        bool(c["excluded"]),
                        c.get("rate_low"),
                        c.get("rate_high"),
                        c.get("ratio_low"),
                        c.get("ratio_high"),
                        str(d["reading"]),
                        lv.get("highest_category"),
                        lv.get("bounds_sharp"),
                    )
                )
        out.append(
            Summary(
                f.control_id,
                str(d.get("mode", "selection")),
                str(d["reading"]),
                d.get("unknown_n", 0),
                kept_out,
                rows,
                dict(d.get("bounds") or {}),
            )
        )
    return out


def about(results: Results) -> list[tuple[str, str]]:
    """Data period and distribution date (``--meta``), said missing when not given."""
    meta = results.meta
    return [
        ("data period", meta.get("data_period", "not given (--meta data_period=…)")),
        (
            "distribution date",
            meta.get("distribution_date", "not given (--meta distribution_date=…)"),
        ),
    ]


def headers(s: Summary) -> list[str]:
    what = "Scored above median" if s.mode == "scoring" else "Selected"
    rate = "Scoring rate" if s.mode == "scoring" else "Selection rate"
    out = ["Level", "Category", "Applicants", what, rate, "Impact ratio", "Compared with"]
    if any(r[8] is not None for r in s.rows):
        out += ["Rate range (unknowns allocated)", "Impact ratio range"]
    return out


def cells(s: Summary, row: tuple[Any, ...]) -> list[str]:
    ratio = _num(row[6], 3) + (" (kept out, < 2 %)" if row[7] else "")
    short = s.reading.split(" (")[0].removeprefix("comparator: ")
    against = f"{row[13]} ({short})" if row[13] is not None and row[6] is not None else ""
    out = [str(row[1]), str(row[2]), _num(row[3]), _num(row[4]), _num(row[5], 3), ratio, against]
    if any(r[8] is not None for r in s.rows):
        out.append(f"{_num(row[8], 3)}–{_num(row[9], 3)}" if row[8] is not None else "")
        mark = " †" if row[14] is False else ""
        out.append(f"{_num(row[10], 3)}–{_num(row[11], 3)}{mark}" if row[10] is not None else "")
    return out


def lines(s: Summary) -> list[str]:
    """The facts stated under the table."""
    out = [
        s.reading[:1].upper() + s.reading[1:],
        f"Applicants of unknown category: {_num(s.unknown)}",
        "Kept out under the 2 % rule: " + (", ".join(s.kept_out) or "none"),
    ]
    b = s.bounds
    if b.get("value_low") is not None:
        if b.get("value_low_sharp", True):
            out.append(
                f"Lowest impact ratio over every allocation of the unknowns: "
                f"{b['value_low']:.4f} (their selection {b.get('selection_of_unknowns')})"
            )
        else:
            seen = b.get("low_witness_value")
            found = f"; one allocation gives {seen:.4f}" if seen is not None else ""
            out.append(
                f"Lowest impact ratio over every allocation of the unknowns: at least "
                f"{b['value_low']:.4f}, a bound not shown to be attained{found} (their "
                f"selection {b.get('selection_of_unknowns')})"
            )
        if b.get("sharp") is False:
            out.append(f"† Bounds not sharp (sharp: false): {b.get('sharp_reason')}")
    elif b.get("reason"):
        out.append(f"Allocation bounds not computed: {b['reason']}")
    return out
