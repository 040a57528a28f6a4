"""examples/ll144 runs as its README says (a subprocess, as a user runs it)."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from fairpolicy import check
from fairpolicy.policy.schema import Control, Operator, Policy, Threshold

ROOT = Path(__file__).resolve().parents[2]
EX = ROOT / "examples" / "ll144"


def test_example_full_audit_from_a_count_table(tmp_path: Path) -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "fairpolicy",
            "check",
            str(EX / "policy.yaml"),
            str(EX / "counts.csv"),
            "--meta",
            "data_period=2025-01-01..2025-12-31",
            "--meta",
            "distribution_date=2026-02-15",
            "-o",
            f"json={tmp_path / 'r.json'}",
            "-o",
            f"ll144-csv={tmp_path / 's.csv'}",
            "-o",
            f"markdown={tmp_path / 's.md'}",
            "-o",
            f"html={tmp_path / 's.html'}",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        check=False,
    )
    assert out.returncode == 0, out.stderr
    r = json.loads((tmp_path / "r.json").read_text())
    point, worst = r["findings"]
    assert point["status"] == "pass" and point["value"] == pytest.approx(116 / 402 / (232 / 705))
    assert worst["status"] == "warn" and worst["decision"] == "worst_case"
    assert worst["details"]["bounds"]["value_low"] < 0.8 <= point["value"]
    text = (tmp_path / "s.csv").read_text()
    assert "# distribution date: 2026-02-15" in text and "Native American" in text
    rows = list(csv.DictReader(line for line in text.splitlines() if not line.startswith("#")))
    fb = next(
        x
        for x in rows
        if x["category"] == "Female & Black" and x["control_id"] == point["control_id"]
    )
    assert (fb["applicants"], fb["selected"]) == ("402", "116")
    for name in ("s.md", "s.html"):
        body = (tmp_path / name).read_text()
        assert "LL144 summary of results" in body and "2025-01-01..2025-12-31" in body
        assert "highest_above_min_share" in body


# A published summary table: OnHirely's sample LL144 bias audit report
# (https://onhirely.com/tools/sample-report; a vendor's published sample, not a real
# employer's audit). Ratios published to 2 decimals, comparator: the highest category.
PUBLISHED = {
    "sex": ([("Male", 682, 245), ("Female", 565, 142)], {"Male": 1.00, "Female": 0.70}),
    "ethnicity": (
        [("White", 412, 156), ("Asian", 298, 105), ("Black", 312, 86), ("Hispanic", 225, 62)],
        {"White": 1.00, "Asian": 0.93, "Black": 0.73, "Hispanic": 0.73},
    ),
}


@pytest.mark.parametrize("comparator", ["highest", "highest_above_min_share"])
@pytest.mark.parametrize("column", list(PUBLISHED))
def test_published_ratios_reproduced_to_their_rounding(column: str, comparator: str) -> None:
    cells, published = PUBLISHED[column]
    table = pd.DataFrame(cells, columns=[column, "applicants", "selected"])
    c = Control(
        control_id="ir",
        metric_key="impact_ratio",
        metric_key_as_written="impact_ratio",
        threshold=Threshold(value=0.8),
        operator=Operator.GE,
        inputs={"count": "applicants", "selected": "selected", "dimension": column},
        params={"comparator": comparator},
        min_samples=1,
    )
    f = check(Policy(form="list", controls=(c,)), table).findings[0]
    got = {x["category"]: x["impact_ratio"] for x in f.details["levels"][0]["categories"]}
    assert {k: round(v, 2) for k, v in got.items()} == published
    assert f.details["comparator"] == comparator and comparator in f.message


def test_every_format_names_the_comparator() -> None:
    from fairpolicy.formatters import FORMATS, RenderOptions, get

    r = check(EX / "policy.yaml", EX / "counts.csv", deterministic=True)
    for fmt in FORMATS:
        if fmt in ("oscal-ap", "oscal-ssp"):  # plans, not results
            continue
        text = get(fmt)(r, RenderOptions(deterministic=True))
        assert "highest_above_min_share" in text, fmt
        assert "min_share_scope" in text, fmt


def test_the_summary_names_the_comparator_beside_each_ratio_and_what_is_sharp(
    tmp_path: Path,
) -> None:
    from fairpolicy.formatters import RenderOptions, get

    r = check(
        EX / "policy.yaml",
        EX / "counts.csv",
        deterministic=True,
        meta={"data_period": "2025-01-01..2025-12-31", "distribution_date": "2026-02-15"},
    )
    opts = RenderOptions(deterministic=True)
    md, html, text = (get(f)(r, opts) for f in ("markdown", "html", "ll144-csv"))
    for body in (md, html):
        assert "Compared with" in body and "White (highest_above_min_share)" in body
        assert "sharp: false" not in body
        assert "2025-01-01..2025-12-31" in body and "2026-02-15" in body
        assert "Applicants of unknown category: 151" in body
    rows = list(csv.DictReader(x for x in text.splitlines() if not x.startswith("#")))
    black = next(x for x in rows if x["level"] == "race" and x["category"] == "Black")
    assert black["compared_with"] == "White" and black["comparator"].startswith(
        "comparator: highest_above_min_share"
    )
    # race and the intersection move with Native American, yet every ratio's range is
    # exact above the enumeration cap: the single level's least and greatest ratios, and
    # the intersection's under the category reading (docs/ll144.md)
    assert {x["bounds_sharp"] for x in rows} == {"True"}
    # the lowest value is attained: every unselected unknown a Native American man, every
    # selected one a Native American woman (57/1880)
    assert "every allocation of the unknowns: 0.0303 (their selection observed)" in text
    bounds = r.findings[0].details["bounds"]
    assert bounds["value_low_exact"] == "57/1880" and bounds["value_low_sharp"]
    assert '"sharp": true' in get("json")(r, opts)


def test_bounds_not_sharp_are_marked_in_every_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the intersection's exact methods switched off (their candidate budget at 0),
    its bounds are valid but not attained: every format marks them."""
    from fairpolicy.formatters import RenderOptions, get
    from fairpolicy.metrics import ll144_cells

    monkeypatch.setattr(ll144_cells, "MAX_TABLE", 0)
    r = check(EX / "policy.yaml", EX / "counts.csv", deterministic=True)
    opts = RenderOptions(deterministic=True)
    md, html, text = (get(f)(r, opts) for f in ("markdown", "html", "ll144-csv"))
    for body in (md, html):
        assert "sharp: false" in body and "†" in body
    rows = list(csv.DictReader(x for x in text.splitlines() if not x.startswith("#")))
    cell = next(x for x in rows if x["level"] == "sex,race" and x["category"] == "Female & Black")
    race = next(x for x in rows if x["level"] == "race" and x["category"] == "Black")
    assert cell["bounds_sharp"] == "False" and race["bounds_sharp"] == "True"
    assert "sharp: false" in get("text")(r, opts)
    assert '"sharp": false' in get("json")(r, opts)
