"""Slice search over a :class:`~fairpolicy.explore.table.CountTable`.

A *slice* is a conjunction of 1..``depth`` attribute values (``sex=F ∧ age=[30, 45)``).
For each slice the chosen rate is compared with the same rate on the rest of the data
(every row outside the slice):

* support pruning (as in DivExplorer / SliceLine): a slice with fewer than
  ``min_support × rows`` rows is not tested, and neither is any conjunction containing
  it (support only shrinks as conditions are added);
* the test is two-sided on the 2×2 table (slice / rest × counted / not counted):
  Fisher's exact test (``scipy.stats.fisher_exact``) where counts are small (the smaller
  denominator under 2,000 rows or an expected cell under 10), otherwise the pooled
  two-proportion z-test (the Pearson χ² test without continuity correction);
* the p-values of every tested slice are adjusted together with Benjamini–Hochberg; the
  family size (the number of slices tested) is reported. A slice whose rate or whose
  rest's rate has no denominator (e.g. TPR on a slice without positives) cannot be
  tested; it is counted apart and never reported as significant;
* the interval is the Wilson score interval of the slice's rate at ``1 − alpha``.

Memory is bounded by ``max_slices``: the search stops with an error naming the depth and
the count once more slices than that reach the support threshold.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
from numpy.typing import NDArray

from fairpolicy.errors import UsageError, did_you_mean
from fairpolicy.explore.table import CountTable


@dataclass(frozen=True)
class Rate:
    """A rate over the label cells (0 TN, 1 FP, 2 FN, 3 TP): numerator / denominator."""

    key: str
    title: str
    numerator: tuple[int, ...]
    denominator: tuple[int, ...]
    #: the registry metric comparing this rate across groups (for ``--emit-policy``)
    policy_metric: str


RATES: dict[str, Rate] = {
    r.key: r
    for r in (
        Rate("selection_rate", "selection rate", (1, 3), (0, 1, 2, 3), "demographic_parity_diff"),
        Rate("tpr", "true positive rate", (3,), (2, 3), "equal_opportunity_diff"),
        Rate("fpr", "false positive rate", (1,), (0, 1), "fpr_diff"),
        Rate("fnr", "false negative rate", (2,), (2, 3), "fnr_diff"),
        Rate("tnr", "true negative rate", (0,), (0, 1), "tnr_diff"),
        Rate("precision", "precision (PPV)", (3,), (1, 3), "predictive_parity_diff"),
        Rate("npv", "negative predictive value", (0,), (0, 2), "npv_diff"),
        Rate("fdr", "false discovery rate", (1,), (1, 3), "fdr_diff"),
        Rate("for", "false omission rate", (2,), (0, 2), "for_diff"),
        Rate("error_rate", "error rate", (1, 2), (0, 1, 2, 3), "error_rate_diff"),
        Rate("accuracy", "accuracy", (0, 3), (0, 1, 2, 3), "accuracy_diff"),
    )
}
#: registry metric keys accepted for --metric: the per-group rate each compares
ALIASES = {r.policy_metric: r.key for r in RATES.values()} | {
    "ppv": "precision",
    "recall": "tpr",
    "true_positive_rate": "tpr",
    "false_positive_rate": "fpr",
    "statistical_parity_diff": "selection_rate",
}


def rate(key: str) -> Rate:
    """The rate named by ``key`` (a rate key or a registry metric comparing that rate)."""
    k = ALIASES.get(key, key)
    if k not in RATES:
        names = [*RATES, *ALIASES]
        raise UsageError(
            f"--metric {key!r} is not a per-group rate explore can compare."
            f"{did_you_mean(key, names)}",
            key="--metric",
            hint=f"use one of {', '.join(RATES)} (or the registry metric comparing it, e.g. "
            "equal_opportunity_diff for tpr).",
        )
    return RATES[k]


@dataclass
class Slice:
    conditions: tuple[tuple[str, str], ...]  # (attribute, value) pairs
    n: int  # rows in the slice
    denominator: int
    numerator: int
    rest_denominator: int
    rest_numerator: int
    value: float | None
    rest_value: float | None
    divergence: float | None
    low: float | None
    high: float | None
    p_value: float | None
    q_value: float | None = None
    test: str = ""
    significant: bool = False

    @property
    def label(self) -> str:
        return " ∧ ".join(f"{a}={v}" for a, v in self.conditions)


@dataclass
class Search:
    slices: list[Slice]  # every slice meeting the support threshold, ranked
    family_size: int  # slices tested (BH family)
    untestable: int  # supported slices whose rate or rest rate has no denominator
    pruned: int  # candidate slices under the support threshold
    min_rows: int


def wilson(k: int, n: int, alpha: float) -> tuple[float, float]:
    z = NormalDist().inv_cdf(1 - alpha / 2)
    p = k / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, centre - half), min(1.0, centre + half)


def two_sided_p(k1: int, n1: int, k2: int, n2: int) -> tuple[float, str]:
    """p-value of 'the two rates are equal' and the test used."""
    total = n1 + n2
    col = k1 + k2
    expected = min(n1 * col, n1 * (total - col), n2 * col, n2 * (total - col)) / total
    if min(n1, n2) < 2000 or expected < 10:
        from scipy.stats import fisher_exact

        res = fisher_exact([[k1, n1 - k1], [k2, n2 - k2]], alternative="two-sided")
        return min(1.0, float(res.pvalue)), "fisher"
    pooled = col / total
    var = pooled * (1 - pooled) * (1 / n1 + 1 / n2)
    if var <= 0:
        return 1.0, "z"
    z = (k1 / n1 - k2 / n2) / math.sqrt(var)
    return min(1.0, math.erfc(abs(z) / math.sqrt(2))), "z"


def benjamini_hochberg(p: NDArray[np.float64]) -> NDArray[np.float64]:
    """BH-adjusted p-values (q-values), in the input order."""
    m = len(p)
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    ranked = p[order] * m / np.arange(1, m + 1)
    q = np.minimum.accumulate(ranked[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(q, 1.0)
    return out


def _too_many(found: int, max_slices: int, depth: int, file: str) -> UsageError:
    return UsageError(
        f"more than {max_slices} slices reach the support threshold by depth {depth} "
        f"({found} so far); --max-slices bounds the search's memory.",
        file=file,
        key="--max-slices",
        hint="raise --min-support, lower --depth, drop high-cardinality attributes (or "
        "bin them with a smaller --bins), or raise --max-slices.",
    )


def find_slices(
    table: CountTable,
    *,
    metric: Rate,
    depth: int = 2,
    min_support: float = 0.02,
    max_slices: int = 100_000,
    alpha: float = 0.05,
) -> Search:
    rows = table.rows
    min_rows = max(1, math.ceil(min_support * rows - 1e-9))
    num_mask = np.isin(table.cells, metric.numerator)
    den_mask = np.isin(table.cells, metric.denominator)
    w = table.weights
    total_num = int(w[num_mask].sum())
    total_den = int(w[den_mask].sum())
    sizes = [len(a.values) for a in table.attributes]
    found: list[tuple[tuple[tuple[int, int], ...], int, int, int]] = []
    pruned = 0
    # frequent (attribute, code) items: an item under the support is never extended
    frequent: dict[int, set[int]] = {}
    for d in range(1, depth + 1):
        for combo in itertools.combinations(range(len(sizes)), d):
            if d > 1 and any(not frequent[j] for j in combo):
                continue
            sub = table.codes[:, list(combo)].astype(np.int64)
            key = np.zeros(len(w), dtype=np.int64)
            for j_i, j in enumerate(combo):
                key = key * sizes[j] + sub[:, j_i]
            if d > 1:  # keep tuples whose every item is frequent
                keep = np.ones(len(w), dtype=bool)
                for j_i, j in enumerate(combo):
                    keep &= np.isin(sub[:, j_i], list(frequent[j]))
            else:
                keep = np.ones(len(w), dtype=bool)
            uniq, inverse = np.unique(key[keep], return_inverse=True)
            wk = w[keep]
            n = np.bincount(inverse, weights=wk).astype(np.int64)
            num = np.bincount(inverse, weights=wk * num_mask[keep]).astype(np.int64)
            den = np.bincount(inverse, weights=wk * den_mask[keep]).astype(np.int64)
            ok = n >= min_rows
            pruned += int(np.count_nonzero(~ok))
            for u in np.flatnonzero(ok):
                codes = []
                rest = int(uniq[u])
                for j in reversed(combo):
                    codes.append((j, rest % sizes[j]))
                    rest //= sizes[j]
                items = tuple(reversed(codes))
                found.append((items, int(n[u]), int(num[u]), int(den[u])))
                if len(found) > max_slices:
                    raise _too_many(len(found), max_slices, d, table.file)
            if d == 1:
                frequent[combo[0]] = {int(c) for c in uniq[ok]}
    slices: list[Slice] = []
    pvals: list[float] = []
    tested: list[int] = []
    untestable = 0
    for items, n_s, num_s, den_s in found:
        r_num, r_den = total_num - num_s, total_den - den_s
        cond = tuple((table.attributes[j].name, table.attributes[j].values[c]) for j, c in items)
        if n_s == rows:  # the slice is the whole data: nothing to compare with
            untestable += 1
            continue
        if den_s == 0 or r_den == 0:
            untestable += 1
            slices.append(
                Slice(cond, n_s, den_s, num_s, r_den, r_num, None, None, None, None, None, None)
            )
            continue
        value, rest_value = num_s / den_s, r_num / r_den
        low, high = wilson(num_s, den_s, alpha)
        p, test = two_sided_p(num_s, den_s, r_num, r_den)
        tested.append(len(slices))
        pvals.append(p)
        slices.append(
            Slice(
                cond, n_s, den_s, num_s, r_den, r_num, value, rest_value,
                value - rest_value, low, high, p, test=test,
            )
        )  # fmt: skip
    q = benjamini_hochberg(np.array(pvals, dtype=np.float64))
    for i, qv in zip(tested, q, strict=True):
        slices[i].q_value = float(qv)
        slices[i].significant = bool(qv <= alpha)
    slices.sort(
        key=lambda s: (
            not s.significant,
            s.divergence is None,
            -abs(s.divergence or 0.0),
            s.p_value if s.p_value is not None else 2.0,
            s.label,
        )
    )
    return Search(slices, len(tested), untestable, pruned, min_rows)
