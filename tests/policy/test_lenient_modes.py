"""``severity`` and ``enforcement_mode`` spellings gate the same way everywhere (issue 16):
``warn`` and ``warning`` (any case) are one mode, in either prop, in every policy form."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from fairpolicy.errors import PolicyError
from fairpolicy.policy.load import load_policy
from fairpolicy.policy.schema import EnforcementMode
from tests.bad_inputs.cases import policy

SPELLINGS = {
    "block": EnforcementMode.BLOCK,
    "warn": EnforcementMode.WARN,
    "warning": EnforcementMode.WARN,
    "monitor": EnforcementMode.MONITOR,
}


def _case(word: str, flips: list[bool]) -> str:
    return "".join(c.upper() if f else c for c, f in zip(word, flips, strict=False))


def _mode(**props: str) -> EnforcementMode:
    (control,) = load_policy(yaml.safe_load(policy(**props))).controls
    return control.enforcement_mode


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(sorted(SPELLINGS)),
    st.lists(st.booleans(), min_size=7, max_size=7),
    st.sampled_from(["enforcement_mode", "severity"]),
)
def test_every_spelling_gates_the_same_in_either_prop(
    word: str, flips: list[bool], prop: str
) -> None:
    written = _case(word, flips)
    mode = _mode(**{prop: f"'{written}'"})
    if prop == "enforcement_mode":
        assert mode is SPELLINGS[word]
    else:  # severity only ever relaxes to warn; other severities are labels
        assert mode is (EnforcementMode.WARN if word in ("warn", "warning") else mode.BLOCK)


def test_enforcement_mode_wins_over_severity() -> None:
    assert _mode(enforcement_mode="block", severity="warning") is EnforcementMode.BLOCK
    assert _mode(enforcement_mode="monitor", severity="warn") is EnforcementMode.MONITOR
    assert _mode(severity="high") is EnforcementMode.BLOCK


@pytest.mark.parametrize("bad", ["warnn", "blocking", "Monitoring"])
def test_an_unknown_mode_is_refused_with_a_did_you_mean(bad: str) -> None:
    with pytest.raises(PolicyError) as exc:
        load_policy(yaml.safe_load(policy(enforcement_mode=f"'{bad}'")))
    text = exc.value.render()
    assert f"enforcement_mode '{bad}'" in text and "Did you mean" in text
    for word in SPELLINGS:
        assert word in text


CATALOG = """
catalog:
  uuid: 11111111-1111-4111-8111-111111111111
  metadata:
    {{title: c, last-modified: "2026-01-01T00:00:00+00:00", version: "1", oscal-version: 1.1.2}}
  controls:
    - id: c1
      title: dp
      props:
        - {{name: metric_key, value: demographic_parity_diff, ns: "https://fairpolicy.dev/ns/oscal"}}
        - {{name: threshold, value: "0.2", ns: "https://fairpolicy.dev/ns/oscal"}}
        - {{name: operator, value: lt, ns: "https://fairpolicy.dev/ns/oscal"}}
        {extra}
"""

COMPONENT = """
component-definition:
  components:
    - title: m
      type: software
      control-implementations:
        - source: catalog.yaml
          description: d
          implemented-requirements:
            - control-id: c1
              props:
                - {{name: input.target, value: y_true}}
                - {{name: input.prediction, value: y_pred}}
                - {{name: input.dimension, value: sex}}
                - {{name: {name}, value: {value}}}
"""


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("enforcement_mode", "warn"),
        ("enforcement_mode", "warning"),
        ("severity", "warn"),
        ("severity", "Warning"),
    ],
)
def test_a_component_relaxing_the_catalogs_mode_is_reported_whatever_the_spelling(
    tmp_path: Path, name: str, value: str
) -> None:
    from fairpolicy.policy.schema import NS

    extra = f'- {{name: enforcement_mode, value: block, ns: "{NS}"}}'
    (tmp_path / "catalog.yaml").write_text(
        CATALOG.format(extra=extra).replace("https://fairpolicy.dev/ns/oscal", NS)
    )
    path = tmp_path / "cd.yaml"
    path.write_text(COMPONENT.format(name=name, value=value))
    pol = load_policy(path)
    warn_or_not = [w for w in pol.warnings if "gates less than 'block'" in w]
    if name == "severity":  # the catalog's explicit enforcement_mode wins over a severity
        assert pol.controls[0].enforcement_mode is EnforcementMode.BLOCK and not warn_or_not
    else:
        assert pol.controls[0].enforcement_mode is EnforcementMode.WARN and warn_or_not
