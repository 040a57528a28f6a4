"""Bad-input rows: keys fairpolicy does not read are refused by name, in every form (a
top-level ``threshold`` beside the props used to be dropped and the looser prop passed)."""

from __future__ import annotations

from tests.bad_inputs.cases import Case, policy

_AP = """assessment-plan:
  control-implementations:
    - description: gate
      implemented-requirements:
        - control-id: c1
          threshold: "0.0001"
          props:
            - {name: metric_key, value: demographic_parity_diff}
            - {name: threshold, value: "0.9"}
            - {name: operator, value: "<"}
            - {name: input.target, value: y_true}
            - {name: input.prediction, value: y_pred}
            - {name: input.dimension, value: sex}
"""

CASES: list[Case] = [
    Case(
        "keys-list-threshold-beside-props",
        ("'threshold'", "refused rather than ignored", "props"),
        policy=policy(threshold='"0.9"') + '  threshold: "0.0001"\n',
        control="c1",
        key="threshold",
        subprocess=True,
    ),
    Case(
        "keys-assessment-plan-threshold-beside-props",
        ("'threshold'", "refused rather than ignored"),
        policy=_AP,
        control="c1",
    ),
    Case(
        "keys-component-definition-enforcement-at-implementation",
        ("'enforcement_mode'", "refused rather than ignored"),
        policy=_AP.replace("assessment-plan:", "component-definition:\n  components:\n  - title: m")
        .replace("  control-implementations:", "    control-implementations:")
        .replace('          threshold: "0.0001"\n', "")
        .replace("- description: gate", "- description: gate\n      enforcement_mode: block"),
        key="enforcement_mode",
    ),
    Case(
        "keys-top-level-beside-root",
        ("top-level key 'threshold'", "refused rather than ignored"),
        policy=_AP.replace('          threshold: "0.0001"\n', "") + 'threshold: "0.0001"\n',
        key="threshold",
    ),
    Case(
        "keys-list-set-parameters",
        ("set-parameters takes effect only",),
        policy=policy()
        + "  set-parameters:\n    - {param-id: c1_prm_threshold, values: ['0.0001']}\n",
        control="c1",
    ),
    Case(
        "keys-prop-ns-near-miss",
        ("near miss", "https://fairpolicy.example.org/ns/oscal"),
        policy=policy(threshold='"0.9"')
        + "    - {name: threshold, value: '0.0001', ns: 'http://fairpolicy.example.org/ns/oscal'}\n",
        control="c1",
        key="threshold",
    ),
]
