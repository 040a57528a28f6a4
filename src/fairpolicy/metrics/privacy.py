"""Privacy of a dataset over its quasi-identifiers (Venturalitica's HUDERIA templates).

The quasi-identifiers are bound as the dimension (``input.quasi_identifiers: age,zip`` is
read as ``input.dimension``), so each group is one combination of their values, and the
sensitive attribute as the target (``input.sensitive_attribute``/``input.sensitive``).
From the count table, in one pass like every other metric:

- ``k_anonymity`` (Sweeney 2002): k = min_g n_g, the size of the smallest group;
- ``l_diversity`` (distinct l-diversity, Machanavajjhala et al. 2007): l = min_g #{s : the
  sensitive value s occurs in g};
- ``t_closeness`` (Li, Li & Venkatasubramanian 2007) for a categorical sensitive
  attribute, whose Earth Mover's Distance under the equal ground distance is the
  total-variation distance: t = max_g ½ Σ_s |P(s | g) − P(s)|, P(s) over every row.

Every group counts, however small (small groups are what these measures are about:
``min_samples`` excludes none), and one group is enough. Rows with a missing
quasi-identifier value are no group (their count is in the details). Venturalitica's
``calc_k_anonymity``/``calc_l_diversity``/``calc_t_closeness`` compute the same values
(pandas ``groupby(...).size().min()``, ``nunique().min()``, the halved L1 distance).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from fairpolicy.metrics.base import GroupValue, MetricValue
from fairpolicy.stats import GroupStats

__all__ = ["k_anonymity", "l_diversity", "t_closeness"]


def _values(stats: GroupStats, values: list[float]) -> tuple[GroupValue, ...]:
    return tuple(GroupValue(g, int(stats.n[i]), values[i]) for i, g in enumerate(stats.groups))


def _sensitive(stats: GroupStats) -> np.ndarray:
    """(G, K) rows per group and sensitive value (the target's class)."""
    counts: np.ndarray = stats.counts.sum(axis=2)
    return counts


def k_anonymity(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """k-anonymity (Sweeney 2002): the size of the smallest quasi-identifier group.

    value = k = min_g n_g   (higher is safer; a row unique on its quasi-identifiers gives 1)

    Equals Venturalitica's ``calc_k_anonymity``. ``details["unknown_n"]``: rows with a
    missing quasi-identifier value (no group). Records are counted: under fractional
    (survey) sample weights a group's k is its number of rows, not its total weight.
    """
    n = [float(v) for v in stats.rows_n]
    worst = stats.groups[int(np.argmin(n))] if n else None
    return MetricValue(
        float(min(n)) if n else None,
        _values(stats, n),
        (),
        {"unknown_n": stats.unknown_n, "groups": len(n)},
        reason=None if n else "no rows",
        worst_group=worst,
    )


def l_diversity(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Distinct l-diversity (Machanavajjhala et al. 2007): the fewest distinct values of
    the sensitive attribute in any quasi-identifier group.

    value = l = min_g #{s : n_{g,s} > 0}   (higher is safer; 1: a group discloses its value)

    Equals Venturalitica's ``calc_l_diversity`` (``groupby(...)[sensitive].nunique().min()``).
    """
    per = _sensitive(stats)
    distinct = [float((row > 0).sum()) for row in per]
    if not distinct:
        return MetricValue(None, (), (), {}, reason="no rows")
    return MetricValue(
        float(min(distinct)),
        _values(stats, distinct),
        (),
        {"sensitive_values": list(stats.classes), "unknown_n": stats.unknown_n},
        worst_group=stats.groups[int(np.argmin(distinct))],
    )


def t_closeness(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """t-closeness (Li, Li & Venkatasubramanian 2007) of a categorical sensitive attribute:
    the largest distance between a group's distribution of it and the whole table's.

    value = t = max_g ½ Σ_s |P(s | g) − P(s)|   (in [0, 1]; lower is safer)

    The Earth Mover's Distance with equal ground distance between categories is this
    total-variation distance. Equals Venturalitica's ``calc_t_closeness``.
    """
    per = _sensitive(stats).astype(np.float64)
    totals = per.sum(axis=1)
    if not len(per) or totals.sum() == 0:
        return MetricValue(None, (), (), {}, reason="no rows")
    overall = per.sum(axis=0) / totals.sum()
    dist = [
        0.5 * float(np.abs(row / tot - overall).sum()) if tot > 0 else 0.0
        for row, tot in zip(per, totals, strict=True)
    ]
    return MetricValue(
        float(max(dist)),
        _values(stats, dist),
        (),
        {
            "overall": {c: float(p) for c, p in zip(stats.classes, overall, strict=True)},
            "unknown_n": stats.unknown_n,
        },
        worst_group=stats.groups[int(np.argmax(dist))],
    )
