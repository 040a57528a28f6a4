"""Decision rules: the point value, or the whole bootstrap interval (ci_upper / ci_lower)."""

from __future__ import annotations

import pytest

from fairpolicy.decide import status_for
from fairpolicy.policy.schema import Control, EnforcementMode, Operator, Threshold
from fairpolicy.results import ConfidenceInterval, ExcludedGroup, Finding, summarize


def ctl(op: Operator = Operator.LT, t: float = 0.1, **kw: object) -> Control:
    threshold = Threshold(low=0.8, high=1.25) if op is Operator.BETWEEN else Threshold(value=t)
    return Control(
        control_id="c",
        metric_key="demographic_parity_diff",
        metric_key_as_written="demographic_parity_diff",
        threshold=threshold,
        operator=op,
        inputs={"target": "y", "prediction": "p", "dimension": "g"},
        **kw,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    ("interval", "expected"),
    [
        ((0.02, 0.08), "pass"),  # whole interval below 0.1
        ((0.05, 0.12), "inconclusive"),  # straddles
        ((0.11, 0.20), "fail"),  # whole interval violates
    ],
)
@pytest.mark.parametrize("rule", ["ci_upper", "ci_lower"])
def test_interval_rules(interval: tuple[float, float], expected: str, rule: str) -> None:
    status, reason = status_for(ctl(), 0.07, rule, interval)
    assert status == expected
    assert (reason is not None) == (expected == "inconclusive")


def test_point_rule_ignores_the_interval() -> None:
    assert status_for(ctl(), 0.07, "point", (0.05, 0.5)) == ("pass", None)
    assert status_for(ctl(), 0.15, "point", None) == ("fail", None)


def test_interval_rule_without_interval_is_inconclusive_never_pass() -> None:
    status, reason = status_for(ctl(), 0.01, "ci_upper", None)
    assert status == "inconclusive" and reason and "confidence interval" in reason
    assert status_for(ctl(), 0.01, "ci_lower", (None, None))[0] == "inconclusive"


def test_greater_than_and_between() -> None:
    ge = ctl(Operator.GE, 0.8)
    assert status_for(ge, 0.9, "ci_upper", (0.82, 0.95))[0] == "pass"
    assert status_for(ge, 0.9, "ci_upper", (0.75, 0.95))[0] == "inconclusive"
    assert status_for(ge, 0.7, "ci_upper", (0.6, 0.79))[0] == "fail"
    band = ctl(Operator.BETWEEN)
    assert status_for(band, 1.0, "ci_upper", (0.9, 1.1))[0] == "pass"
    assert status_for(band, 1.0, "ci_upper", (0.7, 1.1))[0] == "inconclusive"
    assert status_for(band, 1.5, "ci_upper", (1.3, 1.6))[0] == "fail"


def test_warn_mode_turns_a_proven_violation_into_warn() -> None:
    c = ctl(enforcement_mode=EnforcementMode.WARN)
    assert status_for(c, 0.2, "ci_upper", (0.15, 0.25))[0] == "warn"


def _finding(
    status: str, decision: str, value: float | None = 0.1, interval: bool = True
) -> Finding:
    ci = ConfidenceInterval(
        low=0.05, high=0.15, level=0.95, method="percentile", resamples=200, seed=1, valid=200
    )
    return Finding(
        ci=ci if interval else None,
        control_id="c",
        title=None,
        metric_key="m",
        inputs={},
        params={},
        value=value,
        operator="<",
        threshold=0.1,
        status=status,  # type: ignore[arg-type]
        message="",
        decision=decision,  # type: ignore[arg-type]
        excluded_groups=[ExcludedGroup(group="x", n=1, reason="r")],
    )


def test_gate_ci_upper_straddle_fails_ci_lower_straddle_does_not() -> None:
    assert summarize([_finding("inconclusive", "ci_upper")], "fail").gate == "fail"
    assert summarize([_finding("inconclusive", "ci_lower")], "fail").gate == "pass"
    # an undefined value is inconclusive under every rule and follows --inconclusive
    assert summarize([_finding("inconclusive", "ci_lower", None)], "fail").gate == "fail"
    assert summarize([_finding("inconclusive", "point", None)], "pass").gate == "pass"
    # no interval: ci_lower proves nothing either way, so --inconclusive decides (fail)
    assert summarize([_finding("inconclusive", "ci_lower", interval=False)], "fail").gate == "fail"
