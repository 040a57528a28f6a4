"""The metric registry: a literal, grep-able dict from key to :class:`MetricSpec`.

Each entry declares the inputs it binds, the task kinds it accepts, its
parameters (with defaults and allowed values), its ideal value and direction.
The formula lives in the metric function's docstring (``fairpolicy metrics
show KEY`` prints it). ``lookup`` resolves aliases and suggests a close match
on a miss.
"""

from __future__ import annotations

import math

from fairpolicy.errors import did_you_mean
from fairpolicy.metrics.base import Family, MetricSpec, ParamSpec
from fairpolicy.metrics.families import (
    ACC_REPL,
    AGGREGATION,
    ALPHA,
    AVERAGE,
    BINARY_ONLY,
    BOTH,
    CLS,
    COMPARATOR,
    CONFUSION_STRATA,
    CONFUSION_VALUES,
    DISPARITY_RATES,
    DISPARITY_STRATA,
    DP_REPL,
    EO_REPL,
    MIN_SHARE,
    MIN_SHARE_SCOPE,
    N_BINS_PARAM,
    PAIR_AGGREGATION,
    POOLED,
    PP_REPL,
    SCORED,
    TOP_K,
    UNKNOWN_SELECTION,
    binary_score_spec,
    binary_spec,
    multi_spec,
)
from fairpolicy.metrics.privacy_specs import PRIVACY
from fairpolicy.metrics.quality_specs import QUALITY

# The metric families, imported when one of their functions is first read (``spec.fn``):
# a check imports only the families its controls use (issue 17, a lean start).
binary = Family("binary")
f1 = Family("f1")
holistic = Family("holistic")
multiclass = Family("multiclass")
performance = Family("performance")
ranking = Family("ranking")
rates = Family("rates")
regression = Family("regression")
scores = Family("scores")

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
    ParamSpec(
        "positive_label.target",
        str,
        None,
        help="the positive label of the target column when its labels differ from the "
        "prediction's (outcome: repaid/default; wins over positive_label for the target)",
    ),
    ParamSpec(
        "positive_label.prediction",
        str,
        None,
        help="the positive label of the prediction column when its labels differ from the "
        "target's (decision: approve/deny; wins over positive_label for the prediction)",
    ),
    ParamSpec("num_classes", int, None, help="declared number of classes K (labels 0..K-1)"),
    ParamSpec(
        "weight_kind",
        str,
        "auto",
        ("auto", "frequency", "survey"),
        "how input.weight is read: frequency (whole numbers, a row of weight w is w rows) or "
        "survey (rows are the sample, each standing for w); auto (default): frequency when "
        "every weight is a whole number, else survey",
    ),
    ParamSpec(
        "classes",
        str,
        None,
        help="the class labels, comma-separated, in the order of the score columns "
        "(classes: nevus,melanoma pairs p_0 with nevus); labels outside it are an error",
    ),
    ParamSpec(
        "min_share",
        float,
        None,
        help="groups holding less than this share of the rows are excluded and reported "
        "(e.g. 0.02, as NYC LL144 allows)",
    ),
    ParamSpec("ci", int, 0, help="bootstrap resamples for a confidence interval (0 = none)"),
    ParamSpec("ci_level", float, 0.95, help="confidence level of the interval"),
    ParamSpec(
        "ci_method",
        str,
        "percentile",
        ("percentile", "bca"),
        "interval method (gaps and ratios over groups always get the simultaneous band)",
    ),
    ParamSpec(
        "resample",
        str,
        "stratified",
        ("stratified", "rows"),
        "stratified: rows resampled within each group (group sizes fixed; the interval is "
        "conditional on them); rows: all rows together (group sizes vary), for metrics that "
        "depend on group shares",
    ),
    ParamSpec(
        "decision",
        str,
        "point",
        ("point", "ci_upper", "ci_lower", "worst_case", "best_case"),
        "point: the value decides; ci_upper: pass only if the whole interval satisfies the "
        "threshold; ci_lower: fail only if the whole interval violates it; worst_case / "
        "best_case (LL144 impact ratios): fail when any allocation of the unknown-category "
        "rows violates the threshold / pass when some allocation satisfies it",
    ),
    ParamSpec("p_value", int, 0, help="permutations for a p-value of the gap (0 = none)"),
    ParamSpec(
        "bonferroni",
        bool,
        False,
        help="Bonferroni-adjust per-group p-values (family = the groups; two groups are one test)",
    ),
    ParamSpec(
        "missing_values",
        str,
        None,
        help="comma-separated values that count as missing in the dimension/site columns, "
        "besides an empty cell or a null (e.g. 'NA, N/A'); by default 'NA', 'null', 'nan' "
        "are group names",
    ),
    ParamSpec(
        "max_regression",
        float,
        None,
        help="with --baseline: fail when the value got worse than the baseline's by more "
        "than this (≥ 0; the decision rule applies to the change's interval)",
    ),
)


REGISTRY: dict[str, MetricSpec] = {
    # ---- binary (the fairness-metrics tutorial's table, fairlearn conventions) ----
    "demographic_parity_diff": binary_spec(
        "demographic_parity_diff",
        binary.demographic_parity_diff,
        "max − min selection rate P(Ŷ=1|A=g)",
        DP_REPL,
        (
            "statistical_parity_difference",
            "demographic_parity_gap",
            "demographic_parity_difference",
        ),
        selection=True,
    ),
    "demographic_parity_ratio": binary_spec(
        "demographic_parity_ratio",
        binary.demographic_parity_ratio,
        "min / max selection rate (disparate impact, four-fifths rule)",
        DP_REPL,
        ("disparate_impact", "disparate_impact_ratio"),
        ratio=True,
        selection=True,
    ),
    "equal_opportunity_diff": binary_spec(
        "equal_opportunity_diff",
        binary.equal_opportunity_diff,
        "max − min true positive rate",
        EO_REPL,
        ("equal_opportunity_gap", "equal_opportunity_difference", "tpr_diff"),
        null_stratum="actual",
    ),
    "equalized_odds_diff": binary_spec(
        "equalized_odds_diff",
        binary.equalized_odds_diff,
        "max(TPR gap, FPR gap)",
        EO_REPL,
        ("equalized_odds_difference",),
        null_stratum="actual",
    ),
    "equalized_odds_ratio": binary_spec(
        "equalized_odds_ratio",
        binary.equalized_odds_ratio,
        "min(TPR min/max, FPR min/max) — fairlearn's meaning",
        EO_REPL,
        ratio=True,
        null_stratum="actual",
    ),
    "average_odds_diff": binary_spec(
        "average_odds_diff",
        binary.average_odds_diff,
        "(TPR gap + FPR gap) / 2",
        EO_REPL,
        ("average_odds_difference", "average_abs_odds_difference"),
        null_stratum="actual",
    ),
    "predictive_parity_diff": binary_spec(
        "predictive_parity_diff",
        binary.predictive_parity_diff,
        "max − min precision (PPV)",
        PP_REPL,
        ("predictive_parity", "ppv_diff"),
        null_stratum="predicted",
    ),
    "fpr_diff": binary_spec(
        "fpr_diff",
        binary.fpr_diff,
        "max − min false positive rate",
        EO_REPL,
        ("false_positive_rate_difference",),
        null_stratum="actual",
    ),
    "fnr_diff": binary_spec(
        "fnr_diff",
        binary.fnr_diff,
        "max − min false negative rate",
        EO_REPL,
        ("false_negative_rate_difference",),
        null_stratum="actual",
    ),
    "accuracy_diff": binary_spec(
        "accuracy_diff",
        binary.accuracy_diff,
        "max − min accuracy",
        ACC_REPL,
        ("accuracy_difference",),
    ),
    # ---- multi-class (Venturalitica) ----
    "multiclass_demographic_parity": multi_spec(
        "multiclass_demographic_parity",
        multiclass.multiclass_demographic_parity,
        "per-class prediction-rate gap, max or mean over classes",
        selection=True,
        params=(AGGREGATION,),
        example_threshold="0.15",
    ),
    "multiclass_equal_opportunity": multi_spec(
        "multiclass_equal_opportunity",
        multiclass.multiclass_equal_opportunity,
        "worst per-class recall (TPR) gap",
        example_threshold="0.15",
        null_stratum="actual",
    ),
    "multiclass_confusion_metrics": multi_spec(
        "multiclass_confusion_metrics",
        multiclass.multiclass_confusion_metrics,
        "per-class precision/recall and per-group accuracy; thresholds `value`",
        params=(
            ParamSpec(
                "value",
                str,
                "worst_group_accuracy",
                CONFUSION_VALUES,
                "which number the threshold applies to",
            ),
        ),
        ideal=1.0,
        better="higher",
        example_operator=">=",
        example_threshold="0.7",
        null_stratum=("value", CONFUSION_STRATA),
    ),
    "weighted_demographic_parity_multiclass": multi_spec(
        "weighted_demographic_parity_multiclass",
        multiclass.weighted_demographic_parity_multiclass,
        "demographic parity with strategy macro|micro|one-vs-rest|weighted",
        selection=True,
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
    "macro_equal_opportunity_multiclass": multi_spec(
        "macro_equal_opportunity_multiclass",
        multiclass.macro_equal_opportunity_multiclass,
        "unweighted mean of per-class recall (TPR) gaps",
        example_threshold="0.1",
        null_stratum="actual",
    ),
    "micro_equalized_odds_multiclass": multi_spec(
        "micro_equalized_odds_multiclass",
        multiclass.micro_equalized_odds_multiclass,
        "accuracy gap + error-rate gap (= 2 × accuracy gap)",
        value_range=(0.0, 2.0),
        example_threshold="0.2",
    ),
    "predictive_parity_multiclass": multi_spec(
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
        null_stratum=("strategy", {"macro": "predicted", "weighted": "rows"}),
    ),
    # ---- fmm-fairness-eval's F1 family ----
    "weighted_f1_gap": multi_spec(
        "weighted_f1_gap",
        f1.weighted_f1_gap,
        "max − min support-weighted F1 across groups",
        example_threshold="0.1",
    ),
    "macro_f1_gap": multi_spec(
        "macro_f1_gap",
        f1.macro_f1_gap,
        "max − min macro F1 across groups",
        example_threshold="0.1",
    ),
    "per_class_f1_gap": multi_spec(
        "per_class_f1_gap",
        f1.per_class_f1_gap,
        "worst per-class F1 gap across groups (with the per-class vector)",
        example_threshold="0.15",
    ),
    # ---- SCORES: fmm-fairness-eval's AUC/ECE/composite, eval-toolkit's calibration,
    # the fairness-metrics tutorial's probabilistic metrics ----
    "multi_class_auc_gap": MetricSpec(
        key="multi_class_auc_gap",
        fn=scores.multi_class_auc_gap,
        summary="max − min per-group AUC (binary on K=2, one-vs-rest macro on K>2)",
        tasks=BOTH,
        inputs=SCORED,
        optional=("prediction",),
        needs_scores=True,
        aliases=("multiclass_auc_gap", "ovr_auc_gap"),
        example_threshold="0.05",
        null_stratum="actual",
    ),
    "inter_site_auc_variance": MetricSpec(
        key="inter_site_auc_variance",
        fn=scores.inter_site_auc_variance,
        summary="population variance of the per-site AUC (K-aware); bind dimension to the site",
        tasks=BOTH,
        inputs=SCORED,
        optional=("prediction",),
        needs_scores=True,
        aliases=("site_auc_variance",),
        value_range=(0.0, 0.25),
        example_threshold="0.001",
        null_stratum="actual",
    ),
    "calibration_gap": MetricSpec(
        key="calibration_gap",
        fn=scores.calibration_gap,
        summary="max − min per-group ECE (fmm-fairness-eval: equal-width bins, last bin closed)",
        inputs=SCORED,
        optional=("prediction",),
        tasks=BINARY_ONLY,
        params=(N_BINS_PARAM,),
        multiclass_replacement=("weighted_f1_gap", "macro_f1_gap", "per_class_f1_gap"),
        needs_scores=True,
        aliases=("ece_gap_fmm",),
        example_threshold="0.05",
    ),
    "calibration_parity": MetricSpec(
        key="calibration_parity",
        fn=scores.calibration_parity,
        summary="max − min per-group ECE as eval-toolkit computes it (single-class groups out)",
        inputs=SCORED,
        optional=("prediction",),
        tasks=BINARY_ONLY,
        params=(N_BINS_PARAM,),
        multiclass_replacement=("weighted_f1_gap", "macro_f1_gap", "per_class_f1_gap"),
        needs_scores=True,
        aliases=("ece_gap", "ece_parity"),
        example_threshold="0.05",
    ),
    "samd_fairness_score": MetricSpec(
        key="samd_fairness_score",
        fn=scores.samd_fairness_score,
        summary=(
            "fmm-fairness-eval v0.2 composite: 1 − weighted F1-site, site-AUC, EO, DP, "
            "calibration gaps"
        ),
        tasks=BOTH,
        inputs=(*CLS, "score", "site"),
        needs_scores=True,
        secondary_role="site",
        ideal=1.0,
        better="higher",
        example_operator=">=",
        example_threshold="0.85",
    ),
    "score_parity": binary_score_spec(
        "score_parity",
        scores.score_parity,
        "max − min mean score P(positive)",
        ("mean_score_parity", "mean_score_gap"),
    ),
    "score_ks_statistic": binary_score_spec(
        "score_ks_statistic",
        scores.score_ks_statistic,
        "largest two-sample Kolmogorov–Smirnov distance between groups' scores",
        ("ks_statistic", "score_ks"),
    ),
    "brier_gap": binary_score_spec(
        "brier_gap",
        scores.brier_gap,
        "max − min per-group Brier score",
        ("brier_parity", "brier_score_gap"),
    ),
    "auc_gap": binary_score_spec(
        "auc_gap",
        scores.auc_gap,
        "max − min per-group ROC AUC (single-class groups excluded)",
        ("auc_parity", "roc_auc_gap"),
        null_stratum="actual",
    ),
    "balance_positive_class": binary_score_spec(
        "balance_positive_class",
        scores.balance_positive_class,
        "max − min mean score among actual positives",
        ("balance_positive", "balance_for_positive_class"),
        null_stratum="actual",
    ),
    "balance_negative_class": binary_score_spec(
        "balance_negative_class",
        scores.balance_negative_class,
        "max − min mean score among actual negatives",
        ("balance_negative", "balance_for_negative_class"),
        null_stratum="actual",
    ),
    # ---- HOLISTIC: holisticai multi-class pairwise metrics (metrics/holistic.py) ----
    "multiclass_statistical_parity": multi_spec(
        "multiclass_statistical_parity",
        holistic.multiclass_statistical_parity,
        "total-variation distance between groups' prediction-rate vectors, max|mean over pairs",
        selection=True,
        params=(PAIR_AGGREGATION,),
        example_threshold="0.1",
    ),
    "multiclass_equality_of_opportunity": multi_spec(
        "multiclass_equality_of_opportunity",
        holistic.multiclass_equality_of_opportunity,
        "mean over true classes of the TV distance between normalised confusion rows, "
        "max|mean over group pairs",
        params=(PAIR_AGGREGATION,),
        aliases=("multiclass_equality_of_opp",),
        example_threshold="0.1",
        null_stratum="actual",
    ),
    "multiclass_average_odds": multi_spec(
        "multiclass_average_odds",
        holistic.multiclass_average_odds,
        "TV distance between class-averaged normalised confusion rows, max|mean over group pairs",
        params=(PAIR_AGGREGATION,),
        example_threshold="0.1",
        null_stratum="actual",
    ),
    "multiclass_true_positive_difference": multi_spec(
        "multiclass_true_positive_difference",
        holistic.multiclass_true_positive_difference,
        "mean over classes of |TPR difference|, max|mean over group pairs",
        params=(PAIR_AGGREGATION,),
        aliases=("multiclass_true_rates", "multiclass_tpr_difference"),
        example_threshold="0.1",
        null_stratum="actual",
    ),
    "intersectional_disparity": multi_spec(
        "intersectional_disparity",
        holistic.intersectional_disparity,
        "max − min accuracy across intersectional slices (e.g. gender,age_group)",
        example_threshold="0.1",
    ),
    # ---- RATES: the fairness-metrics tutorial's binary extras, disparity ratios, LL144,
    # performance, data checks ----
    "calibration_diff": binary_spec(
        "calibration_diff",
        rates.calibration_diff,
        "the fairness-metrics tutorial's Calibration Diff: max − min PPV "
        "(same value as predictive_parity_diff)",
        PP_REPL,
        null_stratum="predicted",
    ),
    "fdr_diff": binary_spec(
        "fdr_diff",
        rates.fdr_diff,
        "max − min false discovery rate (= the PPV gap)",
        PP_REPL,
        ("false_discovery_rate_difference",),
        null_stratum="predicted",
    ),
    "for_diff": binary_spec(
        "for_diff",
        rates.for_diff,
        "max − min false omission rate",
        PP_REPL,
        ("false_omission_rate_difference",),
        null_stratum="predicted",
    ),
    "npv_diff": binary_spec(
        "npv_diff",
        rates.npv_diff,
        "max − min negative predictive value (= the FOR gap)",
        PP_REPL,
        ("negative_predictive_value_difference",),
        null_stratum="predicted",
    ),
    "tnr_diff": binary_spec(
        "tnr_diff",
        rates.tnr_diff,
        "max − min true negative rate (specificity; = the FPR gap)",
        EO_REPL,
        ("true_negative_rate_difference", "specificity_diff"),
        null_stratum="actual",
    ),
    "error_rate_diff": binary_spec(
        "error_rate_diff",
        rates.error_rate_diff,
        "max − min error rate (= the accuracy gap)",
        ACC_REPL,
        ("error_rate_difference",),
    ),
    "theil_index": MetricSpec(
        key="theil_index",
        fn=rates.theil_index,
        summary="Theil index of aif360's benefit ŷ − y + 1 over the compared rows",
        inputs=POOLED,
        optional=("dimension",),
        groups_needed=1,
        tasks=BINARY_ONLY,
        value_range=(0.0, math.inf),
        multiclass_replacement=ACC_REPL,
        example_threshold="0.1",
        null_stratum=None,
    ),
    "generalized_entropy_index": MetricSpec(
        key="generalized_entropy_index",
        fn=rates.generalized_entropy_index,
        summary="generalized entropy index GE(alpha) of aif360's benefit ŷ − y + 1",
        inputs=POOLED,
        optional=("dimension",),
        groups_needed=1,
        tasks=BINARY_ONLY,
        params=(ALPHA,),
        aliases=("generalized_entropy_error",),
        value_range=(0.0, math.inf),
        multiclass_replacement=ACC_REPL,
        example_threshold="0.1",
        null_stratum=None,
    ),
    "between_group_generalized_entropy_index": MetricSpec(
        key="between_group_generalized_entropy_index",
        fn=rates.between_group_generalized_entropy_index,
        summary="GE(alpha) with every benefit replaced by its group's mean (aif360)",
        inputs=CLS,
        tasks=BINARY_ONLY,
        params=(ALPHA,),
        aliases=("between_group_generalized_entropy_error",),
        value_range=(0.0, math.inf),
        multiclass_replacement=ACC_REPL,
        example_threshold="0.01",
    ),
    "between_group_theil_index": MetricSpec(
        key="between_group_theil_index",
        fn=rates.between_group_theil_index,
        summary="Theil index with every benefit replaced by its group's mean (aif360)",
        inputs=CLS,
        tasks=BINARY_ONLY,
        value_range=(0.0, math.inf),
        multiclass_replacement=ACC_REPL,
        example_threshold="0.01",
    ),
    "disparity_ratio": MetricSpec(
        key="disparity_ratio",
        fn=rates.disparity_ratio,
        summary="Aequitas disparity: the group rate / reference rate farthest from 1",
        inputs=CLS,
        tasks=BINARY_ONLY,
        params=(
            ParamSpec(
                "rate",
                str,
                "selection_rate",
                DISPARITY_RATES,
                "the per-group rate compared (pprev = selection_rate, precision = ppv; "
                "ppr = share of all predicted positives; prev = P(y=1))",
            ),
            ParamSpec(
                "reference_group",
                str,
                "majority",
                help="majority (largest group), min / max (lowest / highest rate), or a group name",
            ),
        ),
        aliases=("aequitas_disparity",),
        ideal=1.0,
        better="higher",
        value_range=(0.0, math.inf),
        multiclass_replacement=DP_REPL,
        example_operator="between",
        example_threshold="0.8,1.25",
        null_stratum=("rate", DISPARITY_STRATA),
    ),
    "impact_ratio": MetricSpec(
        key="impact_ratio",
        fn=rates.impact_ratio,
        summary="NYC LL144 impact ratio: category selection rate / highest, per column "
        "and intersection",
        inputs=("target", "dimension"),
        # the selection column is the target (LL144 audits selections); a bound prediction
        # is read instead
        optional=("prediction",),
        tasks=BINARY_ONLY,
        params=(MIN_SHARE, COMPARATOR, MIN_SHARE_SCOPE, UNKNOWN_SELECTION),
        aliases=("ll144_impact_ratio",),
        ideal=1.0,
        better="higher",
        min_samples_applies=False,
        multiclass_replacement=DP_REPL,
        example_operator=">=",
        example_threshold="0.8",
    ),
    "scoring_impact_ratio": MetricSpec(
        key="scoring_impact_ratio",
        fn=rates.scoring_impact_ratio,
        summary="NYC LL144 impact ratio on scoring rates (share above the median score)",
        inputs=("target", "score", "dimension"),
        tasks=BOTH,
        params=(MIN_SHARE, COMPARATOR, MIN_SHARE_SCOPE, UNKNOWN_SELECTION),
        aliases=("ll144_scoring_impact_ratio",),
        ideal=1.0,
        better="higher",
        min_samples_applies=False,
        needs_scores=True,
        example_operator=">=",
        example_threshold="0.8",
    ),
    "accuracy_score": multi_spec(
        "accuracy_score",
        performance.accuracy_score,
        "accuracy of the compared rows (not a gap)",
        pooled=True,
        ideal=1.0,
        better="higher",
        example_operator=">=",
        example_threshold="0.8",
        null_stratum=None,
    ),
    "precision_score": multi_spec(
        "precision_score",
        performance.precision_score,
        "precision of the compared rows, averaged as in scikit-learn (not a gap)",
        pooled=True,
        params=(AVERAGE,),
        ideal=1.0,
        better="higher",
        example_operator=">=",
        example_threshold="0.8",
        null_stratum=None,
    ),
    "recall_score": multi_spec(
        "recall_score",
        performance.recall_score,
        "recall of the compared rows, averaged as in scikit-learn (not a gap)",
        pooled=True,
        params=(AVERAGE,),
        ideal=1.0,
        better="higher",
        example_operator=">=",
        example_threshold="0.8",
        null_stratum=None,
    ),
    "f1_score": multi_spec(
        "f1_score",
        performance.f1_score,
        "F1 of the compared rows, averaged as in scikit-learn (not a gap)",
        pooled=True,
        params=(AVERAGE,),
        ideal=1.0,
        better="higher",
        example_operator=">=",
        example_threshold="0.8",
        null_stratum=None,
    ),
    "class_imbalance": MetricSpec(
        key="class_imbalance",
        fn=performance.class_imbalance,
        summary="smallest / largest class count of the target (Venturalitica)",
        inputs=("target",),
        optional=("dimension",),
        groups_needed=1,
        tasks=BOTH,
        ideal=1.0,
        better="higher",
        example_operator=">=",
        example_threshold="0.5",
        null_stratum=None,
    ),
    "group_min_positive_rate": MetricSpec(
        key="group_min_positive_rate",
        fn=performance.group_min_positive_rate,
        summary="lowest P(target = positive) across groups (Venturalitica; ideal ~0.5)",
        inputs=("target", "dimension"),
        tasks=BINARY_ONLY,
        ideal=0.5,
        better="higher",
        multiclass_replacement=("class_imbalance",),
        example_operator=">=",
        example_threshold="0.1",
    ),
    "min_group_share": MetricSpec(
        key="min_group_share",
        fn=performance.min_group_share,
        summary="smallest group's share of the rows (data governance, EU AI Act Art. 10)",
        inputs=("dimension",),
        tasks=("data",),
        kind="data",
        ideal=1.0,
        better="higher",
        example_operator=">=",
        example_threshold="0.05",
    ),
    "group_size": MetricSpec(
        key="group_size",
        fn=performance.group_size,
        summary="rows in the smallest group (data governance)",
        inputs=("dimension",),
        tasks=("data",),
        kind="data",
        ideal=math.inf,
        better="higher",
        value_range=(0.0, math.inf),
        example_operator=">=",
        example_threshold="100",
    ),
    **PRIVACY,
    **QUALITY,
    # ---- REGRESSION and RANKING: the fairness-metrics tutorial
    # (metrics/regression.py, metrics/ranking.py) ----
    "mean_prediction_parity": MetricSpec(
        key="mean_prediction_parity",
        fn=regression.mean_prediction_parity,
        summary="max − min mean prediction across groups (target units)",
        inputs=CLS,
        tasks=("regression",),
        aliases=("mean_prediction_difference", "mean_prediction_gap"),
        value_range=(0.0, float("inf")),
        kind="regression",
    ),
    "residual_parity": MetricSpec(
        key="residual_parity",
        fn=regression.residual_parity,
        summary="max − min mean residual y − ŷ across groups (target units)",
        inputs=CLS,
        tasks=("regression",),
        aliases=("mean_residual_difference", "residual_gap"),
        value_range=(0.0, float("inf")),
        kind="regression",
    ),
    "mae_parity": MetricSpec(
        key="mae_parity",
        fn=regression.mae_parity,
        summary="max − min mean absolute error across groups (target units)",
        inputs=CLS,
        tasks=("regression",),
        aliases=("mae_gap", "mean_absolute_error_difference"),
        value_range=(0.0, float("inf")),
        kind="regression",
    ),
    "rmse_parity": MetricSpec(
        key="rmse_parity",
        fn=regression.rmse_parity,
        summary="max − min root mean squared error across groups (target units)",
        inputs=CLS,
        tasks=("regression",),
        aliases=("rmse_gap", "root_mean_squared_error_difference"),
        value_range=(0.0, float("inf")),
        kind="regression",
    ),
    "exposure_ratio": MetricSpec(
        key="exposure_ratio",
        fn=ranking.exposure_ratio,
        summary="min / max per-item exposure, position discount 1/log2(i+1)",
        inputs=("dimension",),
        tasks=("ranking",),
        aliases=("disparate_exposure_ratio",),
        ideal=1.0,
        better="higher",
        kind="ranking",
        one_of=("rank", "score"),
        example_operator=">=",
        example_threshold="0.8",
    ),
    "ndkl": MetricSpec(
        key="ndkl",
        fn=ranking.ndkl,
        summary="normalised discounted KL divergence of every prefix's groups (Geyik et al.)",
        inputs=("dimension",),
        tasks=("ranking",),
        aliases=("normalized_discounted_kl_divergence",),
        value_range=(0.0, float("inf")),
        kind="ranking",
        one_of=("rank", "score"),
    ),
    "rkl": MetricSpec(
        key="rkl",
        fn=ranking.rkl,
        summary="discounted KL divergence at cut-offs 10, 20, … (Yang & Stoyanovich rKL)",
        inputs=("dimension",),
        tasks=("ranking",),
        params=(ParamSpec("step", int, 10, help="cut-offs at step, 2·step, … ≤ N (step ≥ 2)"),),
        aliases=("ranking_kl_divergence",),
        value_range=(0.0, float("inf")),
        kind="ranking",
        one_of=("rank", "score"),
    ),
    "attention_parity": MetricSpec(
        key="attention_parity",
        fn=ranking.attention_parity,
        summary="max |P(g | top k) − P(g)| over groups and k",
        inputs=("dimension",),
        tasks=("ranking",),
        params=(TOP_K,),
        aliases=("attention_parity_diff", "attention_parity_at_k"),
        kind="ranking",
        one_of=("rank", "score"),
    ),
    "skew": MetricSpec(
        key="skew",
        fn=ranking.skew,
        summary="min over groups and k of ln(P(g | top k) / P(g)) (MinSkew@k)",
        inputs=("dimension",),
        tasks=("ranking",),
        params=(TOP_K,),
        aliases=("skew_at_k", "min_skew_at_k"),
        better="higher",
        value_range=(float("-inf"), 0.0),
        kind="ranking",
        one_of=("rank", "score"),
        example_operator=">=",
        example_threshold="-0.223",
    ),
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
