"""Bad-input rows: Venturalitica's shapes fairpolicy refuses, each with the reason and the
fix (issue 27 item 2; the vendored samples in tests/fixtures/venturalitica/samples/ hold
each one; see docs/migrating-from-venturalitica.md)."""

from __future__ import annotations

from tests.bad_inputs.cases import Case, policy

_PROPS = """        props:
          - {name: metric_key, value: demographic_parity_diff}
          - {name: threshold, value: "0.2"}
          - {name: operator, value: "<"}
          - {name: input.target, value: y_true}
          - {name: input.prediction, value: y_pred}
          - {name: input.dimension, value: sex}
"""

#: the "hybrid" catalog of the samples' loan model_policy.oscal.yaml, in small
_HYBRID = (
    """catalog:
  uuid: governance-baseline
  metadata: {title: hybrid}
  controls:
    - id: A.1
      title: Fairness
      description: no unjustified bias
  inventory-items:
    - uuid: m-fairness-1
      description: Demographic Parity Difference
"""
    + _PROPS.replace("        props", "      props").replace("          -", "        -")
    + """  control-implementations:
    - uuid: impl-baseline
      source: Venturalitica Baseline
      implemented-requirements:
        - uuid: req-f1
          control-id: A.1
          links: [{href: "#m-fairness-1", rel: related}]
"""
)

#: what `venturalitica pull` writes, one requirement
_SSP = (
    """system-security-plan:
  uuid: cml3lqq1d001tzuqhf3ua4cer
  metadata: {title: pulled, version: '1.0', oscal-version: 1.1.2}
  control-implementation:
    description: ISO 23894 Implementation Controls
    implemented-requirements:
      - uuid: req-1
        control-id: c1
        legacy-id: cml3lr91p001xzuqh5lfrh10m
"""
    + _PROPS.replace("        props", "        props").replace("          -", "          -")
    + "  risks: [{uuid: r1, title: a risk, status: active}]\n"
)

_NIST_SSP = """system-security-plan:
  uuid: 0b3a0c52-2d8b-4a5c-9a0e-1f6a2b3c4d5e
  metadata: {title: t, last-modified: '2026-01-01T00:00:00Z', version: '1', oscal-version: 1.1.2}
  import-profile: {href: profile.json}
  system-characteristics: {system-name: s}
  system-implementation: {users: []}
  control-implementation:
    description: d
    implemented-requirements: []
"""

CASES: list[Case] = [
    Case(
        "vtl-hybrid-catalog",
        ('"hybrid" form', "evaluates none of these metrics", "inventory item's props"),
        policy=_HYBRID,
        key="catalog.inventory-items",
        subprocess=True,
    ),
    Case(
        "vtl-age-buckets",
        ("age bucketing", "pandas.qcut", "closed on the left", "bins: q3"),
        policy=policy() + "    - {name: age_bucket_method, value: quantiles}\n"
        "    - {name: age_buckets, value: '3'}\n",
        control="c1",
        key="age_bucket_method",
    ),
    Case(
        "vtl-yaml-key-twice",
        ("duplicate key 'value'", "once per mapping"),
        policy=policy().replace(
            "{name: metric_key, value: demographic_parity_diff}",
            "{name: metric_key, value: k_anonymity, value: demographic_parity_diff}",
        ),
        key="value",
    ),
    Case(
        "vtl-nist-ssp-as-policy",
        ("NIST system-security-plan", "imports the profile", "profile.json DATA", "--ssp"),
        policy=_NIST_SSP,
        key="system-security-plan.import-profile",
    ),
    Case(
        "vtl-ssp-unknown-key",
        ("'threshold'", "refused rather than ignored", "venturalitica pull"),
        policy=_SSP.replace(
            "        legacy-id:", '        threshold: "0.0001"\n        legacy-id:'
        ),
        control="c1",
        key="system-security-plan.control-implementation.implemented-requirements[0].threshold",
    ),
    Case(
        "vtl-input-not-a-parameter",
        ("unknown input role 'strategy'", "takes the parameters aggregation"),
        policy=policy(metric_key="multiclass_demographic_parity", input__strategy="macro"),
        control="c1",
        key="input.strategy",
    ),
    Case(
        "vtl-parameter-twice",
        ("parameter 'average' is given twice", "input.average"),
        policy=policy(
            metric_key="f1_score",
            threshold='"0.5"',
            operator="'>'",
            drop=("input.dimension",),
            input__average="macro",
            average="micro",
        ),
        control="c1",
        key="input.average",
    ),
]
