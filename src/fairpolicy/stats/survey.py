"""Count tables under fractional (survey, importance) sample weights, and their bootstrap.

A whole-number weight is a row count (a row of weight 3 is three rows) and goes through
the ordinary integer tables. A fractional weight is not: the row is one sampled unit that
*stands for* w of the population. Its metric values are ratios of weighted sums — exactly
scikit-learn's ``sample_weight`` and fairlearn's ``sample_params`` — but its sample size is
the number of rows, and a bootstrap resamples rows, each keeping its weight.

:func:`build_survey_stats` builds, per requested grouping, the float table
``counts[g, t, p] = Σ weights`` and the resampling units of :class:`SurveyCells`: the
distinct (cell, weight) pairs of each group with their row counts, and the same sums
exactly (:mod:`fairpolicy.stats.exactsum`: the float weights are binary rationals), which
the metrics' exact values and so the decision at the threshold are computed from.
:func:`survey_counts` draws replicates: per group, Multinomial(n_g rows, rows_u / n_g)
over its units — exactly resampling the group's rows with replacement — then each
replicate's cell sums are the drawn row counts times the units' weights. Weights that
repeat share a unit; continuous weights give about one unit per row, so the cost is
O(B × rows), as for regression cells.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from fairpolicy.stats.bincount import IntArray
from fairpolicy.stats.counts import build_group_stats, row_groups
from fairpolicy.stats.exactsum import exact_bincount, exact_total
from fairpolicy.stats.groups import GroupStats, SurveyCells

FloatArray = NDArray[np.float64]

#: replicates × units drawn per multinomial call (memory of one chunk)
_CHUNK = 4_000_000
#: a multinomial over u units costs about u binomial draws, a row resample about n
#: random indices at a fraction of the cost each: with more than one unit per this many
#: rows, the rows are drawn by index instead (the same distribution)
_UNITS_PER_ROW = 8
_SURVEY_STREAM = 7


def build_survey_stats(
    true_codes: NDArray[np.integer],
    pred_codes: NDArray[np.integer],
    classes: tuple[str, ...],
    dimensions: dict[str, tuple[NDArray[np.integer], list[str]]],
    requests: Sequence[tuple[str, ...]],
    positive: int | None,
    rows: IntArray | None,
    sample_weights: FloatArray,
) -> dict[tuple[str, ...], GroupStats]:
    """:func:`~fairpolicy.stats.counts.build_group_stats` for entries of ``rows`` data rows
    (None: one each) that each weigh ``sample_weights``: float weighted tables with the
    rows kept as :class:`SurveyCells`."""
    k = len(classes)
    by_rows = build_group_stats(
        true_codes, pred_codes, classes, dimensions, requests, positive, rows
    )
    n_rows = np.ones(len(true_codes), dtype=np.int64) if rows is None else rows
    w = np.asarray(sample_weights, dtype=np.float64)
    cell = np.asarray(true_codes, dtype=np.int64) * k + np.asarray(pred_codes, dtype=np.int64)
    out: dict[tuple[str, ...], GroupStats] = {}
    for req, st in by_rows.items():
        g = len(st.groups)
        row = row_groups(dimensions, req, st.groups)
        ok = row >= 0
        gi, ci, wi, ri = row[ok], cell[ok], w[ok], n_rows[ok]
        unknown = float((w[~ok] * n_rows[~ok]).sum())
        order = np.lexsort((wi, ci, gi))
        gi, ci, wi, ri = gi[order], ci[order], wi[order], ri[order]
        new = np.ones(len(gi), dtype=bool)
        if len(gi) > 1:
            new[1:] = (np.diff(gi) != 0) | (np.diff(ci) != 0) | (wi[1:] != wi[:-1])
        start = np.flatnonzero(new)
        u_g, u_c, u_w = gi[start], ci[start], wi[start]
        u_r = np.add.reduceat(ri, start) if len(start) else ri[:0]
        flat = np.bincount(u_g * k * k + u_c, weights=u_w * u_r, minlength=g * k * k)
        # the same sums exactly (float addition rounds them): the decision's counts
        exact = exact_bincount(u_g * k * k + u_c, u_w, u_r, g * k * k)
        bounds = np.searchsorted(u_g, np.arange(g + 1))
        spans = [slice(bounds[i], bounds[i + 1]) for i in range(g)]
        units = tuple((u_c[s], u_w[s], u_r[s]) for s in spans)
        out[req] = dataclasses.replace(
            st,
            counts=flat.reshape(g, k, k),
            survey=SurveyCells(
                np.asarray(st.counts.sum(axis=(1, 2)), dtype=np.int64), units, unknown
            ),
            exact_counts=exact.reshape(g, k, k),
            exact_unknown=exact_total(w[~ok], n_rows[~ok]),
        )
    return out


def survey_counts(
    stats: GroupStats, resamples: int, seed: int, sizes: IntArray | None = None
) -> FloatArray:
    """(B, G, K·K) weighted cell sums of B replicates that resample each group's rows with
    replacement (``sizes`` (B, G): replicate b of group g draws ``sizes[b, g]`` rows,
    ``resample: rows``; else the group's own row count)."""
    assert stats.survey is not None
    k2 = stats.num_classes**2
    out = np.zeros((resamples, len(stats.groups), k2), dtype=np.float64)
    for g, (cell, weight, rows) in enumerate(stats.survey.units):
        n = int(rows.sum())
        if n == 0 or len(rows) == 0:
            continue
        rng = np.random.default_rng((seed, _SURVEY_STREAM, g))
        if len(rows) * _UNITS_PER_ROW > n:  # about a unit per row: draw row indices
            out[:, g] = _index_draws(rng, cell, weight, rows, resamples, k2, sizes, g)
            continue
        p = rows / n
        order = np.argsort(cell, kind="stable")
        starts = np.flatnonzero(np.r_[True, np.diff(cell[order]) != 0])
        targets = cell[order][starts]
        chunk = max(1, _CHUNK // len(rows))
        for lo in range(0, resamples, chunk):
            m = min(chunk, resamples - lo)
            drawn = (
                rng.multinomial(n, p, size=m)
                if sizes is None
                else rng.multinomial(sizes[lo : lo + m, g], p)
            )
            summed = np.add.reduceat((drawn * weight)[:, order], starts, axis=1)
            out[lo : lo + m, g, targets] = summed
    return out


def _index_draws(
    rng: np.random.Generator,
    cell: IntArray,
    weight: FloatArray,
    rows: IntArray,
    resamples: int,
    k2: int,
    sizes: IntArray | None,
    g: int,
) -> FloatArray:
    """(B, K·K) cell sums of B resamples of the group's rows drawn by index with
    replacement — the same distribution as the multinomial over units, at O(rows) per
    replicate when weights are continuous (about one unit per row)."""
    row_cell = np.repeat(cell, rows)
    row_weight = np.repeat(weight, rows)
    n = len(row_cell)
    out = np.zeros((resamples, k2), dtype=np.float64)
    for b in range(resamples):
        m = n if sizes is None else int(sizes[b, g])
        idx = rng.integers(0, n, m)
        out[b] = np.bincount(row_cell[idx], weights=row_weight[idx], minlength=k2)
    return out
