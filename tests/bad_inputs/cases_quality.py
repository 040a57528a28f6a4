"""Bad-input rows: Venturalitica's HUDERIA data-quality and causal keys (issue 16).

``data_minimization`` never guesses the sensitive columns (Venturalitica matches
substrings such as ``id`` in the column names): without ``input.sensitive_columns`` it is
exit 2 naming the role, and a named column the data does not have is exit 2 naming it.
``counterfactual_fairness`` and ``causal_fairness_diagnostic`` are refused where unknown
keys are, with what Venturalitica computes and the fix."""

from __future__ import annotations

from tests.bad_inputs.cases import Case, policy

_NO_ROLES = ("input.target", "input.prediction", "input.dimension")


def _quality(key: str, **props: str) -> str:
    return policy(drop=_NO_ROLES, metric_key=key, operator="'>='", threshold='"0.5"', **props)


CASES: list[Case] = [
    Case(
        "quality-data-minimization-without-sensitive-columns",
        ("role 'sensitive_columns'", "input.sensitive_columns", "does not guess"),
        policy=_quality("data_minimization"),
        control="c1",
        key="input.sensitive_columns",
        subprocess=True,
    ),
    Case(
        "quality-data-minimization-unknown-sensitive-column",
        ("role 'sensitive_columns' is bound to column 'ssn'", "Columns present: y_true"),
        policy=_quality("data_minimization", input__sensitive_columns='"sex,ssn"'),
        file="data.csv",
        control="c1",
        column="ssn",
        report=True,
    ),
    Case(
        "quality-provenance-without-fields",
        ("role 'fields'", "input.fields", "--bind fields="),
        policy=_quality("provenance_completeness"),
        control="c1",
        key="input.fields",
    ),
    Case(
        "quality-counterfactual-fairness-refused",
        (
            "'counterfactual_fairness' is not computed",
            "a demographic parity difference",
            "Kusner et al.",
            "demographic_parity_diff",
            "remove the control",
        ),
        policy=policy(metric_key="counterfactual_fairness", operator="'>='", threshold='"0.75"'),
        file="policy.yaml",
        control="c1",
        key="metric_key",
        subprocess=True,
    ),
    Case(
        "quality-causal-fairness-diagnostic-refused",
        (
            "'causal_fairness_diagnostic' is not computed",
            "a report",
            "not one number",
            "remove the control",
        ),
        policy=policy(metric_key="causal_fairness_diagnostic", operator="'>='", threshold="0.7"),
        file="policy.yaml",
        control="c1",
        key="metric_key",
    ),
]
