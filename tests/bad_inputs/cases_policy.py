"""Bad-input rows of the policy area: loose numbers, vacuous thresholds, and OSCAL profile
constructs that must be resolved exactly or refused (never ignored, never last-one-wins)."""

from __future__ import annotations

from tests.bad_inputs.cases import Case, policy

CASES: list[Case] = [
    Case(
        "policy-threshold-underscore",
        ("threshold '0_10' is not a number", "plain decimal number"),
        policy=policy(threshold="0_10"),
        file="policy.yaml",
        control="c1",
        key="threshold",
    ),
    Case(
        "policy-threshold-quoted-underscore",
        ("threshold '0_10' is not a number",),
        policy=policy(threshold='"0_10"'),
        file="policy.yaml",
        control="c1",
        key="threshold",
    ),
    Case(
        "policy-threshold-unicode-digits",
        ("is not a number", "ASCII digits only"),
        policy=policy(threshold='"\u0660.\u0661"'),
        file="policy.yaml",
        control="c1",
        key="threshold",
    ),
    Case(
        "policy-threshold-sexagesimal",
        ("threshold '1:30' is not a number",),
        policy=policy(threshold="1:30"),
        file="policy.yaml",
        control="c1",
        key="threshold",
    ),
    Case(
        "policy-between-bound-hex",
        ("threshold '0x1' is not a number",),
        policy=policy(
            metric_key="demographic_parity_ratio", operator="between", threshold='"0.8,0x1"'
        ),
        file="policy.yaml",
        control="c1",
        key="threshold",
    ),
    Case(
        "policy-min-samples-underscore",
        ("min_samples '1_0' is not a whole number",),
        policy=policy(min_samples='"1_0"'),
        file="policy.yaml",
        control="c1",
        key="min_samples",
    ),
    Case(
        "policy-ci-level-unicode",
        ("ci_level", "is not a number"),
        policy=policy(ci_level='"0.\u0669\u0665"'),
        file="policy.yaml",
        control="c1",
        key="ci_level",
    ),
    Case(
        "policy-cli-bootstrap-underscore",
        ("invalid int value: '1_000'",),
        args=("--bootstrap", "1_000"),
        output=False,
    ),
    Case(
        "policy-cli-ci-level-unicode",
        ("invalid float value",),
        args=("--ci-level", "0.\u0669\u0665"),
        output=False,
    ),
    Case(
        "policy-gap-threshold-above-range",
        ("can never fail", "takes values in [0, 1]"),
        policy=policy(threshold='"1.5"'),
        file="policy.yaml",
        control="c1",
        key="threshold",
    ),
    Case(
        "policy-ratio-ge-above-one",
        ("'>= 1.2' can never pass", "takes values in [0, 1]"),
        policy=policy(metric_key="demographic_parity_ratio", operator="'>='", threshold='"1.2"'),
        file="policy.yaml",
        control="c1",
        key="threshold",
    ),
]
