"""Which way a metric's value gets worse, for a change against a baseline (issue 18).

Derived from the registry entry, for every key: when the ideal value lies strictly inside
the metric's range (``disparity_ratio``: ideal 1 in (0, ∞)), a value gets worse as it moves
away from the ideal (the badness is |value − ideal|); otherwise ``better`` says it
(``lower``: a gap, ``higher``: a ratio or a score).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from fairpolicy.metrics.base import MetricSpec

Better = Literal["lower", "higher", "ideal"]

__all__ = ["Better", "direction_text", "regression_direction"]


def regression_direction(spec: MetricSpec) -> tuple[Better, float | None]:
    """(which way is better, the ideal value when finite)."""
    lo, hi = spec.value_range
    if lo < spec.ideal < hi:
        return "ideal", spec.ideal
    return spec.better, spec.ideal if math.isfinite(spec.ideal) else None


def direction_text(spec: MetricSpec) -> str:
    """One line for ``fairpolicy metrics show``."""
    better, ideal = regression_direction(spec)
    if better == "ideal" and ideal is not None:
        worse = f"the value moves away from {ideal:g} (|value − {ideal:g}| grows)"
    else:
        worse = "the value rises" if better == "lower" else "the value falls"
    return (
        f"change against a baseline (--baseline): worse when {worse}; max_regression δ fails "
        "a control worse by more than δ; with intervals on both runs the change's interval "
        "is the MOVER combination of the two (docs/statistics.md)"
    )
