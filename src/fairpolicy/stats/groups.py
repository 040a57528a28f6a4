"""Sufficient statistics: per-group confusion count tables, built in one pass.

``GroupStats.counts[g, t, p]`` is the number of rows of group ``g`` whose true
class is ``t`` and predicted class is ``p``. Every classification metric is a
pure function of it. The table is built with one ``np.bincount`` over a
combined integer index; groups of a coarser dimension (``sex`` out of
``sex,race``) are sums over the intersectional cells (:func:`marginalize`).

Every builder takes optional row ``weights`` (int64, ≥ 1): a row of weight w
counts as w identical rows. Fractional (survey, importance) sample weights are not row
counts: their tables are float sums of weights, and :class:`SurveyCells` keeps the
rows themselves, which the bootstrap resamples (:mod:`fairpolicy.stats.survey`).
The DuckDB and Spark engines return the distinct tuples of the bound columns with
their row counts, so one weighted tuple stands for all its rows; the embedded path
passes ``None`` (every row weighs 1) and pays nothing for the option.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from fairpolicy.stats.bincount import IntArray
from fairpolicy.stats.columns import ColumnCounts

if TYPE_CHECKING:  # the tables of score, regression and ranking bindings
    from fairpolicy.stats.ranking import RankingStats
    from fairpolicy.stats.regression import RegressionStats
    from fairpolicy.stats.scores import ScoreStats

#: Name of the pseudo-group holding rows whose dimension value is missing. No real
#: group renders to it: :func:`group_name` quotes a group whose value is this text.
MISSING_GROUP = "(missing)"
#: the former name of :data:`MISSING_GROUP` (a real group may be called ``unknown``)
UNKNOWN_GROUP = MISSING_GROUP

#: Separator between column values in the name of an intersectional group.
INTERSECTION_SEP = " & "


def group_name(key: Sequence[str]) -> str:
    """The displayed name of a group from its values, one per dimension column.

    Values are joined by `` & ``. The rendering is unambiguous (two different keys never
    give one name): a value is written as a JSON string literal when it could be mistaken
    — it is the missing bucket's name ``(missing)``, starts with a quote, holds an ``&``
    in an intersection, or is not in Unicode NFC (then escaped as ``\\uXXXX``, so NFC and
    NFD forms of one name do not look alike).
    """
    import json
    import unicodedata

    parts = []
    for value in key:
        nfc = unicodedata.is_normalized("NFC", value)
        if (
            value == MISSING_GROUP
            or value.startswith('"')
            or (len(key) > 1 and "&" in value)
            or not nfc
        ):
            parts.append(json.dumps(value, ensure_ascii=not nfc))
        else:
            parts.append(value)
    return INTERSECTION_SEP.join(parts)


@dataclass(frozen=True, eq=False)
class SurveyCells:
    """The rows behind a table of fractional sample weights, as resampling units.

    Group g's rows are ``units[g] = (cell, weight, rows)``: ``rows[i]`` data rows of
    count-table cell ``cell[i]`` (``t·K + p``), each weighing ``weight[i]``. A replicate
    resamples the group's rows (``rows_n[g]`` of them) and sums the drawn rows' weights
    into the cells, so ``counts[g]`` is the sum over units of rows × weight.
    """

    #: data rows per group (the sample size: ``min_samples`` and the reports count these)
    rows_n: IntArray
    units: tuple[tuple[IntArray, NDArray[np.float64], IntArray], ...]
    #: the total weight of the rows without a group (``unknown_n`` counts them)
    unknown_weight: float = 0.0

    def select(self, idx: NDArray[np.intp]) -> SurveyCells:
        return SurveyCells(
            self.rows_n[idx], tuple(self.units[i] for i in idx.tolist()), self.unknown_weight
        )


@dataclass(frozen=True, eq=False)
class GroupStats:
    """Sufficient statistics per group for one (inputs, dimension) binding.

    Classification bindings fill ``counts`` (and ``scores`` when a metric reads
    scores); regression and ranking bindings leave ``classes`` empty and carry
    ``sizes`` with ``regression`` or ``ranking``.
    """

    #: the dimension columns, e.g. ``("sex", "race")``
    dimension: tuple[str, ...]
    #: group names, one per first axis of ``counts`` (intersections joined by `` & ``)
    groups: tuple[str, ...]
    #: class labels as strings, in index order
    classes: tuple[str, ...]
    #: int64 array of shape (G, K, K): [group, y_true, y_pred]
    counts: IntArray
    #: index of the positive class for binary metrics (``None`` when not binary-ready)
    positive: int | None = None
    #: rows whose dimension value is missing (not part of any group)
    unknown_n: int = 0
    #: their (y_true, y_pred) counts, shape (K, K), when known (LL144 allocation bounds)
    unknown_counts: IntArray | None = None
    #: rows per group when there is no confusion table (regression, ranking)
    sizes: IntArray | None = None
    scores: ScoreStats | None = None
    regression: RegressionStats | None = None
    ranking: RankingStats | None = None
    #: each group's value in every dimension column, e.g. ``("F", "Black")``
    group_keys: tuple[tuple[str, ...], ...] = ()
    #: the same binding grouped by a second column (e.g. ``site`` for composites)
    secondary: GroupStats | None = None
    #: fractional sample weights: ``counts`` are float sums of weights, and these are
    #: the rows (:class:`SurveyCells`); None for unweighted or frequency-weighted counts
    survey: SurveyCells | None = None
    #: missing-value counts per column (the data-quality metrics: stats/columns.py)
    columns: ColumnCounts | None = None
    #: fractional sample weights: the exact sums behind ``counts`` (or ``sizes``), Python
    #: ints in units of 2**-1074 (:mod:`fairpolicy.stats.exactsum`), so ratios of them are
    #: decided exactly; None otherwise. A copy with other counts (a bootstrap replicate)
    #: must drop them: :attr:`exact_table` only offers them beside the table they sum.
    exact_counts: NDArray[Any] | None = None
    #: the exact total weight of the rows without a group, in the same unit
    exact_unknown: int = 0

    def __post_init__(self) -> None:
        g, k = len(self.groups), len(self.classes)
        if self.counts.shape != (g, k, k):
            raise ValueError(f"counts shape {self.counts.shape} != {(g, k, k)}")

    @property
    def n(self) -> IntArray:
        """Rows per group."""
        if self.sizes is not None:
            return self.sizes
        n: IntArray = self.counts.sum(axis=(1, 2))
        return n

    @property
    def rows_n(self) -> IntArray:
        """Data rows per group: :attr:`n` except under fractional sample weights, where
        :attr:`n` is the groups' total weight and this the sample size."""
        if self.survey is not None:
            return self.survey.rows_n
        return np.asarray(self.n, dtype=np.int64)

    @property
    def unknown_total(self) -> float:
        """The rows without a group in the unit of :attr:`n`: their count, or their total
        weight under fractional sample weights."""
        return self.survey.unknown_weight if self.survey is not None else self.unknown_n

    @property
    def exact_table(self) -> NDArray[Any] | None:
        """The count table (``sizes`` when there is none) as integers in proportion to the
        exact counts: the counts themselves when they are integers, the exact sums of the
        weights under fractional sample weights, else None. Ratios of its cells are the
        exact ratios of the counts."""
        table = self.sizes if self.sizes is not None else self.counts
        if self.exact_counts is not None and self.exact_counts.shape == table.shape:
            return self.exact_counts
        return table if np.issubdtype(table.dtype, np.integer) else None

    @property
    def exact_unknown_total(self) -> int:
        """:attr:`unknown_total` in the unit of :attr:`exact_table`."""
        return self.exact_unknown if self.exact_counts is not None else self.unknown_n

    @property
    def num_classes(self) -> int:
        return len(self.classes)

    @property
    def total(self) -> int:
        return int(self.counts.sum())

    def select(self, keep: NDArray[np.bool_]) -> GroupStats:
        """The same statistics restricted to the groups where ``keep`` is true."""
        idx = np.flatnonzero(keep)
        return GroupStats(
            dimension=self.dimension,
            groups=tuple(self.groups[i] for i in idx),
            classes=self.classes,
            counts=self.counts[idx],
            positive=self.positive,
            unknown_n=self.unknown_n,
            unknown_counts=self.unknown_counts,
            sizes=None if self.sizes is None else self.sizes[idx],
            scores=None if self.scores is None else self.scores.select(idx),
            regression=None if self.regression is None else self.regression.select(idx),
            ranking=None if self.ranking is None else self.ranking.select(idx, len(self.groups)),
            group_keys=tuple(self.group_keys[i] for i in idx) if self.group_keys else (),
            secondary=self.secondary,
            survey=None if self.survey is None else self.survey.select(idx),
            columns=self.columns,
            exact_counts=None if self.exact_counts is None else self.exact_counts[idx],
            exact_unknown=self.exact_unknown,
        )

    def with_extras(self, **extras: object) -> GroupStats:
        """The same statistics with score/regression/ranking parts attached."""
        import dataclasses

        return dataclasses.replace(self, **extras)  # type: ignore[arg-type]

    def binary(self) -> tuple[IntArray, IntArray, IntArray, IntArray]:
        """(tp, fp, fn, tn) per group, with ``positive`` as the positive class.

        With K > 2 classes the "negative" side pools every other class, which is
        only meaningful for one-vs-rest use; binary metrics refuse K > 2 earlier.
        """
        if self.positive is None:
            raise ValueError("positive class not set")
        c = self.counts
        p = self.positive
        tp = c[:, p, p]
        fn = c[:, p, :].sum(axis=1) - tp
        fp = c[:, :, p].sum(axis=1) - tp
        tn = c.sum(axis=(1, 2)) - tp - fn - fp
        return tp, fp, fn, tn
