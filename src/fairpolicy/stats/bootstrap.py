"""Bootstrap confidence intervals and permutation p-values on the sufficient statistics.

Nothing here reads a row. Every resample is drawn on the per-group cells that
:class:`~fairpolicy.stats.GroupStats` already holds, and every statistic is the
metric's own ``spec.fn`` evaluated on a resampled ``GroupStats``.

Count tables (every classification metric). Resampling the n_g rows of group g
with replacement and counting them into (y_true, y_pred) cells gives exactly
counts*_g ~ Multinomial(n_g, counts_g / n_g), drawn independently per group
(the bootstrap is stratified: group sizes stay fixed). :func:`draw` makes all B
replicates of all groups in one ``Generator.multinomial`` call; controls that
share a ``GroupStats`` (same binding and dimension) share those replicates.
Because the groups are drawn independently, dropping groups afterwards
(``stats.select(keep)``, the runner's ``min_samples``/``min_share`` exclusion)
commutes with the draw. Cost O(B × cells), independent of the row count.

Score metrics. A row of group g is (class t, prediction p, score s_1..s_J). The
resampling unit is the *joint* score cell (t, s_1..s_J): with one score column
that is ``ScoreStats.counts[g][0]`` itself; with J > 1 columns (one-vs-rest AUC)
the per-column tables lose which scores share a row, so the builder also keeps
``ScoreStats.joint`` (:class:`~fairpolicy.stats.JointCells`) and the columns are
resampled together, never independently. A replicate is drawn hierarchically:
its class totals are those of the count replicate (row sums of
``Replicates.counts[b, g]``), then the joint score cells of each class are drawn
Multinomial(total*_gt, cells_gt / n_gt). Since a multinomial factorises into its
class totals and the within-class multinomials, the (class, all scores) part and
the (class, prediction) part of a replicate are each *exactly* distributed as in
row resampling, and they agree on the class totals. What is not kept is the
dependence between the prediction and the score *given* the class (the
statistics do not hold it). Score metrics read their value from the scores only
(the count table gives them class totals and reasons), so their intervals are
exact. The one metric that combines count terms and score terms,
``samd_fairness_score``, also reads a second grouping (the site) of the same
rows, which a stratified draw by dimension cannot resample from per-group
tables: it gets no interval (``low``/``high`` None with the reason), never a
wrong one. :func:`draw` makes the score draws of all replicates at once (one
``multinomial`` call per group and class) while B × cells ≤ ``SCORE_DRAW_LIMIT``;
above it, per (replicate, group) when asked, from their own seeded stream
(memory O(cells), not O(B × cells)). Either way the same seed gives the same
draws for every control. With continuous scores there is about one cell per
row, so score replicates cost O(B × rows).

Regression metrics. Their per-group sums Σy, Σŷ, Σr² … are not resampleable from
the sums alone, so when a control asks for an interval the runner also keeps each
group's distinct (y, ŷ) pairs with their counts (``RegressionStats.cells``, one sort).
A replicate draws Multinomial(n_g, cells_g / n_g) over them — exactly resampling the
group's rows — and its sums are the drawn counts times the cells' summands (one
matrix product per chunk of replicates). Values that repeat (rounded targets,
integer counts) share cells; continuous values give about one cell per row, so the
cost is O(B × rows) — the documented fallback of the issue.

Ranking metrics. A replicate resamples each group's items with replacement
(stratified: group sizes stay fixed) and every drawn copy keeps its item's place in
the ranking (copies of one item tie, adjacent); items outside the compared groups
stay once. Repeating position p of ``RankingStats.order`` m_p times is that
resampled ranking, drawn per replicate from its own seeded stream: O(B × items).

Above ``ROW_RESAMPLE_LIMIT`` replicates × cells (or items) there is no interval and
the reason says the cost. BCa needs a jackknife that regression/ranking statistics
do not have: a BCa request falls back to the percentile interval with a note.

Not available (``low``/``high`` None with the reason):

- data metrics (group sizes, group shares): a stratified bootstrap keeps the
  sizes fixed, so the interval would be the point itself.
- permutation p-values of regression and ranking metrics (their pooled rows are
  not dealt back to the groups).
- ``samd_fairness_score`` (it reads a second grouping of the rows, see above).
- a ``GroupStats`` with several score columns but no joint cells (a builder that
  did not keep them): independent per-column resampling would lose the rows.

Undefined replicates. A replicate counts as undefined when the metric has no
value (``None`` or not finite) or compares a different set of groups than the
data does (a group whose rate is defined on the data but not in the replicate —
the gap would then be a different statistic). Undefined replicates are dropped.
There is no interval when a group's value is missing from more than 5 % of the
replicates — it rests on fewer than about 3 rows, since a value resting on d rows
is missing from ≈ e^−d of them — and ``reason`` names each such group with that
count (:func:`_lost_reason`); otherwise when more than 5 % are undefined for any
other reason (``reason`` says how many): an interval on the survivors would be biased.

Gaps and ratios over groups. A value that is max − min, min ÷ max, min or max of
per-group values (or the max/mean/min of two such gaps, the odds metrics) — checked on
the data and on every replicate — gets the simultaneous sup-t band of
:mod:`fairpolicy.stats.bands` projected onto it (``method`` "band"), whatever method was
asked: percentile and BCa intervals of these non-smooth statistics exclude the truth at
ties (``docs/statistics.md``). Every other interval is widened to contain the point
estimate when it lies beside it (with a note). ``Replicates.rows`` (``resample: rows``):
group sizes vary, Multinomial(N, n_g / N), instead of being fixed.

Quantiles. ``numpy.quantile`` with its default ``linear`` method (Hyndman & Fan
type 7) on the defined replicate values — the definition ``scipy.stats.bootstrap``
uses. Percentile interval: the α/2 and 1 − α/2 quantiles, α = 1 − level.

BCa (Efron & Tibshirani 1993, ch. 14; ``scipy.stats.bootstrap(method="BCa")``).
z0 = Φ⁻¹(share of replicates below the point estimate, ties counting one half).
The acceleration is the stratified (multi-sample) jackknife scipy uses:
per group g with n_g rows, U_i = (n_g − 1)(θ̄_g − θ_(i)),
a = Σ_g Σ_i U_i³ / n_g³ / (6 (Σ_g Σ_i U_i² / n_g²)^{3/2}). Leaving one row out of
a cell changes one count, so every row of a cell has the same θ_(i): each
non-empty cell (count cell, or joint score cell) is one metric evaluation
weighted by its count — the result equals the row jackknife exactly. When the
kept groups hold more than ``JACKKNIFE_MAX`` cells (continuous scores: about
one cell per row), groups with too many cells use the grouped jackknife of
Efron & Narasimhan (2020, ``bcaboot::bcajack``): their rows are split at random
(seeded) into M_g equal blocks and one block is left out at a time, with M_g in
place of n_g above (it estimates the same sums). A BCa interval falls back to
the percentile interval, with ``note`` saying why and ``method`` =
"percentile", when a leave-one-out value is undefined, z0 is infinite (every
replicate on one side of the point) or a·(z0 ± z) ≥ 1. A jackknife with zero
spread gives a = 0. Per-group intervals (``Interval.groups``) use the same
method on the per-group values, with their own z0 and acceleration from the
same leave-one-out evaluations.

Two-group gaps under BCa. |θ_a − θ_b| is not a smooth function where the two
values cross: within a few standard errors of 0 the replicates fold above the
point, z0 turns negative and plain BCa shifts the interval below the true gap
(``benchmarks/ci_coverage.py`` measured 0.85–0.90 coverage at 1.4–2.4 s.e.). When
the metric is the gap of exactly two groups — on the data, on every replicate and
on every leave-one-out value — BCa is computed on the smooth signed difference
s·(θ_a − θ_b), with s the sign on the data, and the interval is folded through |·|
(the note says so; reached only with ``band=False``, since such gaps get the band).
BCa is never used on more than two groups: it falls back to the percentile interval
with the reason.

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

Cost. The draw is vectorised; evaluating the metric is a Python loop over the
replicates calling ``spec.fn``: measured 30–90 µs per replicate for count
metrics (independent of the rows), 80–130 µs for score metrics with ~500 score
cells, 0.35 ms (binary AUC) and 1.1 ms (one-vs-rest AUC, K = 3) with 6,500
distinct continuous scores. BCa adds one evaluation per non-empty cell (at most
about ``JACKKNIFE_MAX``); the permutation test P evaluations, and P per group
for the per-group p-values when there are more than two groups.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
from numpy.typing import NDArray

from fairpolicy.metrics.base import MetricSpec, MetricValue, Stratum
from fairpolicy.stats import (
    GroupStats,
    JointCells,
    RankingStats,
    RegressionStats,
    ScoreStats,
    bands,
)

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: the share of undefined replicates (or permutations) above which there is no result
UNDEFINED_LIMIT = 0.05
#: above this many cells the BCa jackknife leaves out random blocks of rows instead
JACKKNIFE_MAX = 2000
#: score cells × replicates drawn up front (int32); above it, per replicate on demand
SCORE_DRAW_LIMIT = 10_000_000
#: up to this many cells per group, jackknife blocks are dealt (hypergeometric), not shuffled
_BLOCKS_BY_DEAL = 10_000
#: fewest blocks per group in the grouped jackknife
JACKKNIFE_MIN_BLOCKS = 20
#: replicates × resampling units (regression (y, ŷ) cells, ranked items) allowed; above it
#: there is no interval (the reason gives the cost) rather than a run that never ends
ROW_RESAMPLE_LIMIT = 200_000_000
#: replicates × regression cells drawn per multinomial call (memory of one chunk)
_REGRESSION_CHUNK = 4_000_000
#: metric evaluations (permutations × tests) one permutation test may make, and those
#: evaluations × pooled score cells: above either there is no p-value (the reason gives the
#: cost) rather than a run a policy could make endless
PERMUTATION_LIMIT = 2_000_000
PERMUTATION_CELL_LIMIT = 200_000_000
#: relative tolerance when a permuted statistic is compared with the observed one
TIE_TOLERANCE = 1e-12
METHODS = ("percentile", "bca")
#: a percentile or BCa interval (a value without the band) is read at tails (1 − level)/2
#: ÷ WIDEN: 95 % → the 0.5 % and 99.5 % quantiles. Measured in docs/statistics.md: the
#: plain 95 % interval of theil_index wrongly passes ``ci_upper`` 7 % (n = 50), this 2.5 %.
WIDEN = 5.0

#: stream salts: each (seed, salt, ...) tuple seeds its own generator
_SCORE_STREAM = 1
_JACKKNIFE_STREAM = 2
_PERMUTATION_STREAM = 3
_REGRESSION_STREAM = 4
_RANKING_STREAM = 5
_ROWS_STREAM = 6

_NORMAL = NormalDist()


# ---------------------------------------------------------------------------
# resampling units of score metrics


@dataclass(frozen=True, eq=False)
class Cells:
    """One group's joint score cells: the resampling units of score metrics.

    Cell ``i`` holds ``counts[i]`` rows of class ``classes[i]`` whose score in
    column ``j`` is ``values[j][index[i, j]]``. Cells are sorted by class; the
    rows of class t are ``bounds[t]:bounds[t + 1]``.
    """

    values: tuple[FloatArray, ...]
    index: IntArray
    classes: IntArray
    counts: IntArray
    bounds: IntArray

    @staticmethod
    def make(
        values: tuple[FloatArray, ...],
        index: IntArray,
        classes: IntArray,
        counts: IntArray,
        num_classes: int,
    ) -> Cells:
        order = np.argsort(classes, kind="stable")
        cls = np.asarray(classes, dtype=np.int64)[order]
        return Cells(
            values,
            np.asarray(index, dtype=np.int64)[order],
            cls,
            np.asarray(counts, dtype=np.int64)[order],
            np.searchsorted(cls, np.arange(num_classes + 1)).astype(np.int64),
        )

    def tables(
        self, weights: NDArray[Any], num_classes: int
    ) -> tuple[tuple[FloatArray, ...], tuple[IntArray, ...]]:
        """Per column (distinct scores, (L, K) counts) of the rows ``weights`` gives per cell.

        Scores no row carries are dropped, as the builder would do.
        """
        w = np.asarray(weights, dtype=np.float64)
        k = num_classes
        vals: list[FloatArray] = []
        cnts: list[IntArray] = []
        for j, v in enumerate(self.values):
            flat = np.bincount(self.index[:, j] * k + self.classes, weights=w, minlength=len(v) * k)
            c = np.rint(flat).astype(np.int64).reshape(len(v), k)
            nz = c.any(axis=1)
            vals.append(v[nz])
            cnts.append(c[nz])
        return tuple(vals), tuple(cnts)

    def class_totals(self, weights: NDArray[Any], num_classes: int) -> IntArray:
        out = np.bincount(
            self.classes, weights=np.asarray(weights, np.float64), minlength=num_classes
        )
        return np.rint(out).astype(np.int64)

    def joint(self, weights: NDArray[Any]) -> JointCells:
        """The :class:`JointCells` of the rows ``weights`` gives (positions into ``values``)."""
        w = np.asarray(weights, dtype=np.int64)
        nz = w > 0
        return JointCells(self.index[nz], self.classes[nz], w[nz])


def _cells_of(stats: GroupStats) -> tuple[tuple[Cells, ...] | None, str | None]:
    """The joint score cells of every group, or None with why they are not available."""
    sc = stats.scores
    if sc is None:
        return None, "no score statistics"
    k = stats.num_classes
    out: list[Cells] = []
    for g in range(len(stats.groups)):
        if len(sc.columns) == 1:
            table = sc.counts[g][0]
            cls, pos = np.nonzero(table.T)  # sorted by class
            out.append(Cells.make(sc.values[g], pos[:, None], cls, table[pos, cls], k))
        elif sc.joint is not None:
            jc = sc.joint[g]
            out.append(Cells.make(sc.values[g], jc.index, jc.classes, jc.counts, k))
        else:
            return None, (
                f"{len(sc.columns)} score columns share rows, but the score statistics do not "
                "keep their joint cells; resampling each column on its own would lose which "
                "scores sit on the same row"
            )
    for g, cells in enumerate(out):
        if not np.array_equal(cells.class_totals(cells.counts, k), stats.counts[g].sum(axis=1)):
            return None, (
                f"the score cells of group '{stats.groups[g]}' hold other rows than its count "
                "table, so a replicate could not resample both from the same rows"
            )
    return tuple(out), None


def _with_scores(
    columns: tuple[str, ...],
    tables: Sequence[tuple[tuple[FloatArray, ...], tuple[IntArray, ...]]],
    joint: Sequence[JointCells] | None,
) -> ScoreStats:
    return ScoreStats(
        columns,
        tuple(t[0] for t in tables),
        tuple(t[1] for t in tables),
        None if joint is None or len(columns) == 1 else tuple(joint),
    )


# ---------------------------------------------------------------------------
# what can be resampled


def unavailable(spec: MetricSpec, stats: GroupStats, purpose: str = "interval") -> str | None:
    """Why this metric gets no bootstrap interval (``purpose="interval"``) or permutation
    p-value (``"permutation"``); None: it does."""
    if (
        spec.kind in ("regression", "ranking")
        or stats.regression is not None
        or (stats.ranking is not None)
    ):
        if purpose == "permutation":
            return (
                f"permutation p-values are not available for regression/ranking metrics "
                f"('{spec.key}'); use a bootstrap interval (ci) instead"
            )
        if stats.regression is not None and stats.regression.cells is None:
            return (
                f"'{spec.key}': the regression statistics hold only per-group sums, not the "
                "(y, ŷ) cells a replicate resamples"
            )
        if stats.regression is None and stats.ranking is None:
            return f"'{spec.key}': no regression or ranking statistics to resample"
        return None
    if spec.kind == "data" or not stats.classes:
        return (
            f"'{spec.key}' reads only the group sizes, which a bootstrap stratified by group "
            "(and a permutation of group labels) keeps fixed: the interval would be the point"
        )
    if stats.secondary is not None or spec.secondary_role is not None:
        return (
            f"'{spec.key}' also reads a second grouping of the same rows "
            f"(input.{spec.secondary_role or 'site'}); resampling within the groups of "
            f"'{','.join(stats.dimension)}' cannot resample that grouping's statistics "
            "consistently from per-group tables, so no interval is computed"
        )
    if spec.needs_scores:
        _, why = _cells_of(stats)
        if why is not None:
            return why
    return None


def _needed(spec: MetricSpec, stats: GroupStats) -> GroupStats:
    """The statistics the metric reads: a metric that does not declare ``needs_scores``
    is resampled (and jackknifed, and permuted) on its count table alone."""
    if spec.needs_scores or stats.scores is None:
        return stats
    return stats.with_extras(scores=None)


# ---------------------------------------------------------------------------
# replicates


@dataclass(frozen=True, eq=False)
class ScoreDraws:
    """The score cells of the replicates: group g's joint cells ``cells[g]``, drawn within
    each class with the class totals of ``Replicates.counts[b, g]``.

    When B × (cells of all groups) ≤ ``SCORE_DRAW_LIMIT``, :func:`draw` makes them
    all at once: ``weights[g]`` is (B, cells) — one ``multinomial`` call per (group,
    class). Above it, replicate b of group g is drawn when asked, from
    ``numpy.random.default_rng((seed, 1, b, g))`` (memory O(cells), not O(B × cells)).
    """

    cells: tuple[Cells, ...] | None
    reason: str | None = None
    weights: tuple[NDArray[np.int32], ...] | None = None


@dataclass(frozen=True, eq=False)
class Replicates:
    """B stratified replicates of one GroupStats (all groups, before any exclusion)."""

    counts: np.ndarray  # int64 (B, G, K, K): Multinomial(n_g, cells_g / n_g) per group
    scores: object | None  # a ScoreDraws (None if stats.scores is None)
    seed: int
    resamples: int
    #: (B, G, 7) resampled regression sums (None unless the statistics are regression's)
    regression: FloatArray | None = None
    #: each group's positions in the ranking (ranking statistics; replicates drawn on demand)
    rank_positions: tuple[IntArray, ...] | None = None
    #: why these statistics have no replicates (the cost limit), None when they have
    reason: str | None = None
    #: False: stratified (each group's size fixed); True: all rows resampled together
    #: (``resample: rows``), each replicate's group sizes ~ Multinomial(N, n_g / N)
    rows: bool = False


def _multinomial(
    rng: np.random.Generator, cells: IntArray, size: int, sizes: IntArray | None = None
) -> IntArray:
    """``size`` draws of Multinomial(n_g, cells_g / n_g) for every row g of ``cells`` (G, C);
    with ``sizes`` (size, G), draw b of group g has ``sizes[b, g]`` rows instead of n_g."""
    g, c = cells.shape
    if c == 0 or g == 0:
        return np.zeros((size, g, c), dtype=np.int64)
    n = cells.sum(axis=1)
    p = np.zeros((g, c), dtype=np.float64)
    ok = n > 0
    p[ok] = cells[ok] / n[ok, None]
    p[~ok, 0] = 1.0  # an empty group draws 0 rows
    if sizes is not None:
        drawn: IntArray = rng.multinomial(sizes, p).astype(np.int64)
        return drawn
    out: IntArray = rng.multinomial(n, p, size=(size, g)).astype(np.int64)
    return out


def _row_sizes(rng: np.random.Generator, n: IntArray, size: int) -> IntArray:
    """Group sizes of ``size`` unstratified replicates: Multinomial(N, n_g / N) — resampling
    all N rows together and counting each group's, so group shares vary as in the data."""
    total = int(n.sum())
    if total == 0:
        return np.zeros((size, len(n)), dtype=np.int64)
    out: IntArray = rng.multinomial(total, n / total, size=size).astype(np.int64)
    return out


def draw(stats: GroupStats, resamples: int, seed: int, rows: bool = False) -> Replicates:
    """One vectorised draw for every control that shares this GroupStats (same binding and
    dimension). Stratified per group: exactly equivalent to resampling rows within each group.
    ``rows``: unstratified — each replicate's group sizes are Multinomial(N, n_g / N), then
    each group is drawn with its size as above: exactly resampling all N rows together.
    """
    b = int(resamples)
    if b < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    g, k = len(stats.groups), stats.num_classes
    rng = np.random.default_rng(seed)
    n_g = _group_sizes(stats)
    sizes = _row_sizes(np.random.default_rng((seed, _ROWS_STREAM)), n_g, b) if rows else None
    counts = _multinomial(rng, stats.counts.reshape(g, k * k), b, sizes).reshape(b, g, k, k)
    scores = None
    if stats.scores is not None:
        cells, why = _cells_of(stats)
        weights = None
        if cells is not None and b * sum(len(c.counts) for c in cells) <= SCORE_DRAW_LIMIT:
            weights = tuple(
                _score_weights_all(c, counts[:, gi].sum(axis=2), int(seed), gi)
                for gi, c in enumerate(cells)
            )
        scores = ScoreDraws(cells, why, weights)
    regression = positions = reason = None
    units = 0
    if stats.regression is not None and stats.regression.cells is not None:
        units = sum(len(c.counts) for c in stats.regression.cells)
    elif stats.ranking is not None:
        units = len(stats.ranking.order)
    if b * units > ROW_RESAMPLE_LIMIT:
        what = "distinct (y, ŷ) cells" if stats.regression is not None else "ranked items"
        reason = (
            f"{b} resamples × {units} {what} = {b * units:.3g} resampled units exceeds the "
            f"limit of {ROW_RESAMPLE_LIMIT:.3g} (about a minute of work); ask for fewer "
            "resamples (ci), or round the values so rows share cells"
        )
    elif stats.regression is not None and stats.regression.cells is not None:
        regression = _regression_draw(stats.regression, b, int(seed), sizes)
    elif rows and stats.ranking is not None:
        reason = (
            "resample: rows is not available for ranking metrics (a replicate keeps each "
            "group's items in the ranking); use resample: stratified"
        )
    elif stats.ranking is not None:
        order = stats.ranking.order
        by_group = np.argsort(order, kind="stable")
        bounds = np.searchsorted(order[by_group], np.arange(len(stats.groups) + 1))
        positions = tuple(by_group[bounds[i] : bounds[i + 1]] for i in range(len(stats.groups)))
    return Replicates(
        counts=counts,
        scores=scores,
        seed=int(seed),
        resamples=b,
        regression=regression,
        rank_positions=positions,
        reason=reason,
        rows=rows,
    )


def _group_sizes(stats: GroupStats) -> IntArray:
    """Rows per group (the count table's, or the sizes of regression/ranking statistics)."""
    return np.asarray(stats.n, dtype=np.int64)


def _regression_draw(
    reg: RegressionStats, resamples: int, seed: int, sizes: IntArray | None = None
) -> FloatArray:
    """(B, G, 7) sums of B stratified row resamples: per group, Multinomial(n_g, cells / n_g)
    over its distinct (y, ŷ) cells — exactly resampling the group's rows — times the cells'
    summands. Chunked over replicates so one chunk holds at most ``_REGRESSION_CHUNK`` counts.
    ``sizes`` (B, G): replicate b of group g draws ``sizes[b, g]`` rows (``resample: rows``)."""
    assert reg.cells is not None
    out = np.zeros((resamples, len(reg.cells), reg.sums.shape[1]), dtype=np.float64)
    for g, cells in enumerate(reg.cells):
        n = int(cells.counts.sum())
        if n == 0:
            continue
        features = cells.features()
        rng = np.random.default_rng((seed, _REGRESSION_STREAM, g))
        p = cells.counts / n
        chunk = max(1, _REGRESSION_CHUNK // len(cells.counts))
        for lo in range(0, resamples, chunk):
            m = min(chunk, resamples - lo)
            w = (
                rng.multinomial(n, p, size=m)
                if sizes is None
                else rng.multinomial(sizes[lo : lo + m, g], p)
            )
            out[lo : lo + len(w), g] = w @ features
    return out


def _ranking_order(order: IntArray, positions: Sequence[IntArray], seed: int, b: int) -> IntArray:
    """Replicate b of a ranking: each group's items resampled with replacement (stratified),
    every drawn copy kept at its item's position (copies tie, adjacent), items outside the
    compared groups kept once. Repeating position p m_p times is the sorted resampled list."""
    rng = np.random.default_rng((seed, _RANKING_STREAM, b))
    many = np.ones(len(order), dtype=np.int64)
    for pos in positions:
        k = len(pos)
        if k:
            many[pos] = np.bincount(rng.integers(0, k, k), minlength=k)
    out: IntArray = np.repeat(order, many)
    return out


def _score_weights_all(cells: Cells, totals: IntArray, seed: int, g: int) -> NDArray[np.int32]:
    """Every replicate of group g at once: (B, cells), one multinomial call per class."""
    rng = np.random.default_rng((seed, _SCORE_STREAM, g))
    n_b = totals.shape[0]
    w = np.zeros((n_b, len(cells.counts)), dtype=np.int32)
    for t in range(totals.shape[1]):
        lo, hi = int(cells.bounds[t]), int(cells.bounds[t + 1])
        if hi == lo:
            continue
        if hi - lo == 1:
            w[:, lo] = totals[:, t]
            continue
        c = cells.counts[lo:hi]
        w[:, lo:hi] = rng.multinomial(totals[:, t], c / c.sum())
    return w


def _score_weights(cells: Cells, totals: IntArray, seed: int, b: int, g: int) -> IntArray:
    """Replicate b of group g: its joint score cells, drawn within each class."""
    rng = np.random.default_rng((seed, _SCORE_STREAM, b, g))
    w = np.zeros(len(cells.counts), dtype=np.int64)
    for t, total in enumerate(totals.tolist()):
        lo, hi = int(cells.bounds[t]), int(cells.bounds[t + 1])
        if total == 0 or hi == lo:
            continue
        if hi - lo == 1:
            w[lo] = total
            continue
        c = cells.counts[lo:hi]
        w[lo:hi] = rng.multinomial(total, c / c.sum())
    return w


def _replicate(
    base: GroupStats, stats: GroupStats, reps: Replicates, b: int, idx: IntArray
) -> GroupStats:
    """Replicate b restricted to the groups ``idx`` (``base`` = ``stats.select`` of them)."""
    counts = reps.counts[b][idx]
    scores = None
    if stats.scores is not None:
        draws = reps.scores
        if not isinstance(draws, ScoreDraws) or draws.cells is None:
            why = draws.reason if isinstance(draws, ScoreDraws) else "no score draws"
            raise ValueError(f"score cells cannot be resampled: {why}")
        k = stats.num_classes
        tables = []
        for g in idx.tolist():
            cells = draws.cells[g]
            if draws.weights is not None:
                w: NDArray[Any] = draws.weights[g][b]
            else:
                w = _score_weights(cells, reps.counts[b, g].sum(axis=1), reps.seed, b, g)
            tables.append(cells.tables(w, k))
        scores = _with_scores(stats.scores.columns, tables, None)
    extras: dict[str, Any] = {}
    if reps.regression is not None:
        extras["regression"] = RegressionStats(reps.regression[b][idx])
    if reps.rank_positions is not None and stats.ranking is not None:
        order = _ranking_order(stats.ranking.order, reps.rank_positions, reps.seed, b)
        extras["ranking"] = RankingStats(order).select(idx, len(stats.groups))
    return dataclasses.replace(base, counts=counts, scores=scores, secondary=None, **extras)


def replicate(stats: GroupStats, reps: Replicates, b: int) -> GroupStats:
    """Replicate b as a GroupStats (same groups/classes/extras, resampled counts/scores).

    A second grouping (``secondary``) cannot be resampled and is dropped; the
    replicate's score statistics carry no joint cells.
    """
    idx = np.arange(len(stats.groups), dtype=np.int64)
    return _replicate(stats, stats, reps, b, idx)


# ---------------------------------------------------------------------------
# reading a metric value


def _compared(mv: MetricValue) -> tuple[str, ...]:
    """The groups with a defined per-group value, in order."""
    return tuple(gv.group for gv in mv.groups if gv.value is not None)


def _read(mv: MetricValue, compared: tuple[str, ...]) -> tuple[float, FloatArray] | str:
    """(value, per-group values in ``compared`` order), or why the value does not count."""
    if mv.value is None or not math.isfinite(mv.value):
        return "undefined"
    if _compared(mv) != compared:
        return "groups"
    per = np.array([gv.value for gv in mv.groups if gv.value is not None], dtype=np.float64)
    return float(mv.value), per


def _undefined_reason(undefined: int, differ: int, total: int, what: str) -> str | None:
    bad = undefined + differ
    if bad <= UNDEFINED_LIMIT * total:
        return None
    parts = []
    if undefined:
        parts.append(f"{undefined} had no value")
    if differ:
        parts.append(f"{differ} compared a different set of groups than the data")
    return (
        f"{bad} of {total} {what} are undefined ({', '.join(parts)}), more than "
        f"{UNDEFINED_LIMIT:.0%}: a result on the remaining ones would be biased"
    )


def _lost_reason(rv: ReplicateValues, total: int) -> str | None:
    """Why there is no interval when some groups' values are missing from too many
    replicates, named per group; None when every group keeps its value in all but
    ``UNDEFINED_LIMIT`` of them.

    A group's value is undefined in a replicate when the replicate draws none of the rows
    its value rests on (a TPR's actual positives, a PPV's predicted positives, …). With d
    such rows among the group's n, that happens with probability (1 − d/n)^n ≈ e^−d, so
    the limit of 5 % is the count rule "d ≥ 3" (e^−3 ≈ 0.05), measured on the replicates
    so that it holds for every metric, whatever rows define its per-group value."""
    bad = {g: k for g, k in rv.lost.items() if k > UNDEFINED_LIMIT * total}
    if not bad:
        return None
    listed = "; ".join(
        f"'{g}' has no value in {k} of {total} replicates (about {_rows_behind(k, total)} "
        "of its rows define it)"
        for g, k in bad.items()
    )
    return (
        f"too few rows behind the value of {len(bad)} group(s): {listed}. A resample that "
        "draws none of them leaves the group's value undefined; an interval needs about 3 "
        f"or more such rows per group (fewer than {UNDEFINED_LIMIT:.0%} of resamples missing "
        "them all). Collect more rows for these groups, exclude them (min_samples), or "
        "merge them with others"
    )


def _rows_behind(lost: int, total: int) -> str:
    """The d with e^−d = lost / total, rounded: how many rows a value rests on."""
    share = lost / total
    if share >= 1.0:
        return "0"
    d = -math.log(share)
    return f"{d:.0f}" if d >= 1 else "1"


# ---------------------------------------------------------------------------
# confidence intervals


@dataclass(frozen=True)
class Interval:
    low: float | None
    high: float | None
    level: float
    method: str  # "percentile" | "bca" | "band"
    resamples: int
    seed: int
    valid: int  # replicates whose value was defined
    reason: str | None = None  # why low/high are None (e.g. too many undefined replicates)
    groups: dict[str, tuple[float, float]] | None = None  # per-group CI of the per-group values
    #: set when the interval is a fallback (BCa → percentile) or otherwise qualified
    note: str | None = None
    #: BCa's bias correction and acceleration, when BCa was used
    z0: float | None = None
    acceleration: float | None = None


@dataclass(frozen=True)
class ReplicateValues:
    """The metric on every replicate: NaN where the replicate does not count."""

    values: FloatArray  # (B,)
    groups: FloatArray  # (B, len(compared)) per-group values
    compared: tuple[str, ...]
    undefined: int
    differ: int
    base: MetricValue  # the metric on the data (kept groups)
    #: per candidate :class:`~fairpolicy.stats.bands.Form` of the value (max − min or
    #: min ÷ max over per-group values), the (B, coordinates) per-group values of each
    #: replicate; a row is NaN where the replicate's value is not that form of them
    forms: dict[bands.Form, FloatArray] = dataclasses.field(default_factory=dict)
    #: per compared group, the replicates in which its value is undefined
    lost: dict[str, int] = dataclasses.field(default_factory=dict)


def replicate_values(
    spec: MetricSpec,
    stats: GroupStats,
    keep: NDArray[np.bool_],
    params: Mapping[str, Any],
    reps: Replicates,
) -> ReplicateValues:
    """``spec.fn`` on each replicate restricted to the ``keep`` groups (a loop over B)."""
    stats = _needed(spec, stats)
    mask = np.asarray(keep, dtype=bool)
    idx = np.flatnonzero(mask).astype(np.int64)
    base_stats = stats.select(mask)
    base = spec.fn(base_stats, params)
    compared = _compared(base)
    n_b = reps.resamples
    if spec.batch is not None and stats.scores is None and stats.positive is not None:
        return _batch_values(spec, base_stats, base, compared, reps, idx)
    values = np.full(n_b, np.nan)
    groups = np.full((n_b, len(compared)), np.nan)
    forms = {f: bands.layout_of(f, base) for f in bands.candidates(base)}
    coords = {f: np.full((n_b, sum(map(len, lay))), np.nan) for f, lay in forms.items()}
    undefined = differ = 0
    lost = dict.fromkeys(compared, 0)
    for b in range(n_b):
        mv = spec.fn(_replicate(base_stats, stats, reps, b, idx), params)
        got = _read(mv, compared)
        if isinstance(got, str):
            for g in set(compared) - set(_compared(mv)):
                lost[g] += 1
        if got == "undefined":
            undefined += 1
        elif got == "groups":
            differ += 1
        elif not isinstance(got, str):
            values[b], groups[b] = got
            for f, lay in forms.items():
                row = bands.matches(f, mv, lay)
                if row is not None:
                    coords[f][b] = row
    return ReplicateValues(values, groups, compared, undefined, differ, base, coords, lost)


def _batch_values(
    spec: MetricSpec,
    base_stats: GroupStats,
    base: MetricValue,
    compared: tuple[str, ...],
    reps: Replicates,
    idx: IntArray,
) -> ReplicateValues:
    """All replicates at once through the metric's vectorised twin (``spec.batch``).

    Same bookkeeping as the loop: a replicate whose value is undefined, or whose set of
    groups with a defined value differs from the data's, does not count.
    """
    assert spec.batch is not None and base_stats.positive is not None
    vals, per, defined = spec.batch(reps.counts[:, idx], base_stats.positive)
    base_defined = np.array([gv.value is not None for gv in base.groups], dtype=bool)
    nan = ~np.isfinite(vals)
    other = ~nan & (defined != base_defined).any(axis=1)
    keep = ~nan & ~other
    values = np.where(keep, vals, np.nan)
    groups = np.full((len(vals), len(compared)), np.nan)
    groups[keep] = per[keep][:, base_defined]
    coords: dict[bands.Form, FloatArray] = {}
    for form in bands.candidates(base):
        if form.parts != ("groups",) or not groups.shape[1]:
            continue
        hi, lo = groups.max(axis=1, initial=-np.inf), groups.min(axis=1, initial=np.inf)
        if form.reduce == "gap":
            rebuilt = hi - lo
        elif form.reduce in ("min", "max"):
            rebuilt = lo if form.reduce == "min" else hi
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                rebuilt = np.where((lo >= 0) & (hi > 0), lo / hi, np.nan)
        tol = 1e-9 * np.maximum(1.0, np.abs(values))
        same = keep & (np.abs(rebuilt - values) <= tol)
        coords[form] = np.where(same[:, None], groups, np.nan)
    gone = (~defined & base_defined).sum(axis=0)
    lost = {g: int(gone[i]) for i, g in enumerate(base_stats.groups) if base_defined[i]}
    return ReplicateValues(
        values, groups, compared, int(nan.sum()), int(other.sum()), base, coords, lost
    )


def _quantiles(v: FloatArray, lo: float, hi: float) -> tuple[float, float]:
    q = np.quantile(v, [lo, hi])
    return float(q[0]), float(q[1])


def bca_levels(
    values: FloatArray, point: float, acceleration: float, level: float
) -> tuple[float, float, float] | str:
    """(α₁, α₂, z0) of the BCa interval, or why BCa is not defined here.

    z0 = Φ⁻¹(#{θ* < θ̂}/B + #{θ* = θ̂}/(2B)); α_i = Φ(z0 + (z0 + z_i)/(1 − a(z0 + z_i)))
    with z_1 = Φ⁻¹(α/2), z_2 = −z_1 (Efron & Tibshirani 1993, eq. 14.10).
    """
    b = len(values)
    share = (float(np.count_nonzero(values < point)) + float(np.count_nonzero(values <= point))) / (
        2 * b
    )
    if share <= 0.0 or share >= 1.0:
        return "every replicate lies on one side of the point estimate (z0 is infinite)"
    z0 = _NORMAL.inv_cdf(share)
    z = _NORMAL.inv_cdf((1.0 - level) / 2.0)
    out = []
    for zi in (z, -z):
        num = z0 + zi
        den = 1.0 - acceleration * num
        if den <= 0.0:
            return f"the acceleration a = {acceleration:.3g} is too large for this level"
        out.append(_NORMAL.cdf(z0 + num / den))
    return out[0], out[1], z0


@dataclass(frozen=True)
class Jackknife:
    """Leave-one-out values: one per unit (a cell, or a block of rows), with weights."""

    values: FloatArray  # (U,)
    groups: FloatArray  # (U, len(compared))
    weights: FloatArray  # (U,) rows the unit stands for (cell count), or 1 for a block
    sample: IntArray  # (U,) which kept group the unit belongs to
    sizes: FloatArray  # per kept group: n_g (cells) or M_g (blocks)
    grouped: bool  # True when some group used random blocks


def acceleration(jack: Jackknife, values: FloatArray | None = None) -> float:
    """The stratified jackknife acceleration (scipy's ``_bca_interval``), weighted by cell."""
    theta = jack.values if values is None else values
    num = den = 0.0
    for s, size in enumerate(jack.sizes.tolist()):
        m = jack.sample == s
        if not m.any():
            continue
        w, th = jack.weights[m], theta[m]
        mean = float(np.dot(w, th) / w.sum())
        u = (size - 1.0) * (mean - th)
        num += float(np.dot(w, u**3)) / size**3
        den += float(np.dot(w, u**2)) / size**2
    if den <= 0.0:
        return 0.0
    return float(num / (6.0 * math.pow(den, 1.5)))


def _units(
    counts: IntArray, cells: Cells | None, budget: int, rng: np.random.Generator
) -> tuple[list[tuple[IntArray, IntArray]], FloatArray, float]:
    """A group's jackknife deletions: (unit ids, how many rows of each) per deletion.

    Units are count cells (flattened (t, p)) or joint score cells. Exact: one
    deletion per non-empty unit, weighted by its count. Grouped: ``budget``
    random blocks of rows (weights 1).
    """
    w = counts.ravel() if cells is None else cells.counts
    nz = np.flatnonzero(w)
    if len(nz) <= budget:
        ones = np.ones(1, dtype=np.int64)
        return (
            [(np.array([u]), ones) for u in nz.tolist()],
            w[nz].astype(np.float64),
            float(w.sum()),
        )
    blocks = []
    if len(nz) <= _BLOCKS_BY_DEAL:
        # few cells (possibly many rows): deal the rows into blocks, O(blocks × cells)
        n = int(w.sum())
        sizes = np.full(budget, n // budget, dtype=np.int64)
        sizes[: n % budget] += 1
        remaining = w[nz].astype(np.int64)
        for size in sizes.tolist():
            x = rng.multivariate_hypergeometric(remaining, size).astype(np.int64)
            remaining -= x
            hit = x > 0
            blocks.append((nz[hit].astype(np.int64), x[hit]))
    else:
        # about one row per cell (continuous scores): shuffle the rows, O(rows)
        rows = rng.permutation(np.repeat(nz, w[nz]))
        for block in np.array_split(rows, budget):
            ids, many = np.unique(block, return_counts=True)
            blocks.append((ids.astype(np.int64), many.astype(np.int64)))
    return blocks, np.ones(budget, dtype=np.float64), float(budget)


def _take_rows(row: IntArray, k: int) -> IntArray:
    """Take ``k`` rows out of one class's (y_pred) counts, from the largest cells first."""
    out = row.copy()
    left = int(k)
    for p in np.argsort(-out, kind="stable").tolist():
        if left == 0:
            break
        d = min(left, int(out[p]))
        out[p] -= d
        left -= d
    return out


def jackknife(
    spec: MetricSpec,
    stats: GroupStats,
    keep: NDArray[np.bool_],
    params: Mapping[str, Any],
    compared: tuple[str, ...],
    seed: int,
) -> Jackknife | str:
    """Leave-one-row-out values computed per cell (or per random block), or why not."""
    if stats.regression is not None or stats.ranking is not None:
        return (
            "the jackknife for BCa's acceleration is computed from count and score cells; "
            "regression and ranking statistics do not have it"
        )
    stats = _needed(spec, stats)
    mask = np.asarray(keep, dtype=bool)
    base = stats.select(mask)
    k = base.num_classes
    cells: tuple[Cells, ...] | None = None
    if base.scores is not None:
        cells, why = _cells_of(base)
        if cells is None:
            return why or "no score cells"
    n_groups = len(base.groups)
    n = base.counts.sum(axis=(1, 2))
    sizes_cells = [
        int(np.count_nonzero(base.counts[g])) if cells is None else len(cells[g].counts)
        for g in range(n_groups)
    ]
    total_cells = sum(sizes_cells)
    rng = np.random.default_rng((seed, _JACKKNIFE_STREAM))
    values: list[float] = []
    per_group: list[FloatArray] = []
    weights: list[FloatArray] = []
    sample: list[int] = []
    sizes: list[float] = []
    grouped = False
    n_all = max(int(n.sum()), 1)
    for g in range(n_groups):
        if total_cells <= JACKKNIFE_MAX:
            budget = sizes_cells[g]
        else:
            budget = max(JACKKNIFE_MIN_BLOCKS, int(JACKKNIFE_MAX * int(n[g]) / n_all))
        units, w, size = _units(base.counts[g], None if cells is None else cells[g], budget, rng)
        grouped = grouped or len(units) < sizes_cells[g]
        sizes.append(size)
        for ids, many in units:
            counts = base.counts.copy()
            scores = base.scores
            if cells is None:
                flat = counts[g].reshape(-1)
                np.subtract.at(flat, ids, many)
            else:
                assert base.scores is not None
                c = cells[g]
                wt = c.counts.copy()
                np.subtract.at(wt, ids, many)
                gone = np.bincount(c.classes[ids], weights=many.astype(np.float64), minlength=k)
                for t in np.flatnonzero(gone).tolist():
                    counts[g, t] = _take_rows(counts[g, t], int(np.rint(gone[t])))
                tables = [
                    c.tables(wt, k) if h == g else (base.scores.values[h], base.scores.counts[h])
                    for h in range(n_groups)
                ]
                scores = _with_scores(base.scores.columns, tables, None)
            mv = spec.fn(
                dataclasses.replace(base, counts=counts, scores=scores, secondary=None), params
            )
            got = _read(mv, compared)
            if isinstance(got, str):
                return (
                    "a leave-one-out value is undefined or compares other groups (a group "
                    "whose rate rests on a single row), so the jackknife acceleration is not "
                    "defined"
                )
            values.append(got[0])
            per_group.append(got[1])
        weights.append(w)
        sample.extend([g] * len(units))
    return Jackknife(
        values=np.array(values, dtype=np.float64),
        groups=np.array(per_group, dtype=np.float64).reshape(len(values), len(compared)),
        weights=np.concatenate(weights) if weights else np.zeros(0),
        sample=np.array(sample, dtype=np.int64),
        sizes=np.array(sizes, dtype=np.float64),
        grouped=grouped,
    )


def confidence(
    spec: MetricSpec,
    stats: GroupStats,
    keep: np.ndarray,
    params: dict[str, Any],
    point: float,
    reps: Replicates,
    level: float,
    method: str,
    band: bool = True,
) -> Interval:
    """CI of spec.fn on the groups where `keep` is true (the runner's min_samples/min_share
    exclusion; apply it to each replicate with stats.select(keep) — selection commutes with the
    stratified draw). `point` is the value on the original data (for BCa's bias correction).
    BCa's acceleration comes from a jackknife computed from cells: leaving one row out of a
    (group, y_true, y_pred) cell changes one count, so each non-empty cell is one jackknife
    value weighted by its count — never a loop over rows.

    A value that is max − min or min ÷ max of per-group values (on the data and on every
    replicate: most gap and ratio metrics) gets the simultaneous band of
    :mod:`fairpolicy.stats.bands` whatever ``method`` asks (``band=False`` forces the
    asked method: the tests of the percentile and BCa machinery). BCa is used only on two
    compared groups (a smooth statistic, or the signed difference of a two-group gap);
    otherwise it falls back to the percentile interval with the reason. Without the band,
    the percentile/BCa quantiles are read at tails ÷ :data:`WIDEN` (unless ``band=False``).
    Every interval
    contains the point estimate: a percentile or BCa interval beside it is widened to it,
    with a note."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level}")
    n_b = reps.resamples

    def none(reason: str, valid: int = 0) -> Interval:
        return Interval(None, None, level, method, n_b, reps.seed, valid, reason=reason)

    why = unavailable(spec, stats) or reps.reason
    if why is not None:
        return none(why)
    stats = _needed(spec, stats)
    rv = replicate_values(spec, stats, keep, params, reps)
    ok = ~np.isnan(rv.values)
    valid = int(ok.sum())
    why = _lost_reason(rv, n_b) or _undefined_reason(
        rv.undefined, rv.differ, n_b, "bootstrap replicates"
    )
    if why is not None or valid == 0:
        return none(why or "no replicate has a value", valid)
    v = rv.values[ok]
    gv = rv.groups[ok]
    alpha = (1.0 - level) / 2.0
    points = [gvv.value for gvv in rv.base.groups if gvv.value is not None]
    widened: str | None = None
    if band:
        got = _band(spec, rv, ok, point, level, method, reps, valid)
        if got is not None:
            return got
        alpha /= WIDEN
        widened = (
            f"quantiles at the {1.0 - 2.0 * alpha:.3g} level for the reported {level:.3g} "
            f"(tails ÷ {WIDEN:g}: the {method} interval of this statistic under-covers "
            "its upper end at small n; conservative)"
        )

    def percentile(note: str | None = None) -> Interval:
        note = "; ".join(x for x in (widened, note) if x) or None
        lo, hi = _quantiles(v, alpha, 1.0 - alpha)
        groups = {
            name: _quantiles(gv[:, i], alpha, 1.0 - alpha) for i, name in enumerate(rv.compared)
        }
        return _holding(
            Interval(lo, hi, level, "percentile", n_b, reps.seed, valid, groups=groups, note=note),
            point,
        )

    if method == "percentile":
        return percentile()
    if len(rv.compared) > 2:
        return percentile(
            f"BCa not available: the value has {len(rv.compared)} groups, and BCa is offered "
            "only on at most two: over more groups most values are a maximum or minimum over "
            "them, which is not the smooth statistic BCa's bias correction and acceleration "
            "assume; percentile interval reported"
        )
    jack = jackknife(spec, stats, keep, params, rv.compared, reps.seed)
    if isinstance(jack, str):
        return percentile(f"BCa not available ({jack}); percentile interval reported")
    signed = _signed_gap(point, points, v, gv, jack)
    if signed is not None:
        v_used, point_used, jack_values = signed
    else:
        v_used, point_used, jack_values = v, point, None
    a = acceleration(jack, jack_values)
    levels = bca_levels(v_used, point_used, a, 1.0 - 2.0 * alpha)
    if isinstance(levels, str):
        return percentile(f"BCa not available ({levels}); percentile interval reported")
    lo, hi = _quantiles(v_used, levels[0], levels[1])
    if signed is not None:
        lo, hi = _fold(lo, hi)
    groups: dict[str, tuple[float, float]] = {}
    for i, name in enumerate(rv.compared):
        lv = bca_levels(
            gv[:, i], float(points[i]), acceleration(jack, jack.groups[:, i]), 1.0 - 2.0 * alpha
        )
        groups[name] = (
            _quantiles(gv[:, i], alpha, 1.0 - alpha)
            if isinstance(lv, str)
            else _quantiles(gv[:, i], lv[0], lv[1])
        )
    notes = [widened] if widened else []
    if signed is not None:
        notes.append(
            f"BCa of the signed difference {rv.compared[0]} − {rv.compared[1]} (sign fixed by "
            "the data), folded through |·|"
        )
    if jack.grouped:
        notes.append(
            "BCa acceleration from a grouped jackknife (random blocks of rows; more than "
            f"{JACKKNIFE_MAX} cells)"
        )
    note = "; ".join(notes) or None
    return _holding(
        Interval(
            lo,
            hi,
            level,
            "bca",
            n_b,
            reps.seed,
            valid,
            groups=groups,
            note=note,
            z0=levels[2],
            acceleration=a,
        ),
        point,
    )


def _holding(iv: Interval, point: float) -> Interval:
    """``iv`` widened to contain the point estimate, with a note when it had to be.

    A percentile or BCa interval of a skewed or non-smooth statistic can lie entirely
    beside the point (its replicates sit on one side of it); a decision on such an
    interval would contradict the value it reports. Widening only makes it more
    conservative."""
    if iv.low is None or iv.high is None or iv.low <= point <= iv.high:
        return iv
    lo, hi = min(iv.low, point), max(iv.high, point)
    why = (
        f"the {iv.method} interval [{iv.low:.6g}, {iv.high:.6g}] lay beside the point "
        f"estimate {point:.6g} and was widened to it"
    )
    return dataclasses.replace(iv, low=lo, high=hi, note=f"{iv.note}; {why}" if iv.note else why)


def _band(
    spec: MetricSpec,
    rv: ReplicateValues,
    ok: NDArray[np.bool_],
    point: float,
    level: float,
    method: str,
    reps: Replicates,
    valid: int,
) -> Interval | None:
    """The simultaneous-band interval when the value is a max − min / min ÷ max / min / max
    form of per-group values on the data and on every defined replicate; None otherwise."""
    for form, coords in rv.forms.items():
        c = bands.usable(form, coords[ok])
        if c is None:
            continue
        layout = bands.layout_of(form, rv.base)
        parts = bands.parts_of(rv.base, form) or []
        pts = np.array([parts[i][g] for i, lay in enumerate(layout) for g in lay], np.float64)
        n = bands.rows_behind(form, rv.base, layout)
        unit = bool(
            spec.value_range[0] >= 0.0
            and spec.value_range[1] <= (len(form.parts) if form.combine == "sum" else 1.0)
            and not np.any((c < 0.0) | (c > 1.0))  # NaN: a value lost in a replicate
            and np.all((pts >= 0.0) & (pts <= 1.0))
        )
        if unit:
            rng, floor = (0.0, 1.0), 1.0 / n
        elif form.reduce == "ratio":
            rng, floor = (0.0, math.inf), np.zeros(len(n))
        else:
            rng, floor = (-math.inf, math.inf), np.zeros(len(n))
        bd = bands.sup_t(c, pts, level, floor, rng)
        lo, hi = bands.project(form, bd, [len(lay) for lay in layout])
        lo, hi = min(lo, point), max(hi, point)
        shown = bands.shown_part(form, rv.base)
        start = sum(len(lay) for lay in layout[:shown])
        groups = {
            g: (float(bd.low[start + i]), float(bd.high[start + i]))
            for i, g in enumerate(layout[shown])
        }
        asked = " (BCa was asked)" if method == "bca" else ""
        note = (
            f"simultaneous {level:.0%} sup-t band of the {len(pts)} per-group values "
            f"(critical value {bd.critical:.3g} standard errors), projected onto "
            f"{form.describe()}: percentile and BCa intervals are not valid for this "
            f"non-smooth statistic{asked}; conservative"
        )
        return Interval(
            lo, hi, level, "band", reps.resamples, reps.seed, valid, groups=groups, note=note
        )
    return None


def _signed_gap(
    point: float, points: Sequence[float | None], v: FloatArray, gv: FloatArray, jack: Jackknife
) -> tuple[FloatArray, float, FloatArray] | None:
    """(replicates, point, jackknife values) of the signed difference s·(θ_a − θ_b) when the
    metric is the gap |θ_a − θ_b| of two groups on the data, on every replicate and on every
    leave-one-out value; None otherwise.

    |θ_a − θ_b| is not smooth where the two values cross, which is where BCa fails (its z0
    turns negative as the replicates fold above the point; ``benchmarks/ci_coverage.py``
    measured 0.85–0.90 coverage at 1.4–2.4 standard errors). The signed difference with the
    sign s of the data's difference is smooth; BCa is computed on it and the interval [L, U]
    folded through |·| (:func:`_fold`), which contains |θ_a − θ_b| whenever [L, U] contains
    s·(θ_a − θ_b).
    """
    if len(points) != 2 or gv.shape[1] != 2 or jack.groups.shape[1] != 2:
        return None
    a, b = float(points[0] or 0.0), float(points[1] or 0.0)
    tol = 1e-9 * max(1.0, abs(a), abs(b))
    if abs(point - abs(a - b)) > tol:
        return None
    diff = gv[:, 0] - gv[:, 1]
    jdiff = jack.groups[:, 0] - jack.groups[:, 1]
    if not (
        np.allclose(v, np.abs(diff), rtol=0.0, atol=tol)
        and np.allclose(jack.values, np.abs(jdiff), rtol=0.0, atol=tol)
    ):
        return None
    sign = 1.0 if a >= b else -1.0
    return sign * diff, point, sign * jdiff


def _fold(lo: float, hi: float) -> tuple[float, float]:
    """The image of [lo, hi] under |·|."""
    if lo >= 0.0:
        return lo, hi
    if hi <= 0.0:
        return -hi, -lo
    return 0.0, max(-lo, hi)


# ---------------------------------------------------------------------------
# permutation test


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
        scores = _with_scores(stats.scores.columns, tables, None)
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
    scores = _with_scores(stats.scores.columns, tables, None)
    return dataclasses.replace(stats, counts=counts, scores=scores, secondary=None)


def _p_value(
    spec: MetricSpec,
    stats: GroupStats,
    params: Mapping[str, Any],
    observed: float,
    permutations: int,
    rng: np.random.Generator,
    stratum: Stratum = "rows",
) -> tuple[float | None, int, str | None]:
    """(p, defined permutations, reason when p is None)."""
    compared = _compared(spec.fn(stats, params))
    pooled = None
    if stats.scores is not None:
        cells, why = _cells_of(stats)
        if cells is None:
            return None, 0, why
        pooled, _ = _pool(cells, stats.num_classes)
    tol = TIE_TOLERANCE * max(1.0, abs(observed))
    extreme = undefined = differ = 0
    for _ in range(permutations):
        got = _read(spec.fn(_permuted(stats, rng, pooled, stratum), params), compared)
        if got == "undefined":
            undefined += 1
        elif got == "groups":
            differ += 1
        elif not isinstance(got, str):
            theta = got[0]
            if spec.better == "higher":
                extreme += theta <= observed + tol
            else:
                extreme += theta >= observed - tol
    valid = permutations - undefined - differ
    why = _undefined_reason(undefined, differ, permutations, "permutations")
    if why is not None or valid == 0:
        return None, valid, why or "no permutation has a value"
    return (1.0 + extreme) / (1.0 + valid), valid, None


def versus_rest(stats: GroupStats, g: int) -> GroupStats:
    """Two groups: group ``g`` and the union of every other group (``not <g>``)."""
    others = [h for h in range(len(stats.groups)) if h != g]
    counts = np.stack([stats.counts[g], stats.counts[others].sum(axis=0)])
    scores = None
    if stats.scores is not None:
        cells, why = _cells_of(stats)
        if cells is None:
            raise ValueError(why)
        k = stats.num_classes
        rest, _ = _pool([cells[h] for h in others], k)
        own = cells[g]
        tables = [own.tables(own.counts, k), rest.tables(rest.counts, k)]
        # the rest's tables keep every union value: re-key its joint cells to the kept ones
        joint = [own.joint(own.counts), _rekey(rest)]
        scores = _with_scores(stats.scores.columns, tables, joint)
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
    spec: MetricSpec,
    stats: GroupStats,
    params: dict[str, Any],
    point: float,
    permutations: int,
    seed: int,
    bonferroni: bool,
) -> Permutation:
    """Permutation test of the group labels within the metric's stratum
    (``spec.stratum(params)``: all rows, each actual class or each predicted class), done on
    counts: the pooled cells of each stratum are dealt back to the groups by a multivariate
    hypergeometric draw with the groups' sizes in that stratum. p = (1 + #{θ* ≥ θ}) / (1 + P)
    for a gap ("lower is better") metric; θ* ≤ θ for "higher is better" metrics (ratios).
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
    stats = _needed(spec, stats)
    if why is None and len(stats.groups) < 2:
        why = "a permutation test needs at least two groups"
    if why is None:
        why = _permutation_cost(stats, n_p)
    if why is not None or stratum is None:
        return Permutation(None, n_p, int(seed), reason=why, stratum=stratum, null_hypothesis=null)
    p, valid, why = _p_value(
        spec,
        stats,
        params,
        float(point),
        n_p,
        np.random.default_rng((seed, _PERMUTATION_STREAM)),
        stratum,
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
            rng = np.random.default_rng((seed, _PERMUTATION_STREAM, g + 1))
            pg, _, _ = _p_value(spec, two, params, observed, n_p, rng, stratum)
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
