"""Sufficient statistics and the statistics computed on them (layer L1).

This package only re-exports. Its modules, lowest first:

- :mod:`~fairpolicy.stats.bincount` — the weighted ``np.bincount`` every builder uses;
- :mod:`~fairpolicy.stats.scores`, :mod:`~fairpolicy.stats.regression`,
  :mod:`~fairpolicy.stats.ranking` — score cells, regression cells, ranking order;
- :mod:`~fairpolicy.stats.groups` — :class:`GroupStats` and group naming;
- :mod:`~fairpolicy.stats.counts` — the one-pass count-table builders;
- :mod:`~fairpolicy.stats.values` — what a statistic returns (``MetricValue``) and what
  the resampling code needs of a metric (:class:`~fairpolicy.stats.values.Statistic`);
- :mod:`~fairpolicy.stats.resample` — bootstrap draws per family (count tables, score
  cells, regression cells, ranking, rows);
- :mod:`~fairpolicy.stats.jackknife` — the cell (or grouped) jackknife behind BCa;
- :mod:`~fairpolicy.stats.bootstrap` — interval methods (percentile, BCa, the
  simultaneous band); :mod:`~fairpolicy.stats.permutation` — permutation tests;
  :mod:`~fairpolicy.stats.bands` — the simultaneous sup-t band projected onto gaps and ratios.

The resampling modules are not imported here (they are imported where an interval or a
p-value is asked for), and neither are ``scores``, ``regression`` and ``ranking`` until
one of their names is first read from this package (a check of binary or multi-class
controls never needs them; issue 17). Nothing in this package imports ``metrics``,
``data``, ``policy``, ``results``, ``runner`` or ``formatters``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from fairpolicy.stats.bincount import IntArray, weight_sum, weighted_bincount
from fairpolicy.stats.columns import ColumnCounts
from fairpolicy.stats.counts import (
    build_group_stats,
    confusion_counts,
    group_index,
    marginalize,
    row_groups,
)
from fairpolicy.stats.groups import (
    INTERSECTION_SEP,
    MISSING_GROUP,
    UNKNOWN_GROUP,
    GroupStats,
    SurveyCells,
    group_name,
)

if TYPE_CHECKING:
    from fairpolicy.stats.ranking import RankingStats
    from fairpolicy.stats.regression import (
        RegressionCells,
        RegressionStats,
        build_regression_stats,
        group_sums,
        regression_features,
    )
    from fairpolicy.stats.scores import JointCells, ScoreStats, build_score_stats

#: names re-exported from a module imported when one of them is first read
_LAZY = {
    "RankingStats": "ranking",
    "RegressionCells": "regression",
    "RegressionStats": "regression",
    "build_regression_stats": "regression",
    "group_sums": "regression",
    "regression_features": "regression",
    "JointCells": "scores",
    "ScoreStats": "scores",
    "build_score_stats": "scores",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(f"fairpolicy.stats.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'fairpolicy.stats' has no attribute '{name}'")


__all__ = [
    "INTERSECTION_SEP",
    "MISSING_GROUP",
    "UNKNOWN_GROUP",
    "ColumnCounts",
    "GroupStats",
    "IntArray",
    "JointCells",
    "RankingStats",
    "RegressionCells",
    "RegressionStats",
    "ScoreStats",
    "SurveyCells",
    "build_group_stats",
    "build_regression_stats",
    "build_score_stats",
    "confusion_counts",
    "group_index",
    "group_name",
    "group_sums",
    "marginalize",
    "regression_features",
    "row_groups",
    "weight_sum",
    "weighted_bincount",
]
