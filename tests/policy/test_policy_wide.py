"""Policy-wide statistics settings in ``metadata.props`` (issue 5: ``ci`` per control or
policy-wide)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from fairpolicy.errors import PolicyError
from fairpolicy.policy.load import load_policy
from fairpolicy.policy.schema import NS
from fairpolicy.runner import check
from tests.helpers import balanced_csv, control


def plan(tmp: Path, metadata_props: list[dict[str, Any]], *controls: dict[str, Any]) -> Path:
    doc = {
        "assessment-plan": {
            "metadata": {"title": "t", "props": metadata_props},
            "control-implementations": [{"implemented-requirements": list(controls)}],
        }
    }
    path = tmp / "plan.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def test_metadata_props_apply_to_every_control_and_a_control_wins(tmp_path: Path) -> None:
    props = [
        {"name": "ci", "value": "200", "ns": NS},
        {"name": "decision", "value": "ci_upper"},
        {"name": "min_samples", "value": "10", "ns": NS},
    ]
    pol = load_policy(plan(tmp_path, props, control("a"), control("b", ci="50")))
    a, b = pol.controls
    assert a.params["ci"] == 200 and a.params["decision"] == "ci_upper"
    assert a.min_samples == 10 and b.min_samples == 10
    assert b.params["ci"] == 50  # the control's own prop wins
    assert b.params["decision"] == "ci_upper"


def test_policy_wide_ci_gives_every_finding_an_interval(tmp_path: Path) -> None:
    data = balanced_csv(tmp_path)
    props = [{"name": "ci", "value": "300", "ns": NS}]
    res = check(
        plan(tmp_path, props, control("a"), control("b", metric="equal_opportunity_diff")), data
    )
    for f in res.findings:
        assert f.ci is not None and f.ci.resamples == 300 and f.ci.low is not None
        assert f.ci.low <= f.value <= f.ci.high
    # the command line still wins over the policy
    res = check(plan(tmp_path, props, control("a")), data, bootstrap=0)
    assert res.findings[0].ci is None


def test_unknown_fairpolicy_metadata_prop_is_an_error(tmp_path: Path) -> None:
    props = [{"name": "metric_key", "value": "demographic_parity_diff", "ns": NS}]
    with pytest.raises(PolicyError) as exc:
        load_policy(plan(tmp_path, props, control("a")))
    assert "not a policy-wide setting" in str(exc.value)


def test_bad_policy_wide_value_names_the_control(tmp_path: Path) -> None:
    props = [{"name": "ci_method", "value": "bcaa", "ns": NS}]
    with pytest.raises(PolicyError) as exc:
        load_policy(plan(tmp_path, props, control("a")))
    assert "ci_method" in str(exc.value) and "bca" in str(exc.value)


def test_foreign_metadata_props_are_ignored_with_a_warning_when_close(tmp_path: Path) -> None:
    props = [
        {"name": "owner", "value": "risk team"},
        {"name": "ci_levle", "value": "0.9"},
    ]
    pol = load_policy(plan(tmp_path, props, control("a")))
    assert "ci_level" not in pol.controls[0].params
    assert len(pol.warnings) == 1 and "ci_levle" in pol.warnings[0]
    assert "ci_level" in pol.warnings[0]
