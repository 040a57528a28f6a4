"""Turn a metric value, a threshold and an operator into a status.

``pass`` when the value satisfies the control; otherwise ``fail`` for a
blocking control and ``warn`` for a ``warn`` or ``monitor`` control (monitor
controls never gate). A value that could not be computed is ``inconclusive``;
whether that fails the gate is the run's ``--inconclusive`` choice.
"""

from __future__ import annotations

from fairpolicy.policy.schema import Control, EnforcementMode, Operator, Threshold
from fairpolicy.results import Status


def satisfies(value: float, operator: Operator, threshold: Threshold) -> bool:
    """Whether ``value <operator> threshold`` holds (``between`` is inclusive)."""
    if operator is Operator.BETWEEN:
        assert threshold.low is not None and threshold.high is not None
        return threshold.low <= value <= threshold.high
    t = threshold.value
    assert t is not None
    return {
        Operator.LT: value < t,
        Operator.LE: value <= t,
        Operator.GT: value > t,
        Operator.GE: value >= t,
        Operator.EQ: value == t,
        Operator.NE: value != t,
    }[operator]


def status_for(control: Control, value: float | None) -> Status:
    if value is None:
        return "inconclusive"
    if satisfies(value, control.operator, control.threshold):
        return "pass"
    return "fail" if control.enforcement_mode is EnforcementMode.BLOCK else "warn"


def describe(control: Control, value: float | None, status: Status, reason: str | None) -> str:
    """One sentence a person reads in the table, the JSON and CI logs."""
    cond = f"{control.operator.value} {control.threshold.render()}"
    if value is None:
        return f"inconclusive: {reason or 'value undefined'} (required {cond})"
    shown = f"{value:.6g}"
    mode = control.enforcement_mode
    if status == "pass":
        return f"{control.metric_key} = {shown} satisfies {cond}"
    suffix = "" if mode is EnforcementMode.BLOCK else f" ({mode.value}: does not fail the gate)"
    return f"{control.metric_key} = {shown} violates {cond}{suffix}"
