"""The sufficient statistics: one-pass confusion counts, marginals, the unknown group."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairpolicy.stats.counts as stats_mod
from fairpolicy.stats import (
    INTERSECTION_SEP,
    GroupStats,
    build_group_stats,
    confusion_counts,
    marginalize,
)


def reference_counts(g: np.ndarray, t: np.ndarray, p: np.ndarray, n_groups: int, k: int):
    out = np.zeros((n_groups, k, k), dtype=np.int64)
    keep = g >= 0
    np.add.at(out, (g[keep], t[keep], p[keep]), 1)
    return out


def test_confusion_counts_match_add_at_and_crosstab() -> None:
    rng = np.random.default_rng(0)
    n, n_groups, k = 5000, 4, 3
    g = rng.integers(-1, n_groups, n)  # -1: missing group, not counted
    t = rng.integers(0, k, n)
    p = rng.integers(0, k, n)
    counts = confusion_counts(g, t, p, n_groups, k)
    assert counts.dtype == np.int64
    assert counts.shape == (n_groups, k, k)
    np.testing.assert_array_equal(counts, reference_counts(g, t, p, n_groups, k))
    assert counts.sum() == (g >= 0).sum()
    df = pd.DataFrame({"g": g, "t": t, "p": p})
    df = df[df["g"] >= 0]
    for gi in range(n_groups):
        sub = df[df["g"] == gi]
        ct = pd.crosstab(sub["t"], sub["p"]).reindex(index=range(k), columns=range(k), fill_value=0)
        np.testing.assert_array_equal(counts[gi], ct.to_numpy())


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 4).flatmap(
        lambda n_groups: st.integers(1, 4).flatmap(
            lambda k: st.tuples(
                st.just(n_groups),
                st.just(k),
                st.lists(
                    st.tuples(
                        st.integers(-1, n_groups - 1),
                        st.integers(0, k - 1),
                        st.integers(0, k - 1),
                    ),
                    max_size=60,
                ),
            )
        )
    )
)
def test_confusion_counts_property(data: tuple[int, int, list[tuple[int, int, int]]]) -> None:
    n_groups, k, rows = data
    arr = np.array(rows, dtype=np.int64).reshape(-1, 3)
    g, t, p = arr[:, 0], arr[:, 1], arr[:, 2]
    np.testing.assert_array_equal(
        confusion_counts(g, t, p, n_groups, k), reference_counts(g, t, p, n_groups, k)
    )


# ---------------------------------------------------------------------------
# build_group_stats


def _encode(values: list[str | None]) -> tuple[np.ndarray, list[str]]:
    names = sorted({v for v in values if v is not None})
    index = {v: i for i, v in enumerate(names)}
    return np.array([index[v] if v is not None else -1 for v in values], dtype=np.int64), names


def _random_rows(seed: int, n: int = 4000, k: int = 3, missing: bool = True):
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M", "X"], n).astype(object)
    race = rng.choice(["a", "b", "c", "d"], n, p=[0.4, 0.3, 0.2, 0.1]).astype(object)
    if missing:
        sex[rng.random(n) < 0.03] = None
        race[rng.random(n) < 0.05] = None
    t = rng.integers(0, k, n)
    p = np.where(rng.random(n) < 0.6, t, rng.integers(0, k, n))
    classes = tuple(str(c) for c in range(k))
    dims = {"sex": _encode(list(sex)), "race": _encode(list(race))}
    return t, p, classes, dims, pd.DataFrame({"sex": sex, "race": race, "t": t, "p": p})


REQUESTS = [("sex",), ("race",), ("sex", "race"), ("race", "sex")]


def _expected(df: pd.DataFrame, cols: tuple[str, ...], k: int) -> tuple[dict, int]:
    known = df.dropna(subset=list(cols))
    out = {}
    for key, sub in known.groupby(list(cols)):
        key = key if isinstance(key, tuple) else (key,)
        name = INTERSECTION_SEP.join(str(v) for v in key)
        out[name] = reference_counts(
            np.zeros(len(sub), dtype=np.int64), sub["t"].to_numpy(), sub["p"].to_numpy(), 1, k
        )[0]
    return out, len(df) - len(known)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_build_group_stats_matches_pandas_groupby(seed: int) -> None:
    t, p, classes, dims, df = _random_rows(seed)
    built = build_group_stats(t, p, classes, dims, REQUESTS, positive=1)
    assert set(built) == set(REQUESTS)
    for req, gs in built.items():
        expected, unknown = _expected(df, req, len(classes))
        assert gs.dimension == req
        assert gs.classes == classes
        assert gs.positive == 1
        assert list(gs.groups) == sorted(expected)
        for i, name in enumerate(gs.groups):
            np.testing.assert_array_equal(gs.counts[i], expected[name])
        assert gs.unknown_n == unknown
        assert gs.total + gs.unknown_n == len(df)


def test_marginals_are_sums_over_intersectional_cells() -> None:
    t, p, classes, dims, _ = _random_rows(4, missing=False)
    built = build_group_stats(t, p, classes, dims, REQUESTS)
    cells = built[("sex", "race")]
    for col, pos in (("sex", 0), ("race", 1)):
        marg = built[(col,)]
        for i, name in enumerate(marg.groups):
            idx = [j for j, c in enumerate(cells.groups) if c.split(INTERSECTION_SEP)[pos] == name]
            np.testing.assert_array_equal(marg.counts[i], cells.counts[idx].sum(axis=0))
        assert marg.unknown_n == cells.unknown_n == 0


def test_marginals_with_missing_values() -> None:
    """A row missing only `race` belongs to its sex group but to no (sex, race) cell."""
    t, p, classes, dims, df = _random_rows(5)
    built = build_group_stats(t, p, classes, dims, REQUESTS)
    cells, sex = built[("sex", "race")], built[("sex",)]
    race_missing = df[df["race"].isna() & df["sex"].notna()]
    for i, name in enumerate(sex.groups):
        idx = [j for j, c in enumerate(cells.groups) if c.split(INTERSECTION_SEP)[0] == name]
        extra = race_missing[race_missing["sex"] == name]
        assert sex.counts[i].sum() == cells.counts[idx].sum() + len(extra)
    assert cells.unknown_n == int((df["sex"].isna() | df["race"].isna()).sum())
    assert sex.unknown_n == int(df["sex"].isna().sum())


def test_reversed_column_order_names_groups_in_that_order() -> None:
    t, p, classes, dims, _ = _random_rows(6)
    built = build_group_stats(t, p, classes, dims, REQUESTS)
    sr, rs = built[("sex", "race")], built[("race", "sex")]
    flipped = {
        INTERSECTION_SEP.join(reversed(g.split(INTERSECTION_SEP))): i
        for i, g in enumerate(rs.groups)
    }
    assert set(flipped) == set(sr.groups)
    for i, g in enumerate(sr.groups):
        np.testing.assert_array_equal(sr.counts[i], rs.counts[flipped[g]])


def test_a_request_alone_equals_the_same_request_among_others() -> None:
    t, p, classes, dims, _ = _random_rows(7)
    together = build_group_stats(t, p, classes, dims, REQUESTS)
    for req in REQUESTS:
        alone = build_group_stats(t, p, classes, {c: dims[c] for c in req}, [req])[req]
        assert alone.groups == together[req].groups
        np.testing.assert_array_equal(alone.counts, together[req].counts)
        assert alone.unknown_n == together[req].unknown_n


@pytest.mark.parametrize("seed", [8, 9])
def test_dense_and_unique_paths_agree(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    t, p, classes, dims, _ = _random_rows(seed)
    dense = build_group_stats(t, p, classes, dims, REQUESTS, positive=0)
    monkeypatch.setattr(stats_mod, "_DENSE_LIMIT", 0)
    sparse = build_group_stats(t, p, classes, dims, REQUESTS, positive=0)
    for req in REQUESTS:
        assert sparse[req].groups == dense[req].groups
        np.testing.assert_array_equal(sparse[req].counts, dense[req].counts)
        assert sparse[req].unknown_n == dense[req].unknown_n
        assert sparse[req].positive == dense[req].positive


def test_missing_codes_go_to_unknown_and_unseen_names_are_not_groups() -> None:
    codes = np.array([0, 0, -1, 2, -1, 2, 0], dtype=np.int64)
    names = ["F", "M", "X"]  # "M" never occurs
    t = np.array([0, 1, 1, 0, 0, 1, 1])
    p = np.array([0, 1, 0, 0, 1, 1, 0])
    gs = build_group_stats(t, p, ("0", "1"), {"sex": (codes, names)}, [("sex",)])[("sex",)]
    assert gs.groups == ("F", "X")
    assert gs.unknown_n == 2
    np.testing.assert_array_equal(gs.n, [3, 2])
    np.testing.assert_array_equal(gs.counts[0], [[1, 0], [1, 1]])
    np.testing.assert_array_equal(gs.counts[1], [[1, 0], [0, 1]])


def test_every_row_missing_leaves_no_group() -> None:
    codes = np.full(5, -1, dtype=np.int64)
    t = p = np.zeros(5, dtype=np.int64)
    for limit in (stats_mod._DENSE_LIMIT, 0):
        old = stats_mod._DENSE_LIMIT
        stats_mod._DENSE_LIMIT = limit
        try:
            gs = build_group_stats(t, p, ("0", "1"), {"a": (codes, ["x"])}, [("a",)])[("a",)]
        finally:
            stats_mod._DENSE_LIMIT = old
        assert gs.groups == ()
        assert gs.counts.shape == (0, 2, 2)
        assert gs.unknown_n == 5


def test_many_high_cardinality_columns_do_not_overflow_the_cell_code() -> None:
    """Π(cardinality + 1) over the columns is 10001**5 ≈ 1e20 > 2**63 here.

    The mixed-radix int64 cell code must not wrap around: that silently decodes
    into wrong group names (and can merge distinct cells).
    """
    r = 10_000
    names = [f"v{i}" for i in range(r)]
    rows = np.array([[r - 1] * 5, [0, 1, 2, 3, 4], [r - 2, 5, r - 3, 7, r - 1]])
    cols = ("a", "b", "c", "d", "e")
    dims = {c: (rows[:, i].astype(np.int64), names) for i, c in enumerate(cols)}
    t, p = np.array([0, 1, 1]), np.array([0, 1, 0])
    built = build_group_stats(t, p, ("0", "1"), dims, [cols, ("a",)])
    expected = sorted(INTERSECTION_SEP.join(names[v] for v in row) for row in rows)
    assert built[cols].groups == tuple(expected)
    assert built[("a",)].groups == ("v0", "v9998", "v9999")
    assert built[cols].total == 3


# ---------------------------------------------------------------------------
# marginalize and GroupStats


def test_marginalize_sums_cells_and_counts_missing() -> None:
    cells = [("F", "a"), ("F", "b"), ("M", "a"), ("M", None), (None, "b")]
    counts = np.arange(len(cells) * 4, dtype=np.int64).reshape(len(cells), 2, 2)
    names, out, unknown, _ = marginalize(cells, counts, ["sex", "race"], ["sex"])
    assert names == ("F", "M")
    np.testing.assert_array_equal(out[0], counts[0] + counts[1])
    np.testing.assert_array_equal(out[1], counts[2] + counts[3])
    assert unknown == counts[4].sum()
    names, out, unknown, _ = marginalize(cells, counts, ["sex", "race"], ["race", "sex"])
    assert names == ("a & F", "a & M", "b & F")
    assert unknown == counts[3].sum() + counts[4].sum()


def _stats(positive: int | None = 1) -> GroupStats:
    counts = np.array(
        [
            [[50, 10], [5, 35]],  # g0: tn 50, fp 10, fn 5, tp 35
            [[20, 20], [10, 50]],
        ],
        dtype=np.int64,
    )
    return GroupStats(("sex",), ("F", "M"), ("0", "1"), counts, positive=positive, unknown_n=3)


def test_group_stats_properties_and_binary_counts() -> None:
    gs = _stats()
    np.testing.assert_array_equal(gs.n, [100, 100])
    assert gs.total == 200 and gs.num_classes == 2
    tp, fp, fn, tn = gs.binary()
    np.testing.assert_array_equal(tp, [35, 50])
    np.testing.assert_array_equal(fp, [10, 20])
    np.testing.assert_array_equal(fn, [5, 10])
    np.testing.assert_array_equal(tn, [50, 20])
    # positive class 0: the roles swap
    tp0, fp0, fn0, tn0 = _stats(positive=0).binary()
    np.testing.assert_array_equal(tp0, tn)
    np.testing.assert_array_equal(fp0, fn)
    np.testing.assert_array_equal(fn0, fp)
    np.testing.assert_array_equal(tn0, tp)


def test_group_stats_select_and_validation() -> None:
    gs = _stats()
    sub = gs.select(np.array([False, True]))
    assert sub.groups == ("M",)
    np.testing.assert_array_equal(sub.counts[0], gs.counts[1])
    assert sub.unknown_n == gs.unknown_n and sub.positive == gs.positive
    with pytest.raises(ValueError, match="positive class not set"):
        _stats(positive=None).binary()
    with pytest.raises(ValueError, match="shape"):
        GroupStats(("sex",), ("F",), ("0", "1"), np.zeros((2, 2, 2), dtype=np.int64))


def test_select_keeps_group_keys_and_secondary() -> None:
    import numpy as np

    from fairpolicy.stats import GroupStats

    counts = np.ones((3, 2, 2), dtype=np.int64)
    twin = GroupStats(("site",), ("s1",), ("0", "1"), np.ones((1, 2, 2), dtype=np.int64))
    st = GroupStats(
        ("sex", "race"),
        ("F & a", "F & b", "M & a"),
        ("0", "1"),
        counts,
        group_keys=(("F", "a"), ("F", "b"), ("M", "a")),
        secondary=twin,
    )
    sub = st.select(np.array([True, False, True]))
    assert sub.group_keys == (("F", "a"), ("M", "a"))
    assert sub.secondary is twin
