"""Which way a metric's value gets worse, for a change against a baseline (issues 18, 26).

The direction belongs to the *quantity measured*, which is the key together with the
parameters that pick the number (``multiclass_confusion_metrics`` with ``value:
accuracy_gap`` is a gap — lower is better — where its default ``worst_group_accuracy`` is
an accuracy — higher is better). :func:`resolve` reads it from a control's actual
parameters; nothing else may read ``spec.better`` to say better or worse.

Every parameter of every registry entry is declared here, once: either it selects the
quantity (:data:`SELECTS`: every allowed value with its direction) or it does not change
which way is better (:data:`SAME_DIRECTION`, with the reason). ``tests/metrics/
test_direction.py`` enumerates every key × every parameter × every allowed value and fails
on an undeclared one, so a new key or parameter cannot silently inherit the key's default.

For a key whose parameters select nothing, the direction comes from its registry entry:
when the ideal value lies strictly inside the metric's range (``disparity_ratio``: ideal 1
in (0, ∞)) a value gets worse as it moves away from the ideal (the badness is
|value − ideal|); otherwise ``better`` says it (``lower``: a gap, ``higher``: a ratio or a
score).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from fairpolicy.metrics.base import MetricSpec

Better = Literal["lower", "higher", "ideal"]
#: (which way is better, the ideal value when finite)
Direction = tuple[Better, float | None]

__all__ = [
    "SAME_DIRECTION",
    "SELECTS",
    "Better",
    "Direction",
    "UnknownDirection",
    "direction_text",
    "regression_direction",
    "resolve",
]

#: (key, parameter) → {allowed value → direction}: a parameter that picks which quantity
#: the control's value is, so it picks which way is better.
SELECTS: dict[tuple[str, str], dict[str, Direction]] = {
    ("multiclass_confusion_metrics", "value"): {
        "worst_group_accuracy": ("higher", 1.0),
        "accuracy_gap": ("lower", 0.0),
        "min_class_recall": ("higher", 1.0),
        "min_class_precision": ("higher", 1.0),
    },
}

#: parameters that change how the value is computed, never which way is better (by name,
#: on every key that takes it; a (key, name) in :data:`SELECTS` is never looked up here).
SAME_DIRECTION: dict[str, str] = {
    # the parameters every control takes (metrics.registry.COMMON_PARAMS)
    "min_samples": "which groups are compared, not what is measured",
    "missing": "which rows are read, not what is measured",
    "missing_values": "which cells are missing, not what is measured",
    "bins": "how a numeric dimension is cut into groups, not what is measured",
    "positive_label": "which class is positive; a gap stays a gap, a rate a rate",
    "positive_label.target": "which class is positive; a gap stays a gap, a rate a rate",
    "positive_label.prediction": "which class is positive; a gap stays a gap, a rate a rate",
    "num_classes": "the class count, not what is measured",
    "classes": "the class list, not what is measured",
    "weight_kind": "how rows are weighted, not what is measured",
    "min_share": "which groups are compared (NYC LL144's size rule)",
    "comparator": "which category's rate is the ratio's denominator: still a ratio to 1",
    "min_share_scope": "which intersection cells are compared (NYC LL144's size rule)",
    "unknown_selection": "how unknown-category rows bound the ratio, not what is measured",
    "ci": "an interval of the same value",
    "ci_level": "an interval of the same value",
    "ci_method": "an interval of the same value",
    "resample": "an interval of the same value",
    "decision": "how the value is decided, not what it is",
    "p_value": "a significance test of the same value",
    "bonferroni": "a significance test of the same value",
    "max_regression": "the allowed worsening, not what is measured",
    # the metric families' own parameters
    "aggregation": "every aggregation of per-class gaps (max, macro, mean) is a gap",
    "strategy": "every averaging strategy of per-class gaps is a gap",
    "average": "every average (binary, macro, micro, weighted) of a score is a score",
    "rate": "a ratio of any rate to the reference group's: 1 is ideal whatever the rate",
    "reference_group": "the ratio's denominator group: 1 is ideal whatever the group",
    "n_bins": "the calibration bins of the same gap",
    "alpha": "the generalized entropy index's order; every order is an inequality index",
    "step": "the cut-off step of the same divergence",
    "k": "the cut-offs of the same ranking measure",
}


class UnknownDirection(KeyError):
    """A parameter value that selects the quantity is not one the registry declares."""


def regression_direction(spec: MetricSpec) -> Direction:
    """The direction of ``spec``'s key when no parameter selects another quantity."""
    lo, hi = spec.value_range
    if lo < spec.ideal < hi:
        return "ideal", spec.ideal
    return spec.better, spec.ideal if math.isfinite(spec.ideal) else None


def _selector(spec: MetricSpec) -> tuple[str, dict[str, Direction]] | None:
    for p in spec.params:
        table = SELECTS.get((spec.key, p.name))
        if table is not None:
            return p.name, table
    return None


def resolve(spec: MetricSpec, params: Mapping[str, Any]) -> Direction:
    """The direction of the quantity ``spec`` measures under ``params`` (a control's
    parameters; a missing one takes its declared default). Raises
    :class:`UnknownDirection` for a selecting value the registry does not declare."""
    found = _selector(spec)
    if found is None:
        return regression_direction(spec)
    name, table = found
    declared = spec.param(name)
    chosen = params.get(name, None if declared is None else declared.default)
    if str(chosen) not in table:
        raise UnknownDirection(f"{spec.key} with {name}: {chosen!r} (allowed: {', '.join(table)})")
    return table[str(chosen)]


def direction_text(spec: MetricSpec) -> str:
    """One line for ``fairpolicy metrics show``."""
    found = _selector(spec)
    if found is None:
        worse = _worse(regression_direction(spec))
    else:
        name, table = found
        worse = "; ".join(f"{name}: {v} — {_worse(d)}" for v, d in table.items())
    return (
        f"change against a baseline (--baseline): worse when {worse}; max_regression δ fails "
        "a control worse by more than δ; with intervals on both runs the change's interval "
        "is the MOVER combination of the two (docs/statistics.md)"
    )


def _worse(d: Direction) -> str:
    better, ideal = d
    if better == "ideal" and ideal is not None:
        return f"the value moves away from {ideal:g} (|value − {ideal:g}| grows)"
    return "the value rises" if better == "lower" else "the value falls"
