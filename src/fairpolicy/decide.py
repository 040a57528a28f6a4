"""Turn a metric value, a threshold and an operator into a status.

``pass`` when the value satisfies the control; otherwise ``fail`` for a
blocking control and ``warn`` for a ``warn`` or ``monitor`` control (monitor
controls never gate). A value that could not be computed is ``inconclusive``;
whether that fails the gate is the run's ``--inconclusive`` choice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from fairpolicy.exact import compare, float_bound, level_percent
from fairpolicy.exact import shown as shown_text
from fairpolicy.policy.schema import Control, EnforcementMode, Operator, Threshold
from fairpolicy.results import (
    ConfidenceInterval,
    FailOn,
    Finding,
    GateEffect,
    InconclusivePolicy,
    Results,
    Status,
    Verdict,
    gate_effect,
)


def satisfies(value: float, operator: Operator, threshold: Threshold) -> bool:
    """Whether ``value <operator> threshold`` holds (``between`` is inclusive).

    A count-based value carries its exact rational (:class:`fairpolicy.exact.ExactFloat`)
    and is decided exactly against the exact decimal the policy wrote (``0.3 − 0.2``
    is not ``< 0.1``; ``0.1`` is not ``<= 0.09999999999999999999``, a threshold no
    double holds); any other value is compared as a float.
    """
    low, high = threshold.bounds()
    if operator is Operator.BETWEEN:
        return compare(value, "between", low, high)
    return compare(value, operator.value, low)  # type: ignore[arg-type]


def _shown(value: float, control: Control) -> str:
    """The value with 6 significant digits, or more when fewer would contradict the
    verdict at the threshold (``0.0999999 < 0.1`` is not written ``0.1``)."""
    low, high = control.threshold.bounds()
    upper = high if control.operator is Operator.BETWEEN else None
    return shown_text(value, control.operator.value, low, upper, digits=6, style="g")


def _threshold_shown(control: Control) -> str:
    """The threshold as the policy wrote it (no digit rounded away)."""
    return control.threshold.render()


def status_for(
    control: Control,
    value: float | None,
    decision: str = "point",
    ci: tuple[float | None, float | None] | None = None,
    bounds: tuple[float, float, tuple[float, ...]] | None = None,
) -> tuple[Status, str | None]:
    """(status, reason) under the control's decision rule.

    ``point``: the value decides. ``ci_upper`` and ``ci_lower`` look at the whole
    bootstrap interval: it satisfies the threshold entirely → pass; it violates it
    entirely → fail; it straddles the threshold → inconclusive ("the data cannot
    tell"). The two rules differ at the gate: under ``ci_upper`` (prove the gap is
    small) a straddling interval fails it, under ``ci_lower`` (prove a violation) it
    does not. An interval that could not be computed leaves the decision
    inconclusive — never a silent pass.

    ``worst_case`` and ``best_case`` read ``bounds`` = (low, high, attained): the value
    over every allocation of the unknown-category rows lies in [low, high] (LL144 impact
    ratios, docs/ll144.md; valid bounds, not always attained) and ``attained`` holds
    values some allocation is known to give (an end when it is sharp, a witness).
    worst_case passes when the whole range satisfies the threshold, fails when an
    attained value violates it, and is otherwise inconclusive; best_case passes when an
    attained value satisfies it, fails when the whole range violates it, and is
    otherwise inconclusive. So a bound that is not sharp never decides a wrong way.
    """
    if value is None:
        return "inconclusive", None
    failing: Status = "fail" if control.enforcement_mode is EnforcementMode.BLOCK else "warn"
    if decision == "point":
        return ("pass" if satisfies(value, control.operator, control.threshold) else failing), None
    if decision in ("worst_case", "best_case"):
        return _allocation_status(control, decision, bounds, failing)
    low, high = ci if ci is not None else (None, None)
    if low is None or high is None:
        return "inconclusive", f"decision {decision} needs a confidence interval, none was computed"
    inside = _interval_inside(low, high, control)
    if inside is True:
        return "pass", None
    if inside is False:
        return failing, None
    return "inconclusive", (
        f"the {decision} rule: the interval [{low:.6g}, {high:.6g}] straddles the threshold"
    )


def _allocation_status(
    control: Control,
    decision: str,
    bounds: tuple[float, float, tuple[float, ...]] | None,
    failing: Status,
) -> tuple[Status, str | None]:
    if bounds is None:
        return "inconclusive", (
            f"decision {decision} needs the range of the value over the allocations of "
            "unknown-category rows, which only the LL144 impact ratios compute (with whole counts)"
        )
    low, high, attained = bounds
    op, t = control.operator, control.threshold
    if decision == "worst_case":
        if within(low, high, control):
            return "pass", None
        if any(not satisfies(v, op, t) for v in attained):
            return failing, (
                f"worst_case: the allocations of the unknown-category rows give values in "
                f"[{low:.6g}, {high:.6g}], and some of them violate the threshold"
            )
        return "inconclusive", (
            f"worst_case: the values lie within [{low:.6g}, {high:.6g}], which crosses the "
            "threshold, but the end beyond it is a bound not shown to be attained (the kept "
            "set moves with the allocation; details.bounds.sharp_reason)"
        )
    if any(satisfies(v, op, t) for v in attained):
        return "pass", None
    if violated_throughout(low, high, control):
        return failing, (
            f"best_case: no allocation of the unknown-category rows satisfies the threshold "
            f"(every value lies in [{low:.6g}, {high:.6g}])"
        )
    return "inconclusive", (
        f"best_case: the values lie in [{low:.6g}, {high:.6g}], across the threshold, and no "
        "allocation found reaches it (the upper end is a bound, not always attained)"
    )


def violated_throughout(low: float, high: float, control: Control) -> bool:
    """Whether no value in [low, high] satisfies the control."""
    return _interval_inside(low, high, control) is False


def within(low: float, high: float, control: Control) -> bool:
    """Whether every value in [low, high] satisfies the control."""
    return _interval_inside(low, high, control) is True


def _interval_inside(low: float, high: float, control: Control) -> bool | None:
    """True if every value in [low, high] satisfies the control, False if none does,
    None if the interval straddles the threshold."""
    op, t = control.operator, control.threshold
    if op is Operator.BETWEEN:
        t_lo, t_hi = (float_bound(b) for b in t.bounds())
        if t_lo <= low and high <= t_hi:
            return True
        if high < t_lo or low > t_hi:
            return False
        return None
    target = float_bound(t.bounds()[0])
    if op is Operator.EQ:  # an interval of positive width never proves equality
        if low == high == target:
            return True
        return None if low <= target <= high else False
    if op is Operator.NE:
        return None if low <= target <= high else True
    lo_ok, hi_ok = satisfies(low, op, t), satisfies(high, op, t)
    if lo_ok and hi_ok:
        return True
    if not lo_ok and not hi_ok:
        return False
    return None


def describe(
    control: Control,
    value: float | None,
    status: Status,
    reason: str | None,
    ci: ConfidenceInterval | None = None,
) -> str:
    """One sentence a person reads in the table, the JSON and CI logs."""
    cond = f"{control.operator.value} {_threshold_shown(control)}"
    if value is None and status in ("fail", "warn"):  # a part known to violate it
        mode = control.enforcement_mode
        suffix = "" if mode is EnforcementMode.BLOCK else f" ({mode.value}: does not fail the gate)"
        return f"{control.metric_key} violates {cond}: {reason}{suffix}"
    if value is None:
        return f"inconclusive: {reason or 'value undefined'} (required {cond})"
    shown = _shown(value, control)
    if ci is not None and ci.low is not None and ci.high is not None:
        shown += f" ({level_percent(ci.level)}% CI [{ci.low:.6g}, {ci.high:.6g}], {ci.method})"
    if status == "inconclusive":
        return f"inconclusive: {control.metric_key} = {shown}; {reason} (required {cond})"
    mode = control.enforcement_mode
    if status == "pass":
        return f"{control.metric_key} = {shown} satisfies {cond}"
    suffix = "" if mode is EnforcementMode.BLOCK else f" ({mode.value}: does not fail the gate)"
    if reason is not None and control.params.get("decision") in ("worst_case", "best_case"):
        # decided on the range over the unknowns' allocations, not on the value
        return f"{control.metric_key} = {shown}; {reason} (required {cond}){suffix}"
    return f"{control.metric_key} = {shown} violates {cond}{suffix}"


def change_verdict(
    worsened_by: float | Fraction | None,
    interval: tuple[float | None, float | None] | None,
    max_regression: float | Fraction | None,
    decision: str = "point",
    proven: bool = False,
    delta_shown: str | None = None,
) -> tuple[Verdict, str | None]:
    """(verdict, reason) of a change against a baseline: ``ok``, ``regressed`` (worse by
    more than δ = ``max_regression``), ``inconclusive`` or ``none`` (no δ given).

    The control's decision rule applies to the change as it does to the value:
    ``point``: the change itself decides (``worsened_by > δ`` regressed, exactly: a
    Fraction is the exact change of two exact values, a float stands for its shortest
    decimal, so 0.3 − 0.2 is not more than 0.1; δ is the decimal written, a Fraction when
    its double says another: 0.09999999999999999999 is less than a change of 1/10);
    ``ci_upper``: ok only if the whole interval of the change is ≤ δ, regressed if all of it
    is > δ, else inconclusive — unless the run itself is ``proven`` compliant (its own
    interval lies entirely within the threshold): then a change whose interval straddles δ
    is ok (the "no change" rule of docs/baseline.md: proving that nothing changed by more
    than δ needs rows ∝ 1/δ², so demanding it failed 99.7–100 % of unchanged releases);
    ``ci_lower``: regressed only if all of the interval is > δ.
    A change that is undefined (a side has no value), or an interval rule without an
    interval, is inconclusive — never ok.
    """
    if max_regression is None:
        return "none", None
    d = _dec(max_regression)
    shown = delta_shown or f"{float(max_regression):g}"
    if worsened_by is None:
        return "inconclusive", "the change is undefined (a run has no value for this control)"
    if decision not in ("ci_upper", "ci_lower"):  # point, and the LL144 allocation rules
        return ("regressed" if _dec(worsened_by) > d else "ok"), None
    low, high = interval if interval is not None else (None, None)
    if low is None or high is None:
        return "inconclusive", (
            f"decision {decision} needs an interval of the change; both runs need a "
            "confidence interval at the same level"
        )
    if _dec(low) > d:
        return "regressed", None
    if _dec(high) <= d:
        return "ok", None
    if decision == "ci_lower":
        return "ok", None
    if proven:
        return "ok", (
            f"the change's interval [{low:.6g}, {high:.6g}] straddles max_regression "
            f"{shown}, but the run itself is proven compliant (its interval "
            "satisfies the threshold) and a regression beyond max_regression is not shown"
        )
    return "inconclusive", (
        f"the ci_upper rule: the change's interval [{low:.6g}, {high:.6g}] straddles "
        f"max_regression {shown}"
    )


def _dec(x: float | Fraction) -> Fraction:
    """The exact number a change or δ stands for: a Fraction itself, a float its shortest
    decimal."""
    return x if isinstance(x, Fraction) else Fraction(repr(float(x)))


@dataclass(frozen=True)
class ChangeRow:
    """One control's change and what it alone does to ``diff``'s gate."""

    finding: Finding
    #: the change's effect on the gate (its status left aside): :func:`gate_effect` of the
    #: finding as if it had passed, so only the change against the baseline counts
    effect: GateEffect

    @property
    def fails(self) -> bool:
        return self.effect == "fail"

    @property
    def verdict(self) -> Verdict:
        c = self.finding.change
        return "none" if c is None else c.verdict

    @property
    def mark(self) -> str:
        """The row's verdict word: what the change is, and whether it fails the gate."""
        verdict = self.verdict
        if self.fails:
            return "REGRESSED" if verdict == "regressed" else "INCONCLUSIVE"
        if verdict in ("regressed", "inconclusive") and self.effect != "pass":
            return f"{verdict} (does not fail the gate)"
        if verdict == "inconclusive":
            return "inconclusive (passes: --inconclusive pass)"
        return verdict


@dataclass(frozen=True)
class ChangeDecision:
    """``fairpolicy diff``'s one decision: every row's effect, the headline and the exit
    code all come from here, under ``diff``'s own ``--fail-on`` and ``--inconclusive``
    (never the gate options stored in either results file), so they cannot disagree."""

    rows: tuple[ChangeRow, ...]
    fail_on: FailOn
    inconclusive: InconclusivePolicy

    @property
    def failing(self) -> int:
        return sum(r.fails for r in self.rows)

    @property
    def gate(self) -> Literal["pass", "fail"]:
        return "fail" if self.failing else "pass"

    @property
    def exit_code(self) -> int:
        from fairpolicy.errors import EXIT_FAIL, EXIT_PASS

        return EXIT_FAIL if self.failing else EXIT_PASS

    @property
    def headline(self) -> str:
        """The header sentence: it names every row that is not a plain ``ok``."""
        held = sum(not r.fails and r.verdict == "regressed" for r in self.rows)
        open_ = sum(not r.fails and r.verdict == "inconclusive" for r in self.rows)
        if self.failing:
            parts = [f"gate FAIL: {self.failing} control(s) fail the gate on their change"]
        elif not any(
            r.finding.change is not None and r.finding.change.max_regression is not None
            for r in self.rows
        ):
            return "no max_regression given: the changes are reported, none is decided"
        else:
            parts = ["gate PASS: no change fails the gate"]
        if held:
            parts.append(f"{held} regression(s) beyond max_regression that do not fail it")
        if open_:
            parts.append(f"{open_} undecided change(s) that do not fail it")
        opts = []
        if self.fail_on != "error":
            opts.append(f"--fail-on {self.fail_on}")
        if self.inconclusive != "fail":
            opts.append(f"--inconclusive {self.inconclusive}")
        if opts and (held or open_):
            parts.append(f"under {' '.join(opts)}")
        return "; ".join(parts)


def decide_changes(
    results: Results, fail_on: FailOn = "error", inconclusive: InconclusivePolicy = "fail"
) -> ChangeDecision:
    """The gate on the changes alone (``diff``): each finding's change decided by
    :func:`gate_effect` with its status left aside, under the given options only."""
    rows = []
    for f in results.findings:
        if f.change is None or f.change.verdict in ("ok", "none"):
            rows.append(ChangeRow(f, "pass"))
            continue
        alone = f.model_copy(update={"status": "pass"})
        rows.append(ChangeRow(f, gate_effect(alone, inconclusive, fail_on)))
    return ChangeDecision(tuple(rows), fail_on, inconclusive)


#: ``--window-gate``: what decides a monitored control across its windows
WindowGate = Literal["last", "any", "sequential"]
WINDOW_GATES: tuple[WindowGate, ...] = ("last", "any", "sequential")


@dataclass(frozen=True)
class AlarmInterval:
    """The interval the ``sequential`` gate reads for one window's finding
    (:func:`alarm_interval`): ``low``/``high`` None when the window cannot alarm."""

    low: float | None
    high: float | None
    #: ``interval``: the window's own (bootstrap) interval; ``score+exact``: the hull of the
    #: score interval and its exact Clopper–Pearson box (beyond the threshold only when
    #: both are); ``exact``: the exact box alone (a multi-class gap whose band its
    #: resamples do not resolve; ``hoeffding`` under survey weights); ``score+hoeffding``:
    #: under survey weights, the hull of the score interval and its Hoeffding box on Kish's
    #: effective rows; None: the window cannot alarm (``reason``)
    used: Literal["interval", "score+exact", "score+hoeffding", "exact", "hoeffding"] | None
    reason: str | None = None

    def as_details(self) -> dict[str, float | str | None]:
        """What a window's finding records as ``details.alarm_interval``."""
        return {"low": self.low, "high": self.high, "used": self.used, "reason": self.reason}


def alarm_interval(f: Finding) -> AlarmInterval:
    """The interval window ``f``'s sequential alarm reads, computed at the window's level
    1 − α_t. A bootstrap interval is read as it is (when its resamples resolve the level:
    :func:`fairpolicy.stats.sequential.resolution`). A score interval is not trusted alone
    at such levels (:func:`fairpolicy.stats.sequential.needs_box`): the alarm reads its
    hull with the exact Clopper–Pearson box at the same level
    (:func:`fairpolicy.stats.sequential.confirmed`, ``ci.exact_box``), so it alarms only when
    both lie beyond the threshold; under survey weights (Kish's effective counts are not
    binomial) the box is Hoeffding's on the effective rows
    (:func:`fairpolicy.stats.sequential.hoeffding_box`, ``score+hoeffding``); a score
    interval without a box cannot alarm. A multi-class gap over classes carries the exact
    box of its (group, class) rates (:func:`fairpolicy.stats.sequential.exact_class_box`):
    with its Šidák score box the alarm reads their hull; with a band its resamples do not
    resolve, the exact box alone (``exact``: valid at every level and sample size, so the
    band's resolution is not needed). A short window (``details.window_short``) cannot
    alarm either."""
    from fairpolicy.stats.sequential import confirmed, needs_box, resolution

    def none(reason: str) -> AlarmInterval:
        return AlarmInterval(None, None, None, reason)

    ci = f.ci
    if f.details.get("window_short"):
        return none("the window has fewer rows than --min-window-rows")
    if ci is None or ci.low is None or ci.high is None:
        return none("the window has no interval" + (f": {ci.reason}" if ci and ci.reason else ""))
    res = resolution(ci.method, ci.level, ci.resamples)
    box = ci.exact_box
    if not needs_box(ci.method):
        if res.ok:
            return AlarmInterval(ci.low, ci.high, "interval")
        if box is not None and resolution("score", ci.level).ok:
            # a multi-class band its resamples do not resolve: its exact box alone (under
            # survey weights Hoeffding's)
            if ci.exact_box_kind == "hoeffding":
                return AlarmInterval(box[0], box[1], "hoeffding")
            return AlarmInterval(box[0], box[1], "exact")
        return none(res.reason or "its interval does not resolve the window's level")
    if not res.ok:
        return none(res.reason or "its interval does not resolve the window's level")
    if box is None:
        return none(
            "its score interval has no exact Clopper–Pearson box (under survey weights: "
            "Hoeffding box) to confirm an alarm"
        )
    lo, hi = confirmed((ci.low, ci.high), (box[0], box[1]))
    return AlarmInterval(
        lo, hi, "score+hoeffding" if ci.exact_box_kind == "hoeffding" else "score+exact"
    )


def window_gate(
    control: Control, windows: Sequence[tuple[str, Finding]], gate: WindowGate
) -> tuple[Status, str, str | None]:
    """The one decision of a monitored control across its windows (issue 30): its status,
    the reason in one sentence, and the window that decided it (None: no single one).

    Each window's finding was decided on that window's rows alone (a window with fewer rows
    than ``--min-window-rows`` is ``inconclusive``, marked ``details.window_short``):

    - ``last``: the newest window's status;
    - ``any``: a violation in any window (the first is named); else an error in any; else
      ``inconclusive`` if any window is; else ``pass``;
    - ``sequential``: an alarm at the first window whose interval, computed at that
      window's level 1 − α_t (:func:`fairpolicy.stats.sequential.window_level`), lies wholly
      on the violating side (:func:`fairpolicy.stats.sequential.sequential_alarm`): the
      false-alarm probability over all windows, however many, is ≤ α. A window without an
      interval, or whose interval cannot resolve its level
      (:func:`fairpolicy.stats.sequential.resolution`), cannot alarm; a score interval
      alarms only with its exact box (:func:`alarm_interval`). No alarm is ``pass``
      when at least one window could alarm, else ``inconclusive``; ``warn`` (never failing
      the gate, so the bound stands) when the newest window violates by its own rule. An
      error in any window is ``error``.
    """
    if not windows:
        return "inconclusive", "the data has no rows in any window", None
    violation: Status = "fail" if control.enforcement_mode is EnforcementMode.BLOCK else "warn"
    errors = [(w, f) for w, f in windows if f.status == "error"]
    if gate == "last":
        w, f = windows[-1]
        return f.status, f"decided on the newest window {w}: {f.reason or f.message}", w
    if gate == "any":
        bad = [(w, f) for w, f in windows if f.status in ("fail", "warn")]
        if bad:
            return (
                bad[0][1].status,
                f"{len(bad)} of {len(windows)} window(s) violate it, first {bad[0][0]}",
                bad[0][0],
            )
        if errors:
            return "error", f"window {errors[0][0]}: {errors[0][1].message}", errors[0][0]
        unsure = [w for w, f in windows if f.status == "inconclusive"]
        if unsure:
            return (
                "inconclusive",
                f"{len(unsure)} of {len(windows)} window(s) are inconclusive, first {unsure[0]}",
                unsure[0],
            )
        return "pass", f"all {len(windows)} window(s) satisfy it", None
    from fairpolicy.stats.sequential import sequential_alarm

    if errors:
        return "error", f"window {errors[0][0]}: {errors[0][1].message}", errors[0][0]
    alarms = [alarm_interval(f) for _, f in windows]
    intervals = [(a.low, a.high) for a in alarms]
    can = sum(1 for a in alarms if a.used is not None)
    at = sequential_alarm(intervals, control.threshold, control.operator.value)
    if at is not None:
        w, f = windows[at]
        a = alarms[at]
        assert f.ci is not None and a.low is not None and a.high is not None
        what = (
            "score interval and its exact Clopper–Pearson box both lie wholly beyond the "
            f"threshold (their hull [{a.low:.6g}, {a.high:.6g}])"
            if a.used == "score+exact"
            else "score interval and its Hoeffding box on Kish's effective rows (survey "
            f"weights) both lie wholly beyond the threshold (their hull [{a.low:.6g}, "
            f"{a.high:.6g}])"
            if a.used == "score+hoeffding"
            else "Hoeffding box of the (group, class) weighted rates on Kish's effective rows "
            f"[{a.low:.6g}, {a.high:.6g}] lies wholly beyond the threshold"
            if a.used == "hoeffding"
            else "exact Clopper–Pearson box of the (group, class) rates "
            f"[{a.low:.6g}, {a.high:.6g}] lies wholly beyond the threshold"
            if a.used == "exact"
            else f"interval [{a.low:.6g}, {a.high:.6g}] lies wholly beyond the threshold"
        )
        return (
            violation,
            f"sequential alarm at window {w} (window {at + 1}): its {f.ci.level:.6g} {what}",
            w,
        )
    if not can:
        why = next((a.reason for a in alarms if a.reason), None)
        return (
            "inconclusive",
            f"none of the {len(windows)} window(s) could alarm"
            + (f" (first: {why})" if why else "")
            + "; give the windows an interval that resolves their sequential level (set ci), "
            "or use --window-gate last|any",
            None,
        )
    no_alarm = (
        f"no sequential alarm in {len(windows)} window(s) ({can} could alarm; false-alarm "
        "probability over the horizon ≤ α)"
    )
    w, f = windows[-1]
    if f.status in ("fail", "warn"):
        # no alarm is not "shown compliant": a newest window that violates by its own rule
        # is a warning (never failing the gate, so the false-alarm bound stands)
        return (
            "warn",
            f"{no_alarm}; but the newest window {w} violates the threshold by its own decision "
            f"rule ({f.reason or f.message}): a warning, not yet evidence of a violation at the "
            "sequential level (it does not fail the gate; --window-gate last or any would)",
            w,
        )
    return "pass", no_alarm, None
