"""Shared pieces of the metric registry's entries: input tuples, family parameters,
replacement lists, permutation strata and the spec builders of the binary and
any-K families (the entries themselves are in :mod:`fairpolicy.metrics.registry`).
"""

from __future__ import annotations

from typing import Any

from fairpolicy.metrics.base import MetricFn, MetricSpec, ParamSpec, Ref, Stratum, TaskKind

CLS = ("target", "prediction", "dimension")
#: metrics of the predictions alone (selection rates): they read the prediction, or the
#: target when no prediction is bound (a data audit of the labels' base rates, as
#: Venturalitica's ``disparate_impact`` on a dataset) — ``one_of`` these, plus the dimension
SELECTION = ("dimension",)
SELECTION_ONE_OF = ("prediction", "target")
#: values of all the compared rows (accuracy, Theil index …), not comparisons of groups:
#: the dimension is optional — bound, its groups decide which rows are compared
#: (``min_samples``) and give per-group details; unbound, every row is compared
POOLED = ("target", "prediction")
#: metrics of P(class) scores against the truth: the prediction is not read (when bound,
#: its labels join the class list)
SCORED = ("target", "dimension", "score")
BOTH: tuple[TaskKind, ...] = ("binary", "multiclass")
BINARY_ONLY: tuple[TaskKind, ...] = ("binary",)

#: ``multiclass_confusion_metrics``'s ``value`` choices and the F1 family's ``average``
#: choices: here, so that the registry is built without importing those families
CONFUSION_VALUES = (
    "worst_group_accuracy",
    "accuracy_gap",
    "min_class_recall",
    "min_class_precision",
)
AVERAGES = ("binary", "macro", "micro", "weighted")

#: the number of equal-width calibration bins when a control does not say
DEFAULT_BINS = 10

#: the ``n_bins`` parameter of the calibration metrics
N_BINS_PARAM = ParamSpec(
    "n_bins", int, DEFAULT_BINS, help="number of equal-width calibration bins on [0, 1]"
)

#: The ``aggregation`` parameter of the holisticai pairwise metrics.
PAIR_AGGREGATION = ParamSpec(
    "aggregation",
    str,
    "max",
    ("max", "mean"),
    "max: the worst pair of groups (holisticai aggregation_fun='max'); mean: the mean over "
    "all pairs (holisticai's default)",
)

#: rates ``disparity_ratio`` accepts; aequitas' names (pprev, precision) are synonyms
DISPARITY_RATES = (
    "selection_rate",
    "pprev",
    "ppr",
    "tpr",
    "tnr",
    "fpr",
    "fnr",
    "fdr",
    "for",
    "ppv",
    "precision",
    "npv",
    "accuracy",
    "error_rate",
    "prev",
)

#: default cut-offs of attention_parity and skew (the fairness-metrics tutorial's ``k_values``)
DEFAULT_K = "5,10,20"

#: the ``k`` parameter of attention_parity and skew
TOP_K = ParamSpec(
    "k",
    str,
    DEFAULT_K,
    help="top-k cut-off(s): one number or a comma list such as 5,10,20; value is the worst k",
)

AGGREGATION = ParamSpec(
    "aggregation", str, "max", ("max", "macro"), "max: worst class; macro: mean over classes"
)

DP_REPL = ("multiclass_demographic_parity", "weighted_f1_gap", "macro_f1_gap", "per_class_f1_gap")
EO_REPL = (
    "multiclass_equal_opportunity",
    "macro_equal_opportunity_multiclass",
    "weighted_f1_gap",
    "macro_f1_gap",
    "per_class_f1_gap",
)
PP_REPL = ("predictive_parity_multiclass", "per_class_f1_gap")
ACC_REPL = ("multiclass_confusion_metrics", "micro_equalized_odds_multiclass", "weighted_f1_gap")


#: permutation strata of the parameterised metrics (the compared rate decides)
CONFUSION_STRATA: dict[str, Stratum | None] = {
    "worst_group_accuracy": "rows",
    "accuracy_gap": "rows",
    "min_class_recall": None,  # pooled over the compared rows
    "min_class_precision": None,
}
DISPARITY_STRATA: dict[str, Stratum | None] = {
    **dict.fromkeys(("selection_rate", "pprev", "ppr", "accuracy", "error_rate", "prev"), "rows"),
    **dict.fromkeys(("tpr", "tnr", "fpr", "fnr"), "actual"),
    **dict.fromkeys(("fdr", "for", "ppv", "precision", "npv"), "predicted"),
}

#: RATES family parameters
ALPHA = ParamSpec(
    "alpha", float, 2.0, help="GE order: 1 = Theil, 0 = mean log deviation, 2 = half the CV²"
)
MIN_SHARE = ParamSpec(
    "min_share",
    float,
    0.02,
    help="categories under this share of the rows are reported but kept out (LL144: 2 %)",
)
COMPARATOR = ParamSpec(
    "comparator",
    str,
    "highest_above_min_share",
    ("highest_above_min_share", "highest"),
    "the impact ratio's comparator: the highest rate of the categories holding at least "
    "min_share of the rows (LL144's 2 % exclusion), or of all categories",
)
MIN_SHARE_SCOPE = ParamSpec(
    "min_share_scope",
    str,
    "category",
    ("category", "cell"),
    "category: an intersection cell is kept out when one of its categories is (how "
    "published LL144 audits read the 2 % rule); cell: each cell on its own share",
)
UNKNOWN_SELECTION = ParamSpec(
    "unknown_selection",
    str,
    "observed",
    ("observed", "free"),
    "bounds under unknown categories: observed = the unknowns' selected count is the "
    "data's; free = it is unknown too (any 0..U)",
)
AVERAGE = ParamSpec(
    "average",
    str,
    "binary",
    AVERAGES,
    "scikit-learn's average: binary (positive class), macro, micro or weighted",
)


def binary_spec(
    key: str,
    fn: MetricFn,
    summary: str,
    replacement: tuple[str, ...],
    aliases: tuple[str, ...] = (),
    *,
    ratio: bool = False,
    null_stratum: Stratum | None = "rows",
    selection: bool = False,
    value_range: tuple[float, float] = (0.0, 1.0),
) -> MetricSpec:
    return MetricSpec(
        key=key,
        fn=fn,
        summary=summary,
        inputs=SELECTION if selection else CLS,
        one_of=SELECTION_ONE_OF if selection else (),
        tasks=BINARY_ONLY,
        aliases=aliases,
        ideal=1.0 if ratio else 0.0,
        better="higher" if ratio else "lower",
        multiclass_replacement=replacement,
        example_operator=">=" if ratio else "<",
        example_threshold="0.8" if ratio else "0.1",
        batch=_batch(fn),
        null_stratum=null_stratum,
        value_range=value_range,
    )


def _batch(fn: MetricFn) -> Any:
    """The vectorised twin in ``binary.BATCH`` (None if there is none), imported on first use
    when the function is a reference (the registry passes :class:`Ref`)."""
    if isinstance(fn, Ref):
        return Ref(fn.module, fn.name, "fairpolicy.metrics.binary:BATCH")
    from fairpolicy.metrics import binary

    return binary.BATCH.get(fn)


def binary_score_spec(
    key: str,
    fn: MetricFn,
    summary: str,
    aliases: tuple[str, ...],
    null_stratum: Stratum | None = "rows",
) -> MetricSpec:
    """A binary metric of P(positive) scores (fairness-metrics tutorial's probabilistic family)."""
    return MetricSpec(
        key=key,
        fn=fn,
        summary=summary,
        inputs=SCORED,
        optional=("prediction",),
        tasks=BINARY_ONLY,
        multiclass_replacement=("multi_class_auc_gap",),
        needs_scores=True,
        aliases=aliases,
        null_stratum=null_stratum,
    )


def multi_spec(
    key: str,
    fn: MetricFn,
    summary: str,
    *,
    selection: bool = False,
    pooled: bool = False,
    **kw: Any,
) -> MetricSpec:
    """A spec for a metric defined for any K (multi-class, and binary as K = 2);
    ``selection``: a metric of the predictions alone (see :data:`SELECTION`); ``pooled``:
    a value of all compared rows, not a comparison (see :data:`POOLED`)."""
    if selection:
        kw.setdefault("one_of", SELECTION_ONE_OF)
    if pooled:
        kw.setdefault("optional", ("dimension",))
        kw.setdefault("groups_needed", 1)  # a value of the compared rows, one group or many
    inputs = SELECTION if selection else POOLED if pooled else CLS
    return MetricSpec(key=key, fn=fn, summary=summary, inputs=inputs, tasks=BOTH, **kw)
