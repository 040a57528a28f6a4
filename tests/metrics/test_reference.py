"""fairpolicy against values computed by the anchor libraries (``reference.json``).

``reference.json`` holds, per fixture, values computed by fairlearn, scikit-learn,
holisticai, aif360, aequitas and Venturalitica (see its ``_meta`` for the sign
conventions: aif360/holisticai report signed unprivileged − privileged
differences and unprivileged/privileged ratios; fairlearn reports max − min and
min / max, which is fairpolicy's convention).

Every reference key is accounted for, in exactly one of three tables:

- ``MAPPINGS``: where the definitions coincide, our value (or per-group values,
  or a detail) equals the reference to 1e-12, after a stated sign/ratio
  normalisation of the reference.
- ``DIFFERENCES`` (tested by the ``test_difference_*`` functions): deliberate
  differences in definition, each asserted as the exact relation that holds.
- ``UNMAPPED``: keys with no fairpolicy counterpart, with the reason.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fairpolicy.metrics.registry import lookup
from fairpolicy.results import Finding

TOL = 1e-12

BIN, MC3, MC6 = "binary_2g", "multiclass_3", "multiclass_6_2site"

# ---------------------------------------------------------------------------
# how to read our side (Finding -> comparable value)


def value(f: Finding) -> Any:
    """The headline value."""
    return f.value


def groups(f: Finding) -> dict[str, Any]:
    """Per-group values shown for the metric: {group: value}."""
    return {g.group: g.value for g in f.groups}


def group_n(f: Finding) -> dict[str, float]:
    """Per-group sizes: {group: n}."""
    return {g.group: float(g.n) for g in f.groups}


def total_n(f: Finding) -> float:
    return float(sum(g.n for g in f.groups))


def detail(*path: str | int) -> Callable[[Finding], Any]:
    """``details[path[0]][path[1]]...``."""

    def get(f: Finding) -> Any:
        out: Any = f.details
        for p in path:
            out = out[p]
        return out

    get.__name__ = "detail[" + "][".join(map(str, path)) + "]"
    return get


def per_group_class(k: int, key: str = "per_group") -> Callable[[Finding], dict[str, Any]]:
    """Column k of a per-group-per-class matrix in details: {group: value of class k}."""

    def get(f: Finding) -> dict[str, Any]:
        return {g: row[k] for g, row in f.details[key].items()}

    get.__name__ = f"{key}[:, {k}]"
    return get


def per_group_by_class(f: Finding) -> dict[str, dict[str, Any]]:
    """details["per_group"] as {group: {class label: value}}."""
    return {g: dict(zip(f.classes, row, strict=True)) for g, row in f.details["per_group"].items()}


def per_group_accuracy(f: Finding) -> dict[str, Any]:
    """multiclass_confusion_metrics: {group: accuracy}."""
    return {g: v["accuracy"] for g, v in f.details["per_group_performance"].items()}


def complement(get: Callable[[Finding], dict[str, Any]]) -> Callable[[Finding], dict[str, Any]]:
    """{group: 1 − v}: FDR = 1 − PPV, FOR = 1 − NPV, TNR = 1 − FPR."""

    def out(f: Finding) -> dict[str, Any]:
        return {g: 1.0 - v for g, v in get(f).items()}

    out.__name__ = f"1-{get.__name__}"
    return out


def one_minus(get: Callable[[Finding], float]) -> Callable[[Finding], float]:
    """1 − a scalar: overall FPR = 1 − recall of the negative class."""

    def out(f: Finding) -> float:
        return 1.0 - get(f)

    out.__name__ = f"1-{get.__name__}"
    return out


def ratio_of(get: Callable[[Finding], dict[str, Any]]) -> Callable[[Finding], float]:
    """min / max over the groups of a per-group dict."""

    def out(f: Finding) -> float:
        vals = list(get(f).values())
        return min(vals) / max(vals)

    out.__name__ = f"min/max {get.__name__}"
    return out


def mean_of(*gets: Callable[[Finding], Any]) -> Callable[[Finding], float]:
    def out(f: Finding) -> float:
        return sum(g(f) for g in gets) / len(gets)

    out.__name__ = "mean(" + ",".join(g.__name__ for g in gets) + ")"
    return out


# ---------------------------------------------------------------------------
# how to normalise the reference side (sign conventions of _meta)


def same(v: Any) -> Any:
    return v


def absval(v: float) -> float:
    """aif360/holisticai signed differences (unprivileged − privileged) → |.|."""
    return abs(v)


def sym_ratio(v: float) -> float:
    """unprivileged/privileged ratio → min/max (fairlearn's symmetric ratio)."""
    return min(v, 1.0 / v)


def disparity_ratio(v: Mapping[str, float]) -> float:
    """aequitas disparities (rate_g / rate_ref, ref = 1.0) → min_g rate / max_g rate."""
    return min(v.values()) / max(v.values())


def item(key: str) -> Callable[[Mapping[str, Any]], Any]:
    def get(v: Mapping[str, Any]) -> Any:
        return v[key]

    get.__name__ = f"[{key!r}]"
    return get


def by_class_str(v: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
    return {g: dict(row) for g, row in v.items()}


# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Mapping_:
    fixture: str
    ref_key: str
    metric: str
    dim: str
    params: tuple[tuple[str, Any], ...] = ()
    ours: Callable[[Finding], Any] = value
    ref: Callable[[Any], Any] = same

    @property
    def id(self) -> str:
        p = ",".join(f"{k}={v}" for k, v in self.params)
        return f"{self.fixture}|{self.ref_key}|{self.metric}({p})|{self.ours.__name__}"


def m(
    fixture: str,
    ref_key: str,
    metric: str,
    dim: str,
    params: Mapping[str, Any] | None = None,
    ours: Callable[[Finding], Any] = value,
    ref: Callable[[Any], Any] = same,
) -> Mapping_:
    return Mapping_(fixture, ref_key, metric, dim, tuple(sorted((params or {}).items())), ours, ref)


SEX_M = "sex,priv=M"
HAI = "group_a=sex==F,group_b=sex==M"
AEQ = "attr=sex"
EOR = "equalized_odds_ratio"
PPM = "predictive_parity_multiclass"
MDP = "multiclass_demographic_parity"
WDP = "weighted_demographic_parity_multiclass"
CONF = "multiclass_confusion_metrics"

#: (fixture, reference key, our metric key, dimension, params, our extraction, ref normalisation)
# fmt: off
MAPPINGS: list[Mapping_] = [
    # ---- binary_2g: fairlearn (max − min, min / max: our convention) ----
    m(BIN, "fairlearn:demographic_parity_difference[sf=sex,method=between_groups]",
      "demographic_parity_diff", "sex"),
    m(BIN, "fairlearn:demographic_parity_ratio[sf=sex,method=between_groups]",
      "demographic_parity_ratio", "sex"),
    m(BIN, "fairlearn:equal_opportunity_difference[sf=sex]", "equal_opportunity_diff", "sex"),
    m(BIN, "fairlearn:equal_opportunity_ratio[sf=sex]", EOR, "sex", ours=detail("tpr_ratio")),
    m(BIN, "fairlearn:equalized_odds_difference[sf=sex,agg=worst_case]",
      "equalized_odds_diff", "sex"),
    m(BIN, "fairlearn:equalized_odds_difference[sf=sex,agg=mean]", "average_odds_diff", "sex"),
    m(BIN, "fairlearn:equalized_odds_ratio[sf=sex,agg=worst_case]", EOR, "sex"),
    m(BIN, "fairlearn:equalized_odds_ratio[sf=sex,agg=mean]", EOR, "sex",
      ours=mean_of(detail("tpr_ratio"), detail("fpr_ratio"))),
    m(BIN, "fairlearn:MetricFrame.by_group[selection_rate,sf=sex]",
      "demographic_parity_diff", "sex", ours=groups),
    m(BIN, "fairlearn:MetricFrame.by_group[tpr,sf=sex]", "equal_opportunity_diff", "sex",
      ours=groups),
    m(BIN, "fairlearn:MetricFrame.by_group[fpr,sf=sex]", "fpr_diff", "sex", ours=groups),
    m(BIN, "fairlearn:MetricFrame.by_group[accuracy,sf=sex]", "accuracy_diff", "sex",
      ours=groups),
    m(BIN, "fairlearn:MetricFrame.by_group[count,sf=sex]", "accuracy_diff", "sex", ours=group_n),
    m(BIN, "fairlearn:MetricFrame.overall[sf=sex]", CONF, "sex", ref=item("tpr"),
      ours=detail("per_class_metrics", "1", "recall")),
    m(BIN, "fairlearn:MetricFrame.overall[sf=sex]", CONF, "sex", ref=item("fpr"),
      ours=one_minus(detail("per_class_metrics", "0", "recall"))),
    m(BIN, "fairlearn:MetricFrame.overall[sf=sex]", WDP, "sex", {"strategy": "weighted"},
      ref=item("selection_rate"), ours=detail("class_weights", 1)),
    m(BIN, "fairlearn:MetricFrame.overall[sf=sex]", CONF, "sex", ref=item("count"),
      ours=total_n),
    # ---- binary_2g: aif360 (signed unpriv − priv → |.|; unpriv/priv → min/max) ----
    m(BIN, f"aif360:ClassificationMetric.statistical_parity_difference[{SEX_M}]",
      "demographic_parity_diff", "sex", ref=absval),
    m(BIN, f"aif360:ClassificationMetric.disparate_impact[{SEX_M}]",
      "demographic_parity_ratio", "sex", ref=sym_ratio),
    m(BIN, f"aif360:ClassificationMetric.true_positive_rate_difference[{SEX_M}]",
      "equal_opportunity_diff", "sex", ref=absval),
    m(BIN, f"aif360:ClassificationMetric.false_negative_rate_difference[{SEX_M}]",
      "fnr_diff", "sex", ref=absval),
    m(BIN, f"aif360:ClassificationMetric.false_positive_rate_difference[{SEX_M}]",
      "fpr_diff", "sex", ref=absval),
    m(BIN, f"aif360:ClassificationMetric.false_positive_rate_ratio[{SEX_M}]", EOR, "sex",
      ours=detail("fpr_ratio"), ref=sym_ratio),
    m(BIN, f"aif360:ClassificationMetric.equalized_odds_difference[{SEX_M}]",
      "equalized_odds_diff", "sex"),
    m(BIN, f"aif360:ClassificationMetric.average_abs_odds_difference[{SEX_M}]",
      "average_odds_diff", "sex"),
    m(BIN, f"aif360:ClassificationMetric.average_odds_difference[{SEX_M}]",
      "average_odds_diff", "sex", ref=absval),
    m(BIN, f"aif360:ClassificationMetric.error_rate_difference[{SEX_M}]",
      "accuracy_diff", "sex", ref=absval),
    # |FDR_a − FDR_b| = |PPV_a − PPV_b|
    m(BIN, f"aif360:ClassificationMetric.false_discovery_rate_difference[{SEX_M}]",
      "predictive_parity_diff", "sex", ref=absval),
    m(BIN, f"aif360:ClassificationMetric.false_discovery_rate_ratio[{SEX_M}]",
      "predictive_parity_diff", "sex", ours=ratio_of(complement(groups)), ref=sym_ratio),
    # |FOR_a − FOR_b| = |NPV_a − NPV_b| = the class-0 precision gap
    m(BIN, f"aif360:ClassificationMetric.false_omission_rate_difference[{SEX_M}]",
      PPM, "sex", ours=detail("per_class_gap", 0), ref=absval),
    m(BIN, f"aif360:ClassificationMetric.false_omission_rate_ratio[{SEX_M}]", PPM, "sex",
      ours=ratio_of(complement(per_group_class(0))), ref=sym_ratio),
    m(BIN, f"aif360.sklearn:statistical_parity_difference[{SEX_M}]",
      "demographic_parity_diff", "sex", ref=absval),
    m(BIN, f"aif360.sklearn:disparate_impact_ratio[{SEX_M}]",
      "demographic_parity_ratio", "sex", ref=sym_ratio),
    m(BIN, f"aif360.sklearn:equal_opportunity_difference[{SEX_M}]",
      "equal_opportunity_diff", "sex", ref=absval),
    m(BIN, f"aif360.sklearn:average_odds_difference[{SEX_M}]", "average_odds_diff", "sex",
      ref=absval),
    m(BIN, f"aif360.sklearn:average_odds_error[{SEX_M}]", "average_odds_diff", "sex"),
    # ---- binary_2g: holisticai (group_a − group_b → |.|; a/b → min/max) ----
    m(BIN, f"holisticai:statistical_parity[{HAI}]", "demographic_parity_diff", "sex",
      ref=absval),
    m(BIN, f"holisticai:disparate_impact[{HAI}]", "demographic_parity_ratio", "sex",
      ref=sym_ratio),
    m(BIN, f"holisticai:four_fifths[{HAI}]", "demographic_parity_ratio", "sex", ref=sym_ratio),
    m(BIN, f"holisticai:equal_opportunity_diff[{HAI}]", "equal_opportunity_diff", "sex",
      ref=absval),
    m(BIN, f"holisticai:false_negative_rate_diff[{HAI}]", "fnr_diff", "sex", ref=absval),
    m(BIN, f"holisticai:false_positive_rate_diff[{HAI}]", "fpr_diff", "sex", ref=absval),
    m(BIN, f"holisticai:true_negative_rate_diff[{HAI}]", "fpr_diff", "sex", ref=absval),
    m(BIN, f"holisticai:average_odds_diff[{HAI}]", "average_odds_diff", "sex", ref=absval),
    m(BIN, f"holisticai:accuracy_diff[{HAI}]", "accuracy_diff", "sex", ref=absval),
    # holisticai multi-class metrics on two groups and two classes
    m(BIN, "holisticai:multiclass_statistical_parity[p_attr=sex,aggregation_fun=max]",
      WDP, "sex", {"strategy": "micro"}),
    m(BIN, "holisticai:multiclass_statistical_parity[p_attr=sex,aggregation_fun=mean]",
      WDP, "sex", {"strategy": "micro"}),
    m(BIN, "holisticai:multiclass_true_rates[p_attr=sex,aggregation_fun=max]",
      "macro_equal_opportunity_multiclass", "sex"),
    m(BIN, "holisticai:multiclass_true_rates[p_attr=sex,aggregation_fun=mean]",
      "macro_equal_opportunity_multiclass", "sex"),
    # ---- binary_2g: aequitas per-group rates and disparities (ref group F = 1.0) ----
    m(BIN, f"aequitas:Group.get_crosstabs[pprev,{AEQ}]", "demographic_parity_diff", "sex",
      ours=groups),
    m(BIN, f"aequitas:Group.get_crosstabs[tpr,{AEQ}]", "equal_opportunity_diff", "sex",
      ours=groups),
    m(BIN, f"aequitas:Group.get_crosstabs[fnr,{AEQ}]", "fnr_diff", "sex", ours=groups),
    m(BIN, f"aequitas:Group.get_crosstabs[fpr,{AEQ}]", "fpr_diff", "sex", ours=groups),
    m(BIN, f"aequitas:Group.get_crosstabs[tnr,{AEQ}]", "fpr_diff", "sex",
      ours=complement(groups)),
    m(BIN, f"aequitas:Group.get_crosstabs[precision,{AEQ}]", "predictive_parity_diff", "sex",
      ours=groups),
    m(BIN, f"aequitas:Group.get_crosstabs[fdr,{AEQ}]", "predictive_parity_diff", "sex",
      ours=complement(groups)),
    m(BIN, f"aequitas:Group.get_crosstabs[npv,{AEQ}]", PPM, "sex", ours=per_group_class(0)),
    m(BIN, f"aequitas:Group.get_crosstabs[for,{AEQ}]", PPM, "sex",
      ours=complement(per_group_class(0))),
    m(BIN, f"aequitas:Group.get_crosstabs[group_size,{AEQ}]", "demographic_parity_diff", "sex",
      ours=group_n),
    m(BIN, f"aequitas:Bias.get_disparity_major_group[pprev_disparity,{AEQ}]",
      "demographic_parity_ratio", "sex", ref=disparity_ratio),
    m(BIN, f"aequitas:Bias.get_disparity_major_group[tpr_disparity,{AEQ}]", EOR, "sex",
      ours=detail("tpr_ratio"), ref=disparity_ratio),
    m(BIN, f"aequitas:Bias.get_disparity_major_group[fpr_disparity,{AEQ}]", EOR, "sex",
      ours=detail("fpr_ratio"), ref=disparity_ratio),
    m(BIN, f"aequitas:Bias.get_disparity_major_group[fnr_disparity,{AEQ}]", "fnr_diff", "sex",
      ours=ratio_of(groups), ref=disparity_ratio),
    m(BIN, f"aequitas:Bias.get_disparity_major_group[tnr_disparity,{AEQ}]", "fpr_diff", "sex",
      ours=ratio_of(complement(groups)), ref=disparity_ratio),
    m(BIN, f"aequitas:Bias.get_disparity_major_group[precision_disparity,{AEQ}]",
      "predictive_parity_diff", "sex", ours=ratio_of(groups), ref=disparity_ratio),
    m(BIN, f"aequitas:Bias.get_disparity_major_group[fdr_disparity,{AEQ}]",
      "predictive_parity_diff", "sex", ours=ratio_of(complement(groups)), ref=disparity_ratio),
    m(BIN, f"aequitas:Bias.get_disparity_major_group[npv_disparity,{AEQ}]", PPM, "sex",
      ours=ratio_of(per_group_class(0)), ref=disparity_ratio),
    m(BIN, f"aequitas:Bias.get_disparity_major_group[for_disparity,{AEQ}]", PPM, "sex",
      ours=ratio_of(complement(per_group_class(0))), ref=disparity_ratio),
    # ---- binary_2g: fmm (fmm-fairness-eval implementation; both groups have n >= 20) ----
    m(BIN, "fmm:demographic_parity_gap[sex]", "demographic_parity_diff", "sex"),
    m(BIN, "fmm:demographic_parity_gap.per_group[sex]", "demographic_parity_diff", "sex",
      ours=groups),
    m(BIN, "fmm:equal_opportunity_gap[sex]", "equal_opportunity_diff", "sex"),
    m(BIN, "fmm:equal_opportunity_gap.per_group[sex]", "equal_opportunity_diff", "sex",
      ours=groups),
    # ---- binary_2g: Venturalitica ----
    m(BIN, "venturalitica:demographic_parity_diff[dimension=sex]",
      "demographic_parity_diff", "sex"),
    m(BIN, "venturalitica:equal_opportunity_diff[dimension=sex]",
      "equal_opportunity_diff", "sex"),
    m(BIN, "venturalitica:predictive_parity[dimension=sex]", "predictive_parity_diff", "sex"),
    m(BIN, "venturalitica:multiclass_demographic_parity[dimension=sex]", MDP, "sex"),
    m(BIN, "venturalitica:multiclass_equal_opportunity[dimension=sex]",
      "multiclass_equal_opportunity", "sex"),
    # ---- multiclass_3 (grp: three groups, K=3) ----
    m(MC3, "fairlearn:MetricFrame.by_group[accuracy,sf=grp]", CONF, "grp",
      ours=per_group_accuracy),
    m(MC3, "fairlearn:MetricFrame.by_group[accuracy,sf=grp]",
      "micro_equalized_odds_multiclass", "grp", ours=groups),
    m(MC3, "fairlearn:MetricFrame.difference[accuracy,sf=grp]", CONF, "grp",
      {"value": "accuracy_gap"}),
    # fairlearn used f1_score(labels=range(K), zero_division=0); every class occurs in
    # every group here (checked by test_f1_reference_groups_have_every_class), so the
    # label sets coincide
    m(MC3, "fairlearn:MetricFrame.by_group[macro_f1,sf=grp]", "macro_f1_gap", "grp",
      ours=groups),
    m(MC3, "fairlearn:MetricFrame.difference[macro_f1,sf=grp]", "macro_f1_gap", "grp"),
    m(MC3, "fairlearn:MetricFrame.by_group[weighted_f1,sf=grp]", "weighted_f1_gap", "grp",
      ours=groups),
    m(MC3, "fairlearn:MetricFrame.difference[weighted_f1,sf=grp]", "weighted_f1_gap", "grp"),
    *[
        m(MC3, f"fairlearn:MetricFrame.by_group[selection_rate_class{k},sf=grp]", MDP, "grp",
          ours=per_group_class(k))
        for k in range(3)
    ],
    *[
        m(MC3, f"fairlearn:MetricFrame.difference[selection_rate_class{k},sf=grp]", MDP, "grp",
          ours=detail("per_class_gap", k))
        for k in range(3)
    ],
    m(MC3, "fairlearn:max_k MetricFrame.difference[selection_rate_class_k,sf=grp]", MDP, "grp"),
    m(MC3, "holisticai:frequency_matrix[p_attr=grp]", MDP, "grp", ours=per_group_by_class,
      ref=by_class_str),
    m(MC3, "holisticai:multiclass_statistical_parity[p_attr=grp,aggregation_fun=max]",
      WDP, "grp", {"strategy": "micro"}),
    m(MC3, "sklearn:f1_score_per_class.by_group[grp]", "per_class_f1_gap", "grp",
      ours=detail("per_group")),
    m(MC3, "sklearn:f1_score_per_class.by_group[grp]", "macro_f1_gap", "grp",
      ours=detail("per_group_per_class_f1")),
    m(MC3, "sklearn:per_class_f1_gap.vector[grp]", "per_class_f1_gap", "grp",
      ours=detail("per_class_gap")),
    m(MC3, "sklearn:per_class_f1_gap.worst[grp]", "per_class_f1_gap", "grp"),
    m(MC3, "venturalitica:multiclass_demographic_parity[dimension=grp,aggregation=max]",
      MDP, "grp", {"aggregation": "max"}),
    m(MC3, "venturalitica:multiclass_demographic_parity[dimension=grp,aggregation=macro]",
      MDP, "grp", {"aggregation": "macro"}),
    m(MC3, "venturalitica:multiclass_equal_opportunity[dimension=grp]",
      "multiclass_equal_opportunity", "grp"),
    m(MC3, "venturalitica:weighted_demographic_parity_multiclass[dimension=grp,strategy=macro]",
      WDP, "grp", {"strategy": "macro"}),
    m(MC3,
      "venturalitica:weighted_demographic_parity_multiclass[dimension=grp,strategy=weighted]",
      WDP, "grp", {"strategy": "weighted"}),
    m(MC3, "venturalitica:micro_equalized_odds_multiclass[dimension=grp]",
      "micro_equalized_odds_multiclass", "grp"),
]

# ---- multiclass_6_2site (site, sex: two groups each, K=6) ----
for _d in ("site", "sex"):
    MAPPINGS += [
        m(MC6, f"fairlearn:MetricFrame.by_group[accuracy,sf={_d}]", CONF, _d,
          ours=per_group_accuracy),
        m(MC6, f"fairlearn:MetricFrame.difference[accuracy,sf={_d}]", CONF, _d,
          {"value": "accuracy_gap"}),
        m(MC6, f"fairlearn:MetricFrame.by_group[macro_f1,sf={_d}]", "macro_f1_gap", _d,
          ours=groups),
        m(MC6, f"fairlearn:MetricFrame.difference[macro_f1,sf={_d}]", "macro_f1_gap", _d),
        m(MC6, f"fairlearn:MetricFrame.by_group[weighted_f1,sf={_d}]", "weighted_f1_gap", _d,
          ours=groups),
        m(MC6, f"fairlearn:MetricFrame.difference[weighted_f1,sf={_d}]", "weighted_f1_gap", _d),
        *[
            m(MC6, f"fairlearn:MetricFrame.by_group[selection_rate_class{k},sf={_d}]", MDP, _d,
              ours=per_group_class(k))
            for k in range(6)
        ],
        *[
            m(MC6, f"fairlearn:MetricFrame.difference[selection_rate_class{k},sf={_d}]", MDP,
              _d, ours=detail("per_class_gap", k))
            for k in range(6)
        ],
        m(MC6, f"fairlearn:max_k MetricFrame.difference[selection_rate_class_k,sf={_d}]",
          MDP, _d),
        m(MC6, f"holisticai:frequency_matrix[p_attr={_d}]", MDP, _d, ours=per_group_by_class,
          ref=by_class_str),
        # two groups: holisticai's pairwise total-variation distance is our `micro`
        m(MC6, f"holisticai:multiclass_statistical_parity[p_attr={_d},aggregation_fun=max]",
          WDP, _d, {"strategy": "micro"}),
        m(MC6, f"holisticai:multiclass_statistical_parity[p_attr={_d},aggregation_fun=mean]",
          WDP, _d, {"strategy": "micro"}),
        # two groups: holisticai's mean per-class TPR gap is our macro equal opportunity
        m(MC6, f"holisticai:multiclass_true_rates[p_attr={_d},aggregation_fun=max]",
          "macro_equal_opportunity_multiclass", _d),
        m(MC6, f"holisticai:multiclass_true_rates[p_attr={_d},aggregation_fun=mean]",
          "macro_equal_opportunity_multiclass", _d),
        m(MC6, f"sklearn:f1_score_per_class.by_group[{_d}]", "per_class_f1_gap", _d,
          ours=detail("per_group")),
        m(MC6, f"sklearn:per_class_f1_gap.vector[{_d}]", "per_class_f1_gap", _d,
          ours=detail("per_class_gap")),
        m(MC6, f"sklearn:per_class_f1_gap.worst[{_d}]", "per_class_f1_gap", _d),
        m(MC6, f"venturalitica:multiclass_demographic_parity[dimension={_d},aggregation=max]",
          MDP, _d, {"aggregation": "max"}),
        m(MC6, f"venturalitica:multiclass_demographic_parity[dimension={_d},aggregation=macro]",
          MDP, _d, {"aggregation": "macro"}),
        m(MC6, f"venturalitica:multiclass_equal_opportunity[dimension={_d}]",
          "multiclass_equal_opportunity", _d),
        m(MC6,
          f"venturalitica:weighted_demographic_parity_multiclass[dimension={_d},strategy=macro]",
          WDP, _d, {"strategy": "macro"}),
        m(MC6,
          f"venturalitica:weighted_demographic_parity_multiclass[dimension={_d},"
          "strategy=weighted]",
          WDP, _d, {"strategy": "weighted"}),
        m(MC6, f"venturalitica:micro_equalized_odds_multiclass[dimension={_d}]",
          "micro_equalized_odds_multiclass", _d),
    ]

# ---- holisticai multi-class pairwise metrics: fairpolicy's holistic family ----
# Exact on these fixtures because every class occurs in every group (checked by
# tests/metrics/test_holistic.py); holisticai fills an absent class's row with 1/K,
# fairpolicy leaves it out.
HOLISTIC = {
    "multiclass_statistical_parity": "multiclass_statistical_parity",
    "multiclass_equality_of_opp": "multiclass_equality_of_opportunity",
    "multiclass_average_odds": "multiclass_average_odds",
    "multiclass_true_rates": "multiclass_true_positive_difference",
}
for _fx, _d in ((BIN, "sex"), (MC3, "grp"), (MC6, "site"), (MC6, "sex")):
    for _hai, _ours in HOLISTIC.items():
        MAPPINGS += [
            m(_fx, f"holisticai:{_hai}[p_attr={_d},aggregation_fun={_agg}]", _ours, _d,
              {"aggregation": _agg})
            for _agg in ("max", "mean")
        ]
    if _fx != BIN:
        MAPPINGS.append(
            m(_fx, f"holisticai:frequency_matrix[p_attr={_d}]", "multiclass_statistical_parity",
              _d, ours=per_group_by_class, ref=by_class_str)
        )

# ---- score metrics (fmm-fairness-eval, eval-toolkit, scikit-learn AUC) ----
MAPPINGS += [
    m(BIN, "fmm:calibration_gap[sex]", "calibration_gap", "sex"),
    m(BIN, "fmm:calibration_gap.per_group[sex]", "calibration_gap", "sex", ours=groups),
    m(BIN, "eval_toolkit:ece_gap[sex,n_bins=10]", "calibration_parity", "sex", {"n_bins": 10}),
    m(BIN, "eval_toolkit:expected_calibration_error.by_group[sex,n_bins=10]",
      "calibration_parity", "sex", {"n_bins": 10}, ours=groups),
    m(BIN, "fmm:inter_site_auc_variance[site]", "inter_site_auc_variance", "site"),
    m(BIN, "fmm:inter_site_auc_variance.per_group[site]", "inter_site_auc_variance", "site",
      ours=groups),
    m(BIN, "sklearn:roc_auc_score.by_group[sex]", "auc_gap", "sex", ours=groups),
    m(BIN, "sklearn:roc_auc_score.by_group[sex]", "multi_class_auc_gap", "sex", ours=groups),
    m(MC3, "sklearn:multi_class_auc_gap[grp]", "multi_class_auc_gap", "grp"),
    m(MC3, "sklearn:roc_auc_score_ovr_macro.by_group[grp]", "multi_class_auc_gap", "grp",
      ours=groups),
    m(MC6, "sklearn:inter_site_auc_variance[site]", "inter_site_auc_variance", "site"),
    *[
        m(MC6, key.format(d=_d), "multi_class_auc_gap", _d, ours=get)
        for _d in ("site", "sex")
        for key, get in (
            ("sklearn:multi_class_auc_gap[{d}]", value),
            ("sklearn:roc_auc_score_ovr_macro.by_group[{d}]", groups),
        )
    ],
]
# ---- RATES: fairness-metrics tutorial extras, individual fairness, Aequitas, performance ----
def band(lo: float, hi: float) -> Callable[[Finding], dict[str, bool]]:
    """Aequitas' per-group verdict: lo <= disparity <= hi (tau = 0.8: 0.8 <= D <= 1.25)."""

    def get(f: Finding) -> dict[str, bool]:
        return {g.group: g.value is not None and lo <= g.value <= hi for g in f.groups}

    get.__name__ = f"{lo:g}<=groups<={hi:g}"
    return get


GE, THEIL, DR = "generalized_entropy_index", "theil_index", "disparity_ratio"
#: aequitas metric name -> our disparity_ratio rate
AEQ_RATES = {
    "pprev": "pprev", "ppr": "ppr", "tpr": "tpr", "tnr": "tnr", "fpr": "fpr", "fnr": "fnr",
    "precision": "precision", "fdr": "fdr", "npv": "npv", "for": "for", "prev": "prev",
}
#: aequitas Fairness measure -> the disparity it thresholds (aequitas' fair_measures_depend)
AEQ_FAIRNESS = {
    "Statistical Parity": "ppr", "Impact Parity": "pprev", "FDR Parity": "fdr",
    "FPR Parity": "fpr", "FOR Parity": "for", "FNR Parity": "fnr", "TPR Parity": "tpr",
}
MAPPINGS += [
    m(BIN, "aif360.sklearn:generalized_entropy_error[alpha=1]", THEIL, "sex"),
    m(BIN, "aif360.sklearn:generalized_entropy_error[alpha=1]", GE, "sex", {"alpha": 1.0}),
    m(BIN, "aif360.sklearn:generalized_entropy_error[alpha=2]", GE, "sex"),
    m(BIN, f"aif360:ClassificationMetric.generalized_entropy_index[{SEX_M}]", GE, "sex"),
    m(BIN, f"aif360:ClassificationMetric.theil_index[{SEX_M}]", THEIL, "sex"),
    m(BIN, f"aif360:ClassificationMetric.coefficient_of_variation[{SEX_M}]", GE, "sex",
      ours=detail("coefficient_of_variation")),
    m(BIN, f"aif360:ClassificationMetric.between_group_generalized_entropy_index[{SEX_M}]",
      "between_group_generalized_entropy_index", "sex"),
    m(BIN, "aif360.sklearn:between_group_generalized_entropy_error[sex,alpha=2]",
      "between_group_generalized_entropy_index", "sex"),
    m(BIN, f"aif360:ClassificationMetric.between_group_theil_index[{SEX_M}]",
      "between_group_theil_index", "sex"),
    m(BIN, f"aif360:ClassificationMetric.between_group_theil_index[{SEX_M}]", THEIL, "sex",
      ours=detail("between_group")),
    m(BIN, "holisticai:generalized_entropy_index[alpha=1]", THEIL, "sex"),
    m(BIN, "holisticai:generalized_entropy_index[alpha=2]", GE, "sex"),
    m(BIN, "holisticai:theil_index", THEIL, "sex"),
    # the new error-rate gaps (aif360 / holisticai signed two-group differences)
    m(BIN, f"aif360:ClassificationMetric.false_discovery_rate_difference[{SEX_M}]",
      "fdr_diff", "sex", ref=absval),
    m(BIN, f"aif360:ClassificationMetric.false_omission_rate_difference[{SEX_M}]",
      "for_diff", "sex", ref=absval),
    m(BIN, f"aif360:ClassificationMetric.false_omission_rate_difference[{SEX_M}]",
      "npv_diff", "sex", ref=absval),
    m(BIN, f"aif360:ClassificationMetric.error_rate_difference[{SEX_M}]",
      "error_rate_diff", "sex", ref=absval),
    m(BIN, f"holisticai:true_negative_rate_diff[{HAI}]", "tnr_diff", "sex", ref=absval),
    m(BIN, f"aif360:ClassificationMetric.false_discovery_rate_ratio[{SEX_M}]", DR, "sex",
      {"rate": "fdr", "reference_group": "M"}, ref=same),
    m(BIN, f"aif360:ClassificationMetric.false_omission_rate_ratio[{SEX_M}]", DR, "sex",
      {"rate": "for", "reference_group": "M"}, ref=same),
    m(BIN, f"aif360:ClassificationMetric.false_positive_rate_ratio[{SEX_M}]", DR, "sex",
      {"rate": "fpr", "reference_group": "M"}, ref=same),
    m(BIN, f"aif360:ClassificationMetric.disparate_impact[{SEX_M}]", DR, "sex",
      {"reference_group": "M"}, ref=same),
    # Aequitas: per-group rates, disparities to the largest group, verdicts at tau = 0.8
    *[
        m(BIN, f"aequitas:Group.get_crosstabs[{aeq},{AEQ}]", DR, "sex", {"rate": ours},
          ours=detail("rates"))
        for aeq, ours in AEQ_RATES.items()
    ],
    *[
        m(BIN, f"aequitas:Bias.get_disparity_major_group[{aeq}_disparity,{AEQ}]", DR, "sex",
          {"rate": ours}, ours=groups)
        for aeq, ours in AEQ_RATES.items()
        if aeq != "prev"
    ],
    *[
        m(BIN, f"aequitas:Fairness.get_group_value_fairness[{name},{AEQ},tau=0.8]", DR, "sex",
          {"rate": rate}, ours=band(0.8, 1.25))
        for name, rate in AEQ_FAIRNESS.items()
    ],
    m(BIN, f"aequitas:Group.get_crosstabs[prev,{AEQ}]", "group_min_positive_rate", "sex",
      ours=groups),
    m(BIN, f"aequitas:Group.get_crosstabs[group_size,{AEQ}]", "group_size", "sex", ours=groups),
    m(BIN, "fairlearn:MetricFrame.by_group[count,sf=sex]", "group_size", "sex", ours=groups),
    # overall performance (fairlearn's MetricFrame.overall on every row = our compared rows)
    m(BIN, "fairlearn:MetricFrame.overall[sf=sex]", "accuracy_score", "sex",
      ref=item("accuracy")),
    m(BIN, "fairlearn:MetricFrame.overall[sf=sex]", "recall_score", "sex", ref=item("tpr")),
    m(BIN, "fairlearn:MetricFrame.by_group[accuracy,sf=sex]", "accuracy_score", "sex",
      ours=groups),
    m(BIN, "fairlearn:MetricFrame.by_group[tpr,sf=sex]", "recall_score", "sex", ours=groups),
    m(MC3, "fairlearn:MetricFrame.by_group[accuracy,sf=grp]", "accuracy_score", "grp",
      ours=groups),
    m(MC3, "fairlearn:MetricFrame.by_group[macro_f1,sf=grp]", "f1_score", "grp",
      {"average": "macro"}, ours=groups),
    m(MC3, "fairlearn:MetricFrame.by_group[weighted_f1,sf=grp]", "f1_score", "grp",
      {"average": "weighted"}, ours=groups),
    *[
        m(MC6, f"fairlearn:MetricFrame.by_group[{name},sf={_d}]", "f1_score", _d,
          {"average": avg}, ours=groups)
        for _d in ("site", "sex")
        for name, avg in (("macro_f1", "macro"), ("weighted_f1", "weighted"))
    ],
]
# fmt: on

#: keys whose relation to ours is a deliberate difference, tested by test_difference_*
DIFFERENCES: dict[str, set[str]] = {
    BIN: {
        "fmm:samd_fairness_score",
        "venturalitica:equalized_odds_ratio[dimension=sex]",
        "aif360.sklearn:generalized_entropy_error[alpha=0]",
        "holisticai:coefficient_of_variation",
        f"aif360.sklearn:average_predictive_value_difference[{SEX_M}]",
    },
    MC3: {
        "venturalitica:macro_equal_opportunity_multiclass[dimension=grp]",
    },
    MC6: {
        "venturalitica:macro_equal_opportunity_multiclass[dimension=site]",
        "venturalitica:macro_equal_opportunity_multiclass[dimension=sex]",
    },
}

#: reference keys (patterns: `*` is the only wildcard) with no fairpolicy counterpart, and why
UNMAPPED: dict[str, str] = {
    "eval_toolkit:expected_calibration_error[overall*": "ECE of the whole population: "
    "fairpolicy compares groups and reports per-group ECE only",
    "fmm:*.ci[*": "bootstrap confidence intervals are not produced by MetricValue yet",
    "holisticai:cohen_d*": "effect size of selection rates; no registry counterpart",
    "holisticai:z_test_*": "hypothesis-test statistic; no registry counterpart",
    "holisticai:abroca*": "area between ROC curves: a score metric",
    "fairlearn:*method=to_overall]": "fairpolicy compares groups with each other only, "
    "never a group with the overall population",
}


#: fixture columns bound to the roles beyond target/prediction/dimension that a metric
#: declares: ``y_score`` is the binary column, or the prefix of y_score_0.. (multi-class)
EXTRA_ROLES = {"score": "y_score", "site": "site"}


@pytest.fixture(scope="module")
def finding(fixtures_dir: Path, control: Any, evaluate_many: Any) -> Callable[..., Finding]:
    cache: dict[tuple[str, str, str, tuple], Finding] = {}

    def get(
        fixture: str, metric: str, dim: str, params: Mapping[str, Any] | None = None
    ) -> Finding:
        key = (fixture, metric, dim, tuple(sorted((params or {}).items())))
        if key not in cache:
            c = control(metric, dim, dict(params or {}))
            extra = {r: col for r, col in EXTRA_ROLES.items() if r in lookup(metric).inputs}
            c = c.model_copy(update={"inputs": {**c.inputs, **extra}})
            cache[key] = evaluate_many([c], fixtures_dir / f"{fixture}.csv").findings[0]
        return cache[key]

    return get


def assert_close(ours: Any, ref: Any, where: str = "") -> None:
    """Recursive equality to TOL for floats, exact for keys and lengths."""
    if isinstance(ref, Mapping):
        assert isinstance(ours, Mapping), f"{where}: {ours!r} is not a mapping"
        assert set(ours) == set(ref), f"{where}: keys {sorted(ours)} != {sorted(ref)}"
        for k in ref:
            assert_close(ours[k], ref[k], f"{where}[{k}]")
    elif isinstance(ref, list | tuple):
        assert len(ours) == len(ref), f"{where}: length {len(ours)} != {len(ref)}"
        for i, (a, b) in enumerate(zip(ours, ref, strict=True)):
            assert_close(a, b, f"{where}[{i}]")
    else:
        assert ours is not None, f"{where}: ours is None, reference {ref!r}"
        assert math.isfinite(ours), f"{where}: ours is {ours!r}"
        assert abs(ours - ref) <= TOL, f"{where}: ours {ours!r} != reference {ref!r}"


# ---------------------------------------------------------------------------
# the table


@pytest.mark.parametrize("mp", MAPPINGS, ids=[mp.id for mp in MAPPINGS])
def test_mapping(mp: Mapping_, reference: dict[str, Any], finding: Callable[..., Finding]) -> None:
    entry = reference[mp.fixture][mp.ref_key]
    f = finding(mp.fixture, mp.metric, mp.dim, dict(mp.params))
    assert f.status in ("pass", "fail"), f"{mp.metric}: {f.status}: {f.message}"
    assert_close(mp.ours(f), mp.ref(entry["value"]), mp.id)


def matches(key: str, pattern: str) -> bool:
    regex = ".*".join(re.escape(part) for part in pattern.split("*"))
    return re.fullmatch(regex, key) is not None


def _accounted(fixture: str) -> tuple[set[str], set[str]]:
    mapped = {mp.ref_key for mp in MAPPINGS if mp.fixture == fixture}
    return mapped, DIFFERENCES.get(fixture, set())


def test_every_reference_key_is_accounted_for(reference: dict[str, Any]) -> None:
    """Each key is mapped, a tested deliberate difference, or unmapped with a reason."""
    missing = []
    for fixture in (BIN, MC3, MC6):
        mapped, different = _accounted(fixture)
        for key in reference[fixture]:
            unmapped = any(matches(key, pat) for pat in UNMAPPED)
            if not (key in mapped or key in different or unmapped):
                missing.append(f"{fixture}: {key}")
    assert not missing, "reference keys with no mapping, difference or reason:\n" + "\n".join(
        missing
    )


def test_tables_name_existing_keys(reference: dict[str, Any]) -> None:
    every = [k for fixture in (BIN, MC3, MC6) for k in reference[fixture]]
    for fixture in (BIN, MC3, MC6):
        mapped, different = _accounted(fixture)
        assert mapped | different <= set(reference[fixture])
    stale = [pat for pat in UNMAPPED if not any(matches(k, pat) for k in every)]
    assert not stale, f"UNMAPPED patterns matching no reference key: {stale}"


def test_f1_reference_groups_have_every_class(finding: Callable[..., Finding]) -> None:
    """The fairlearn F1 references used labels=range(K), zero_division=0.

    Our macro F1 averages over the classes present in a group; the two agree
    exactly when every class occurs in every group, which holds on these fixtures.
    """
    for fixture, dim in ((MC3, "grp"), (MC6, "site"), (MC6, "sex")):
        f = finding(fixture, "macro_f1_gap", dim)
        for g, row in f.details["per_group_per_class_f1"].items():
            assert None not in row, f"{fixture}/{dim}/{g}: a class is absent"


# ---------------------------------------------------------------------------
# deliberate differences


@pytest.mark.parametrize(
    ("fixture", "dim"), [(MC3, "grp"), (MC6, "site"), (MC6, "sex")], ids=["grp", "site", "sex"]
)
def test_difference_macro_equal_opportunity_is_a_true_mean(
    fixture: str, dim: str, reference: dict[str, Any], finding: Callable[..., Finding]
) -> None:
    """Venturalitica's macro_equal_opportunity_multiclass returns the MAX class TPR gap
    (the same number as its multiclass_equal_opportunity); ours is the MEAN."""
    ref = reference[fixture]
    ven_macro = ref[f"venturalitica:macro_equal_opportunity_multiclass[dimension={dim}]"]["value"]
    ven_max = ref[f"venturalitica:multiclass_equal_opportunity[dimension={dim}]"]["value"]
    assert ven_macro == pytest.approx(ven_max, abs=TOL)  # theirs: "macro" is the max

    ours = finding(fixture, "macro_equal_opportunity_multiclass", dim)
    gaps = ours.details["per_class_gap"]
    assert None not in gaps
    assert ours.value == pytest.approx(sum(gaps) / len(gaps), abs=TOL)
    assert ours.value <= ven_macro + TOL
    assert ours.value < ven_macro - 1e-6  # strictly smaller on these fixtures

    worst = finding(fixture, "multiclass_equal_opportunity", dim)
    assert worst.value == pytest.approx(ven_macro, abs=TOL)
    assert worst.details["per_class_gap"] == pytest.approx(gaps, abs=TOL)
    assert worst.value == pytest.approx(max(gaps), abs=TOL)


def test_difference_macro_equal_opportunity_vs_holisticai_on_three_groups(
    reference: dict[str, Any], finding: Callable[..., Finding]
) -> None:
    """holisticai multiclass_true_rates averages |TPR_g(c) − TPR_h(c)| over group *pairs*
    (mean) or takes the worst pair's class mean (max). With two groups that is our
    mean of max − min per class (mapped above); with three groups ours, the mean over
    classes of the widest pair, is at least either aggregation. (holisticai's own
    definition is ``multiclass_true_positive_difference``, mapped exactly in MAPPINGS.)"""
    ref = reference[MC3]
    hai_max = ref["holisticai:multiclass_true_rates[p_attr=grp,aggregation_fun=max]"]["value"]
    hai_mean = ref["holisticai:multiclass_true_rates[p_attr=grp,aggregation_fun=mean]"]["value"]
    ours = finding(MC3, "macro_equal_opportunity_multiclass", "grp")
    assert hai_mean <= hai_max <= ours.value
    assert ours.value - hai_max > 1e-6

    # reproduce holisticai's pairwise numbers from our per-group recalls
    per_group = ours.details["per_group"]
    names = sorted(per_group)
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    pair_class_means = [
        sum(abs(x - y) for x, y in zip(per_group[a], per_group[b], strict=True)) / len(per_group[a])
        for a, b in pairs
    ]
    assert max(pair_class_means) == pytest.approx(hai_max, abs=TOL)
    assert sum(pair_class_means) / len(pairs) == pytest.approx(hai_mean, abs=TOL)


def test_difference_venturalitica_equalized_odds_ratio_is_a_sum_of_gaps(
    reference: dict[str, Any], finding: Callable[..., Finding]
) -> None:
    """Venturalitica's `equalized_odds_ratio` is TPR gap + FPR gap (a difference, ideal 0);
    ours is fairlearn's ratio min(TPR min/max, FPR min/max) (ideal 1)."""
    ref = reference[BIN]
    ven = ref["venturalitica:equalized_odds_ratio[dimension=sex]"]["value"]
    fl = ref["fairlearn:equalized_odds_ratio[sf=sex,agg=worst_case]"]["value"]

    odds = finding(BIN, "equalized_odds_diff", "sex")
    assert ven == pytest.approx(odds.details["tpr_gap"] + odds.details["fpr_gap"], abs=TOL)
    assert ven == pytest.approx(2 * finding(BIN, "average_odds_diff", "sex").value, abs=TOL)

    ours = finding(BIN, "equalized_odds_ratio", "sex")
    assert ours.value == pytest.approx(fl, abs=TOL)
    assert abs(ours.value - ven) > 0.5


def test_difference_aif360_average_predictive_value_difference(
    reference: dict[str, Any], finding: Callable[..., Finding]
) -> None:
    """aif360.sklearn's average_predictive_value_difference is the signed mean of the PPV
    difference and the false-omission-rate difference (unprivileged F − privileged M).
    fairpolicy has no such metric; the number follows from our per-group PPV and NPV."""
    ref = reference[BIN][f"aif360.sklearn:average_predictive_value_difference[{SEX_M}]"]["value"]
    ppv = groups(finding(BIN, "predictive_parity_diff", "sex"))
    npv = per_group_class(0)(finding(BIN, PPM, "sex"))
    for_ = {g: 1.0 - v for g, v in npv.items()}
    assert ref == pytest.approx(((ppv["F"] - ppv["M"]) + (for_["F"] - for_["M"])) / 2, abs=TOL)


def test_difference_samd_fairness_score_is_fmm_v01(
    reference: dict[str, Any], finding: Callable[..., Finding]
) -> None:
    """reference.json's samd_fairness_score was computed by fmm v0.1: four terms, weights
    site 0.40, eo 0.30, dp 0.15, cal 0.15, SITE = min(1, 2·sqrt(Var site AUC)). Ours is
    v0.2 (fmm-fairness-eval: a fifth term F1_SITE and new weights, tested in test_scores.py). The
    v0.1 number follows from our own component metrics with the v0.1 weights."""
    ref = reference[BIN]["fmm:samd_fairness_score"]
    comp, w = ref["params"]["components"], ref["params"]["weights"]
    var = finding(BIN, "inter_site_auc_variance", "site").value
    ours = {
        "site_term": min(1.0, 2.0 * math.sqrt(var)),
        "eo_mean": finding(BIN, "equal_opportunity_diff", "sex").value,
        "dp_mean": finding(BIN, "demographic_parity_diff", "sex").value,
        "cal_mean": finding(BIN, "calibration_gap", "sex").value,
    }
    assert_close(ours, comp, "components")
    # two sites: 2·sqrt(population variance) is the AUC range
    aucs = groups(finding(BIN, "inter_site_auc_variance", "site")).values()
    assert_close(ours["site_term"], max(aucs) - min(aucs), "site_term")
    v01 = 1.0 - (
        w["site"] * ours["site_term"]
        + w["eo"] * ours["eo_mean"]
        + w["dp"] * ours["dp_mean"]
        + w["cal"] * ours["cal_mean"]
    )
    assert_close(v01, ref["value"], "v0.1 score")


def test_difference_generalized_entropy_alpha_0_is_not_infinite(
    reference: dict[str, Any], finding: Callable[..., Finding]
) -> None:
    """aif360 returns +inf for GE(0) when a benefit is 0 (a false negative: b = ŷ − y + 1 = 0);
    fairpolicy never reports an infinite value: None, with the reason."""
    ref = reference[BIN]["aif360.sklearn:generalized_entropy_error[alpha=0]"]["value"]
    assert ref == math.inf
    f = finding(BIN, "generalized_entropy_index", "sex", {"alpha": 0.0})
    assert f.value is None and f.status == "inconclusive"
    assert f.reason is not None and "benefit 0" in f.reason and "∞" in f.reason
    assert f.details["benefit_counts"]["0"] > 0  # the false negatives behind it


def test_difference_holisticai_coefficient_of_variation(
    reference: dict[str, Any], finding: Callable[..., Finding]
) -> None:
    """holisticai's coefficient_of_variation is 2·√GE(2); aif360's (mapped) is √(2·GE(2)),
    the standard deviation of the benefits over their mean. They differ by a factor √2."""
    hai = reference[BIN]["holisticai:coefficient_of_variation"]["value"]
    f = finding(BIN, "generalized_entropy_index", "sex")
    assert hai == pytest.approx(2 * math.sqrt(f.value), abs=TOL)
    assert hai == pytest.approx(math.sqrt(2) * f.details["coefficient_of_variation"], abs=TOL)
