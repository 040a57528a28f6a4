"""``fairpolicy power``: how many rows per group a control needs to be decided.

For a gap or ratio of one binary rate (demographic parity, equal opportunity, FPR, PPV, …)
and the group rates you expect, the rows per group at which the interval ``fairpolicy
check`` reports (the score method of :mod:`fairpolicy.stats.rate_forms`) lies entirely
on one side of the threshold with a given probability:

- if the expected value complies, the rows for ``decision: ci_upper`` to *prove*
  compliance (the whole interval satisfies the threshold);
- if it violates, the rows for ``decision: ci_lower`` to *prove* the violation (the whole
  interval violates it).

Method. For n rows per group, each group's rate rests on m = round(n × share) rows (share:
the part of a group's rows in the rate's denominator — 1 for demographic parity, the
prevalence for TPR, the selection rate for PPV); ``sims`` samples x_g ~ Binomial(m, p_g)
are drawn (seeded per n) and the product's interval computed on each; the probability is
the share of samples decided. The smallest such n is found by doubling, then bisection.
The Monte Carlo error of the probability is about sqrt(p(1 − p)/sims) (0.02 at 400
samples), so treat the answer as "about N".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import cast

import numpy as np

from fairpolicy.errors import UsageError
from fairpolicy.exact import (
    ExactFloat,
    Op,
    compare,
    decimal_fraction,
    exact_decimal,
    level_percent,
    threshold_text,
)
from fairpolicy.stats.rate_forms import decided_share, rows_needed

__all__ = ["Power", "decided_share", "metric_form", "render", "required_rows"]

OPERATORS = ("<", "<=", ">", ">=")
#: the most simulated samples per size (``--sims``): the run stays bounded
MAX_SIMS = 100_000


def _exact(x: float | str, what: str = "--threshold") -> Fraction:
    """A rate or threshold as the decimal written (text), or a float's shortest decimal."""
    if isinstance(x, str):
        try:
            from fairpolicy.policy.numbers import parse_float

            parse_float(x.strip())  # the policy's number grammar: no 1_0, nan, inf
            return exact_decimal(x)
        except (ValueError, ZeroDivisionError) as exc:
            raise UsageError(
                f"fairpolicy power: {what} {x!r} is not a finite number ({exc}); write a plain "
                "decimal such as 0.1"
            ) from None
    return decimal_fraction(x)


@dataclass(frozen=True)
class Power:
    metric: str
    reduce: str  # "gap" or "ratio"
    expected: float
    complies: bool
    #: rows per group for the decision the expected value allows; None: not reachable
    rows: int | None
    decision: str  # "ci_upper" (prove compliance) or "ci_lower" (prove the violation)
    probability_at_rows: float | None
    reason: str | None = None


def metric_form(key: str) -> tuple[str, str]:
    """(rate, reduce) of a metric that is a gap or ratio of one binary rate; UsageError
    otherwise."""
    from fairpolicy.metrics.registry import lookup
    from fairpolicy.stats import GroupStats
    from fairpolicy.stats.bands import Form, candidates
    from fairpolicy.stats.proportions import RATE_CELLS

    try:
        spec = lookup(key)
    except KeyError as exc:
        raise UsageError(f"fairpolicy power: {exc.args[0]}") from None
    counts = np.array([[[40, 10], [15, 35]], [[30, 20], [10, 40]]], dtype=np.int64)
    probe = GroupStats(("g",), ("a", "b"), ("0", "1"), counts, positive=1)
    try:
        mv = spec.fn(probe, {})
    except Exception:
        mv = None
    rate = None if mv is None else mv.details.get("rate")
    forms = [] if mv is None else candidates(mv)
    reduce = next((f.reduce for f in forms if f == Form(f.reduce, "one", ("groups",))), None)
    if not isinstance(rate, str) or rate not in RATE_CELLS or reduce not in ("gap", "ratio"):
        raise UsageError(
            f"fairpolicy power: metric '{key}' is not the gap or ratio of one binary rate; "
            "power is computed for those (demographic_parity_diff, "
            "demographic_parity_ratio, equal_opportunity_diff, fpr_diff, "
            "predictive_parity_diff, …), whose interval is the score method."
        )
    return rate, str(reduce)


def required_rows(
    key: str,
    rates: Sequence[float],
    threshold: float | str,
    op: str,
    *,
    level: float = 0.95,
    probability: float = 0.8,
    share: float = 1.0,
    sims: int = 400,
    seed: int = 20261127,
    max_rows: int = 10_000_000,
) -> Power:
    """The rows per group (see the module docstring). ``threshold``: a number, or the
    decimal as written (``"0.09999999999999999999"``, ``"1e-400"``), decided exactly: the
    expected value is the exact gap or ratio of the rates' decimals (0.5 − 0.4 is 0.1)."""
    _, reduce = metric_form(key)
    exact_threshold = _exact(threshold)
    threshold = float(exact_threshold)
    _check(rates, threshold, op, level, probability, share, sims, max_rows)
    exact_rates = [_exact(r, "--rates") for r in rates]
    hi, lo = max(exact_rates), min(exact_rates)
    if reduce != "gap" and hi == 0:
        raise UsageError("fairpolicy power: every rate is 0, so the ratio is undefined.")
    exact_expected = hi - lo if reduce == "gap" else lo / hi
    expected = float(exact_expected)
    at = exact_expected == exact_threshold
    complies = compare(ExactFloat(exact_expected), cast(Op, op), exact_threshold)
    decision = "ci_upper" if complies else "ci_lower"
    if at:
        return Power(
            key,
            reduce,
            expected,
            complies,
            None,
            decision,
            None,
            ("the expected value equals the threshold: no sample size decides it"),
        )

    rows, p = rows_needed(
        rates, reduce, op, threshold, level, probability, share, sims, seed, max_rows, decision
    )
    if rows is None:
        return Power(
            key,
            reduce,
            expected,
            complies,
            None,
            decision,
            p,
            (
                f"not reached by {max_rows} rows per group (probability {p:.2f} there): "
                "the expected value is too close to the threshold"
            ),
        )
    return Power(key, reduce, expected, complies, rows, decision, p)


def _check(
    rates: Sequence[float],
    threshold: float,
    op: str,
    level: float,
    probability: float,
    share: float,
    sims: int,
    max_rows: int,
) -> None:
    def bad(what: str, fix: str) -> UsageError:
        return UsageError(f"fairpolicy power: {what}; {fix}")

    if len(rates) < 2:
        raise bad(
            f"{len(rates)} rate(s) given",
            "give one expected rate per group, at least two (--rates 0.5,0.4)",
        )
    for r in rates:
        if not (0.0 <= r <= 1.0) or not math.isfinite(r):
            raise bad(f"the rate {r!r} is not a proportion", "every rate lies in [0, 1]")
    if op not in OPERATORS:
        raise bad(f"operator {op!r}", f"use one of {', '.join(OPERATORS)}")
    if not math.isfinite(threshold):
        raise bad(f"threshold {threshold!r}", "give a finite number")
    for name, v in (("--level", level), ("--probability", probability)):
        if not 0.0 < v < 1.0:
            raise bad(f"{name} {v!r}", "it lies strictly between 0 and 1")
    if not 0.0 < share <= 1.0:
        raise bad(
            f"--share {share!r}",
            "the share of a group's rows in the rate's denominator lies in (0, 1]",
        )
    if not 50 <= sims <= MAX_SIMS:
        raise bad(f"--sims {sims}", f"use 50 to {MAX_SIMS} simulated samples per size")
    if max_rows < 8:
        raise bad(f"--max-rows {max_rows}", "use at least 8")


def render(
    p: Power,
    rates: Sequence[float],
    threshold: float | str,
    op: str,
    level: float,
    probability: float,
    share: float,
    sims: int,
) -> str:
    method = "Newcombe" if p.reduce == "gap" else "Koopman"
    head = (
        f"{p.metric} {op} {threshold_text(threshold)}: {len(rates)} groups at rates "
        f"{', '.join(f'{r:g}' for r in rates)} (expected value {p.expected:.4g}, "
        f"{'complies' if p.complies else 'violates'}); {level_percent(level)}% {method} score "
        f"intervals; share of rows in the rate's denominator {share:g}; "
        f"{sims} simulated samples per size\n"
    )
    goal = "prove compliance" if p.decision == "ci_upper" else "prove the violation"
    if p.rows is None:
        return head + f"decision {p.decision} cannot {goal}: {p.reason}\n"
    return head + (
        f"decision {p.decision} proves {goal.split(' ', 1)[1]} with probability "
        f"≥ {probability:g} at about {p.rows} rows per group "
        f"(simulated probability {p.probability_at_rows:.2f}; MC s.e. "
        f"{math.sqrt(max(probability * (1 - probability), 1e-4) / sims):.2f})\n"
    )
