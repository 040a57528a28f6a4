"""The metric registry: a literal, grep-able dict from key to :class:`MetricSpec`.

Each entry declares the inputs it binds, the task kinds it accepts, its
parameters (with defaults and allowed values), its ideal value and direction.
The formula lives in the metric function's docstring (``fairpolicy metrics
show KEY`` prints it). ``lookup`` resolves aliases and suggests a close match
on a miss.
"""

from __future__ import annotations

from typing import Any

from fairpolicy.errors import did_you_mean
from fairpolicy.metrics import binary, f1, multiclass
from fairpolicy.metrics.base import MetricFn, MetricSpec, ParamSpec, TaskKind

CLS = ("target", "prediction", "dimension")
BOTH: tuple[TaskKind, ...] = ("binary", "multiclass")
BINARY_ONLY: tuple[TaskKind, ...] = ("binary",)

#: Parameters every classification control accepts; they shape binding and
#: exclusion rather than the formula, so metrics do not declare them.
COMMON_PARAMS: tuple[ParamSpec, ...] = (
    ParamSpec("min_samples", int, 30, help="groups with fewer rows are excluded and reported"),
    ParamSpec(
        "missing",
        str,
        "error",
        ("error", "drop"),
        "NaN in target/prediction: stop with an error, or drop those rows (counted)",
    ),
    ParamSpec(
        "positive_label", str, None, help="the positive class of a binary metric (default 1)"
    ),
    ParamSpec("num_classes", int, None, help="declared number of classes K (labels 0..K-1)"),
)

_AGGREGATION = ParamSpec(
    "aggregation", str, "max", ("max", "macro"), "max: worst class; macro: mean over classes"
)

_DP_REPL = ("multiclass_demographic_parity", "weighted_f1_gap", "macro_f1_gap", "per_class_f1_gap")
_EO_REPL = (
    "multiclass_equal_opportunity",
    "macro_equal_opportunity_multiclass",
    "weighted_f1_gap",
    "macro_f1_gap",
    "per_class_f1_gap",
)
_PP_REPL = ("predictive_parity_multiclass", "per_class_f1_gap")
_ACC_REPL = ("multiclass_confusion_metrics", "micro_equalized_odds_multiclass", "weighted_f1_gap")


def _binary(
    key: str,
    fn: MetricFn,
    summary: str,
    replacement: tuple[str, ...],
    aliases: tuple[str, ...] = (),
    *,
    ratio: bool = False,
) -> MetricSpec:
    return MetricSpec(
        key=key,
        fn=fn,
        summary=summary,
        inputs=CLS,
        tasks=BINARY_ONLY,
        aliases=aliases,
        ideal=1.0 if ratio else 0.0,
        better="higher" if ratio else "lower",
        multiclass_replacement=replacement,
        example_operator=">=" if ratio else "<",
        example_threshold="0.8" if ratio else "0.1",
    )


def _multi(key: str, fn: MetricFn, summary: str, **kw: Any) -> MetricSpec:
    """A spec for a metric defined for any K (multi-class, and binary as K = 2)."""
    return MetricSpec(key=key, fn=fn, summary=summary, inputs=CLS, tasks=BOTH, **kw)


REGISTRY: dict[str, MetricSpec] = {
    # ---- binary (seed 004 table, fairlearn conventions) ----
    "demographic_parity_diff": _binary(
        "demographic_parity_diff",
        binary.demographic_parity_diff,
        "max − min selection rate P(Ŷ=1|A=g)",
        _DP_REPL,
        (
            "statistical_parity_difference",
            "demographic_parity_gap",
            "demographic_parity_difference",
        ),
    ),
    "demographic_parity_ratio": _binary(
        "demographic_parity_ratio",
        binary.demographic_parity_ratio,
        "min / max selection rate (disparate impact, four-fifths rule)",
        _DP_REPL,
        ("disparate_impact", "disparate_impact_ratio"),
        ratio=True,
    ),
    "equal_opportunity_diff": _binary(
        "equal_opportunity_diff",
        binary.equal_opportunity_diff,
        "max − min true positive rate",
        _EO_REPL,
        ("equal_opportunity_gap", "equal_opportunity_difference", "tpr_diff"),
    ),
    "equalized_odds_diff": _binary(
        "equalized_odds_diff",
        binary.equalized_odds_diff,
        "max(TPR gap, FPR gap)",
        _EO_REPL,
        ("equalized_odds_difference",),
    ),
    "equalized_odds_ratio": _binary(
        "equalized_odds_ratio",
        binary.equalized_odds_ratio,
        "min(TPR min/max, FPR min/max) — fairlearn's meaning",
        _EO_REPL,
        ratio=True,
    ),
    "average_odds_diff": _binary(
        "average_odds_diff",
        binary.average_odds_diff,
        "(TPR gap + FPR gap) / 2",
        _EO_REPL,
        ("average_odds_difference", "average_abs_odds_difference"),
    ),
    "predictive_parity_diff": _binary(
        "predictive_parity_diff",
        binary.predictive_parity_diff,
        "max − min precision (PPV)",
        _PP_REPL,
        ("predictive_parity", "ppv_diff"),
    ),
    "fpr_diff": _binary(
        "fpr_diff",
        binary.fpr_diff,
        "max − min false positive rate",
        _EO_REPL,
        ("false_positive_rate_difference",),
    ),
    "fnr_diff": _binary(
        "fnr_diff",
        binary.fnr_diff,
        "max − min false negative rate",
        _EO_REPL,
        ("false_negative_rate_difference",),
    ),
    "accuracy_diff": _binary(
        "accuracy_diff",
        binary.accuracy_diff,
        "max − min accuracy",
        _ACC_REPL,
        ("accuracy_difference",),
    ),
    # ---- multi-class (seed 003) ----
    "multiclass_demographic_parity": _multi(
        "multiclass_demographic_parity",
        multiclass.multiclass_demographic_parity,
        "per-class prediction-rate gap, max or mean over classes",
        params=(_AGGREGATION,),
        example_threshold="0.15",
    ),
    "multiclass_equal_opportunity": _multi(
        "multiclass_equal_opportunity",
        multiclass.multiclass_equal_opportunity,
        "worst per-class recall (TPR) gap",
        example_threshold="0.15",
    ),
    "multiclass_confusion_metrics": _multi(
        "multiclass_confusion_metrics",
        multiclass.multiclass_confusion_metrics,
        "per-class precision/recall and per-group accuracy; thresholds `value`",
        params=(
            ParamSpec(
                "value",
                str,
                "worst_group_accuracy",
                multiclass.CONFUSION_VALUES,
                "which number the threshold applies to",
            ),
        ),
        ideal=1.0,
        better="higher",
        example_operator=">=",
        example_threshold="0.7",
    ),
    "weighted_demographic_parity_multiclass": _multi(
        "weighted_demographic_parity_multiclass",
        multiclass.weighted_demographic_parity_multiclass,
        "demographic parity with strategy macro|micro|one-vs-rest|weighted",
        params=(
            ParamSpec(
                "strategy",
                str,
                "macro",
                ("macro", "micro", "one-vs-rest", "weighted"),
                "how per-class gaps are combined (see formula)",
            ),
        ),
        example_threshold="0.15",
    ),
    "macro_equal_opportunity_multiclass": _multi(
        "macro_equal_opportunity_multiclass",
        multiclass.macro_equal_opportunity_multiclass,
        "unweighted mean of per-class recall (TPR) gaps",
        example_threshold="0.1",
    ),
    "micro_equalized_odds_multiclass": _multi(
        "micro_equalized_odds_multiclass",
        multiclass.micro_equalized_odds_multiclass,
        "accuracy gap + error-rate gap (= 2 × accuracy gap)",
        value_range=(0.0, 2.0),
        example_threshold="0.2",
    ),
    "predictive_parity_multiclass": _multi(
        "predictive_parity_multiclass",
        multiclass.predictive_parity_multiclass,
        "per-class precision (PPV) gap, worst class or prevalence-weighted",
        params=(
            ParamSpec(
                "strategy",
                str,
                "macro",
                ("macro", "weighted"),
                "macro: worst class; weighted: weighted by predicted-class share",
            ),
        ),
        example_threshold="0.15",
    ),
    # ---- seed 000 F1 family ----
    "weighted_f1_gap": _multi(
        "weighted_f1_gap",
        f1.weighted_f1_gap,
        "max − min support-weighted F1 across groups",
        example_threshold="0.1",
    ),
    "macro_f1_gap": _multi(
        "macro_f1_gap",
        f1.macro_f1_gap,
        "max − min macro F1 across groups",
        example_threshold="0.1",
    ),
    "per_class_f1_gap": _multi(
        "per_class_f1_gap",
        f1.per_class_f1_gap,
        "worst per-class F1 gap across groups (with the per-class vector)",
        example_threshold="0.15",
    ),
    # ---- SCORES: seed 000 AUC/ECE/composite, seed 002 calibration, seed 004 probabilistic ----
    # ---- HOLISTIC: seed 001 multi-class pairwise metrics (metrics/holistic.py) ----
    # ---- RATES: seed 004 binary extras, disparity ratios, LL144, performance, data checks ----
    # ---- REGRESSION and RANKING: seed 004 (metrics/regression.py, metrics/ranking.py) ----
}

#: alias → canonical key
ALIASES: dict[str, str] = {a: spec.key for spec in REGISTRY.values() for a in spec.aliases}


def all_names() -> list[str]:
    return sorted([*REGISTRY, *ALIASES])


def canonical(key: str) -> str | None:
    """The canonical registry key for ``key`` (itself or an alias), else None."""
    k = key.strip()
    if k in REGISTRY:
        return k
    return ALIASES.get(k)


def lookup(key: str) -> MetricSpec:
    """The spec for ``key``; KeyError with a did-you-mean message on a miss."""
    c = canonical(key)
    if c is None:
        raise KeyError(f"unknown metric_key '{key}'.{did_you_mean(key, all_names())}")
    return REGISTRY[c]
