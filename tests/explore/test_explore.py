"""``fairpolicy explore``: every number against a brute-force oracle on the rows, the same
result for every input type, the documented missing/binning rules, the outputs, and the
candidate policy (which must never pass before a person sets its threshold)."""

from __future__ import annotations

import io
import itertools
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats import fisher_exact, norm

from fairpolicy.cli import main
from fairpolicy.explore import explore
from fairpolicy.explore.search import RATES, benjamini_hochberg


def frame(n: int = 3000, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "sex": rng.choice(["F", "M"], n),
            "race": rng.choice(["A", "B", "C"], n),
            "age": rng.integers(18, 80, n),
            "y_true": rng.integers(0, 2, n),
        }
    )
    planted = (df.sex == "F") & (df.race == "B")
    df["y_pred"] = np.where(planted, rng.random(n) < 0.6, rng.random(n) < 0.3).astype(int)
    return df


def cli(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    return main(argv, stdout=out), out.getvalue()


def _oracle(
    df: pd.DataFrame, attrs: list[str], metric: str, depth: int, min_rows: int
) -> dict[tuple[tuple[str, str], ...], tuple[int, int, int, float | None]]:
    """Every supported slice's (n, numerator, denominator, p-value) straight from the rows."""
    r = RATES[metric]
    cell = 2 * df["y_true"].to_numpy() + df["y_pred"].to_numpy()
    num = np.isin(cell, r.numerator)
    den = np.isin(cell, r.denominator)
    out = {}
    for d in range(1, depth + 1):
        for combo in itertools.combinations(attrs, d):
            for key, idx in df.groupby(list(combo), sort=False).indices.items():
                key = key if isinstance(key, tuple) else (key,)
                if len(idx) < min_rows or len(idx) == len(df):
                    continue
                mask = np.zeros(len(df), dtype=bool)
                mask[idx] = True
                k1, n1 = int(num[mask].sum()), int(den[mask].sum())
                k2, n2 = int(num[~mask].sum()), int(den[~mask].sum())
                p = None
                if n1 and n2:
                    p = float(fisher_exact([[k1, n1 - k1], [k2, n2 - k2]]).pvalue)
                conds = tuple(zip(combo, (str(v) for v in key), strict=True))
                out[conds] = (len(idx), k1, n1, p)
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(20, 400),
    seed=st.integers(0, 10_000),
    metric=st.sampled_from(sorted(RATES)),
    depth=st.integers(1, 3),
    support=st.sampled_from([0.01, 0.05, 0.2]),
)
def test_every_slice_matches_a_row_oracle(
    n: int, seed: int, metric: str, depth: int, support: float
) -> None:
    """Counts, values, p-values (Fisher wherever the oracle's counts are small: all of
    them here), BH q-values and the family size equal a direct computation on the rows."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "a": rng.choice(["x", "y"], n),
            "b": rng.choice(["p", "q", "r"], n),
            "c": rng.choice(["u", "v", "w", "z"], n),
            "y_true": rng.integers(0, 2, n),
            "y_pred": rng.integers(0, 2, n),
        }
    )
    attrs = ["a", "b", "c"]
    if any(df[a].nunique() < 2 for a in attrs):
        return
    res = explore(
        df, target="y_true", prediction="y_pred", attributes=attrs, metric=metric,
        depth=depth, min_support=support, top=10**6,
    )  # fmt: skip
    min_rows = math.ceil(support * n - 1e-9)
    oracle = _oracle(df, attrs, metric, depth, min_rows)
    got = {s.conditions: s for s in res.search.slices}
    assert set(got) == set(oracle)
    for conds, (size, k, d, p) in oracle.items():
        s = got[conds]
        assert (s.n, s.numerator, s.denominator) == (size, k, d)
        if p is None:
            assert s.p_value is None and not s.significant
        else:
            assert s.value == pytest.approx(k / d)
            assert s.p_value == pytest.approx(min(1.0, p), rel=1e-9, abs=1e-12)
    pvals = [oracle[c][3] for c in oracle if oracle[c][3] is not None]
    assert res.search.family_size == len(pvals)
    # BH by its definition: the largest k with p_(k) <= k q / m; reject the k smallest
    m = len(pvals)
    ranked = sorted(min(1.0, p) for p in pvals)  # type: ignore[type-var]
    k_max = max([k for k in range(1, m + 1) if ranked[k - 1] <= k * 0.05 / m], default=0)
    assert sum(s.significant for s in res.search.slices) == k_max


@given(st.lists(st.floats(0, 1), min_size=1, max_size=60))
def test_bh_is_the_step_up_rule(p: list[float]) -> None:
    q = benjamini_hochberg(np.array(p))
    m = len(p)
    for i, pi in enumerate(p):
        # q_i = min over p_j >= p_i of p_j m / rank_j
        ranks = sorted(p)
        expect = min(min(1.0, ranks[k] * m / (k + 1)) for k in range(m) if ranks[k] >= pi)
        assert q[i] == pytest.approx(expect)


def test_large_slices_use_the_z_test_and_wilson_interval() -> None:
    df = frame(30_000)
    res = explore(df, target="y_true", prediction="y_pred", attributes=["sex", "race"])
    s = next(x for x in res.search.slices if x.conditions == (("sex", "F"),))
    assert s.test == "z"
    k1, n1, k2, n2 = s.numerator, s.denominator, s.rest_numerator, s.rest_denominator
    pooled = (k1 + k2) / (n1 + n2)
    z = (k1 / n1 - k2 / n2) / math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    assert s.p_value == pytest.approx(2 * norm.sf(abs(z)))


def _wilson(k: int, n: int) -> tuple[float, float]:
    z = norm.ppf(0.975)
    p = k / n
    c = (p + z * z / (2 * n)) / (1 + z * z / n)
    h = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return c - h, c + h


def test_planted_slice_ranks_first() -> None:
    res = explore(frame(), target="y_true", prediction="y_pred", attributes=["sex", "race", "age"])
    top = res.top[0]
    assert set(top.conditions) == {("sex", "F"), ("race", "B")}
    assert top.significant
    assert (top.low, top.high) == pytest.approx(_wilson(top.numerator, top.denominator))
    assert top.low < top.value < top.high  # type: ignore[operator]


def _key(res: Any) -> list[tuple[Any, ...]]:
    return [(s.conditions, s.n, s.numerator, s.denominator, s.p_value) for s in res.search.slices]


def test_csv_parquet_dataframe_arrow_agree(tmp_path: Path) -> None:
    import pyarrow as pa

    df = frame(2000)
    df.loc[3, "race"] = None  # a true null: the (missing) bucket
    df.loc[4:40, "sex"] = "NA"  # a group name, not missing
    csv, pq = tmp_path / "d.csv", tmp_path / "d.parquet"
    df.to_csv(csv, index=False)
    df.to_parquet(pq, index=False)
    kw: dict[str, Any] = dict(
        target="y_true", prediction="y_pred", attributes=["sex", "race", "age"]
    )
    results = [explore(x, **kw) for x in (str(csv), str(pq), df, pa.Table.from_pandas(df))]
    first = _key(results[0])
    for r in results[1:]:
        assert _key(r) == first
    values = {a.name: a.values for a in results[0].table.attributes}
    assert "NA" in values["sex"] and "(missing)" not in values["sex"]
    assert values["race"][-1] == "(missing)"


def test_binning_rule_equal_frequency() -> None:
    df = frame(5000)
    res = explore(
        df, target="y_true", prediction="y_pred", attributes=["age", "sex"], bins=4, depth=1
    )
    age = res.table.attributes[0]
    assert age.binned and len(age.values) == 4
    edges = np.quantile(df["age"], np.linspace(0, 1, 5))
    assert age.edges == pytest.approx(list(np.unique(edges)))
    sizes = {s.conditions[0][1]: s.n for s in res.search.slices if s.conditions[0][0] == "age"}
    assert sum(sizes.values()) == len(df)
    lo, hi = edges[1], edges[2]
    assert sizes[age.values[1]] == int(((df.age >= lo) & (df.age < hi)).sum())
    # few distinct numbers: categorical, one slice per value
    res2 = explore(df.assign(k=df.age % 3), target="y_true", prediction="y_pred", attributes=["k"])
    assert res2.table.attributes[0].values == ["0", "1", "2"]


def test_support_pruning_and_untestable() -> None:
    df = frame(1000)
    df.loc[df.race == "C", "y_true"] = 0  # no positives: TPR has no denominator there
    res = explore(
        df, target="y_true", prediction="y_pred", attributes=["sex", "race"], metric="tpr"
    )
    c = next(s for s in res.search.slices if s.conditions == (("race", "C"),))
    assert c.p_value is None and c.value is None and not c.significant
    assert res.search.untestable >= 3  # race=C and both sex × race=C
    text = json.dumps(json.loads(cli_json(df, "tpr")), allow_nan=False)
    assert "NaN" not in text


def cli_json(df: pd.DataFrame, metric: str, tmp: Path | None = None) -> str:
    import tempfile

    d = Path(tmp or tempfile.mkdtemp())
    path = d / "x.csv"
    df.to_csv(path, index=False)
    code, out = cli(["explore", str(path), "--target", "y_true", "--prediction", "y_pred",
                     "--attributes", "sex,race", "--metric", metric, "-o", "json"])  # fmt: skip
    assert code == 0
    return out


def test_outputs_end_to_end(tmp_path: Path) -> None:
    df = frame(3000)
    data = tmp_path / "d.csv"
    df.to_csv(data, index=False)
    code, out = cli([
        "explore", str(data), "--target", "y_true", "--prediction", "y_pred",
        "--attributes", "sex,race,age", "-o", "text",
        "-o", f"json={tmp_path / 'r.json'}", "-o", f"markdown={tmp_path / 'r.md'}",
        "-o", f"html={tmp_path / 'r.html'}",
    ])  # fmt: skip
    assert code == 0
    assert "sex=F ∧ race=B" in out.splitlines()[4]
    doc = json.loads((tmp_path / "r.json").read_text(), parse_constant=_no_nan)
    assert doc["multiple_testing"] == "Benjamini-Hochberg"
    assert doc["family_size"] == sum(1 for s in doc["slices"] if s["p_value"] is not None) or (
        doc["family_size"] >= len(doc["slices"])
    )
    assert doc["slices"][0]["label"] == "sex=F ∧ race=B"
    assert "| 1 | sex=F ∧ race=B |" in (tmp_path / "r.md").read_text()
    page = (tmp_path / "r.html").read_text()
    assert "<svg" in page and page.count("<rect") >= 3


def _no_nan(x: str) -> None:
    raise AssertionError(f"non-finite number {x} in JSON")


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_candidate_policy_cannot_pass_until_threshold_set(tmp_path: Path, suffix: str) -> None:
    df = frame(3000)
    data = tmp_path / "d.csv"
    df.to_csv(data, index=False)
    pol = tmp_path / f"cand{suffix}"
    code, _ = cli(["explore", str(data), "--target", "y_true", "--prediction", "y_pred",
                   "--attributes", "sex,race", "--emit-policy", str(pol)])  # fmt: skip
    assert code == 0 and "SET-ME" in pol.read_text()
    code, _ = cli(["check", str(pol), str(data)])
    assert code == 2  # never a pass with an unset threshold
    pol.write_text(pol.read_text().replace("SET-ME", "0.05"))
    code, _ = cli(["check", str(pol), str(data)])
    assert code == 1  # the planted gap (0.3 → 0.6) fails a 0.05 threshold
    pol.write_text(pol.read_text().replace('"0.05"', '"0.9"'))
    code, _ = cli(["check", str(pol), str(data)])
    assert code == 0


@pytest.mark.parametrize(
    ("convert", "positive"),
    [
        (lambda s: s.astype(bool), None),
        (lambda s: s.astype(float), None),
        (lambda s: s.map({0: "deny", 1: "grant"}), "grant"),
        (lambda s: s.map({0: "grant", 1: "deny"}), "deny"),
    ],
    ids=["bool", "float", "text", "text-swapped"],
)
def test_label_encodings_give_the_same_slices(convert: Any, positive: str | None) -> None:
    df = frame(1500)
    base = explore(df, target="y_true", prediction="y_pred", attributes=["sex", "race"])
    other = df.assign(y_true=convert(df.y_true), y_pred=convert(df.y_pred))
    res = explore(
        other,
        target="y_true",
        prediction="y_pred",
        attributes=["sex", "race"],
        positive_label=positive,
    )
    assert _key(res) == _key(base)


# ---------------------------------------------------------------- issue 27 item 3, 26.13


def test_bins_edges_and_per_column_specs_use_check_labels() -> None:
    df = frame(2000)
    res = explore(
        df, target="y_true", prediction="y_pred", attributes=["age", "sex"],
        bins="0,30,50,inf", depth=1,
    )  # fmt: skip
    age = res.table.attributes[0]
    assert age.binned and age.values == ["[0, 30)", "[30, 50)", "[50, inf)"]
    sizes = {s.conditions[0][1]: s.n for s in res.search.slices if s.conditions[0][0] == "age"}
    assert sizes["[30, 50)"] == int(((df.age >= 30) & (df.age < 50)).sum())
    # COLUMN=SPEC names one column; "5" and "q5" are the same count
    a = explore(df, target="y_true", prediction="y_pred", attributes=["age"], bins="age=q4")
    b = explore(df, target="y_true", prediction="y_pred", attributes=["age"], bins=4)
    assert a.table.attributes[0].values == b.table.attributes[0].values


@pytest.mark.parametrize(
    ("bins", "fragment"),
    [("0,x", "not a number"), ("q1", "give 2 to 100"), ("agee=q3", "not one of the attributes")],
)
def test_bad_bins_is_a_usage_error_naming_the_flag(bins: str, fragment: str) -> None:
    from fairpolicy.errors import UsageError

    with pytest.raises(UsageError, match="--bins") as exc:
        explore(frame(300), target="y_true", prediction="y_pred", attributes=["age"], bins=bins)
    assert fragment in str(exc.value)


def test_bins_naming_a_text_column_is_refused() -> None:
    from fairpolicy.errors import DataError

    with pytest.raises(DataError, match="not a finite number"):
        explore(frame(300), target="y_true", prediction="y_pred", attributes=["sex"], bins="sex=q2")


def test_a_real_missing_text_and_a_null_get_distinct_slice_labels() -> None:
    df = frame(1200)
    df["race"] = df["race"].astype(object)
    df.loc[df.race == "A", "race"] = "(missing)"  # a real group written "(missing)"
    df.loc[df.index % 7 == 0, "race"] = None  # real nulls
    res = explore(df, target="y_true", prediction="y_pred", attributes=["race"], depth=1)
    values = res.table.attributes[0].values
    assert '"(missing)"' in values and values[-1] == "(missing)"
    assert len(set(values)) == len(values)
    n = {s.conditions[0][1]: s.n for s in res.search.slices}
    assert n['"(missing)"'] == int((df.race == "(missing)").sum())
    assert n["(missing)"] == int(df.race.isna().sum())


def test_candidate_policy_binds_explores_bins_and_check_reads_them(tmp_path: Path) -> None:
    df = frame(3000)
    df["y_pred"] = np.where(df.age < 30, 1, df.y_pred)  # a planted age gap
    data = tmp_path / "d.csv"
    df.to_csv(data, index=False)
    pol = tmp_path / "cand.yaml"
    code, _ = cli(["explore", str(data), "--target", "y_true", "--prediction", "y_pred",
                   "--attributes", "age", "--bins", "q4", "--emit-policy", str(pol)])  # fmt: skip
    assert code == 0 and "name: bins" in pol.read_text()
    pol.write_text(pol.read_text().replace("SET-ME", "0.05"))
    out = tmp_path / "r.json"
    code, _ = cli(["check", str(pol), str(data), "-o", f"json={out}"])
    assert code == 1
    groups = [g["group"] for g in json.loads(out.read_text())["findings"][0]["groups"]]
    assert len(groups) == 4 and groups[0].startswith("(-inf, ")


def test_html_report_uses_the_check_reports_stylesheet_and_a_labelled_axis() -> None:
    """issue 27 item 7: explore's page looks like the check report."""
    import re

    from fairpolicy.explore.render import render
    from fairpolicy.formatters._html_assets import CSS

    res = explore(frame(2000), target="y_true", prediction="y_pred", attributes=["sex", "race"])
    page = render(res, "html")
    assert f"<style>{CSS}</style>" in page
    svg = page[page.index("<svg") : page.index("</svg>")]
    ticks = re.findall(r'text-anchor="middle">([^<]+)</text>', svg)
    assert (
        "0" in ticks
        and any(t.startswith("+") for t in ticks)
        and any(t.startswith("-") for t in ticks)
    )
    assert "divergence from the rest" in svg and 'class="chart"' in svg
    assert '<td class="num">' in page  # numbers right-aligned as in the check report
