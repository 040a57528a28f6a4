"""PLACEHOLDER (branch windows): the interface of the ``sequential`` window gate that
helper "seq" writes in full (alpha spending α_t = α·52/((t+51)(t+52)), whose sum over
all t is α). The lead merges that module over this one; the signatures are the same."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: H of the spending function (52 weekly windows)
HORIZON = 52


def window_level(t: int, alpha: float, horizon: int = HORIZON) -> float:
    """The level 1 − α_t of window t's interval (t = 1, 2, …)."""
    return 1.0 - alpha * horizon / ((t + horizon - 1) * (t + horizon))


@dataclass(frozen=True)
class Resolution:
    ok: bool
    reason: str | None = None
    resamples_needed: int | None = None


def resolution(method: str, level: float, resamples: int | None = None) -> Resolution:
    """Whether an interval of ``method`` with ``resamples`` replicates resolves ``level``:
    a score interval always; a bootstrap one with ≥ 10 replicates beyond its tail."""
    if method == "score":
        return Resolution(True)
    tail = (1.0 - level) / (2.0 if method in ("percentile", "bca") else 1.0)
    need = math.ceil(10 / tail)
    if (resamples or 0) >= need:
        return Resolution(True)
    return Resolution(
        False,
        f"the {method} interval at level {level:.6g} needs at least {need:,} resamples to "
        "resolve its tail: the window cannot alarm",
        need,
    )


def violates(low: float, high: float, threshold: Any, op: str) -> bool:
    """Whether no value in [low, high] satisfies ``op threshold`` (exact decimals)."""
    from fairpolicy.exact import compare, float_bound

    t_lo, t_hi = threshold.bounds() if hasattr(threshold, "bounds") else (threshold, threshold)
    if op == "between":
        return high < float_bound(t_lo) or low > float_bound(t_hi)
    if op == "==":
        return not (low <= float_bound(t_lo) <= high)
    if op == "!=":
        return False
    return not compare(low, op, t_lo) and not compare(high, op, t_lo)  # type: ignore[arg-type]


def sequential_alarm(
    intervals: Sequence[tuple[float | None, float | None]], threshold: Any, op: str
) -> int | None:
    """The 0-based index of the first window whose interval lies wholly on the violating
    side of ``op threshold``, else None; (None, None) never alarms."""
    for i, (low, high) in enumerate(intervals):
        if low is None or high is None or math.isnan(low) or math.isnan(high):
            continue
        if violates(low, high, threshold, op):
            return i
    return None
