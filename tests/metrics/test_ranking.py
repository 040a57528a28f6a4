"""Ranking metrics (fairness-metrics tutorial) against per-item loop oracles, the tutorial's
own code, and hand-checked tiny rankings.

The oracles below are deliberately naive: they walk the ranked list one
position at a time in plain Python. fairpolicy's vectorised metrics, run
through the real pipeline (score/rank binding → stable sort → group order →
metric), must agree to 1e-12 on random rankings with 2–4 groups, including
items whose group is missing or excluded (they keep their positions). The
fairness-metrics tutorial's binary ``ranking_fairness_metrics`` is copied verbatim and must agree on
exposure ratio, attention parity and skew; its "NDKL (simplified)" is shown to
be a different quantity.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import pytest

from fairpolicy.metrics.ranking import attention_parity, exposure_ratio, ndkl, parse_k, rkl, skew
from fairpolicy.metrics.registry import REGISTRY
from fairpolicy.policy.schema import Control, Operator, Policy, Threshold
from fairpolicy.results import Finding
from fairpolicy.runner import check
from fairpolicy.stats import UNKNOWN_GROUP, GroupStats, RankingStats

TOL = 1e-12
KEYS = ("exposure_ratio", "ndkl", "rkl", "attention_parity", "skew")

Label = str | None


def rank_control(
    key: str,
    params: dict[str, Any] | None = None,
    *,
    by: str = "score",
    cid: str | None = None,
    min_samples: int = 1,
) -> Control:
    return Control(
        control_id=cid or key,
        metric_key=key,
        metric_key_as_written=key,
        threshold=Threshold(value=0.1),
        operator=Operator.LT,
        inputs={by: by, "dimension": "g"},
        params=dict(params or {}),
        min_samples=min_samples,
    )


def run(controls: Sequence[Control], df: pd.DataFrame) -> dict[str, Finding]:
    res = check(Policy(form="list", controls=tuple(controls)), df)
    return {f.control_id: f for f in res.findings}


def stats_of(labels: Sequence[Label]) -> GroupStats:
    """GroupStats of a ranked list of group labels (None = not compared), top first."""
    names = tuple(sorted({x for x in labels if x is not None}))
    index = {g: i for i, g in enumerate(names)}
    order = np.array([-1 if x is None else index[x] for x in labels], dtype=np.int64)
    return GroupStats(
        dimension=("g",),
        groups=names,
        classes=(),
        counts=np.zeros((len(names), 0, 0), dtype=np.int64),
        sizes=np.bincount(order[order >= 0], minlength=len(names)).astype(np.int64),
        ranking=RankingStats(order),
    )


def by_group(f: Any) -> dict[str, float | None]:
    return {g.group: g.value for g in f.groups}


# ---------------------------------------------------------------------------
# naive oracles: one position at a time


def oracle_exposure(labels: Sequence[Label]) -> tuple[float, dict[str, float]]:
    total: dict[str, float] = {}
    count: Counter[str] = Counter()
    for i, g in enumerate(labels, start=1):
        if g is None:
            continue
        total[g] = total.get(g, 0.0) + 1.0 / math.log2(i + 1)
        count[g] += 1
    per = {g: total[g] / count[g] for g in total}
    return min(per.values()) / max(per.values()), per


def _kl(p: dict[str, float], q: dict[str, float], log: Any) -> float:
    return sum(p[g] * log(p[g] / q[g]) for g in q if p.get(g, 0.0) > 0)


def oracle_discounted_kl(
    labels: Sequence[Label], cutoffs: Sequence[int], discount: Any, log: Any
) -> float | None:
    compared = [g for g in labels if g is not None]
    q = {g: c / len(compared) for g, c in Counter(compared).items()}
    num = z = 0.0
    seen: Counter[str] = Counter()
    for i, g in enumerate(labels, start=1):
        if g is not None:
            seen[g] += 1
        if i not in cutoffs or not seen:
            continue
        total = sum(seen.values())
        p = {h: c / total for h, c in seen.items()}
        num += discount(i) * max(_kl(p, q, log), 0.0)
        z += discount(i)
    return num / z if z else None


def oracle_ndkl(labels: Sequence[Label]) -> float | None:
    n = len(labels)
    return oracle_discounted_kl(labels, range(1, n + 1), lambda i: 1.0 / math.log2(i + 1), math.log)


def oracle_rkl(labels: Sequence[Label], step: int = 10) -> float | None:
    cut = set(range(step, len(labels) + 1, step))
    return oracle_discounted_kl(labels, cut, lambda i: 1.0 / math.log2(i), math.log2)


def oracle_shares(labels: Sequence[Label], k: int) -> tuple[dict[str, float], dict[str, float]]:
    """(P(g | top k), P(g)) over compared items."""
    compared = [g for g in labels if g is not None]
    top = [g for g in labels[:k] if g is not None]
    groups = sorted(set(compared))
    return (
        {g: top.count(g) / len(top) for g in groups},
        {g: compared.count(g) / len(compared) for g in groups},
    )


def oracle_attention(labels: Sequence[Label], ks: Sequence[int]) -> float:
    worst = 0.0
    for k in ks:
        share, pop = oracle_shares(labels, k)
        worst = max(worst, *(abs(share[g] - pop[g]) for g in pop))
    return worst


def oracle_skew(labels: Sequence[Label], ks: Sequence[int]) -> float | None:
    worst = math.inf
    for k in ks:
        share, pop = oracle_shares(labels, k)
        for g in pop:
            if share[g] == 0:
                return None
            worst = min(worst, math.log(share[g] / pop[g]))
    return worst


# ---------------------------------------------------------------------------
# random rankings through the real pipeline


def random_ranking(seed: int, n_groups: int, n: int) -> tuple[pd.DataFrame, list[Label]]:
    """A frame with a distinct score per row (higher = better) and its ranked labels.

    Groups have unequal sizes and an uneven score boost; a few rows have no
    group; a group ``tiny`` of 3 rows falls under min_samples=5 and is excluded.
    """
    rng = np.random.default_rng(seed)
    names = [f"G{i}" for i in range(n_groups)]
    g = rng.choice(names, size=n, p=rng.dirichlet(np.ones(n_groups) * 3)).astype(object)
    boost = {name: rng.normal(0, 0.5) for name in names}
    score = rng.permutation(n) / n + np.array([boost[x] for x in g])
    g[rng.choice(n, size=max(1, n // 40), replace=False)] = None
    tiny = rng.choice(np.flatnonzero(pd.notna(g)), size=3, replace=False)
    g[tiny] = "tiny"
    df = pd.DataFrame({"g": g, "score": score})
    df["rank"] = df["score"].rank(ascending=False, method="first").astype(int)
    ranked = df.sort_values("score", ascending=False, kind="stable")["g"]
    labels = [None if (pd.isna(x) or x == "tiny") else str(x) for x in ranked]
    return df, labels


RANDOM = [(s, gcount, n) for s, (gcount, n) in enumerate([(2, 60), (3, 200), (4, 517), (2, 1000)])]


@pytest.mark.parametrize(("seed", "n_groups", "n"), RANDOM)
@pytest.mark.parametrize("by", ["score", "rank"])
def test_against_loop_oracles(seed: int, n_groups: int, n: int, by: str) -> None:
    df, labels = random_ranking(seed, n_groups, n)
    controls = [
        rank_control(k, p, by=by, cid=cid, min_samples=5)
        for cid, k, p in (
            ("exp", "exposure_ratio", {}),
            ("ndkl", "ndkl", {}),
            ("rkl", "rkl", {}),
            ("rkl7", "rkl", {"step": 7}),
            ("att", "attention_parity", {"k": "5,10,20"}),
            ("att50", "attention_parity", {"k": "50"}),
            ("skew", "skew", {"k": "20,40"}),
        )
    ]
    found = run(controls, df)
    value, per = oracle_exposure(labels)
    assert abs(found["exp"].value - value) <= TOL
    assert by_group(found["exp"]) == pytest.approx(per, abs=TOL)
    assert abs(found["ndkl"].value - oracle_ndkl(labels)) <= TOL
    assert abs(found["rkl"].value - oracle_rkl(labels)) <= TOL
    assert abs(found["rkl7"].value - oracle_rkl(labels, 7)) <= TOL
    assert abs(found["att"].value - oracle_attention(labels, [5, 10, 20])) <= TOL
    assert abs(found["att50"].value - oracle_attention(labels, [50])) <= TOL
    want = oracle_skew(labels, [20, 40])
    got = found["skew"].value
    assert (got is None) if want is None else abs(got - want) <= TOL
    for f in found.values():
        excluded = {e.group: e for e in f.excluded_groups}
        assert excluded["tiny"].n == 3 and "min_samples" in excluded["tiny"].reason
        assert UNKNOWN_GROUP in excluded


@pytest.mark.parametrize("seed", range(6))
def test_direct_on_stats_with_uncompared_items(seed: int) -> None:
    """The metric functions on hand-built statistics, −1 items anywhere (even at the top)."""
    rng = np.random.default_rng(100 + seed)
    n_groups = 2 + seed % 3
    labels: list[Label] = [
        None if rng.random() < 0.15 else f"g{rng.integers(n_groups)}" for _ in range(80)
    ]
    labels[0] = None
    labels += [f"g{i}" for i in range(n_groups)]  # every group present
    st = stats_of(labels)
    assert abs(exposure_ratio(st, {}).value - oracle_exposure(labels)[0]) <= TOL
    assert abs(ndkl(st, {}).value - oracle_ndkl(labels)) <= TOL
    assert abs(rkl(st, {"step": 10}).value - oracle_rkl(labels)) <= TOL
    assert abs(rkl(st, {"step": 3}).value - oracle_rkl(labels, 3)) <= TOL
    att = attention_parity(st, {"k": "3,30"})
    assert abs(att.value - oracle_attention(labels, [3, 30])) <= TOL
    want = oracle_skew(labels, [30, 60])
    got = skew(st, {"k": "30,60"}).value
    assert (got is None) if want is None else abs(got - want) <= TOL
    assert ndkl(st, {}).details["prefixes_without_compared_items"] >= 1


# ---------------------------------------------------------------------------
# The fairness-metrics tutorial's own code (copied verbatim from the tutorial; binary attribute)


def ranking_fairness_metrics(
    ranking: np.ndarray,
    protected_attr: np.ndarray,
    k_values: list = [5, 10, 20],  # noqa: B006  (seed code as written)
) -> dict[str, Any]:
    """
    Compute fairness metrics for ranked lists.

    Args:
        ranking: Indices of items in ranked order
        protected_attr: Protected attribute for each item
        k_values: Top-k positions to evaluate
    """
    protected_attr = np.array(protected_attr)
    n = len(ranking)

    # Population proportions
    prop_1 = protected_attr.mean()
    prop_0 = 1 - prop_1  # noqa: F841  (unused in the tutorial too)

    results: dict[str, Any] = {}

    # Exposure with logarithmic discount
    position_weights = 1 / np.log2(np.arange(2, n + 2))
    total_weight = position_weights.sum()

    exposure_0 = sum(
        position_weights[i] for i, idx in enumerate(ranking) if protected_attr[idx] == 0
    )
    exposure_1 = sum(
        position_weights[i] for i, idx in enumerate(ranking) if protected_attr[idx] == 1
    )

    # Normalize by group size to get exposure per capita
    n_0 = (protected_attr == 0).sum()
    n_1 = (protected_attr == 1).sum()

    exposure_per_capita_0 = exposure_0 / n_0 if n_0 > 0 else 0
    exposure_per_capita_1 = exposure_1 / n_1 if n_1 > 0 else 0

    results["exposure_ratio"] = (
        min(exposure_per_capita_0, exposure_per_capita_1)
        / max(exposure_per_capita_0, exposure_per_capita_1)
        if max(exposure_per_capita_0, exposure_per_capita_1) > 0
        else 1.0
    )

    # Attention parity at various k
    for k in k_values:
        if k > len(ranking):
            continue

        top_k_attrs = protected_attr[ranking[:k]]
        prop_1_topk = top_k_attrs.mean()

        results[f"representation@{k}"] = {
            "group_1_prop_in_topk": prop_1_topk,
            "group_1_prop_overall": prop_1,
            "skew": np.log(prop_1_topk / prop_1) if prop_1_topk > 0 and prop_1 > 0 else 0,
            "attention_parity_diff": abs(prop_1_topk - prop_1),
        }

    # NDKL (simplified)
    target_prop = prop_1  # Target: population proportion
    ndkl = 0
    for i, idx in enumerate(ranking):
        weight = position_weights[i] / total_weight
        actual = protected_attr[idx]

        # Binary KL contribution
        if actual == 1:
            ndkl += weight * np.log(1 / target_prop) if target_prop > 0 else 0
        else:
            ndkl += weight * np.log(1 / (1 - target_prop)) if target_prop < 1 else 0

    results["ndkl"] = ndkl

    return results


def binary_case(seed: int, n: int) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    attr = rng.binomial(1, 0.4, n)
    score = rng.random(n) + 0.2 * attr
    ranking = np.argsort(-score, kind="stable")
    return pd.DataFrame({"g": attr, "score": score}), ranking, attr


@pytest.mark.parametrize(("seed", "n"), [(42, 1000), (7, 60), (8, 25)])
def test_tutorial_function_on_a_binary_attribute(seed: int, n: int) -> None:
    df, ranking, attr = binary_case(seed, n)
    seed_out = ranking_fairness_metrics(ranking, attr)
    found = run(
        [
            rank_control("exposure_ratio"),
            rank_control("attention_parity", {"k": "5,10,20"}),
            rank_control("skew", {"k": "5,10,20"}),
        ],
        df,
    )
    assert abs(found["exposure_ratio"].value - seed_out["exposure_ratio"]) <= TOL
    att = found["attention_parity"]
    for k in (5, 10, 20):
        rep = seed_out[f"representation@{k}"]
        assert abs(att.details["per_k"][str(k)]["value"] - rep["attention_parity_diff"]) <= TOL
        sk = found["skew"].details["per_k"][str(k)]["skew"]["1"]
        if rep["group_1_prop_in_topk"] > 0:
            assert abs(sk - rep["skew"]) <= TOL
        else:  # the tutorial writes a silent 0 where the skew is ln 0 = −∞
            assert sk is None and rep["skew"] == 0
            assert found["skew"].value is None and "top" in found["skew"].reason
    worst = max(seed_out[f"representation@{k}"]["attention_parity_diff"] for k in (5, 10, 20))
    assert abs(att.value - worst) <= TOL


def test_tutorial_simplified_ndkl_is_a_different_quantity() -> None:
    """The tutorial's snippet is Σ w_i/Σw · (−ln Q(group_i)): with Q = (½, ½) it is ln 2 for
    every ordering, so it cannot see bias. Geyik et al.'s NDKL (ours) can."""
    orderings = {"blocked": [0, 0, 1, 1], "alternating": [0, 1, 0, 1], "reversed": [1, 1, 0, 0]}
    ours = {}
    for name, attrs in orderings.items():
        attr = np.array(attrs)
        seed_out = ranking_fairness_metrics(np.arange(4), attr, k_values=[])
        assert abs(seed_out["ndkl"] - math.log(2)) <= TOL
        ours[name] = ndkl(stats_of([str(a) for a in attrs]), {}).value
    assert ours["blocked"] == pytest.approx(ours["reversed"], abs=TOL)
    assert ours["alternating"] < ours["blocked"]
    assert all(abs(v - math.log(2)) > 0.1 for v in ours.values())
    # on a random binary ranking the two numbers differ too
    _, ranking, attr = binary_case(3, 200)
    labels = [str(attr[i]) for i in ranking]
    assert abs(ndkl(stats_of(labels), {}).value - oracle_ndkl(labels)) <= TOL
    assert abs(ranking_fairness_metrics(ranking, attr)["ndkl"] - oracle_ndkl(labels)) > 0.1


# ---------------------------------------------------------------------------
# hand-checked tiny rankings

W = [1.0 / math.log2(i + 1) for i in range(1, 5)]  # 1, 1/log2 3, 1/2, 1/log2 5


def test_hand_exposure_ratio() -> None:
    mv = exposure_ratio(stats_of(["a", "b", "a", "b"]), {})
    ea, eb = (1.0 + 0.5) / 2, (1 / math.log2(3) + 1 / math.log2(5)) / 2
    assert by_group(mv) == pytest.approx({"a": ea, "b": eb}, abs=TOL)
    assert mv.value == pytest.approx(eb / ea, abs=TOL)
    assert mv.worst_group == "b"


def test_hand_ndkl() -> None:
    # Q = (½, ½); prefixes: {a} KL = ln 2; {a,b} 0; {a,b,a} ⅔ln(4/3) + ⅓ln(2/3); all 0
    mv = ndkl(stats_of(["a", "b", "a", "b"]), {})
    kl3 = 2 / 3 * math.log(4 / 3) + 1 / 3 * math.log(2 / 3)
    want = (W[0] * math.log(2) + W[2] * kl3) / sum(W)
    assert mv.value == pytest.approx(want, abs=TOL)
    # explanatory per-group value: weighted mean share of the prefixes minus ½
    share_a = (W[0] * 1 + W[1] * 0.5 + W[2] * 2 / 3 + W[3] * 0.5) / sum(W)
    assert by_group(mv) == pytest.approx({"a": share_a - 0.5, "b": 0.5 - share_a}, abs=TOL)
    assert mv.worst_group == "b"


def test_hand_ndkl_skips_a_prefix_without_compared_items() -> None:
    # the top item's group is not compared: prefix 1 has no distribution
    mv = ndkl(stats_of([None, "a", "b"]), {})
    w = [1.0 / math.log2(i + 1) for i in range(1, 4)]
    assert mv.value == pytest.approx(w[1] * math.log(2) / (w[1] + w[2]), abs=TOL)
    assert mv.details["prefixes_without_compared_items"] == 1


def test_hand_exposure_keeps_positions_of_uncompared_items() -> None:
    mv = exposure_ratio(stats_of([None, "a", "b"]), {})
    assert by_group(mv) == pytest.approx({"a": 1 / math.log2(3), "b": 0.5}, abs=TOL)
    assert mv.value == pytest.approx(math.log2(3) / 2, abs=TOL)


def test_hand_rkl() -> None:
    # step 2 on a, a, b, b: cut-off 2 → P = (1, 0), KL = log2(1/½) = 1 bit; cut-off 4 → 0
    # Z = 1/log2 2 + 1/log2 4 = 1.5 → value = 1/1.5
    mv = rkl(stats_of(["a", "a", "b", "b"]), {"step": 2})
    assert mv.value == pytest.approx(2 / 3, abs=TOL)
    assert mv.details["cutoffs"] == [2, 4] and mv.details["z"] == pytest.approx(1.5, abs=TOL)
    assert mv.details["max_kl"] == pytest.approx(1.0, abs=TOL)
    # a ranking of fewer items than one step has no cut-off
    short = rkl(stats_of(["a", "b", "a"]), {"step": 10})
    assert short.value is None and "fewer than step=10" in (short.reason or "")


def test_hand_attention_and_skew() -> None:
    st = stats_of(["a", "b", "a", "b"])
    assert attention_parity(st, {"k": "2"}).value == 0.0
    assert attention_parity(st, {"k": "1"}).value == 0.5
    assert attention_parity(st, {"k": "1,2,4"}).value == 0.5
    assert attention_parity(st, {"k": "1,2"}).details["worst_k"] == 1
    assert skew(st, {"k": "2,4"}).value == 0.0
    # top 3 = a, b, a: P(b | top 3) = ⅓ vs ½ → ln(2/3)
    sk = skew(st, {"k": "3"})
    assert sk.value == pytest.approx(math.log(2 / 3), abs=TOL)
    assert sk.worst_group == "b"
    assert by_group(sk) == pytest.approx({"a": math.log(4 / 3), "b": math.log(2 / 3)}, abs=TOL)
    assert sk.details["per_k"]["3"]["max_skew"] == pytest.approx(math.log(4 / 3), abs=TOL)


# ---------------------------------------------------------------------------
# undefined cases: explicit, never a silent number


def test_skew_with_a_group_absent_from_the_top_k_is_none_with_reason() -> None:
    mv = skew(stats_of(["a", "a", "b", "c"]), {"k": "2,4"})
    assert mv.value is None
    assert "group 'b' has no item in the top 2" in (mv.reason or "")
    # a: ln(1 / ½) in the top 2, 0 in the top 4 → its worst (minimum) skew is 0
    assert by_group(mv) == {"a": 0.0, "b": None, "c": None}
    assert mv.details["per_k"]["2"]["skew"]["b"] is None
    assert mv.details["per_k"]["4"]["min_skew"] == 0.0


def test_k_larger_than_the_ranking_is_none_with_reason() -> None:
    st = stats_of(["a", "b", "a", "b"])
    for fn in (attention_parity, skew):
        mv = fn(st, {"k": "2,5"})
        assert mv.value is None and "k=5 exceeds the 4 ranked item(s)" in (mv.reason or "")


def test_top_k_without_compared_items_is_none_with_reason() -> None:
    st = stats_of([None, None, "a", "b"])
    for fn in (attention_parity, skew):
        mv = fn(st, {"k": "2"})
        assert mv.value is None and "hold no item of a compared group" in (mv.reason or "")


@pytest.mark.parametrize("bad", ["", "0", "5,x", "-3", "ten"])
def test_malformed_k_is_an_error(bad: str) -> None:
    from fairpolicy.errors import MetricError

    with pytest.raises(MetricError, match="positive whole numbers"):
        parse_k(bad)


def test_malformed_k_through_the_pipeline_is_an_error_finding() -> None:
    df, _, _ = binary_case(1, 50)
    f = run([rank_control("skew", {"k": "5;10"})], df)["skew"]
    assert f.status == "error" and "k='5;10'" in f.message


def test_inconclusive_through_the_pipeline() -> None:
    df, _, _ = binary_case(1, 50)
    found = run(
        [
            rank_control("attention_parity", {"k": "10,100"}, cid="att"),
            rank_control("rkl", {"step": 60}, cid="rkl"),
        ],
        df,
    )
    for f in found.values():
        assert f.value is None and f.status == "inconclusive" and f.reason


@pytest.mark.parametrize("step", [0, 1])
def test_step_below_two_is_an_error(step: int) -> None:
    from fairpolicy.errors import MetricError

    with pytest.raises(MetricError, match="at least 2"):
        rkl(stats_of(["a", "b", "a", "b"]), {"step": step})


def test_step_one_through_the_pipeline_is_an_error_finding() -> None:
    df, _, _ = binary_case(1, 50)
    f = run([rank_control("rkl", {"step": 1})], df)["rkl"]
    assert f.status == "error" and "step=1" in f.message


def test_parse_k() -> None:
    assert parse_k("20, 5,10,5") == [5, 10, 20]
    assert parse_k(10) == [10]


# ---------------------------------------------------------------------------
# binding: rank ascending, score descending, ties in row order


def test_rank_ascending_and_score_descending_agree() -> None:
    df, _, _ = binary_case(5, 300)
    df["rank"] = df["score"].rank(ascending=False, method="first").astype(int)
    by_score = run([rank_control(k, by="score") for k in KEYS], df)
    by_rank = run([rank_control(k, by="rank") for k in KEYS], df)
    for k in KEYS:
        assert by_score[k].value == by_rank[k].value
        assert by_score[k].details == by_rank[k].details


def test_ties_keep_row_order() -> None:
    # every score tied: the ranking is the row order a, b, a, b
    df = pd.DataFrame({"g": ["a", "b", "a", "b"], "score": [1.0] * 4})
    f = run([rank_control("exposure_ratio")], df)["exposure_ratio"]
    assert f.value == pytest.approx(exposure_ratio(stats_of(["a", "b", "a", "b"]), {}).value)


@pytest.mark.parametrize("key", KEYS)
def test_spec(key: str) -> None:
    spec = REGISTRY[key]
    assert spec.kind == "ranking" and spec.tasks == ("ranking",)
    assert spec.inputs == ("dimension",) and spec.one_of == ("rank", "score")
    lo, hi = spec.value_range
    assert lo <= spec.ideal <= hi
    assert "value =" in spec.formula
