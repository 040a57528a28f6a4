"""Registry-wide documentation: docs/metrics.md, `metrics --for`, and seed coverage."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from fairpolicy.cli import main
from fairpolicy.metrics.docs import GUIDE, metrics_markdown
from fairpolicy.metrics.registry import REGISTRY, canonical

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT.parent / "shared" / "seeds"

#: Every metric the five seed documents name: (seed file prefix, the seed's own term, our key).
#: The term is searched for in the seed text (when shared/ is present), so this list is
#: taken from the seeds rather than from the registry.
SEED_METRICS: list[tuple[str, str, str]] = [
    # seed 000 — fmm_fairness v0.2
    ("000", "weighted_f1_gap", "weighted_f1_gap"),
    ("000", "macro_f1_gap", "macro_f1_gap"),
    ("000", "per_class_f1_gap", "per_class_f1_gap"),
    ("000", "multi_class_auc_gap", "multi_class_auc_gap"),
    ("000", "inter_site_auc_variance", "inter_site_auc_variance"),
    ("000", "equal_opportunity_gap", "equal_opportunity_diff"),
    ("000", "demographic_parity_gap", "demographic_parity_diff"),
    ("000", "calibration_gap", "calibration_gap"),
    ("000", "samd_fairness_score", "samd_fairness_score"),
    # seed 001 — holisticai multi-class
    ("001", "Multiclass Statistical Parity", "multiclass_statistical_parity"),
    ("001", "Multiclass Equality of Opportunity", "multiclass_equality_of_opportunity"),
    ("001", "Multiclass Average Odds", "multiclass_average_odds"),
    ("001", "Multiclass True Positive Difference", "multiclass_true_positive_difference"),
    # seed 002 — eval-toolkit subgroup slicing
    ("002", "Demographic parity gap", "demographic_parity_diff"),
    ("002", "Equalized odds", "equalized_odds_diff"),
    ("002", "Calibration parity", "calibration_parity"),
    # seed 003 — Venturalitica multi-class
    ("003", "multiclass_demographic_parity", "multiclass_demographic_parity"),
    ("003", "multiclass_equal_opportunity", "multiclass_equal_opportunity"),
    ("003", "multiclass_confusion_metrics", "multiclass_confusion_metrics"),
    ("003", "weighted_demographic_parity_multiclass", "weighted_demographic_parity_multiclass"),
    ("003", "macro_equal_opportunity_multiclass", "macro_equal_opportunity_multiclass"),
    ("003", "micro_equalized_odds_multiclass", "micro_equalized_odds_multiclass"),
    ("003", "predictive_parity_multiclass", "predictive_parity_multiclass"),
    ("003", "disparate_impact", "demographic_parity_ratio"),
    ("003", "demographic_parity_diff", "demographic_parity_diff"),
    ("003", "intersectional_disparity", "intersectional_disparity"),
    # seed 004 — the fairness-metrics toolkit
    ("004", "Statistical Parity Diff", "demographic_parity_diff"),
    ("004", "Disparate Impact Ratio", "demographic_parity_ratio"),
    ("004", "Equal Opportunity Diff", "equal_opportunity_diff"),
    ("004", "Equalized Odds Diff", "equalized_odds_diff"),
    ("004", "Calibration Diff", "calibration_diff"),
    ("004", "Average Odds Diff", "average_odds_diff"),
    ("004", "Theil Index", "theil_index"),
    ("004", "score_parity", "score_parity"),
    ("004", "ks_statistic", "score_ks_statistic"),
    ("004", "calibration_parity", "calibration_parity"),
    ("004", "brier_parity", "brier_gap"),
    ("004", "auc_parity", "auc_gap"),
    ("004", "balance_positive", "balance_positive_class"),
    ("004", "balance_negative", "balance_negative_class"),
    ("004", "Exposure Ratio", "exposure_ratio"),
    ("004", "NDKL", "ndkl"),
    ("004", "rKL", "rkl"),
    ("004", "Attention Parity", "attention_parity"),
    ("004", "Skew@k", "skew"),
    ("004", "mean_prediction_parity", "mean_prediction_parity"),
    ("004", "residual_parity", "residual_parity"),
    ("004", "mae_parity", "mae_parity"),
    ("004", "rmse", "rmse_parity"),
    ("004", "FPR Parity", "fpr_diff"),
    ("004", "PPV Parity", "predictive_parity_diff"),
    ("004", "TPR Parity", "equal_opportunity_diff"),
]


@pytest.mark.parametrize(("seed", "term", "key"), SEED_METRICS, ids=[t for _, t, _ in SEED_METRICS])
def test_every_seed_metric_is_in_the_registry(seed: str, term: str, key: str) -> None:
    assert key in REGISTRY, f"seed {seed}'s '{term}' has no registry entry '{key}'"
    if SEEDS.is_dir():
        (path,) = SEEDS.glob(f"{seed}_*.txt")
        assert term.lower() in path.read_text(encoding="utf-8").lower(), (term, path.name)


@pytest.mark.parametrize(
    "alias_of",
    [(t, k) for _, t, k in SEED_METRICS if re.fullmatch(r"[a-z_]+", t) and t != k],
)
def test_seed_snake_case_names_resolve(alias_of: tuple[str, str]) -> None:
    """A seed's own snake_case key either is ours or resolves to ours as an alias."""
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
