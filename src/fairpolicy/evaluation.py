"""Evaluation: requests → findings. For each planned control (:mod:`fairpolicy.planning`)
the :class:`~fairpolicy.evaluator.Evaluator`'s statistics are measured (unknown and small
groups excluded, then the metric), decided (:mod:`fairpolicy.decide`) and recorded as one
:class:`~fairpolicy.results.Finding`; a control that cannot be evaluated becomes a finding
with status ``error``, never an exception that hides the others.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from fairpolicy.assemble import finding, group_keys, jsonable
from fairpolicy.data import limits as _limits
from fairpolicy.decide import describe, status_for, violated_throughout, within
from fairpolicy.errors import BindingError, FairpolicyError, MetricError, Problem
from fairpolicy.evaluator import Evaluator, missing_tokens
from fairpolicy.exact import exact_number, threshold_text, with_exact
from fairpolicy.metrics.base import Excluded, MetricSpec, MetricValue
from fairpolicy.metrics.grid import grid_error
from fairpolicy.planning import Plan
from fairpolicy.policy.schema import Control
from fairpolicy.results import (
    ExcludedGroup,
    Finding,
    GroupResult,
)
from fairpolicy.stats import (
    MISSING_GROUP,
    GroupStats,
)

#: a warning is raised when a compared group has fewer rows than this
SMALL_GROUP_WARNING = 100
#: groups a warning names before it says how many more there are
NAMED_IN_WARNING = 20


def measure(
    stats: GroupStats, control: Control, spec: MetricSpec, file: str | None = None
) -> tuple[MetricValue, np.ndarray]:
    """Exclude the unknown and small groups, then apply the metric.

    Returns the value and the mask of the groups it compared (for the bootstrap).
    """
    # a metric that does not compare groups, bound without a dimension: one group, all rows
    pooled = "dimension" not in control.inputs and "dimension" not in spec.inputs
    needed = 1 if pooled else spec.groups_needed
    if len(stats.groups) < needed:
        dim = ",".join(stats.dimension)
        found = f"only one group ('{stats.groups[0]}')" if stats.groups else "no group values"
        raise BindingError(
            Problem(
                f"the dimension column '{dim}' has {found}; a fairness comparison needs at "
                "least two groups.",
                file=file,
                control=control.control_id,
                column=dim,
                hint="bind input.dimension to the protected-attribute column, or evaluate data "
                "that contains more than one group.",
            )
        )
    n = stats.rows_n  # data rows (not the total weight under fractional sample weights)
    # data checks and LL144 impact ratios judge small groups themselves: none is dropped
    small_ok = spec.kind == "data" or not spec.min_samples_applies
    keep = n >= (0 if small_ok else control.min_samples)
    excluded = [
        Excluded(g, int(n[i]), f"fewer rows than min_samples={control.min_samples}")
        for i, g in enumerate(stats.groups)
        if not keep[i]
    ]
    min_share = control.params.get("min_share")
    if min_share and not small_ok:
        total = max(int(n.sum()) + stats.unknown_n, 1)
        share = n / total
        # decided exactly: a group holding exactly min_share of the rows is kept
        floor = exact_number(min_share)
        low = keep & np.array([Fraction(int(k), total) < floor for k in n], dtype=bool)
        excluded += [
            Excluded(
                g,
                int(n[i]),
                f"{share[i]:.2%} of the rows, below min_share={threshold_text(min_share)}",
            )
            for i, g in enumerate(stats.groups)
            if low[i]
        ]
        keep = keep & ~low
    if stats.unknown_n:
        excluded.append(
            Excluded(
                MISSING_GROUP,
                stats.unknown_n,
                f"dimension value missing in '{','.join(stats.dimension)}' (an empty cell or a "
                "null"
                + (
                    ", or one of the missing_values " + ", ".join(map(repr, sorted(tokens)))
                    if (tokens := missing_tokens(control))
                    else ""
                )
                + ")",
            )
        )
    eligible = stats.select(keep)
    if stats.secondary is not None:  # the second grouping obeys min_samples too
        sec = stats.secondary
        sec_keep = sec.rows_n >= control.min_samples
        excluded += [
            Excluded(
                g,
                int(sec.rows_n[i]),
                f"'{','.join(sec.dimension)}' group with fewer rows than "
                f"min_samples={control.min_samples}",
            )
            for i, g in enumerate(sec.groups)
            if not sec_keep[i]
        ]
        eligible = eligible.with_extras(secondary=sec.select(sec_keep))
    if len(eligible.groups) < needed:
        hint = bins_suggestion(stats, control, keep)
        return MetricValue(
            None,
            excluded=tuple(excluded),
            reason=f"{len(eligible.groups)} group(s) with at least min_samples="
            f"{control.min_samples} rows in '{','.join(stats.dimension)}'; at least 2 are "
            "needed to compare" + (f"; {hint}" if hint else ""),
        ), keep
    try:
        mv = spec.fn(eligible, spec.resolve_params(control.params))
    except MetricError as exc:  # name what the metric could not know: file, control, columns
        bound = [control.inputs[r] for r in ("target", "prediction") if r in control.inputs]
        column = ", ".join(bound) if spec.kind == "regression" and bound else None
        raise MetricError(
            [
                dataclasses.replace(
                    p,
                    file=p.file or file,
                    control=p.control or control.control_id,
                    column=p.column or column,
                )
                for p in exc.problems
            ]
        ) from exc
    if eligible.survey is not None:  # fractional weights: a group's n is its rows (the one
        # place this is mapped: metrics write their table's n, here the sum of weights)
        rows = dict(zip(eligible.groups, eligible.rows_n.tolist(), strict=True))
        mv = dataclasses.replace(
            mv,
            groups=tuple(dataclasses.replace(g, n=rows.get(g.group, g.n)) for g in mv.groups),
            excluded=tuple(dataclasses.replace(e, n=rows.get(e.group, e.n)) for e in mv.excluded),
        )
    return MetricValue(
        mv.value,
        mv.groups,
        (*excluded, *mv.excluded),
        mv.details,
        mv.reason,
        mv.worst_group,
        mv.exact,
        mv.bounds,
        cell_rows=mv.cell_rows,
    ), keep


def bins_suggestion(stats: GroupStats, control: Control, keep: np.ndarray) -> str | None:
    """A ``bins`` declaration to suggest (with concrete edges) when a numeric dimension
    column that the control does not bin made many groups and some were too small."""
    if control.params.get("bins") is not None or len(stats.dimension) != 1 or keep.all():
        return None
    from fairpolicy.data.bind.bins import suggest_bins

    return suggest_bins(list(stats.groups), [int(v) for v in stats.rows_n], stats.dimension[0])


def _allocation_bounds(
    mv: MetricValue,
) -> tuple[float, float, tuple[float, ...]] | None:
    """The range of an LL144 impact ratio over the allocations of unknown-category rows
    (``details["bounds"]``: valid low and high ends) and the values some allocation is
    known to attain (an end when it is sharp, and the witness), for decision worst_case /
    best_case."""
    b = mv.details.get("bounds")
    if not isinstance(b, dict) or mv.value is None:
        return None
    if b.get("unknown") == 0:
        v = with_exact(mv.value, mv.exact)
        assert v is not None
        return v, v, (v,)
    if "value_low" not in b:
        return None

    def exact(key: str) -> float | None:
        if key not in b:
            return None
        return with_exact(float(b[key]), Fraction(str(b[f"{key}_exact"])))

    low, high = exact("value_low"), exact("value_high")
    assert low is not None and high is not None
    ends = ((low, b.get("value_low_sharp")), (high, b.get("value_high_sharp")))
    seen = [exact("witness_value"), exact("low_witness_value")]
    return low, high, tuple([v for v, ok in ends if ok] + [v for v in seen if v is not None])


def evaluate(plan: Plan, plans: Sequence[Plan], ev: Evaluator) -> Finding:
    c, spec = plan.control, plan.spec
    try:
        if plan.error is not None:
            raise plan.error
        stats = ev.group_stats(plan, plans)
        gone = ev.emptied(plan)  # groups `missing: drop` emptied: excluded, never absent
        if gone and len(stats.groups) < 2:
            mv = MetricValue(
                None,
                excluded=tuple(gone),
                reason=f"{len(stats.groups)} group(s) left in '{','.join(stats.dimension)}' "
                f"after missing: drop removed every row of {', '.join(e.group for e in gone)}; "
                "at least 2 are needed to compare",
            )
            keep = np.ones(len(stats.groups), dtype=bool)
        else:
            mv, keep = measure(stats, c, spec, ev.table.path or "<DataFrame>")
            if gone:
                mv = dataclasses.replace(mv, excluded=(*mv.excluded, *gone))
        for kind in ("ci", "p_value"):
            resamples = int(c.params.get(kind) or 0)
            if resamples > 0 and mv.value is not None:
                _limits.check_resampling(
                    kind,
                    resamples,
                    _limits.resampled_cells(stats),
                    len(stats.groups),
                    ev.limits,
                    ev.table.path,
                    c.control_id,
                )
        ci, group_ci = ev.interval(plan, stats, keep, mv)
        pv = ev.permutation(plan, stats, keep, mv)
    except FairpolicyError as exc:
        text = " ".join(p.render() for p in exc.problems)
        return finding(c, spec, value=None, status="error", message=text, reason=text)
    decision = c.params.get("decision", "point")
    details = dict(mv.details)
    if len(stats.classes) > 2 and stats.counts.shape[0] == len(stats.groups):
        # multi-class: each compared group's rows per true class (its support), so a
        # per-class value resting on a handful of rows shows it in every report
        details["class_support"] = {
            g: [x.item() for x in stats.counts[i].sum(axis=1)]
            for i, g in enumerate(stats.groups)
            if keep[i]
        }
        details.setdefault("classes", list(stats.classes))
        if ci is not None and stats.survey is None:  # binomial draws of whole rows
            bias = _parity_bias(mv)
            if bias is not None:
                details["bias"] = bias
    error = 0.0
    if ev.decimals is not None and spec.needs_scores and mv.value is not None:
        error = grid_error(
            spec.key, stats.select(keep), spec.resolve_params(c.params), mv, ev.decimals
        )
        details["score_grid"] = {
            "decimals": ev.decimals,
            "max_error": error if math.isfinite(error) else None,
        }
    interval = (ci.low, ci.high) if ci else None
    if ci is not None and ci.low is not None and spec.needs_scores and ev.grid is not None:
        # resampled on the score grid on every engine: widen by its bound before deciding
        ci_error = ev.ci_grid_error(plan, stats, keep, mv)
        note = (
            f"resampled on the score grid of 10^-{ev.grid} on every engine (the same cells, so "
            "the same interval); widened by the grid's error bound "
            + (f"±{ci_error:.3g}" if math.isfinite(ci_error) else "(unbounded)")
            + " before deciding"
        )
        ci = ci.model_copy(update={"note": f"{ci.note}; {note}" if ci.note else note})
        if interval is not None and interval[0] is not None and interval[1] is not None:
            interval = (interval[0] - ci_error, interval[1] + ci_error)
    # a count-based value carries its exact rational: the decision is exact at the threshold
    value = with_exact(mv.value, mv.exact)
    if mv.exact is not None and mv.value is not None:
        details["exact_value"] = str(mv.exact)
    status, why = status_for(c, value, decision, interval, _allocation_bounds(mv))
    if status == "inconclusive" and why and ci is not None and ci.method == "score":
        hint = rows_hint(c, spec.better, mv, stats.select(keep), ci.level)
        why = f"{why}; {hint}" if hint else why
    if why and ci is not None and ci.reason and (ci.low is None or ci.high is None):
        why = f"{why} ({ci.reason})"  # say why there is no interval
    straddles = (
        error
        and status == "pass"
        and decision == "point"
        and mv.value is not None
        and not within(mv.value - error, mv.value + error, c)
    )
    if straddles and mv.value is not None:
        status = "inconclusive"
        engine = ev.table.source.name if ev.table.source else "engine"
        bound = f"±{error:.3g}" if math.isfinite(error) else "an unbounded distance"
        why = (
            f"scores were rounded to {ev.decimals} decimals on the {engine} engine, which "
            f"leaves the exact value within {bound} of {mv.value:.6g}, across the threshold; "
            "rerun with more --score-decimals or --engine embedded"
        )
    if status == "inconclusive" and mv.value is None and mv.bounds is not None:
        # part of the value is known, and every value it can still take violates the
        # control: a certain failure, never an inconclusive that --inconclusive pass passes
        low, high = mv.bounds
        if violated_throughout(low, high, c):
            status = "fail" if c.enforcement_mode.value == "block" else "warn"
            why = (
                f"{mv.reason}; whatever the undefined part is, the value lies in "
                f"[{low:.6g}, {high:.6g}], which violates {c.operator.value} "
                f"{c.threshold.render()} throughout"
            )
            mv = dataclasses.replace(mv, reason=why)
    reason = mv.reason or why
    if mv.value is not None and (hint := bins_suggestion(stats, c, keep)):
        ev.warnings.append(f"control '{c.control_id}': small groups were excluded; {hint}")
    ev.warn_missing(c, stats)
    if stats.secondary is not None:  # the site column of a composite
        ev.warn_missing(c, stats.secondary)
    keys = group_keys(stats)
    small = [g.group for g in mv.groups if g.n < SMALL_GROUP_WARNING]
    if small and mv.value is not None:
        ev.warnings.append(
            f"control '{c.control_id}': the value rests on group(s) with fewer than "
            f"{SMALL_GROUP_WARNING} rows: {', '.join(small[:NAMED_IN_WARNING])}"
            + (
                f" … and {len(small) - NAMED_IN_WARNING:,} more (listed in the JSON report)"
                if len(small) > NAMED_IN_WARNING
                else ""
            )
        )
    return finding(
        c,
        spec,
        value=float(value) if value is not None else None,  # float(exact) when exact
        status=status,
        message=describe(c, value, status, reason, ci)
        + (f" [{details['reading']}]" if isinstance(details.get("reading"), str) else ""),
        reason=reason,
        ci=ci,
        decision=decision,
        p_value=pv,
        groups=[
            GroupResult(
                group=g.group,
                key=keys.get(g.group),
                n=g.n,
                value=g.value,
                ci_low=group_ci.get(g.group, (None, None))[0],
                ci_high=group_ci.get(g.group, (None, None))[1],
            )
            for g in mv.groups
        ],
        excluded_groups=[
            ExcludedGroup(
                group=e.group,
                key=None if e.group == MISSING_GROUP else keys.get(e.group),
                missing=e.group == MISSING_GROUP,
                n=e.n,
                reason=e.reason,
            )
            for e in mv.excluded
        ],
        details=jsonable(details),
        worst_group=mv.worst_group,
        classes=list(stats.classes),
        counts={g: stats.counts[i].tolist() for i, g in enumerate(stats.groups) if keep[i]}
        if stats.classes
        else {},
    )


#: simulated samples per size behind the hint on an inconclusive score interval
HINT_SIMS = 200


def rows_hint(
    c: Control, better: str, mv: MetricValue, kept: GroupStats, level: float
) -> str | None:
    """ "with about N rows per group this control could be decided": the rows at which the
    interval decision would decide it with probability 0.8 if the group rates were those
    seen (``fairpolicy power``, :func:`fairpolicy.stats.rate_forms.rows_needed`); None
    when the value is not a gap or ratio of one binary rate, or never decidable."""
    from fairpolicy.stats import proportions as pr
    from fairpolicy.stats.rate_forms import holds, rows_needed

    rate = mv.details.get("rate")
    op, t = c.operator.value, c.threshold.value
    if not isinstance(rate, str) or t is None or op not in ("<", "<=", ">", ">="):
        return None
    props = pr.rate_counts(kept, rate)
    if props is None or mv.value is None:
        return None
    used = [p for p in props if p.m > 0]
    if len(used) < 2:
        return None
    rows = [float(n) for n, p in zip(kept.rows_n.tolist(), props, strict=True) if p.m > 0]
    share = min(1.0, sum(p.m for p in used) / sum(rows))
    reduce = "gap" if better == "lower" else "ratio"
    prove = "ci_upper" if holds(mv.value, op, t) else "ci_lower"
    need, _ = rows_needed(
        [p.p for p in used], reduce, op, t, level, 0.8, share, HINT_SIMS, 1, 10_000_000, prove
    )
    if need is None:
        return None
    now = int(max(rows))
    if need <= now:
        return None
    what = "prove compliance" if prove == "ci_upper" else "prove the violation"
    return (
        f"with about {need:,} rows per group this control could be decided (decision "
        f"{prove} would {what} with probability 0.8 at the rates seen; `fairpolicy power`)"
    )


def evaluate_all(
    plans: Sequence[Plan],
    ev: Evaluator,
    progress: Callable[[str, int, int], None] | None = None,
) -> list[Finding]:
    """One finding per planned control, in the policy's order."""
    findings = []
    for i, plan in enumerate(plans):
        if progress:
            progress(f"evaluating {plan.control.control_id}", i, len(plans))
        findings.append(evaluate(plan, plans, ev))
    return findings


def _parity_bias(mv: MetricValue) -> dict[str, Any] | None:
    """A multi-class gap over classes: its expected value at parity (issue 28, item 6),
    where the truth is 0 — how far the max (mean) over classes of noisy gaps lies above
    0 by chance alone at these rows."""
    from fairpolicy.stats import bands, rate_forms

    for form in bands.candidates(mv):
        got = rate_forms.parity_bias(form, mv)
        if got is not None:
            return {
                "at_parity": got,
                "note": (
                    f"expected value of {form.describe()} when every group has the same "
                    "rate in each class (the pooled rate of its cells; 2,000 simulated "
                    "samples of the same rows): the value's upward bias where the truth is 0"
                ),
            }
    return None
