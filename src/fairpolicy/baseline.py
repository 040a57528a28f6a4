"""Regression against a baseline: this run's findings beside an earlier results JSON.

``check --baseline OLD.json`` and ``fairpolicy diff OLD.json NEW.json`` both call
:func:`compare`. Each finding is paired with the baseline's finding of the same control
id only when the metric, its parameters (``max_regression`` aside) and its bindings are
the same; otherwise the change says ``mismatch`` and why — never a silent pairing.

How much worse (``worsened_by``, positive = worse) follows the registry's direction of
the metric (:func:`direction`): lower is better (a gap), higher is better (a ratio, a
score), or closer to the ideal is better (the ideal lies strictly inside the metric's
range, e.g. ``disparity_ratio``: ideal 1 in (0, ∞)), where the badness is |value − ideal|.

Interval of the change (when both runs computed an interval at the same level): the
MOVER combination (Newcombe 1998; Zou & Donner 2008) of the two independent intervals,
``low = d − √((b_new − l_new)² + (u_old − b_old)²)``,
``high = d + √((u_new − b_new)² + (b_old − l_old)²)`` with d = b_new − b_old and b, l, u the
badness and its interval ends; it recovers each run's variance from its own interval
(asymmetric ends kept) and has close to the nominal coverage (``benchmarks/
baseline_change.py`` checks it by simulation). A gap of binary rates with score
intervals in both runs on unweighted counts (demographic parity, the TPR/FPR/PPV/… gaps)
gets its interval from the two runs' count tables instead (:mod:`fairpolicy.stats.change`:
signed Newcombe intervals per pair, MOVER, an intersection–union low end; issue 28), which
has the power of a Wald interval of the change wherever the baseline's sign is clear. The
decision rule is :func:`fairpolicy.decide.change_verdict`.
"""

from __future__ import annotations

import hashlib
import math
import uuid
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal

from fairpolicy.decide import change_verdict
from fairpolicy.errors import DataError, UsageError
from fairpolicy.exact import (
    decimal_fraction,
    exact_decimal,
    level_percent,
    written_bounds,
    written_number,
    written_threshold,
)
from fairpolicy.metrics.direction import Better, Direction
from fairpolicy.results import BaselineRef, Change, Finding, Results, load_results

__all__ = [
    "applied_delta",
    "change_cell",
    "change_text",
    "check_max_regression",
    "compare",
    "delta_text",
    "direction",
    "load_baseline",
    "mover",
    "trend",
]


#: the namespace of the baseline results' UUID (uuid5 of the file's SHA-256)
_NS = uuid.uuid5(uuid.NAMESPACE_URL, "https://fairpolicy.example.org/ns/results")

#: parameters that say how a run is judged, not what is measured: never a mismatch
_NOT_COMPARED = frozenset({"max_regression"})

RunSource = Literal["flag", "config", "api"]
DeltaSource = Literal["flag", "config", "api", "policy"]


def direction(f: Finding, file: str | None = None) -> Direction:
    """Which way is worse for the quantity ``f`` measured, and the ideal: resolved from
    its metric key and the parameters that select the value
    (:func:`fairpolicy.metrics.direction.resolve`). A finding that records its direction
    (results written since issue 26) must agree with that resolution — a file that says
    otherwise was edited, and is refused naming ``file``; an older file's findings are
    resolved from their recorded key and parameters."""
    from fairpolicy.metrics.direction import UnknownDirection, resolve
    from fairpolicy.metrics.registry import REGISTRY

    spec = REGISTRY.get(f.metric_key)
    if spec is None:
        raise UsageError(f"unknown metric_key '{f.metric_key}' in the results being compared.")
    fix = "rerun `fairpolicy check -o json=PATH` to get an unedited results file."
    try:
        resolved = resolve(spec, f.params)
    except UnknownDirection as exc:
        raise DataError(
            f"the finding's parameters select a value fairpolicy does not know "
            f"({exc.args[0]}), so which way is better cannot be told.",
            file=file,
            control=f.control_id,
            key="params",
            hint=fix,
        ) from None
    if f.better is not None and (f.better, f.ideal) != resolved:
        raise DataError(
            f"the finding records that {f.better} is better (ideal {f.ideal}), but "
            f"{f.metric_key} with these parameters is {_said(resolved)}; the direction of a "
            "change cannot be taken from an edited file.",
            file=file,
            control=f.control_id,
            key="better",
            hint=fix,
        )
    return resolved


def _said(d: Direction) -> str:
    better, ideal = d
    if better == "ideal":
        return f"better closer to {ideal:g}"
    return f"{better}-is-better"


def applied_delta(
    f: Finding, run: float | str | None, source: RunSource | None
) -> tuple[float | str | None, DeltaSource | None]:
    """The δ a change of ``f`` is decided with, and where it came from: the stricter
    (smaller) of the run's (``source``: flag, config or api) and the control's own
    ``max_regression`` (the policy: a control prop or the policy-wide prop). Neither may
    loosen the other — a policy's 0.05 does not override a stricter ``--max-regression
    0.01``, and a looser flag does not override a policy's 0.01. On a tie the policy is
    named (it would have applied alone)."""
    own = f.params.get("max_regression")
    if own is not None and (run is None or delta_exact(own) <= delta_exact(run)):
        return own, "policy"
    if run is None:
        return None, None
    return run, source or "api"


def delta_exact(value: float | str) -> Fraction:
    """A δ's exact decimal: the text as written (``0.09999999999999999999`` is not 1/10),
    or the shortest decimal of a float (what the policy or flag wrote whenever it wrote at
    most 15 significant digits)."""
    if isinstance(value, str):
        return exact_decimal(value)
    return decimal_fraction(float(value))


def delta_written(value: float | str | None) -> str | None:
    """The δ's decimal as written when its double says another (else None), for the
    results (``max_regression_written``)."""
    if not isinstance(value, str):
        return None
    return written_threshold([value], [float(exact_decimal(value))])


def check_max_regression(value: Any, where: str) -> float | str:
    """``value`` as a finite δ ≥ 0, else a UsageError naming ``where``. Text is read with
    the policy's number grammar (:func:`fairpolicy.policy.numbers.parse_float`): ``0_01``
    is refused, where ``float()`` read it as 1.0 — a hundred times the allowance meant.
    Text whose double says another decimal (``0.09999999999999999999``) is returned as
    text, decided exactly (:func:`delta_exact`); anything else as its float."""
    from fairpolicy.policy.numbers import NUMBER_HINT, option_number

    finite = f"{where} must be a finite number ≥ 0 (how much worse a value may get), got {value!r}."
    try:
        d = option_number(value, whole=False)
    except ValueError as exc:
        if "finite" in str(exc):  # nan, inf
            raise UsageError(finite) from None
        raise UsageError(
            f"{where} must be a number ≥ 0, got {value!r}.", hint=NUMBER_HINT
        ) from None
    if not math.isfinite(d) or d < 0:
        raise UsageError(finite)
    return written_number(value, d) if isinstance(value, str) else d


def load_baseline(path: str) -> tuple[Results, str]:
    """The baseline results (validated by the results reader) and the file's SHA-256."""
    results = load_results(path)
    try:
        digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError as exc:  # pragma: no cover - load_results read it a moment ago
        raise DataError(f"cannot read the baseline: {exc.strerror}.", file=path) from None
    return results, digest


def compare(
    new: Results,
    old: Results,
    *,
    path: str,
    sha256: str,
    max_regression: float | str | None = None,
    allow_policy_change: bool = False,
    max_regression_source: RunSource | None = None,
    new_path: str | None = None,
) -> Results:
    """``new`` with a :class:`Change` on every finding and the baseline reference; a
    regression beyond δ makes a passing finding fail (a warn/monitor control: warn), an
    undecidable one makes it inconclusive. Different policy hashes are a DataError naming
    the baseline unless ``allow_policy_change``; so is a mismatched control without it.
    ``max_regression_source`` says where the run's δ came from (flag, config, api; default
    api); each change applies the stricter of it and the control's own
    (:func:`applied_delta`). ``new_path``: the file ``new`` was read from (``diff``), named
    when its findings cannot be read."""
    if max_regression is not None:
        max_regression = check_max_regression(max_regression, "--max-regression")
    if not allow_policy_change and (
        new.policy.sha256 is None
        or old.policy.sha256 != new.policy.sha256
        or _chain(old) != _chain(new)
    ):
        raise DataError(
            f"the baseline was written for another policy (policy SHA-256 "
            f"{_short(old.policy.sha256)}, this run's {_short(new.policy.sha256)}, or a "
            "document it imports changed); its findings cannot be compared control by control.",
            file=path,
            key="policy.sha256",
            hint="compare results of the same policy, or pass --allow-policy-change to pair "
            "the controls that did not change (the others are reported as new or mismatched).",
        )
    before = {f.control_id: f for f in old.findings}
    findings: list[Finding] = []
    for f in new.findings:
        source = None if max_regression is None else (max_regression_source or "api")
        change = _change(f, before.get(f.control_id), max_regression, source, path, new_path)
        if change.state == "mismatch" and not allow_policy_change:
            what = (change.reason or "").split(" ", 2)[1]  # metric, bindings, parameters…
            field = {"bindings": "inputs", "parameters": "params", "metric": "metric_key"}
            raise DataError(
                f"the baseline's finding differs from this run's: {change.reason}; a changed "
                "control is not compared with the old one.",
                file=path,
                control=f.control_id,
                key=field.get(what, "threshold"),
                hint="pass a baseline from the same policy and bindings (--bind), or "
                "--allow-policy-change to report this control as not compared.",
            )
        findings.append(_apply(f, change))
    seen = {f.control_id for f in new.findings}
    ref = BaselineRef(
        path=path,
        sha256=sha256,
        uuid=str(uuid.uuid5(_NS, sha256)),
        policy_sha256=old.policy.sha256,
        max_regression=None if max_regression is None else float(delta_exact(max_regression)),
        max_regression_written=delta_written(max_regression),
        max_regression_source=None if max_regression is None else (max_regression_source or "api"),
        allow_policy_change=allow_policy_change,
        vanished_controls=[f.control_id for f in old.findings if f.control_id not in seen],
    )
    # a copy of ``new``: the public Results of fairpolicy.check stays one (render, write, …)
    return new.model_copy(update={"findings": findings, "baseline": ref})


def _chain(results: Results) -> list[tuple[str, str]]:
    """The hashes of the documents the policy imported (profiles, catalogs): a changed
    catalog changes the policy even when the top file did not (an SSP is left out)."""
    return sorted(
        (d.kind, d.sha256) for d in results.policy.documents if d.kind != "system-security-plan"
    )


def _short(h: str | None) -> str:
    return "unknown" if h is None else h[:12] + "…"


def _change(
    f: Finding,
    old: Finding | None,
    run_delta: float | str | None,
    source: RunSource | None,
    old_path: str,
    new_path: str | None,
) -> Change:
    delta, delta_source = applied_delta(f, run_delta, source)
    better, ideal = direction(f, new_path)
    base: dict[str, Any] = {
        "better": better,
        "ideal": ideal,
        "value": f.value,
        "max_regression": None if delta is None else float(delta_exact(delta)),
        "max_regression_written": delta_written(delta),
        "max_regression_source": delta_source,
        "worst_group_now": f.worst_group,
    }
    if old is None:
        return Change(state="new", reason="the baseline has no such control", **base)
    differs = _differs(f, old)
    if differs:
        undecided: Literal["inconclusive", "none"] = "inconclusive" if delta is not None else "none"
        return Change(
            state="mismatch",
            baseline_value=old.value,
            verdict=undecided,
            reason=differs,
            worst_group_before=old.worst_group,
            **base,
        )
    direction(old, old_path)  # the same key and parameters: only an edited record differs
    now_groups = [g.group for g in f.groups]
    then_groups = [g.group for g in old.groups]
    worse = _worsened(old.value, f.value, better, ideal)
    exact = _worsened_exact(old, f, better, ideal)
    low, high, level = _interval(f, old, better, ideal)
    decision = f.decision  # the rule that decided the value decides the change
    # the run's own interval decision proved compliance: the "no change" rule
    proven = decision == "ci_upper" and f.status == "pass"
    verdict, reason = change_verdict(
        exact if exact is not None else worse,
        (low, high),
        None if delta is None else delta_exact(delta),
        decision,
        proven,
        delta_shown=None if delta is None else _delta_shown(delta),
    )
    if worse is None and reason is None:
        reason = "the change is undefined (a run has no value for this control)"
    return Change(
        state="paired",
        baseline_value=old.value,
        worsened_by=worse,
        low=low,
        high=high,
        level=level,
        verdict=verdict,
        reason=reason,
        worst_group_before=old.worst_group,
        groups_appeared=[g for g in now_groups if g not in then_groups],
        groups_vanished=[g for g in then_groups if g not in now_groups],
        **base,
    )


def _differs(f: Finding, old: Finding) -> str | None:
    """What makes ``old`` another measurement than ``f`` (None: the same)."""
    if f.metric_key != old.metric_key:
        return f"the metric changed ({old.metric_key} → {f.metric_key})"
    if f.inputs != old.inputs:
        keys = sorted(k for k in {*f.inputs, *old.inputs} if f.inputs.get(k) != old.inputs.get(k))
        shown = ", ".join(f"{k}: {old.inputs.get(k)} → {f.inputs.get(k)}" for k in keys)
        return f"the bindings changed ({shown})"
    a = {k: v for k, v in f.params.items() if k not in _NOT_COMPARED}
    b = {k: v for k, v in old.params.items() if k not in _NOT_COMPARED}
    if a != b:
        keys = sorted(k for k in {*a, *b} if a.get(k) != b.get(k))
        shown = ", ".join(f"{k}: {b.get(k)} → {a.get(k)}" for k in keys)
        return f"the parameters changed ({shown})"
    if f.operator != old.operator or _threshold_key(f) != _threshold_key(old):
        return (
            f"the threshold changed ({old.operator} {_written(old)} → {f.operator} {_written(f)})"
        )
    return None


def _written(f: Finding) -> str:
    """The threshold as the policy wrote it."""
    return f.threshold_written if f.threshold_written is not None else f"{f.threshold}"


def _threshold_key(f: Finding) -> tuple[Fraction, ...] | None:
    """The threshold's exact decimals: 0.10 is 0.1, 0.09999999999999999999 is not."""
    if f.threshold_written is not None:
        try:
            return tuple(written_bounds(f.threshold_written))
        except (ValueError, ZeroDivisionError):
            pass
    t = f.threshold
    if t is None:
        return None
    return tuple(decimal_fraction(x) for x in (t if isinstance(t, list) else [t]))


def _badness(v: float, better: Better, ideal: float | None) -> float:
    if better == "lower":
        return v
    if better == "higher":
        return -v
    assert ideal is not None
    return abs(v - ideal)


def _exact_value(f: Finding) -> Fraction | None:
    """A finding's value as an exact number: the exact rational it was decided on
    (``details.exact_value``, when it rounds to the value), else its shortest decimal."""
    if f.value is None or not math.isfinite(f.value):
        return None
    text = f.details.get("exact_value") if isinstance(f.details, dict) else None
    if isinstance(text, str):
        try:
            x = Fraction(text)
        except (ValueError, ZeroDivisionError):
            x = None
        if x is not None and float(x) == f.value:
            return x
    return decimal_fraction(f.value)


def _worsened_exact(
    old: Finding, new: Finding, better: Better, ideal: float | None
) -> Fraction | None:
    """How much worse, exactly (the exact values of both runs), so a change is decided
    against δ like a value against its threshold: 3/10 − 2/10 is not more than 0.1."""
    a, b = _exact_value(old), _exact_value(new)
    if a is None or b is None:
        return None
    if better == "lower":
        return b - a
    if better == "higher":
        return a - b
    assert ideal is not None
    i = decimal_fraction(ideal)
    return abs(b - i) - abs(a - i)


def _delta_shown(delta: float | str) -> str:
    """δ as printed: the decimal written (``0.09999999999999999999``), else ``g``."""
    return delta_written(delta) or f"{float(delta):g}"


def _worsened(
    old: float | None, new: float | None, better: Better, ideal: float | None
) -> float | None:
    if old is None or new is None:
        return None
    d = _badness(new, better, ideal) - _badness(old, better, ideal)
    return d if math.isfinite(d) else None


def _bad_interval(
    v: float, low: float, high: float, better: Better, ideal: float | None
) -> tuple[float, float, float]:
    """(badness, its low, its high) of a value and its interval."""
    if better == "lower":
        return v, low, high
    if better == "higher":
        return -v, -high, -low
    assert ideal is not None
    ends = (abs(low - ideal), abs(high - ideal))
    lo = 0.0 if low <= ideal <= high else min(ends)
    return abs(v - ideal), lo, max(ends)


def _interval(
    f: Finding, old: Finding, better: Better, ideal: float | None
) -> tuple[float | None, float | None, float | None]:
    """MOVER interval of the change (see the module docstring), or Nones."""
    if (
        f.ci is None
        or old.ci is None
        or f.value is None
        or old.value is None
        or not f.has_interval
        or not old.has_interval
        or f.ci.level != old.ci.level
    ):
        return None, None, None
    assert f.ci.low is not None and f.ci.high is not None
    assert old.ci.low is not None and old.ci.high is not None
    counted = _counted_change(f, old, better)
    if counted is not None:
        return counted[0], counted[1], f.ci.level
    bn, ln, un = _bad_interval(f.value, f.ci.low, f.ci.high, better, ideal)
    bo, lo, uo = _bad_interval(old.value, old.ci.low, old.ci.high, better, ideal)
    low, high = mover(bn, ln, un, bo, lo, uo)
    if not (math.isfinite(low) and math.isfinite(high)):
        return None, None, None
    return low, high, f.ci.level


def _counted_change(f: Finding, old: Finding, better: Better) -> tuple[float, float] | None:
    """The interval of the change of a gap of binary rates from both runs' count tables
    (:func:`fairpolicy.stats.change.gap_change`: signed Newcombe intervals, MOVER, the
    intersection–union low end), when both runs have a score interval of the same
    rate's max − min on unweighted counts; else None (the stored intervals' MOVER)."""
    from fairpolicy.stats.change import gap_change, rates_from_counts

    rate = f.details.get("rate") if isinstance(f.details, dict) else None
    if (
        better != "lower"
        or not isinstance(rate, str)
        or (old.details.get("rate") if isinstance(old.details, dict) else None) != rate
        or "weight" in f.inputs
        or "weight" in old.inputs
        or f.ci is None
        or old.ci is None
        or f.ci.method != "score"
        or old.ci.method != "score"
        or f.value is None
        or old.value is None
    ):
        return None
    props = []
    for run in (f, old):
        assert run.value is not None
        got = rates_from_counts(run.counts, rate, {g.group: g.value for g in run.groups}, run.value)
        if got is None:
            return None
        props.append(got)
    ends = gap_change(props[0], props[1], f.ci.level)
    if ends is None or not all(math.isfinite(e) for e in ends):
        return None
    return ends


def mover(
    new: float, new_low: float, new_high: float, old: float, old_low: float, old_high: float
) -> tuple[float, float]:
    """MOVER interval of ``new − old`` from two independent intervals at the same level."""
    d = new - old
    down = math.hypot(max(new - new_low, 0.0), max(old_high - old, 0.0))
    up = math.hypot(max(new_high - new, 0.0), max(old - old_low, 0.0))
    return d - down, d + up


def trend(c: Change) -> tuple[Literal["better", "worse", "unchanged"] | None, float | None]:
    """The change as a word and a positive amount (``worsened_by`` is signed: positive is
    worse): ``("better", 0.0069)`` for ``worsened_by = -0.0069``; ``(None, None)`` when
    undefined. Every renderer says better/worse with this, never a signed "worse by"."""
    w = c.worsened_by
    if w is None:
        return None, None
    if w == 0:
        return "unchanged", 0.0
    return ("worse" if w > 0 else "better"), abs(w)


def delta_text(c: Change) -> str:
    """``max_regression 0.01 (flag)``: the δ applied (as written) and where it came from."""
    where = f" ({c.max_regression_source})" if c.max_regression_source else ""
    assert c.max_regression is not None
    return f"max_regression {c.max_regression_written or format(c.max_regression, 'g')}{where}"


def change_text(c: Change) -> str:
    """The change in words, for every human format."""
    if c.state == "new":
        return "new control (not in the baseline)"
    if c.state == "mismatch":
        return f"not compared: {c.reason}"
    then = "undefined" if c.baseline_value is None else f"{c.baseline_value:.6g}"
    now = "undefined" if c.value is None else f"{c.value:.6g}"
    out = f"{then} → {now}"
    word, amount = trend(c)
    if word is not None and amount is not None:
        out += f" ({word} by {amount:.6g}" if word != "unchanged" else " (unchanged"
        if c.low is not None and c.high is not None and c.level is not None:
            out += f"; {level_percent(c.level)}% CI of the worsening [{c.low:.6g}, {c.high:.6g}]"
        out += ")"
    if c.max_regression is not None:
        out += f"; {delta_text(c)}: {c.verdict}"
    if c.reason and c.verdict == "inconclusive":
        out += f" ({c.reason})"
    if c.worst_group_before != c.worst_group_now:
        out += f"; worst group {c.worst_group_before} → {c.worst_group_now}"
    if c.groups_appeared:
        out += f"; new groups: {', '.join(c.groups_appeared)}"
    if c.groups_vanished:
        out += f"; groups gone: {', '.join(c.groups_vanished)}"
    return out


def change_cell(c: Change | None) -> str:
    """The change in a table cell: better/worse by a positive amount, and the decision
    against δ."""
    if c is None:
        return ""
    if c.state == "new":
        return "new"
    if c.state == "mismatch":
        return "not compared"
    word, amount = trend(c)
    text: str = "undefined" if word is None else word
    if word in ("better", "worse") and amount is not None:
        text += f" {amount:.4g}"
    mark = {"regressed": " > δ", "ok": " ≤ δ", "inconclusive": " ? δ", "none": ""}[c.verdict]
    if mark and c.max_regression is not None:  # the δ applied and where it came from
        where = f" ({c.max_regression_source})" if c.max_regression_source else ""
        mark += f"={c.max_regression_written or format(c.max_regression, 'g')}{where}"
    return text + mark


def _apply(f: Finding, c: Change) -> Finding:
    """The finding with its change; a regression fails a passing control."""
    joint = "Change vs baseline"
    if f.status == "pass" and c.verdict == "regressed":
        joint = "but it got worse than the baseline by more than max_regression"
    elif f.status == "pass" and c.verdict == "inconclusive":
        joint = "but its change against the baseline could not be decided"
    update: dict[str, Any] = {"change": c, "message": f"{f.message}; {joint}: {change_text(c)}"}
    if f.status == "pass" and c.verdict == "regressed":
        update["status"] = "fail" if f.enforcement_mode == "block" else "warn"
    elif f.status == "pass" and c.verdict == "inconclusive":
        update["status"] = "inconclusive"
        update["reason"] = f"regression against the baseline: {c.reason}"
    return f.model_copy(update=update)
