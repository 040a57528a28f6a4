"""The parameters every classification control accepts (:data:`COMMON_PARAMS`), kept
apart from the registry (``fairpolicy.metrics.registry`` re-exports them)."""

from __future__ import annotations

from fairpolicy.metrics.base import ParamSpec

__all__ = ["COMMON_PARAMS"]

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
        "survey (rows are the sample, each standing for w); auto (default, or unset): the "
        "survey reading, whatever the values (valid for either kind; every output says so)",
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
        "bins",
        str,
        None,
        help="cut a numeric dimension column into intervals that become its groups: edges "
        "such as 0,25,60,inf (bins [0, 25), [25, 60), [60, inf); the last bin is closed "
        "when its upper edge is finite), q4 for quartile bins, or COLUMN=SPEC;COLUMN=SPEC "
        "for an intersection; a value outside the edges is refused",
    ),
    ParamSpec(
        "max_regression",
        float,
        None,
        help="with --baseline: fail when the value got worse than the baseline's by more "
        "than this (≥ 0; the decision rule applies to the change's interval)",
    ),
)
