"""LL144 allocation bounds (fairpolicy.metrics.ll144) against brute-force enumeration."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from fairpolicy.metrics.ll144 import Category, all_ratios, rate_bounds, ratio_bounds


def _compositions(total: int, parts: int):
    if parts == 1:
        yield (total,)
        return
    for first in range(total + 1):
        for rest in _compositions(total - first, parts - 1):
            yield (first, *rest)


def allocations(k: int, unknown: int, unknown_selected: int | None):
    """Every allocation ((k_c, j_c) per category) of the unknowns."""
    totals = [unknown_selected] if unknown_selected is not None else range(unknown + 1)
    for su in totals:
        for sel in _compositions(su, k):
            for unsel in _compositions(unknown - su, k):
                yield [(s + u, s) for s, u in zip(sel, unsel, strict=True)]


@st.composite
def tables(draw):
    k = draw(st.integers(2, 4))
    cats = []
    for _ in range(k):
        n = draw(st.integers(1, 6))
        cats.append(Category(n, draw(st.integers(0, n)), draw(st.booleans())))
    if sum(c.kept for c in cats) < 2:
        cats[0] = Category(cats[0].n, cats[0].selected, True)
        cats[1] = Category(cats[1].n, cats[1].selected, True)
    unknown = draw(st.integers(0, 4 if k < 4 else 3))
    su = draw(st.one_of(st.none(), st.integers(0, unknown)))
    return cats, unknown, su


@settings(max_examples=3000, deadline=None)
@given(tables())
def test_bounds_equal_brute_force(case) -> None:
    cats, unknown, su = case
    rates: list[list[Fraction]] = [[] for _ in cats]
    ratios: list[list[Fraction]] = [[] for _ in cats]
    for alloc in allocations(len(cats), unknown, su):
        for i, (c, (k, j)) in enumerate(zip(cats, alloc, strict=True)):
            rates[i].append(Fraction(c.selected + j, c.n + k))
        for i, r in enumerate(all_ratios(cats, alloc)):
            if r is not None:
                ratios[i].append(r)
    for i, c in enumerate(cats):
        assert rate_bounds(c, unknown, su) == (min(rates[i]), max(rates[i]))
        got = ratio_bounds(cats, i, unknown, su)
        want = (min(ratios[i]), max(ratios[i])) if ratios[i] else None
        assert got == want, (cats, unknown, su, i)


@given(st.integers(1, 50), st.data())
def test_rate_closed_form_when_the_unknowns_selection_is_unknown(n: int, data) -> None:
    s = data.draw(st.integers(0, n))
    u = data.draw(st.integers(0, 50))
    lo, hi = rate_bounds(Category(n, s, True), u, None)
    assert (lo, hi) == (Fraction(s, n + u), Fraction(s + u, n + u))
    # k = 0 (no unknown in the category) lies inside: S/n is never an extreme beyond them
    assert lo <= Fraction(s, n) <= hi


# --- the metric: comparators, the min_share reading, and the decisions ----------------

import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from fairpolicy.policy.schema import Operator  # noqa: E402
from tests.conftest import make_control, run_controls  # noqa: E402


def _cells(cells):
    rows = []
    for sex, race, n, sel in cells:
        rows += [{"sex": sex, "race": race, "selected": int(i < sel)} for i in range(n)]
    df = pd.DataFrame(rows)
    df["sex"] = df["sex"].astype(object)
    df["race"] = df["race"].astype(object)
    return df


def _run(df, dimension="sex,race", threshold=0.8, **params):
    c = make_control(
        "impact_ratio", dimension, params, min_samples=1, threshold=threshold, operator=Operator.GE
    )
    c = c.model_copy(update={"inputs": {"target": "selected", "dimension": dimension}})
    return run_controls([c], df).findings[0]


# 1000 applicants: a 1.1 % cell of a kept sex and a kept race stays in and is the comparator
SMALL_CELL = [
    ("M", "W", 300, 90),
    ("F", "W", 300, 80),
    ("M", "B", 200, 50),
    ("F", "B", 189, 40),
    ("F", "A", 11, 9),  # race A is 1.1 %: kept out at the race level
    ("M", "A", 0, 0),
]


def test_category_reading_keeps_a_small_cell_of_kept_categories() -> None:
    df = _cells([c for c in SMALL_CELL if c[2]] + [("M", "H", 30, 9), ("F", "H", 11, 10)])
    f = _run(df)
    lv = {x["level"]: x for x in f.details["levels"]}
    race = {c["category"]: c for c in lv["race"]["categories"]}
    assert race["A"]["excluded"] and not race["H"]["excluded"]  # A 1.1 %, H 4.1 %
    cells = {c["category"]: c for c in lv["sex,race"]["categories"]}
    # F & H holds 1.1 % of the rows but F and H are both kept: it stays in, and is the comparator
    assert not cells["F & H"]["excluded"] and cells["F & A"]["excluded"]
    assert lv["sex,race"]["highest_category"] == "F & H"
    assert f.details["min_share_scope"] == "category"
    assert "min_share_scope: category" in f.details["reading"]
    # the cell reading keeps F & H out: the comparator changes
    g = _run(df, min_share_scope="cell")
    lv2 = {x["level"]: x for x in g.details["levels"]}
    cells2 = {c["category"]: c for c in lv2["sex,race"]["categories"]}
    assert cells2["F & H"]["excluded"] and lv2["sex,race"]["highest_category"] != "F & H"
    # comparator highest: nothing kept out, the highest of all categories compares
    h = _run(df, comparator="highest")
    lv3 = {x["level"]: x for x in h.details["levels"]}
    assert not any(c["excluded"] for x in lv3.values() for c in x["categories"])
    assert lv3["race"]["highest_category"] == "A"  # 9/11 is the highest race rate
    assert h.details["reading"] == "comparator: highest"


def test_worst_and_best_case_decide_on_the_allocation_range() -> None:
    # sex only: M 100 (50), F 100 (42) -> IR_F = 0.84; 20 unknown, 10 selected
    df = _cells([("M", "x", 100, 50), ("F", "x", 100, 42), (None, "x", 20, 10)])
    point = _run(df, "sex")
    assert point.status == "pass" and point.value == pytest.approx(0.84)
    b = point.details["bounds"]
    assert b["unknown"] == 20 and b["unknown_selected"] == 10
    # lowest: 10 unselected to F (42/110), 10 selected to M (60/110): 0.7
    assert b["value_low"] == pytest.approx(42 / 60)
    worst = _run(df, "sex", decision="worst_case")
    assert worst.status == "fail" and worst.decision == "worst_case"
    assert "some of them violate" in (worst.reason or "")
    best = _run(df, "sex", decision="best_case")
    # 10 selected unknowns to F (52/110) and 10 unselected to M (50/110): 0.96
    bb = best.details["bounds"]
    assert best.status == "pass" and bb["value_high_sharp"] and bb["value_high"] >= 0.8
    assert bb["sharp"] and bb["method"].startswith("every allocation visited")
    none = _run(df, "sex", threshold=1.01, decision="best_case")
    assert none.status == "fail" and "no allocation" in (none.reason or "")
    # with no unknown rows both rules are the point decision
    known = _cells([("M", "x", 100, 50), ("F", "x", 100, 42)])
    for rule in ("worst_case", "best_case"):
        assert _run(known, "sex", decision=rule).status == "pass"
        assert _run(known, "sex", threshold=0.9, decision=rule).status == "fail"


def test_free_selection_of_unknowns_widens_the_rate_bounds() -> None:
    df = _cells([("M", "x", 100, 50), ("F", "x", 100, 42), (None, "x", 20, 10)])
    f = _run(df, "sex", unknown_selection="free")
    lv = f.details["levels"][0]
    fem = next(c for c in lv["categories"] if c["category"] == "F")
    assert fem["rate_low"] == pytest.approx(42 / 120) and fem["rate_high"] == pytest.approx(
        62 / 120
    )
    assert f.details["bounds"]["selection_of_unknowns"] == "free"


@st.composite
def joint_tables(draw):
    cells = {}
    for sex in ("F", "M"):
        for race in ("A", "B"):
            n = draw(st.integers(1, 5))
            cells[(sex, race)] = (n, draw(st.integers(0, n)))
    u = draw(st.integers(1, 3))
    return cells, u, draw(st.integers(0, u))


def _oracle_value(cells):
    """min over the levels (sex, race, sex x race) of min rate / max rate, every category
    kept (comparator: highest); None where every level is undefined."""
    levels = [
        lambda k: k[0],
        lambda k: k[1],
        lambda k: k,
    ]
    best = None
    for key in levels:
        agg: dict = {}
        for k, (n, s) in cells.items():
            a = agg.setdefault(key(k), [0, 0])
            a[0] += n
            a[1] += s
        rates = [Fraction(s, n) for n, s in agg.values()]
        if max(rates) == 0:
            continue
        v = min(rates) / max(rates)
        best = v if best is None or v < best else best
    return best


@settings(max_examples=150, deadline=None)
@given(joint_tables())
def test_value_range_and_witness_against_every_joint_allocation(case) -> None:
    cells, u, su = case
    keys = list(cells)
    values = []
    for alloc in allocations(len(keys), u, su):
        moved = {
            k: (n + a, s + j) for (k, (n, s)), (a, j) in zip(cells.items(), alloc, strict=True)
        }
        v = _oracle_value(moved)
        if v is not None:
            values.append(v)
    rows = [
        {"sex": sex, "race": race, "selected": int(i < s)}
        for (sex, race), (n, s) in cells.items()
        for i in range(n)
    ]
    rows += [{"sex": None, "race": "A", "selected": int(i < su)} for i in range(u)]
    df = pd.DataFrame(rows)
    df["sex"] = df["sex"].astype(object)
    f = _run(df, comparator="highest")
    b = f.details["bounds"]
    if not values:
        return
    assert Fraction(b["value_low_exact"]) == min(values)  # sharp
    assert Fraction(b["value_high_exact"]) >= max(values)  # a bound
    if "witness_value_exact" in b:
        assert Fraction(b["witness_value_exact"]) in values  # an allocation's value
