"""Registry-wide documentation: docs/metrics.md, `metrics --for`, and source coverage."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from fairpolicy.cli import main
from fairpolicy.metrics.docs import GUIDE, metrics_markdown
from fairpolicy.metrics.registry import REGISTRY, canonical

ROOT = Path(__file__).resolve().parents[1]
REFERENCES = ROOT / "docs" / "references.md"

#: Every metric the five source documents name (each cited in docs/references.md):
#: (source, the source's own term, our key). The terms were copied from the sources' text,
#: not from the registry.
SOURCE_METRICS: list[tuple[str, str, str]] = [
    # fmm-fairness-eval — fmm_fairness v0.2 spec
    ("fmm-fairness-eval", "weighted_f1_gap", "weighted_f1_gap"),
    ("fmm-fairness-eval", "macro_f1_gap", "macro_f1_gap"),
    ("fmm-fairness-eval", "per_class_f1_gap", "per_class_f1_gap"),
    ("fmm-fairness-eval", "multi_class_auc_gap", "multi_class_auc_gap"),
    ("fmm-fairness-eval", "inter_site_auc_variance", "inter_site_auc_variance"),
    ("fmm-fairness-eval", "equal_opportunity_gap", "equal_opportunity_diff"),
    ("fmm-fairness-eval", "demographic_parity_gap", "demographic_parity_diff"),
    ("fmm-fairness-eval", "calibration_gap", "calibration_gap"),
    ("fmm-fairness-eval", "samd_fairness_score", "samd_fairness_score"),
    # holisticai — multi-class fairness metrics documentation
    ("holisticai", "Multiclass Statistical Parity", "multiclass_statistical_parity"),
    ("holisticai", "Multiclass Equality of Opportunity", "multiclass_equality_of_opportunity"),
    ("holisticai", "Multiclass Average Odds", "multiclass_average_odds"),
    ("holisticai", "Multiclass True Positive Difference", "multiclass_true_positive_difference"),
    # eval-toolkit — "Fairness & subgroup slicing" guide
    ("eval-toolkit", "Demographic parity gap", "demographic_parity_diff"),
    ("eval-toolkit", "Equalized odds", "equalized_odds_diff"),
    ("eval-toolkit", "Calibration parity", "calibration_parity"),
    # Venturalitica — multi-class fairness metrics documentation
    ("Venturalitica", "multiclass_demographic_parity", "multiclass_demographic_parity"),
    ("Venturalitica", "multiclass_equal_opportunity", "multiclass_equal_opportunity"),
    ("Venturalitica", "multiclass_confusion_metrics", "multiclass_confusion_metrics"),
    (
        "Venturalitica",
        "weighted_demographic_parity_multiclass",
        "weighted_demographic_parity_multiclass",
    ),
    ("Venturalitica", "macro_equal_opportunity_multiclass", "macro_equal_opportunity_multiclass"),
    ("Venturalitica", "micro_equalized_odds_multiclass", "micro_equalized_odds_multiclass"),
    ("Venturalitica", "predictive_parity_multiclass", "predictive_parity_multiclass"),
    ("Venturalitica", "disparate_impact", "demographic_parity_ratio"),
    ("Venturalitica", "demographic_parity_diff", "demographic_parity_diff"),
    ("Venturalitica", "intersectional_disparity", "intersectional_disparity"),
    # the fairness-metrics tutorial
    ("fairness-metrics tutorial", "Statistical Parity Diff", "demographic_parity_diff"),
    ("fairness-metrics tutorial", "Disparate Impact Ratio", "demographic_parity_ratio"),
    ("fairness-metrics tutorial", "Equal Opportunity Diff", "equal_opportunity_diff"),
    ("fairness-metrics tutorial", "Equalized Odds Diff", "equalized_odds_diff"),
    ("fairness-metrics tutorial", "Calibration Diff", "calibration_diff"),
    ("fairness-metrics tutorial", "Average Odds Diff", "average_odds_diff"),
    ("fairness-metrics tutorial", "Theil Index", "theil_index"),
    ("fairness-metrics tutorial", "score_parity", "score_parity"),
    ("fairness-metrics tutorial", "ks_statistic", "score_ks_statistic"),
    ("fairness-metrics tutorial", "calibration_parity", "calibration_parity"),
    ("fairness-metrics tutorial", "brier_parity", "brier_gap"),
    ("fairness-metrics tutorial", "auc_parity", "auc_gap"),
    ("fairness-metrics tutorial", "balance_positive", "balance_positive_class"),
    ("fairness-metrics tutorial", "balance_negative", "balance_negative_class"),
    ("fairness-metrics tutorial", "Exposure Ratio", "exposure_ratio"),
    ("fairness-metrics tutorial", "NDKL", "ndkl"),
    ("fairness-metrics tutorial", "rKL", "rkl"),
    ("fairness-metrics tutorial", "Attention Parity", "attention_parity"),
    ("fairness-metrics tutorial", "Skew@k", "skew"),
    ("fairness-metrics tutorial", "mean_prediction_parity", "mean_prediction_parity"),
    ("fairness-metrics tutorial", "residual_parity", "residual_parity"),
    ("fairness-metrics tutorial", "mae_parity", "mae_parity"),
    ("fairness-metrics tutorial", "rmse", "rmse_parity"),
    ("fairness-metrics tutorial", "FPR Parity", "fpr_diff"),
    ("fairness-metrics tutorial", "PPV Parity", "predictive_parity_diff"),
    ("fairness-metrics tutorial", "TPR Parity", "equal_opportunity_diff"),
]


@pytest.mark.parametrize(
    ("source", "term", "key"), SOURCE_METRICS, ids=[t for _, t, _ in SOURCE_METRICS]
)
def test_every_source_metric_is_in_the_registry(source: str, term: str, key: str) -> None:
    assert key in REGISTRY, f"{source}'s '{term}' has no registry entry '{key}'"


@pytest.mark.parametrize("source", sorted({s for s, _, _ in SOURCE_METRICS}))
def test_every_source_is_cited_in_references_md(source: str) -> None:
    assert source.lower() in REFERENCES.read_text(encoding="utf-8").lower(), source


@pytest.mark.parametrize(
    "alias_of",
    [(t, k) for _, t, k in SOURCE_METRICS if re.fullmatch(r"[a-z_]+", t) and t != k],
)
def test_source_snake_case_names_resolve(alias_of: tuple[str, str]) -> None:
    """A source's own snake_case key either is ours or resolves to ours as an alias."""
    term, key = alias_of
    assert canonical(term) in (key, None) or canonical(term) == key


def test_docs_metrics_md_is_current() -> None:
    on_disk = (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")
    assert on_disk == metrics_markdown(), (
        "docs/metrics.md is stale: python -m fairpolicy.metrics.docs > docs/metrics.md"
    )


@pytest.mark.parametrize("context", sorted(GUIDE))
def test_metrics_for_context(context: str) -> None:
    out = io.StringIO()
    assert main(["metrics", "--for", context], stdout=out) == 0
    for key in GUIDE[context][1]:
        assert key in REGISTRY
        assert key in out.getvalue()


def test_metrics_for_unknown_context(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["metrics", "--for", "hirng"], stdout=io.StringIO()) == 2
    assert "Did you mean 'hiring'" in capsys.readouterr().err


@pytest.mark.parametrize("context", ["hiring", "lending"])
def test_four_fifths_rule_is_recommended_with_its_reason(context: str) -> None:
    """Issue 16: the four-fifths rule is the first thing a hiring or lending reviewer asks
    for; `metrics --for` lists demographic_parity_ratio and says why."""
    out = io.StringIO()
    assert main(["metrics", "--for", context], stdout=out) == 0
    text = out.getvalue()
    assert "demographic_parity_ratio" in GUIDE[context][1]
    assert "four-fifths rule" in text and "demographic_parity_ratio >= 0.8" in text
