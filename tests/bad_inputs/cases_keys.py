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

_INVALID_OSCAL = """component-definition:
  uuid: 3c0b7d52-7f1e-4b8a-9a43-1f2d6c8e4a70
  metadata: {title: gate, version: "1"}
  components:
    - uuid: 4c0b7d52-7f1e-4b8a-9a43-1f2d6c8e4a71
      type: software
      title: m
      description: model
      control-implementations:
        - uuid: 5c0b7d52-7f1e-4b8a-9a43-1f2d6c8e4a72
          source: "#"
          description: gate
          implemented-requirements:
            - uuid: 6c0b7d52-7f1e-4b8a-9a43-1f2d6c8e4a73
              control-id: c1
              description: dp
              props:
                - {name: metric_key, value: demographic_parity_diff}
                - {name: threshold, value: "0.2"}
                - {name: operator, value: "<"}
                - {name: input.target, value: y_true}
                - {name: input.prediction, value: y_pred}
                - {name: input.dimension, value: sex}
"""

CASES += [
    Case(
        "strict-invalid-oscal",
        ("not valid OSCAL", "--strict requires valid OSCAL input"),
        policy=_INVALID_OSCAL,
        args=("--strict",),
        key="component-definition.metadata.last-modified",
        subprocess=True,
    ),
    Case(
        "strict-list-form",
        ("--strict requires valid OSCAL input", "convert"),
        args=("--strict",),
        key="list",
    ),
]
