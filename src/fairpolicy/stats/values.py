"""What a statistic returns, and what resampling needs to know about the statistic.

Why this module exists (issue 17). The bootstrap and the permutation test evaluate a
metric on resampled :class:`~fairpolicy.stats.GroupStats`; they used to import
``MetricSpec``, ``MetricValue`` and ``Stratum`` from ``fairpolicy.metrics.base``, so the
``stats`` layer (L1) reached up into ``metrics`` (L2). The smallest honest change:

- the *value* types are statistical — a statistic's value per group and over groups
  (:class:`MetricValue`, :class:`GroupValue`, :class:`Excluded`), the permutation
  :data:`Stratum` and the signatures of a statistic (:data:`MetricFn`, :data:`BatchFn`).
  They move here unchanged; ``fairpolicy.metrics.base`` re-imports them, so every name
  it exported stays importable from there and is the same object.
- the *registry entry* ``MetricSpec`` (summary, inputs, tasks, params, aliases, docs
  examples, ...) is not statistical and stays in ``metrics``. Resampling reads only a
  few of its fields, which :class:`Statistic` lists as a ``typing.Protocol``:
  ``MetricSpec`` satisfies it structurally (mypy checks that at every call), and
  ``stats`` never names ``metrics``. No call site and no behaviour changes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal, Protocol

import numpy as np
from numpy.typing import NDArray

from fairpolicy.stats.groups import GroupStats

#: Where a permutation test permutes the group labels so that its null hypothesis is the
#: metric's own: ``rows`` — over all compared rows (H0: the groups are interchangeable);
#: ``actual`` — within each actual class (H0: the same distribution of predictions and
#: scores given the actual class in every group; base rates may differ); ``predicted`` —
#: within each predicted class (H0: the same distribution of the actual class given the
#: prediction in every group; selection rates may differ).
Stratum = Literal["rows", "actual", "predicted"]


@dataclass(frozen=True)
class GroupValue:
    group: str
    n: int
    value: float | None


@dataclass(frozen=True)
class Excluded:
    group: str
    n: int
    reason: str


@dataclass(frozen=True)
class MetricValue:
    """What a metric returns: the headline value and everything behind it."""

    value: float | None
    groups: tuple[GroupValue, ...] = ()
    excluded: tuple[Excluded, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)
    #: why ``value`` is None (fewer than two comparable groups, ...)
    reason: str | None = None
    #: group with the least favourable per-group value, when there is one
    worst_group: str | None = None
    #: the exact rational behind ``value`` when the metric is a ratio of integer counts;
    #: ``value`` stays the float computation (the bootstrap and permutation replicates
    #: compute the same floats), the decision compares ``exact`` and the reported value
    #: is ``float(exact)``
    exact: Fraction | None = None
    #: when ``value`` is None but part of it is known: the range [low, high] the value lies
    #: in whatever the unknown part is (an odds metric whose TPR part is known, FPR not).
    #: A range that violates the threshold throughout is a certain failure.
    bounds: tuple[float, float] | None = None
    #: multi-class metrics: per group, the rows behind each class's value in
    #: ``details["per_group"]`` (the rate's denominator) — the floor of the value's
    #: standard error in the band of ``stats/bands.py``; not reported
    cell_rows: dict[str, list[int]] | None = None


MetricFn = Callable[[GroupStats, Mapping[str, Any]], MetricValue]
BatchFn = Callable[
    [NDArray[np.int64], int],
    tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]],
]


class Statistic(Protocol):
    """The part of a metric's registry entry (``fairpolicy.metrics.base.MetricSpec``)
    that the bootstrap and the permutation test read."""

    @property
    def key(self) -> str: ...

    @property
    def fn(self) -> MetricFn: ...

    #: the vectorised twin of ``fn`` over count replicates, or None
    @property
    def batch(self) -> BatchFn | None: ...

    #: "classification", "regression", "ranking" or "data"
    @property
    def kind(self) -> str: ...

    @property
    def needs_scores(self) -> bool: ...

    @property
    def secondary_role(self) -> str | None: ...

    @property
    def value_range(self) -> tuple[float, float]: ...

    #: "lower" (a gap) or "higher" (a ratio)
    @property
    def better(self) -> str: ...

    def stratum(self, params: Mapping[str, Any]) -> Stratum | None: ...

    def null_hypothesis(self, params: Mapping[str, Any]) -> str: ...
