"""A control's parameter props read as its metric's parameters (and the control settings
``min_samples``/``missing``): each value parsed as the parameter's kind, an unknown name
named with the parameters the metric takes. Split from :mod:`fairpolicy.policy.load`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fairpolicy.errors import did_you_mean
from fairpolicy.exact import written_number
from fairpolicy.policy.numbers import NUMBER_HINT, parse_float, parse_int
from fairpolicy.policy.schema import CONTROL_PROPS, ROLES

if TYPE_CHECKING:
    from fairpolicy.metrics.base import MetricSpec, ParamSpec

__all__ = ["coerce_param", "metric_params", "prop_text"]

#: how a problem is reported: err(message, key, hint=None)
Err = Callable[..., None]


def prop_text(value: Any) -> str | None:
    """A prop value as text: YAML numbers and booleans become the strings OSCAL wants."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value).strip()


def metric_params(
    spec: MetricSpec | None, others: list[tuple[str, Any]], err: Err
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(metric params, Control settings min_samples/missing) from the remaining props."""
    from fairpolicy.metrics.registry import COMMON_PARAMS

    declared = {p.name: p for p in (*(spec.params if spec else ()), *COMMON_PARAMS)}
    params: dict[str, Any] = {}
    settings: dict[str, Any] = {}
    for name, value in others:
        ps = declared.get(name)
        if ps is None:
            if spec is not None:  # an unknown metric was reported already
                names = [*declared, *CONTROL_PROPS, *(f"input.{r}" for r in ROLES)]
                err(
                    f"unknown prop '{name}'; metric '{spec.key}' takes the parameters "
                    f"{', '.join(declared)}.{did_you_mean(name, names)}",
                    name,
                )
            continue
        try:
            coerced = coerce_param(ps, value)
        except ValueError as exc:
            err(f"{name} {exc}", name, ps.help or None)
            continue
        if name == "max_regression" and coerced < 0:
            err(f"max_regression {coerced:g} is negative", name, "write how much worse (≥ 0)")
            continue
        if name in ("max_regression", "min_share"):  # decided exactly, as written
            coerced = written_number(prop_text(value) or repr(coerced), coerced)
        if name in ("min_samples", "missing"):
            settings[name] = coerced
        else:
            params[name] = coerced
    return params, settings


def coerce_param(ps: ParamSpec, value: Any) -> Any:
    """Parse a prop value as the parameter's kind; ValueError says what is wrong."""
    text = prop_text(value)
    if not text:
        raise ValueError("has no value")
    out: Any = text
    if ps.kind is bool:
        if text.lower() not in ("true", "false", "yes", "no", "1", "0"):
            raise ValueError(f"'{text}' is not true or false")
        out = text.lower() in ("true", "yes", "1")
    elif ps.kind is int:
        try:
            out = parse_int(text)
        except ValueError as exc:
            raise ValueError(f"{exc} (write ASCII digits, e.g. 30)") from None
        low = 2 if ps.name == "num_classes" else 1
        if out < low:
            raise ValueError(f"{out} is below {low}")
    elif ps.kind is float:
        try:
            out = parse_float(text)
        except ValueError as exc:
            raise ValueError(f"{exc} ({NUMBER_HINT})") from None
    if ps.choices is not None and out not in ps.choices:
        allowed = [str(c) for c in ps.choices]
        raise ValueError(
            f"'{text}' is not allowed; allowed: {', '.join(allowed)}.{did_you_mean(text, allowed)}"
        )
    return out
