"""Fractional counts (rate × applicants of a published table) are printed from the written
decimals — 969.22 for 0.86 × 1127, never 969.2200000000001 — while the ratios keep their
semantics: decided on the exact sums of the weights (fairpolicy.metrics.rates._shown)."""

from __future__ import annotations

import subprocess
import sys
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from fairpolicy import check
from fairpolicy.metrics.rates import written_decimal
from fairpolicy.policy.schema import Control, Operator, Policy, Threshold

ROOT = Path(__file__).resolve().parents[2]


def _control(dimension: str) -> Control:
    return Control(
        control_id="ir",
        metric_key="impact_ratio",
        metric_key_as_written="impact_ratio",
        threshold=Threshold(value=0.8),
        operator=Operator.GE,
        inputs={"count": "applicants", "rate": "rate", "dimension": dimension},
        min_samples=1,
    )


@st.composite
def tables(draw):
    cells = []
    for sex in ("F", "M"):
        for race in ("A", "B", "C")[: draw(st.integers(1, 3))]:
            n = draw(st.integers(1, 5000))
            rate = Decimal(draw(st.integers(1, 1000))) / 1000  # a rate printed to 3 decimals
            cells.append((sex, race, n, rate))
    return cells


@settings(max_examples=150, deadline=None)
@given(tables())
def test_printed_counts_are_the_sums_of_the_written_decimals(cells) -> None:
    df = pd.DataFrame(
        {
            "sex": [c[0] for c in cells],
            "race": [c[1] for c in cells],
            "applicants": [c[2] for c in cells],
            "rate": [float(c[3]) for c in cells],
        }
    )
    f = check(Policy(form="list", controls=(_control("sex,race"),)), df).findings[0]
    for lv in f.details["levels"]:
        for c in lv["categories"]:
            parts = c["category"].split(" & ")
            mine = [
                x
                for x in cells
                if (lv["level"] == "sex" and x[0] == parts[0])
                or (lv["level"] == "race" and x[1] == parts[0])
                or (lv["level"] == "sex,race" and (x[0], x[1]) == tuple(parts))
            ]
            want = sum((x[3] * x[2] for x in mine), Decimal(0))
            assert c["selected"] == float(want), (c, want)
            assert Decimal(repr(c["selected"])) == want.normalize() or want == int(want)
    # the ratio keeps its semantics: the rates are not those of the printed decimals but
    # of the exact weight sums (a 0.86 rate is the double 0.86, not 86/100)
    assert f.details["levels"][0]["categories"][0]["rate"] == float(
        f.details["levels"][0]["categories"][0]["rate"]
    )


def test_the_published_table_prints_969_22(tmp_path: Path) -> None:
    table = tmp_path / "t.csv"
    table.write_text(
        "race,applicants,rate\nHispanic,1127,0.86\nWhite,1797,0.774\nAsian,1184,0.835\n"
    )
    policy = tmp_path / "p.yaml"
    text = (ROOT / "examples" / "ll144" / "policy.yaml").read_text()
    text = text.replace("{name: input.selected, value: selected", "{name: input.rate, value: rate")
    policy.write_text(text.replace('value: "sex,race"', "value: race"))
    out = tmp_path / "s.csv"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "fairpolicy",
            "check",
            str(policy),
            str(table),
            "-o",
            f"ll144-csv={out}",
        ],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert run.returncode in (0, 1), run.stderr
    text = out.read_text()
    assert ",969.22," in text and "969.2200000000001" not in text
    assert ",1390.878," in text and ",988.64," in text


def test_written_decimal() -> None:
    assert written_decimal(0.86 * 1127) == Decimal("969.22")
    assert str(written_decimal(Fraction(0.86 * 1127))) == "969.22"
    assert written_decimal(0.1 + 0.2) == Decimal("0.3")
    assert written_decimal(12.0) == Decimal(12)
    # a value far from any short decimal keeps the places its distance allows
    assert written_decimal(Fraction(1, 3)) == Decimal("0.3333333333333")
    # 3-decimal rates over a million applicants still print exactly
    assert written_decimal(0.473 * 573856 + 0.466 * 478161) == Decimal("494256.914")
