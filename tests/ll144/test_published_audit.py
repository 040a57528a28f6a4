"""A real published LL144 audit reproduced: HackerRank's plagiarism-detection system,
audited by BABL AI (2024; tests/fixtures/ll144/published/README.md has the source).

Every printed impact ratio is reproduced to its rounding under the comparator
``highest_above_min_share`` (the highest rate among the categories holding at least 2 %),
except one. The audit prints 0.866 for Black or African American applicants, but its own
table gives 0.886, and no rounding of the printed rates reaches 0.866. The test asserts
that as an error in the published table, with the arithmetic. ``highest`` (the highest
rate of all categories) reproduces none of the intersectional ratios. The rows printed
``N/A`` are exactly the categories kept out under the 2 % rule."""

from __future__ import annotations

import csv
from fractions import Fraction
from pathlib import Path

import pandas as pd
import pytest

from fairpolicy import check
from fairpolicy.policy.schema import Control, Operator, Policy, Threshold

TABLE = (
    Path(__file__).resolve().parents[1]
    / "fixtures"
    / "ll144"
    / "published"
    / "hackerrank_plagiarism_2024.csv"
)
LEVEL = {"sex": "sex", "race": "race", "intersection": "sex,race"}
#: the one printed ratio its own table cannot give (level, category)
PUBLISHED_ERROR = ("race", "Black or African American")


def _rows() -> list[dict[str, str]]:
    with TABLE.open(newline="") as fh:
        return [r for r in csv.DictReader(fh) if r["rate"]]  # unknown rows: no rate printed


def _name(r: dict[str, str]) -> str:
    if r["level"] == "intersection":
        return f"{r['sex']} & {r['race']}"
    return r["sex"] or r["race"]


def _run(level: str, comparator: str) -> dict[str, dict]:
    rows = [r for r in _rows() if r["level"] == level]
    dim = LEVEL[level]
    table = pd.DataFrame(
        {
            "sex": [r["sex"] for r in rows],
            "race": [r["race"] for r in rows],
            "applicants": [int(r["applicants"]) for r in rows],
            "rate": [float(r["rate"]) for r in rows],
        }
    )
    c = Control(
        control_id="ir",
        metric_key="impact_ratio",
        metric_key_as_written="impact_ratio",
        threshold=Threshold(value=0.8),
        operator=Operator.GE,
        inputs={"count": "applicants", "rate": "rate", "dimension": dim},
        params={"comparator": comparator},
        min_samples=1,
    )
    f = check(Policy(form="list", controls=(c,)), table).findings[0]
    assert f.details["comparator"] == comparator and comparator in f.message
    lv = next(x for x in f.details["levels"] if x["level"] == dim)
    return {c["category"]: c for c in lv["categories"]}


def _printed(level: str) -> dict[str, str]:
    return {_name(r): r["impact_ratio"] for r in _rows() if r["level"] == level}


def _ratio_range(level: str, category: str, top: str) -> tuple[Fraction, Fraction]:
    """The impact ratios the printed rates allow: each printed rate stands for any rate
    within half a unit of its third decimal."""

    def rate(name: str) -> Fraction:
        r = next(x for x in _rows() if x["level"] == level and _name(x) == name)
        return Fraction(r["rate"])

    half = Fraction(1, 2000)
    mine, theirs = rate(category), rate(top)
    return (mine - half) / (theirs + half), (mine + half) / (theirs - half)


@pytest.mark.parametrize("level", list(LEVEL))
def test_every_printed_ratio_reproduced_under_highest_above_min_share(level: str) -> None:
    got = _run(level, "highest_above_min_share")
    printed = _printed(level)
    assert set(got) == set(printed)
    top = next(k for k, v in printed.items() if v == "1")
    for name, text in printed.items():
        c = got[name]
        if text == "N/A":  # the audit gives no ratio: exactly the categories under 2 %
            assert c["excluded"], name
            continue
        assert not c["excluded"], name
        if (level, name) == PUBLISHED_ERROR:
            continue
        assert round(c["impact_ratio"], 3) == float(text), (level, name, c["impact_ratio"])
        lo, hi = _ratio_range(level, name, top)
        assert lo <= Fraction(text) + Fraction(1, 2000) and Fraction(text) - Fraction(1, 2000) <= hi
    kept_out = {k for k, c in got.items() if c["excluded"]}
    assert kept_out == {k for k, v in printed.items() if v == "N/A"}


def test_the_printed_black_ratio_is_an_error_in_the_published_table() -> None:
    level, name = PUBLISHED_ERROR
    got = _run(level, "highest_above_min_share")
    # the table's own rates: 0.762 / 0.86 = 0.88605 → 0.886, not the printed 0.866
    assert round(got[name]["impact_ratio"], 3) == 0.886
    assert _printed(level)[name] == "0.866"
    # no rounding of the printed rates reaches 0.866: with 0.762 and 0.860 each anywhere
    # within half a unit of their third decimal the ratio lies in
    # [0.7615/0.8605, 0.7625/0.8595] = [0.8850, 0.8872], and 0.866 would need 0.8655..0.8665
    lo, hi = _ratio_range(level, name, "Hispanic or Latino")
    assert (lo, hi) == (
        Fraction("0.7615") / Fraction("0.8605"),
        Fraction("0.7625") / Fraction("0.8595"),
    )
    assert Fraction("0.8665") < lo
    # nor do whole counts: 815 of 1,070 is the only count that rounds to 0.762 and 969 of
    # 1,127 the only one that rounds to 0.860; their ratio is 0.8859
    assert [s for s in range(1071) if round(Fraction(s, 1070), 3) == Fraction("0.762")] == [815]
    assert [s for s in range(1128) if round(Fraction(s, 1127), 3) == Fraction("0.86")] == [969]
    assert round(Fraction(815, 1070) / Fraction(969, 1127), 4) == Fraction("0.8859")


def test_comparator_highest_does_not_reproduce_the_intersections() -> None:
    """Under ``highest`` the 1-of-1 American Indian or Alaska Native woman (rate 1) is the
    comparator, so every intersectional ratio is its rate: none is the printed one."""
    got = _run("intersection", "highest")
    printed = _printed("intersection")
    shown = {k: v for k, v in printed.items() if v != "N/A"}
    assert len(shown) == 8
    for name, text in shown.items():
        assert round(got[name]["impact_ratio"], 3) != float(text), name
    # the sex and race levels agree under both comparators (their highest categories hold
    # more than 2 %)
    for level in ("sex", "race"):
        a, b = _run(level, "highest"), _run(level, "highest_above_min_share")
        for name, text in _printed(level).items():
            if text != "N/A":
                assert a[name]["impact_ratio"] == b[name]["impact_ratio"]
