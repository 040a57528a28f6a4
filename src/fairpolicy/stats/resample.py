"""Bootstrap draws on the sufficient statistics, per family: count tables, score cells,
regression cells, ranking order (and whole-row resampling, ``resample: rows``).

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

Intervals computed from these draws are in :mod:`fairpolicy.stats.bootstrap`, the
permutation test in :mod:`fairpolicy.stats.permutation`. What a metric must provide is
:class:`fairpolicy.stats.values.Statistic`; nothing here imports ``metrics``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from fairpolicy.stats.groups import GroupStats
from fairpolicy.stats.ranking import RankingStats
from fairpolicy.stats.regression import RegressionStats
from fairpolicy.stats.scores import JointCells, ScoreStats
from fairpolicy.stats.values import MetricValue, Statistic

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: the share of undefined replicates (or permutations) above which there is no result
UNDEFINED_LIMIT = 0.05
#: score cells × replicates drawn up front (int32); above it, per replicate on demand
SCORE_DRAW_LIMIT = 10_000_000
#: replicates × resampling units (regression (y, ŷ) cells, ranked items) allowed; above it
#: there is no interval (the reason gives the cost) rather than a run that never ends
ROW_RESAMPLE_LIMIT = 200_000_000
#: replicates × regression cells drawn per multinomial call (memory of one chunk)
_REGRESSION_CHUNK = 4_000_000

#: stream salts: each (seed, salt, ...) tuple seeds its own generator
_SCORE_STREAM = 1
JACKKNIFE_STREAM = 2
PERMUTATION_STREAM = 3
_REGRESSION_STREAM = 4
_RANKING_STREAM = 5
_ROWS_STREAM = 6


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


def cells_of(stats: GroupStats) -> tuple[tuple[Cells, ...] | None, str | None]:
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


def with_scores(
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


def unavailable(spec: Statistic, stats: GroupStats, purpose: str = "interval") -> str | None:
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
    if stats.survey is not None and purpose == "permutation":
        return (
            f"permutation p-values are not available under survey sample weights "
            f"('{spec.key}'): the group labels of weighted rows would have to be permuted "
            "with their weights; use a bootstrap interval (ci), or declare weight_kind: "
            "frequency if a row of weight w stands for w identical rows (undeclared weights "
            "are read as survey weights)"
        )
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
        _, why = cells_of(stats)
        if why is not None:
            return why
    return None


def needed(spec: Statistic, stats: GroupStats) -> GroupStats:
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

    #: int64 (B, G, K, K): Multinomial(n_g, cells_g / n_g) per group; float64 sums of
    #: weights under fractional sample weights (:mod:`fairpolicy.stats.survey`)
    counts: np.ndarray
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
    n_g = stats.rows_n  # data rows (not the weight, under fractional sample weights)
    sizes = _row_sizes(np.random.default_rng((seed, _ROWS_STREAM)), n_g, b) if rows else None
    counts: np.ndarray
    if stats.survey is not None:  # fractional sample weights: resample the rows
        from fairpolicy.stats.survey import survey_counts

        counts = survey_counts(stats, b, int(seed), sizes).reshape(b, g, k, k)
    else:
        counts = _multinomial(rng, stats.counts.reshape(g, k * k), b, sizes).reshape(b, g, k, k)
    scores = None
    if stats.scores is not None:
        cells, why = cells_of(stats)
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


def replicate_groups(
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
        scores = with_scores(stats.scores.columns, tables, None)
    extras: dict[str, Any] = {}
    if reps.regression is not None:
        extras["regression"] = RegressionStats(reps.regression[b][idx])
    if reps.rank_positions is not None and stats.ranking is not None:
        order = _ranking_order(stats.ranking.order, reps.rank_positions, reps.seed, b)
        extras["ranking"] = RankingStats(order).select(idx, len(stats.groups))
    return dataclasses.replace(
        base, counts=counts, scores=scores, secondary=None, exact_counts=None, **extras
    )


def replicate(stats: GroupStats, reps: Replicates, b: int) -> GroupStats:
    """Replicate b as a GroupStats (same groups/classes/extras, resampled counts/scores).

    A second grouping (``secondary``) cannot be resampled and is dropped; the
    replicate's score statistics carry no joint cells.
    """
    idx = np.arange(len(stats.groups), dtype=np.int64)
    return replicate_groups(stats, stats, reps, b, idx)


# ---------------------------------------------------------------------------
# reading a metric value


def compared_groups(mv: MetricValue) -> tuple[str, ...]:
    """The groups with a defined per-group value, in order."""
    return tuple(gv.group for gv in mv.groups if gv.value is not None)


def read_value(mv: MetricValue, compared: tuple[str, ...]) -> tuple[float, FloatArray] | str:
    """(value, per-group values in ``compared`` order), or why the value does not count."""
    if mv.value is None or not math.isfinite(mv.value):
        return "undefined"
    if compared_groups(mv) != compared:
        return "groups"
    per = np.array([gv.value for gv in mv.groups if gv.value is not None], dtype=np.float64)
    return float(mv.value), per


def undefined_reason(undefined: int, differ: int, total: int, what: str) -> str | None:
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
