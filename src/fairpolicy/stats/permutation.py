"""Permutation tests on the sufficient statistics.

Permutation test. Group labels are permuted within the metric's stratum
(``MetricSpec.stratum``), so that the null is the metric's own: over all compared rows
(H0: the groups are interchangeable), within each actual class (H0: P(ŷ, scores | y) is
the same in every group, whatever the base rates — TPR/FPR, AUC), or within each
predicted class (H0: P(y | ŷ) is the same — PPV/FDR); a value pooled over the compared
rows gets no test. The pooled cells of each stratum are dealt back to the groups with
their sizes in that stratum by a multivariate hypergeometric draw (score metrics: the
pooled joint score cells, of each class under the actual-class stratum, then each
class's pooled count rows with the dealt class totals). p = (1 + #{θ* ≥ θ}) / (1 + P)
for a "lower is better" metric (a gap), θ* ≤ θ for "higher is better" (a ratio), over
the defined permutations (same 5 % rule), with a relative tolerance of 1e-12 for ties.
Per group: that group against the union of the others (``comparisons`` names it), the
same test; with ``bonferroni`` each is multiplied by the family size (the number of
groups; 1 with two groups, where both per-group tests are the overall test), capped
at 1. ``docs/statistics.md`` ("Permutation tests") states the nulls and the measured
type-I errors.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from fairpolicy.stats.groups import GroupStats
from fairpolicy.stats.resample import (
    PERMUTATION_STREAM,
    Cells,
    cells_of,
    compared_groups,
    needed,
    read_value,
    unavailable,
    undefined_reason,
    with_scores,
)
from fairpolicy.stats.scores import JointCells
from fairpolicy.stats.values import Statistic, Stratum

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: metric evaluations (permutations × tests) one permutation test may make, and those
#: evaluations × pooled score cells: above either there is no p-value (the reason gives the
#: cost) rather than a run a policy could make endless
PERMUTATION_LIMIT = 2_000_000
PERMUTATION_CELL_LIMIT = 200_000_000
#: relative tolerance when a permuted statistic is compared with the observed one
TIE_TOLERANCE = 1e-12


@dataclass(frozen=True)
class Permutation:
    p_value: float | None
    permutations: int
    seed: int
    #: per group: that group against the union of the others (``comparisons`` names each
    #: test), Bonferroni-adjusted over the family when asked
    groups: dict[str, float] | None = None
    #: how many distinct tests ``groups`` holds: the number of groups, or 1 with two
    #: groups (each group against the rest is then the one test itself)
    family_size: int | None = None
    reason: str | None = None
    #: permutations whose statistic was defined (the p-value's denominator is valid + 1)
    valid: int | None = None
    #: where the group labels were permuted (``MetricSpec.stratum``) and the null it tests
    stratum: Stratum | None = None
    null_hypothesis: str | None = None
    #: per group, the comparison its p-value tests ("A vs rest (B, C)", "A vs B")
    comparisons: dict[str, str] | None = None


def _pool(cells: Sequence[Cells], num_classes: int) -> tuple[Cells, list[IntArray]]:
    """The union of several groups' joint cells, and where each group's cells land in it."""
    n_cols = len(cells[0].values)
    union = tuple(np.unique(np.concatenate([c.values[j] for c in cells])) for j in range(n_cols))
    keys = []
    for c in cells:
        pos = np.column_stack(
            [np.searchsorted(union[j], c.values[j][c.index[:, j]]) for j in range(n_cols)]
        )
        keys.append(np.column_stack([c.classes, pos]).astype(np.int64))
    stacked = np.concatenate(keys) if keys else np.zeros((0, n_cols + 1), np.int64)
    uniq, inverse = np.unique(stacked, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    counts = np.bincount(
        inverse,
        weights=np.concatenate([c.counts for c in cells]).astype(np.float64),
        minlength=len(uniq),
    )
    pooled = Cells.make(
        union, uniq[:, 1:], uniq[:, 0], np.rint(counts).astype(np.int64), num_classes
    )
    # Cells.make reorders by class: map the unique rows to their new positions
    order = np.argsort(uniq[:, 0], kind="stable")
    where = np.empty(len(uniq), dtype=np.int64)
    where[order] = np.arange(len(uniq))
    maps, start = [], 0
    for key in keys:
        maps.append(where[inverse[start : start + len(key)]])
        start += len(key)
    return pooled, maps


#: numpy's multivariate hypergeometric draw (:func:`_deal`) takes fewer units in total
DEAL_LIMIT = 10**9


def _deal(rng: np.random.Generator, pool: IntArray, sizes: Sequence[int]) -> list[IntArray]:
    """Deal the pooled units to groups of the given sizes (multivariate hypergeometric)."""
    remaining = pool.astype(np.int64).copy()
    out = []
    for size in sizes[:-1]:
        x = rng.multivariate_hypergeometric(remaining, int(size)).astype(np.int64)
        out.append(x)
        remaining -= x
    out.append(remaining)
    return out


def _permuted(
    stats: GroupStats,
    rng: np.random.Generator,
    pooled: Cells | None,
    stratum: Stratum = "rows",
) -> GroupStats:
    """One permutation of the group labels within ``stratum``, done on counts.

    ``rows``: the pooled (y_true, y_pred) cells are dealt to the groups with their sizes
    n_g. ``actual``: within each actual class t, the pooled predictions of class t are
    dealt to the groups with their class-t sizes n_gt (a uniformly random permutation of
    the group labels inside each class: exact under H0 "P(ŷ | y) is the same in every
    group", whatever the base rates). ``predicted``: the same within each predicted class
    p with sizes n_g·p. Score metrics (``pooled`` the joint score cells of the compared
    groups): ``rows`` deals the pooled joint cells with sizes n_g, then each class's pooled
    count rows with the dealt class totals; ``actual`` deals the pooled joint cells of each
    class t with sizes n_gt (class totals stay), and the count rows within each class.
    """
    k = stats.num_classes
    n_groups = len(stats.groups)
    counts = np.zeros_like(stats.counts)
    if stratum == "predicted":
        if pooled is not None and stats.scores is not None:
            raise ValueError("score cells cannot be permuted within predicted classes")
        for c in range(k):
            col = stats.counts[:, :, c]  # (G, K): group × actual class, predicted c
            for g, x in enumerate(_deal(rng, col.sum(axis=0), col.sum(axis=1).tolist())):
                counts[g, :, c] = x
        return dataclasses.replace(stats, counts=counts, secondary=None)
    if stratum == "actual":
        totals = stats.counts.sum(axis=2)  # (G, K): fixed within each actual class
        for t in range(k):
            row = stats.counts[:, t, :]
            for g, x in enumerate(_deal(rng, row.sum(axis=0), totals[:, t].tolist())):
                counts[g, t] = x
        if pooled is None or stats.scores is None:
            return dataclasses.replace(stats, counts=counts, secondary=None)
        weights = [np.zeros(len(pooled.counts), dtype=np.int64) for _ in range(n_groups)]
        for t in range(k):
            lo, hi = int(pooled.bounds[t]), int(pooled.bounds[t + 1])
            for g, x in enumerate(_deal(rng, pooled.counts[lo:hi], totals[:, t].tolist())):
                weights[g][lo:hi] = x
        tables = [pooled.tables(w, k) for w in weights]
        scores = with_scores(stats.scores.columns, tables, None)
        return dataclasses.replace(stats, counts=counts, scores=scores, secondary=None)
    n = stats.counts.sum(axis=(1, 2)).tolist()
    if pooled is None or stats.scores is None:
        dealt = _deal(rng, stats.counts.reshape(len(n), -1).sum(axis=0), n)
        return dataclasses.replace(
            stats, counts=np.stack(dealt).reshape(stats.counts.shape), secondary=None
        )
    weights = _deal(rng, pooled.counts, n)
    class_totals = np.stack([pooled.class_totals(w, k) for w in weights])  # (G, K)
    pooled_rows = stats.counts.sum(axis=0)  # (K, K)
    for t in range(k):
        for g, row in enumerate(_deal(rng, pooled_rows[t], class_totals[:, t].tolist())):
            counts[g, t] = row
    tables = [pooled.tables(w, k) for w in weights]
    scores = with_scores(stats.scores.columns, tables, None)
    return dataclasses.replace(stats, counts=counts, scores=scores, secondary=None)


def _p_value(
    spec: Statistic,
    stats: GroupStats,
    params: Mapping[str, Any],
    observed: float,
    permutations: int,
    rng: np.random.Generator,
    stratum: Stratum = "rows",
    direction: tuple[str, float | None] | None = None,
) -> tuple[float | None, int, str | None]:
    """(p, defined permutations, reason when p is None)."""
    # the resolved direction of the quantity (accuracy_gap: lower) where it is one way;
    # "closer to an ideal" keeps the key's side (see permutation_test)
    better = direction[0] if direction is not None and direction[0] != "ideal" else spec.better
    compared = compared_groups(spec.fn(stats, params))
    pooled = None
    if stats.scores is not None:
        cells, why = cells_of(stats)
        if cells is None:
            return None, 0, why
        pooled, _ = _pool(cells, stats.num_classes)
    tol = TIE_TOLERANCE * max(1.0, abs(observed))
    extreme = undefined = differ = 0
    for _ in range(permutations):
        got = read_value(spec.fn(_permuted(stats, rng, pooled, stratum), params), compared)
        if got == "undefined":
            undefined += 1
        elif got == "groups":
            differ += 1
        elif not isinstance(got, str):
            theta = got[0]
            if better == "higher":
                extreme += theta <= observed + tol
            else:
                extreme += theta >= observed - tol
    valid = permutations - undefined - differ
    why = undefined_reason(undefined, differ, permutations, "permutations")
    if why is not None or valid == 0:
        return None, valid, why or "no permutation has a value"
    return (1.0 + extreme) / (1.0 + valid), valid, None


def versus_rest(stats: GroupStats, g: int) -> GroupStats:
    """Two groups: group ``g`` and the union of every other group (``not <g>``)."""
    others = [h for h in range(len(stats.groups)) if h != g]
    counts = np.stack([stats.counts[g], stats.counts[others].sum(axis=0)])
    scores = None
    if stats.scores is not None:
        cells, why = cells_of(stats)
        if cells is None:
            raise ValueError(why)
        k = stats.num_classes
        rest, _ = _pool([cells[h] for h in others], k)
        own = cells[g]
        tables = [own.tables(own.counts, k), rest.tables(rest.counts, k)]
        # the rest's tables keep every union value: re-key its joint cells to the kept ones
        joint = [own.joint(own.counts), _rekey(rest)]
        scores = with_scores(stats.scores.columns, tables, joint)
    name = stats.groups[g]
    # one pseudo-column: "not <g>" is no value of any single dimension column
    return GroupStats(
        dimension=(",".join(stats.dimension),),
        groups=(name, f"not {name}"),
        group_keys=((name,), (f"not {name}",)),
        classes=stats.classes,
        counts=counts,
        positive=stats.positive,
        unknown_n=stats.unknown_n,
        scores=scores,
    )


def _rekey(cells: Cells) -> JointCells:
    """Joint cells with positions into the values that ``cells.tables`` keeps."""
    cols = []
    for j, v in enumerate(cells.values):
        used = np.zeros(len(v), dtype=bool)
        used[cells.index[cells.counts > 0, j]] = True
        cols.append((np.cumsum(used) - 1)[cells.index[:, j]])
    nz = cells.counts > 0
    index = np.column_stack(cols)[nz] if cols else np.zeros((int(nz.sum()), 0), np.int64)
    return JointCells(index.astype(np.int64), cells.classes[nz], cells.counts[nz])


def _permutation_cost(stats: GroupStats, permutations: int) -> str | None:
    """Why this test would be too much work (``PERMUTATION_LIMIT``), None when it is not."""
    tests = 1 if len(stats.groups) <= 2 else 1 + len(stats.groups)
    evaluations = permutations * tests
    cells = 0
    if stats.scores is not None:
        cells = sum(int(np.count_nonzero(c)) for g in stats.scores.counts for c in g)
    if evaluations > PERMUTATION_LIMIT or evaluations * cells > PERMUTATION_CELL_LIMIT:
        what = f" × {cells} score cells" if cells else ""
        return (
            f"{permutations} permutations × {tests} test(s){what} exceeds the limit of "
            f"{PERMUTATION_LIMIT:.3g} metric evaluations ({PERMUTATION_CELL_LIMIT:.3g} with "
            "score cells); ask for fewer permutations (p_value, --p-value)"
        )
    return None


def _versus(groups: Sequence[str], g: int) -> str:
    """The name of group g's test against the rest."""
    others = [h for i, h in enumerate(groups) if i != g]
    if len(others) == 1:
        return f"{groups[g]} vs {others[0]}"
    listed = ", ".join(others) if len(others) <= 4 else f"the other {len(others)} groups"
    return f"{groups[g]} vs rest ({listed})"


def permutation_test(
    spec: Statistic,
    stats: GroupStats,
    params: dict[str, Any],
    point: float,
    permutations: int,
    seed: int,
    bonferroni: bool,
    direction: tuple[str, float | None] | None = None,
) -> Permutation:
    """Permutation test of the group labels within the metric's stratum
    (``spec.stratum(params)``: all rows, each actual class or each predicted class), done on
    counts: the pooled cells of each stratum are dealt back to the groups by a multivariate
    hypergeometric draw with the groups' sizes in that stratum. p = (1 + #{θ* ≥ θ}) / (1 + P)
    for a gap ("lower is better") metric; θ* ≤ θ for "higher is better" metrics (ratios).
    ``direction``: (better, ideal) of the quantity measured, resolved by the caller from
    the key and the parameters that select the value
    (:func:`fairpolicy.metrics.direction.resolve`: ``multiclass_confusion_metrics`` with
    ``value: accuracy_gap`` is a gap, tested θ* ≥ θ); when it is "closer to an ideal"
    (``disparity_ratio``, ``group_min_positive_rate``) the key's ``spec.better`` side is
    tested, as before (which side of the ideal signals a disparity is the metric's own).
    Per-group p: that group against the rest, the same test; Bonferroni multiplies by the
    family size (the number of groups; 1 with two groups, where both per-group tests are
    the overall test), capped at 1."""
    n_p = int(permutations)
    if n_p < 1:
        raise ValueError(f"permutations must be at least 1, got {permutations}")
    stratum = spec.stratum(params)
    null = spec.null_hypothesis(params)
    why = unavailable(spec, stats, "permutation")
    if why is None and stratum is None:
        why = f"'{spec.key}' is not a comparison of groups; {null}"
    if why is None and stratum == "predicted" and spec.needs_scores:
        why = f"'{spec.key}': score cells cannot be permuted within predicted classes"
    stats = needed(spec, stats)
    if why is None and len(stats.groups) < 2:
        why = "a permutation test needs at least two groups"
    if why is None:
        why = _permutation_cost(stats, n_p)
    if why is None and stats.total >= DEAL_LIMIT:
        why = (
            f"the permutation test deals the compared groups' {stats.total:,} rows (total "
            "frequency weight) back to the groups with a multivariate hypergeometric draw, "
            f"which takes fewer than {DEAL_LIMIT:,} (numpy's limit); test a sample of the "
            "rows, or use a bootstrap interval (ci)"
        )
    if why is not None or stratum is None:
        return Permutation(None, n_p, int(seed), reason=why, stratum=stratum, null_hypothesis=null)
    p, valid, why = _p_value(
        spec,
        stats,
        params,
        float(point),
        n_p,
        np.random.default_rng((seed, PERMUTATION_STREAM)),
        stratum,
        direction,
    )
    names = stats.groups
    family = 1 if len(names) == 2 else len(names)
    factor = family if bonferroni else 1
    groups: dict[str, float] = {}
    if len(names) == 2:  # each group against the rest is the test itself
        if p is not None:
            groups = {name: min(1.0, p * factor) for name in names}
    else:
        for g, name in enumerate(names):
            two = versus_rest(stats, g)
            observed = spec.fn(two, params).value
            if observed is None or not math.isfinite(observed):
                continue
            rng = np.random.default_rng((seed, PERMUTATION_STREAM, g + 1))
            pg, _, _ = _p_value(spec, two, params, observed, n_p, rng, stratum, direction)
            if pg is not None:
                groups[name] = min(1.0, pg * factor)
    return Permutation(
        p,
        n_p,
        int(seed),
        groups=groups or None,
        family_size=family,
        reason=why,
        valid=valid,
        stratum=stratum,
        null_hypothesis=null,
        comparisons={name: _versus(names, g) for g, name in enumerate(names) if name in groups}
        or None,
    )
