"""LL144 bounds when the 2 % kept set moves with the allocation, against brute force.

An allocation of the unknown-category applicants can bring a kept-out category across
``min_share`` and change the comparator. The oracle below re-derives, for every
allocation of the unknowns to the finest cells, each level's kept set (column categories
on their share; intersection cells on their categories' — or, under ``scope: cell``, on
their own — share), the comparator, every impact ratio and the control's value, in exact
fractions, independently of fairpolicy.metrics.ll144_enum."""

from __future__ import annotations

import math
from fractions import Fraction
from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from fairpolicy.metrics import ll144_enum
from fairpolicy.metrics.ll144 import add_bounds
from tests.ll144.test_bounds import allocations

SEP = " & "


def _levels(cells: dict[tuple[str, ...], tuple[int, int]]) -> list[dict]:
    """Recorded levels as the metric writes them (columns, then the intersection)."""
    d = len(next(iter(cells)))
    out = []
    plans = [(i,) for i in range(d)] + ([tuple(range(d))] if d > 1 else [])
    for cols in plans:
        agg: dict[tuple[str, ...], list[int]] = {}
        for key, (n, s) in cells.items():
            a = agg.setdefault(tuple(key[c] for c in cols), [0, 0])
            a[0] += n
            a[1] += s
        out.append(
            {
                "level": ",".join(f"c{c}" for c in cols),
                "categories": [
                    {"category": SEP.join(k), "n": n, "selected": s, "excluded": False}
                    for k, (n, s) in sorted(agg.items())
                ],
            }
        )
    return out


def _oracle(cells, u, su, comparator, scope, share):
    """(per level: per category (min, max) IR or None), (min, max) value or None, and
    the set of the value's values."""
    keys = sorted(cells)
    d = len(keys[0])
    total = sum(n for n, _ in cells.values()) + u
    plans = [(i,) for i in range(d)] + ([tuple(range(d))] if d > 1 else [])
    ratios: list[dict] = [{} for _ in plans]
    values = set()
    for alloc in allocations(len(keys), u, su):
        moved = {
            k: (cells[k][0] + a, cells[k][1] + j) for k, (a, j) in zip(keys, alloc, strict=True)
        }
        col_kept: list[dict] = []
        value = None
        for li, cols in enumerate(plans):
            agg: dict[tuple[str, ...], list[int]] = {}
            for key, (n, s) in moved.items():
                a = agg.setdefault(tuple(key[c] for c in cols), [0, 0])
                a[0] += n
                a[1] += s
            kept = {}
            for k, (n, _) in agg.items():
                if comparator == "highest":
                    kept[k] = True
                elif len(cols) == 1 or scope == "cell":
                    kept[k] = Fraction(n, total) >= share
                else:
                    kept[k] = all(col_kept[c][(k[c],)] for c in range(d))
            if len(cols) == 1:
                col_kept.append(kept)
            rates = {k: Fraction(s, n) for k, (n, s) in agg.items()}
            kr = [rates[k] for k in rates if kept[k]]
            if len(kr) < 2 or max(kr) == 0:
                continue
            top = max(kr)
            for k, r in rates.items():
                ratios[li].setdefault(SEP.join(k), []).append(r / top)
            low = min(rates[k] / top for k in rates if kept[k])
            value = low if value is None or low < value else value
        if value is not None:
            values.add(value)
    per = [{k: (min(v), max(v)) for k, v in lv.items()} for lv in ratios]
    return per, ((min(values), max(values)) if values else None), values


@st.composite
def moving_tables(draw):
    d = draw(st.integers(1, 2))
    if d == 1:
        names = [(x,) for x in "ABC"[: draw(st.integers(2, 3))]]
    else:
        names = [(a, b) for a in "FM" for b in "XY"[: draw(st.integers(1, 2))]]
        if len(names) < 2:
            names = [("F", "X"), ("M", "X")]
    cells = {}
    for k in names:
        n = draw(st.integers(1, 6))
        cells[k] = (n, draw(st.integers(0, n)))
    u = draw(st.integers(0, 3))
    su = draw(st.one_of(st.none(), st.integers(0, u)))
    comparator = draw(st.sampled_from(["highest_above_min_share", "highest"]))
    scope = draw(st.sampled_from(["category", "cell"]))
    share = Fraction(draw(st.integers(1, 9)), 20)  # 5 %..45 %: categories cross often
    return cells, u, su, comparator, scope, share


def _run(cells, u, su, comparator, scope, share):
    levels = _levels(cells)
    total = sum(n for n, _ in cells.values()) + u
    info = add_bounds(levels, u, su, True, "selection", comparator, scope, share, total)
    return levels, info


def _check_valid(levels, info, per, value, values, exact_when_sharp: bool):
    for lv, want in zip(levels, per, strict=True):
        for c in lv["categories"]:
            got = (c["ratio_low"], c["ratio_high"])
            w = want.get(c["category"])
            if w is None:
                assert got == (None, None) or lv["bounds_sharp"] is False, (lv, c)
                continue
            assert got[0] is not None and got[1] is not None, (lv, c)
            assert got[0] <= float(w[0]) + 1e-12 and got[1] >= float(w[1]) - 1e-12, (lv, c, w)
            if lv["bounds_low_sharp"]:
                assert got[0] == float(w[0]), (lv, c, w)
            if lv["bounds_sharp"] and exact_when_sharp:
                assert got == (float(w[0]), float(w[1])), (lv, c, w)
    if value is None:
        return
    lo, hi = Fraction(info["value_low_exact"]), Fraction(info["value_high_exact"])
    assert lo <= value[0] and hi >= value[1]
    if info["value_low_sharp"]:
        assert lo == value[0]
    if info["value_high_sharp"]:
        assert hi == value[1]
    for key in ("witness_value_exact", "low_witness_value_exact"):
        if key in info:
            assert Fraction(info[key]) in values, key


@settings(max_examples=1000, deadline=None)
@given(moving_tables())
def test_every_allocation_visited_equals_brute_force(case) -> None:
    """Under the cap: every bound exact, the kept set re-derived per allocation."""
    per, value, _ = _oracle(*case)
    levels, info = _run(*case)
    assert info["sharp"] is True and info["method"].startswith("every allocation")
    for lv, want in zip(levels, per, strict=True):
        for c in lv["categories"]:
            w = want.get(c["category"])
            got = (c["ratio_low"], c["ratio_high"])
            assert got == ((None, None) if w is None else (float(w[0]), float(w[1])))
    if value is None:
        assert "value_low" not in info
    else:
        assert (Fraction(info["value_low_exact"]), Fraction(info["value_high_exact"])) == value


@settings(max_examples=1000, deadline=None)
@given(moving_tables())
def test_level_by_level_with_the_cap_forced_to_zero(case) -> None:
    """Above the cap (forced to 0): every bound valid; exact where it says it is sharp,
    and the least ratios of a single level exact even when its kept set moves."""
    per, value, values = _oracle(*case)
    with patch.object(ll144_enum, "ENUMERATION_CAP", 0):
        levels, info = _run(*case)
    assert info["method"].startswith("each level on its own")
    _check_valid(levels, info, per, value, values, exact_when_sharp=True)
    cells, u, _, comparator, _, share = case
    single = len(next(iter(cells))) == 1
    if single:  # one level: the exact least-ratio method applies whenever two are kept
        lv = levels[0]
        total = sum(n for n, _ in cells.values()) + u
        need = math.ceil(share * total)
        kept = sum(1 for c in lv["categories"] if comparator == "highest" or c["n"] >= need)
        if kept >= 2:
            assert lv["bounds_low_sharp"]


def test_a_small_category_brought_in_by_the_unknowns_becomes_the_comparator() -> None:
    # C holds 1 of 40 rows (2.5 % < 5 %): kept out as observed. Giving it the 2 selected
    # unknowns (3 of 3 rows, 7.5 %) brings it in as the comparator: A's ratio 5/20 / 1.
    cells = {("A",): (20, 5), ("B",): (17, 8), ("C",): (1, 1)}
    per, value, _ = _oracle(cells, 2, 2, "highest_above_min_share", "category", Fraction(1, 20))
    assert per[0]["A"][0] == Fraction(1, 4)
    levels, info = _run(cells, 2, 2, "highest_above_min_share", "category", Fraction(1, 20))
    a = levels[0]["categories"][0]
    assert a["ratio_low"] == 0.25 and info["sharp"]
    assert Fraction(info["value_low_exact"]) == Fraction(1, 4) == value[0]
    # the observed kept set alone would say B (10/19 with the 2 selected) compares: 0.475
    assert Fraction(5, 20) / Fraction(10, 19) > Fraction(1, 4)


# race Z (14 of 49 rows) is under min_share 0.3 (14.7 rows) as observed; the one unknown
# applicant can bring it in. The true least value is 9/11 (≥ 0.8: worst_case passes).
# Above the cap the intersection's least ratios under the category reading are exact
# too (ll144_cells), so worst_case passes there as well.
NEAR = {
    ("F", "X"): (7, 5),
    ("F", "Y"): (11, 6),
    ("F", "Z"): (6, 4),
    ("M", "X"): (4, 4),
    ("M", "Y"): (12, 7),
    ("M", "Z"): (8, 5),
}

# race X (5 of 22 rows, need 6) can cross with the one unknown; race Y is then the only
# always-kept race, so the race level has no exact method above the cap: its least value
# 4/9 is a bound, the true least 7/15 (worst_case at 0.45 passes under the cap)
LOOSE = {
    ("F", "X"): (3, 1),
    ("F", "Y"): (7, 5),
    ("M", "X"): (2, 1),
    ("M", "Y"): (5, 3),
    ("M", "Z"): (4, 1),
}


def test_the_intersection_under_the_category_reading_is_exact_above_the_cap() -> None:
    from tests.ll144.test_bounds import _cells
    from tests.ll144.test_bounds import _run as run_metric

    _, value, _ = _oracle(NEAR, 1, 0, "highest_above_min_share", "category", Fraction(3, 10))
    assert value is not None and value[0] == Fraction(9, 11)  # every allocation passes
    df = _cells([(a, b, n, s) for (a, b), (n, s) in NEAR.items()] + [(None, "X", 1, 0)])
    exact = run_metric(df, decision="worst_case", min_share="0.3")
    assert exact.status == "pass" and exact.details["bounds"]["sharp"]
    with patch.object(ll144_enum, "ENUMERATION_CAP", 0):
        f = run_metric(df, decision="worst_case", min_share="0.3")
    b = f.details["bounds"]
    assert Fraction(b["value_low_exact"]) == Fraction(9, 11) and b["value_low_sharp"]
    assert f.status == "pass"
    levels = {lv["level"]: lv for lv in f.details["levels"]}
    assert levels["sex,race"]["bounds_sharp"] and "bounds_note" not in levels["sex,race"]
    # race has one always-kept category (Y): no exact method there
    assert not levels["race"]["bounds_sharp"] and "Z can cross min_share" in b["sharp_reason"]


def test_a_bound_that_is_not_sharp_leaves_worst_case_inconclusive_not_failed() -> None:
    from tests.ll144.test_bounds import _cells
    from tests.ll144.test_bounds import _run as run_metric

    share = Fraction(1, 4)
    _, value, _ = _oracle(LOOSE, 1, 1, "highest_above_min_share", "category", share)
    assert value is not None and value[0] == Fraction(7, 15)  # ≥ 0.45: every one passes
    df = _cells([(a, b, n, s) for (a, b), (n, s) in LOOSE.items()] + [(None, "X", 1, 1)])
    exact = run_metric(df, decision="worst_case", min_share="0.25", threshold=0.45)
    assert exact.status == "pass" and exact.details["bounds"]["sharp"]
    with patch.object(ll144_enum, "ENUMERATION_CAP", 0):
        f = run_metric(df, decision="worst_case", min_share="0.25", threshold=0.45)
        best = run_metric(df, decision="best_case", min_share="0.25", threshold=0.45)
    b = f.details["bounds"]
    assert b["sharp"] is False and "X can cross min_share" in b["sharp_reason"]
    assert Fraction(b["value_low_exact"]) == Fraction(4, 9) and not b["value_low_sharp"]
    assert f.status == "inconclusive" and "not shown to be attained" in (f.reason or "")
    # best_case: an allocation found (the witness) satisfies the threshold
    assert best.status == "pass"
    levels = {lv["level"]: lv for lv in f.details["levels"]}
    assert levels["sex"]["bounds_sharp"] and not levels["race"]["bounds_sharp"]
    assert "bounds_note" in levels["race"]


def test_worst_case_fails_when_an_allocation_brings_a_small_category_in_as_comparator() -> None:
    """A 5 of 20, B 8 of 17, C 1 of 1 (2.5 % of 40 rows: kept out at min_share 5 %), and 2
    unknown applicants, both selected. Read with the observed kept set {A, B}, the least
    value is 5/20 ÷ 10/19 = 0.475 ≥ 0.45, so worst_case would pass. But the 2 selected
    unknowns can join C (3 of 3, 7.5 %), which is then kept and compares: 0.25."""
    from tests.ll144.test_bounds import _cells
    from tests.ll144.test_bounds import _run as run_metric

    df = _cells([("A", "x", 20, 5), ("B", "x", 17, 8), ("C", "x", 1, 1), (None, "x", 2, 2)])
    f = run_metric(df, "sex", threshold=0.45, decision="worst_case", min_share="0.05")
    b = f.details["bounds"]
    assert Fraction(b["value_low_exact"]) == Fraction(1, 4) and b["value_low_sharp"]
    assert f.status == "fail" and "some of them violate" in (f.reason or "")
    point = run_metric(df, "sex", threshold=0.45, min_share="0.05")
    assert point.status == "pass"  # 5/20 ÷ 8/17 = 0.53 as observed
    # above the cap the single level's least ratios are exact too
    with patch.object(ll144_enum, "ENUMERATION_CAP", 0):
        g = run_metric(df, "sex", threshold=0.45, decision="worst_case", min_share="0.05")
    assert g.status == "fail" and Fraction(g.details["bounds"]["value_low_exact"]) == Fraction(1, 4)
