"""The one frozen results model. It decides the gate; formatters only render it.

The JSON written by ``-o json`` is ``Results.model_dump(mode="json")``; its
JSON Schema lives in ``schemas/results.schema.json`` (generated from this
model, checked by a test). Undefined numbers are ``null`` with a reason, never
NaN. Later versions add fields; they never remove these.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import field
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from fairpolicy.errors import EXIT_ERROR, EXIT_FAIL, EXIT_PASS, UsageError
from fairpolicy.records import RECORD_CONFIG, Record, record

if TYPE_CHECKING:
    from pydantic import Field

SCHEMA_VERSION = "1.0"

Status = Literal["pass", "fail", "warn", "inconclusive", "error"]
InconclusivePolicy = Literal["pass", "warn", "fail"]
FailOn = Literal["error", "warning", "never"]
#: what a finding does to the release gate: ``fail`` makes the run exit 1, ``error`` exit 2,
#: ``warn`` is reported without failing it, ``pass`` is nothing to report
GateEffect = Literal["pass", "warn", "fail", "error"]
#: the decision on a change against a baseline (:func:`fairpolicy.decide.change_verdict`)
Verdict = Literal["ok", "regressed", "inconclusive", "none"]


@record
class Tool(Record):
    name: str = "fairpolicy"
    version: str


@record
class DocumentRef(Record):
    """A file that shaped the verdict besides the policy file and the data."""

    path: str
    sha256: str
    #: its OSCAL model: ``catalog``, ``profile``, ``component-definition``,
    #: ``system-security-plan``
    kind: str


@record
class PolicyInfo(Record):
    path: str | None
    sha256: str | None
    title: str | None = None
    version: str | None = None
    form: str | None = None
    #: every other document read while resolving the policy (imported profiles and
    #: catalogs), and the system security plan given with ``--ssp``
    documents: list[DocumentRef] = field(default_factory=list)
    #: assessors ("Name <email>") and organization named in the policy's metadata
    assessors: list[str] = field(default_factory=list)
    organization: str | None = None


@record
class WeightInfo(Record):
    """How the run read its sample weights (``input.weight``)."""

    column: str
    #: survey: a row is one sampled unit standing for w (the default when undeclared,
    #: whatever the values); frequency: a row of weight w is w identical rows
    kind: Literal["survey", "frequency"]
    #: whether ``weight_kind`` declared the reading (false: the survey default)
    declared: bool


@record
class DataInfo(Record):
    path: str | None
    sha256: str | None
    rows: int
    columns: Annotated[list[str], Field(description="the columns read")] = field(
        default_factory=list
    )
    #: the sample weights' reading (left out without input.weight)
    weights: Annotated[WeightInfo | None, Field(exclude_if=lambda v: v is None)] = None


@record
class RunInfo(Record):
    started: str
    finished: str
    #: the run's measured duration in seconds (monotonic clock); 0 when the timestamps are
    #: pinned (``--deterministic``, ``SOURCE_DATE_EPOCH``); None in results written before
    #: it was recorded
    seconds: float | None = None
    engine: str = "embedded"
    inconclusive: InconclusivePolicy = "fail"
    #: which statuses fail the gate: failures (``error``, default), also warnings
    #: (``warning``), or none (``never``: exit 0 unless a control could not be evaluated)
    fail_on: FailOn = "error"
    #: seed of every bootstrap and permutation draw of the run
    seed: int | None = None
    options: dict[str, Any] = field(default_factory=dict)
    #: the folder the check ran in, which relative paths above are relative to (left out
    #: under ``--deterministic``, whose outputs must not depend on the machine's folders)
    cwd: str | None = None


@record
class GroupResult(Record):
    #: the displayed name: the values joined by `` & ``, a value quoted where it could be
    #: mistaken (it contains ``&``, or is ``(missing)``); unambiguous
    group: str
    #: the group's value in each dimension column, in the order of ``inputs.dimension``
    key: list[str] | None = None
    #: always false here (compared groups have values); see :class:`ExcludedGroup`
    missing: bool = False
    n: int
    value: float | None
    #: bootstrap interval of the group's own value, when the control asked for one
    ci_low: float | None = None
    ci_high: float | None = None


@record
class ConfidenceInterval(Record):
    """A bootstrap interval of the control's value (stratified by group unless ``resample`` is
    rows; gaps and ratios over groups: the simultaneous band, ``method`` band)."""

    low: float | None
    high: float | None
    level: float
    #: band: simultaneous band of the per-group values projected onto the gap or ratio;
    #: score: Newcombe / Koopman / Wilson score intervals of binary rates (stats/rate_forms.py)
    method: Literal["percentile", "bca", "band", "score"]
    resamples: int
    seed: int
    #: replicates whose value was defined
    valid: int
    #: why low/high are null
    reason: str | None = None
    #: how the interval was actually computed when it differs from what was asked
    #: (e.g. BCa fell back to percentile, or a grouped jackknife was used)
    note: str | None = None
    #: stratified: rows resampled within each group, group sizes fixed (the interval is
    #: conditional on them); rows: all rows resampled together, group sizes vary
    resample: Literal["stratified", "rows"] = "stratified"
    #: a score interval's exact Clopper–Pearson box [low, high] at the same level
    #: (:func:`fairpolicy.stats.sequential.exact_box`): set in a ``--window-gate
    #: sequential`` run only, whose alarm needs the score interval and this box both beyond
    #: the threshold (their hull: the finding's ``details.alarm_interval``); absent
    #: elsewhere. Under survey weights (not binomial counts) it is the Hoeffding box on
    #: Kish's effective rows (:func:`fairpolicy.stats.sequential.hoeffding_box`) and
    #: ``exact_box_kind`` says so
    exact_box: Annotated[list[float] | None, Field(exclude_if=lambda v: v is None)] = None
    #: how ``exact_box`` was built: absent for Clopper–Pearson intervals (whole counts),
    #: ``hoeffding`` under survey weights
    exact_box_kind: Annotated[
        Literal["hoeffding"] | None, Field(exclude_if=lambda v: v is None)
    ] = None


@record
class PValue(Record):
    """Permutation test of the group labels (done on counts), within the metric's stratum."""

    p_value: float | None
    permutations: int
    seed: int
    #: per group (that group against the rest), Bonferroni-adjusted when asked
    groups: dict[str, float] | None = None
    #: distinct tests in ``groups``: the number of groups, 1 with two groups (one test)
    family_size: int | None = None
    bonferroni: bool = False
    reason: str | None = None
    #: where group labels were permuted: all rows, within each actual or predicted class
    stratum: Literal["rows", "actual", "predicted"] | None = None
    #: the null hypothesis the p-value tests, in words
    null_hypothesis: str | None = None
    #: per group, the comparison its p-value tests ("A vs B", "A vs rest (B, C)")
    comparisons: dict[str, str] | None = None

    @property
    def where(self) -> str:
        """Where the group labels were permuted, for the human formats."""
        return {
            "actual": "within each actual class",
            "predicted": "within each predicted class",
            "rows": "over all rows",
        }.get(self.stratum or "", "of the group labels")


@record
class ExcludedGroup(Record):
    #: a group's displayed name, or ``(missing)`` for the rows without a group value
    group: str
    #: the group's value in each dimension column (null for the missing bucket)
    key: list[str] | None = None
    #: true for the rows whose group value is missing (an empty cell, a null, a NaN in a
    #: float column, or a ``missing_values`` token): never a real group, even one named
    #: ``(missing)`` or ``unknown``
    missing: bool = False
    n: int
    reason: str


@record
class SourceRef(Record):
    file: str
    line: int | None = None


@record
class BindChange(Record):
    """A column of a control that ``--bind``/``--rename`` changed (every output lists it)."""

    role: str
    #: the column the policy wrote (None: the policy bound none)
    written: str | None
    #: the column read instead
    read: str
    #: the option that changed it (``--rename sex=gender``, ``--bind dimension=gender``)
    by: str


@record
class Change(Record):
    """This finding against the same control's finding in a baseline results JSON
    (``--baseline``); built by :mod:`fairpolicy.baseline`, decided by
    :func:`fairpolicy.decide.change_verdict`."""

    #: paired: same control id, metric, parameters and bindings; new: the baseline has no
    #: such control; mismatch: it has, with another metric, parameters or bindings (never
    #: paired: ``reason`` says what differs)
    state: Literal["paired", "new", "mismatch"]
    baseline_value: float | None = None
    value: float | None = None
    #: which way is worse: ``lower`` is better, ``higher`` is better, or closer to ``ideal``
    #: is better — the direction of the quantity measured, resolved from the metric key and
    #: the parameters that select the value (:func:`fairpolicy.metrics.direction.resolve`)
    better: Literal["lower", "higher", "ideal"] = "lower"
    ideal: float | None = None
    #: how much worse the value got (positive: worse, negative: better); null when a side
    #: is undefined (``reason``)
    worsened_by: float | None = None
    #: interval of ``worsened_by`` from the two runs' intervals (MOVER, docs/statistics.md)
    low: float | None = None
    high: float | None = None
    level: float | None = None
    #: the allowed worsening δ applied (``max_regression``): the strictest of the run's
    #: (``--max-regression``, the configuration file, the API) and the control's own (the
    #: policy); null: the change is reported only
    max_regression: float | None = None
    #: the applied δ's decimal as written when its double says another
    #: (``0.09999999999999999999``; decided exactly), else null
    max_regression_written: str | None = None
    #: where the applied δ came from: ``flag`` (the command line: ``check`` or ``diff``),
    #: ``config`` (a configuration file), ``api`` (the Python API), ``policy`` (the
    #: control's or the policy-wide prop); null when none applies
    max_regression_source: Literal["flag", "config", "api", "policy"] | None = None
    #: the decision on the change: ok, regressed (worse by more than δ), inconclusive (it
    #: could not be decided: ``reason``), or none (no δ, or not paired)
    verdict: Verdict = "none"
    worst_group_before: str | None = None
    worst_group_now: str | None = None
    groups_appeared: list[str] = field(default_factory=list)
    groups_vanished: list[str] = field(default_factory=list)
    reason: str | None = None


@record
class BaselineRef(Record):
    """The baseline results a run was compared with (``--baseline``)."""

    path: str
    #: SHA-256 of the baseline results file
    sha256: str
    #: the baseline results' UUID: a v5 UUID of its SHA-256 (stable for the same file)
    uuid: str
    policy_sha256: str | None
    #: the run's δ (``--max-regression``, the configuration file or the API); a control's
    #: own or the policy-wide ``max_regression`` applies instead only where it is stricter
    #: (each finding's change records the δ applied and its source)
    max_regression: float | None = None
    #: the run's δ as written when its double says another decimal, else null
    max_regression_written: str | None = None
    max_regression_source: Literal["flag", "config", "api"] | None = None
    allow_policy_change: bool = False
    #: control ids in the baseline with no finding in this run
    vanished_controls: list[str] = field(default_factory=list)


@record
class Finding(Record):
    control_id: str
    title: str | None
    description: str | None = None
    metric_key: str
    inputs: dict[str, str]
    params: dict[str, Any]
    value: float | None
    operator: str
    threshold: float | list[float] | None
    status: Status
    message: str
    groups: list[GroupResult] = field(default_factory=list)
    excluded_groups: list[ExcludedGroup] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    #: why ``value`` is null (inconclusive) or what went wrong (error)
    reason: str | None = None
    worst_group: str | None = None
    enforcement_mode: Literal["block", "warn", "monitor"] = "block"
    #: whether this control's outcome can fail the gate (block mode)
    gating: bool = True
    severity: str | None = None
    lifecycle_phase: str | None = None
    risk_id: str | None = None
    min_samples: int | None = None
    classes: list[str] = field(default_factory=list)
    #: the compared groups' confusion tables, ``counts[group][y_true][y_pred]`` in the order
    #: of ``classes`` — everything a reader needs to recompute a count-based value (under
    #: fractional sample weights the sums of the rows' weights, not row counts)
    counts: dict[str, list[list[int | float]]] = field(default_factory=dict)
    source: SourceRef | None = None
    #: bootstrap confidence interval of ``value`` (``ci``/``--bootstrap``)
    ci: ConfidenceInterval | None = None
    #: the rule that decided the status: point value, or the interval (ci_upper/ci_lower)
    decision: Literal["point", "ci_upper", "ci_lower", "worst_case", "best_case"] = "point"
    p_value: PValue | None = None
    #: where the threshold came from (component-definition, profile, catalog, prop)
    threshold_source: str | None = None
    #: the decimal(s) the policy wrote when ``threshold``'s doubles say others
    #: ("0.09999999999999999999", "1e-400"; "low,high" for between): what the status was
    #: decided on and what every output prints; null when the doubles' shortest decimals
    #: are what was written
    threshold_written: str | None = None
    objective_id: str | None = None
    statement_id: str | None = None
    #: which way is better for the quantity measured (``lower``, ``higher``, or closer to
    #: ``ideal``), resolved from the metric key and the parameters that select the value
    #: (``multiclass_confusion_metrics`` with ``value: accuracy_gap`` is a gap: lower);
    #: null in results written before it was recorded (then derived from key and params)
    better: Literal["lower", "higher", "ideal"] | None = None
    ideal: float | None = None
    #: what this finding does to the gate under the run's --inconclusive and --fail-on:
    #: decided once by :func:`gate_effect` when the results are built (never by a formatter)
    gate_effect: GateEffect = "pass"
    #: the change against the baseline's finding (``--baseline``; left out without one)
    change: Annotated[Change | None, Field(exclude_if=lambda v: v is None)] = None
    #: whose meaning the key was read with when the policy declared or was recognised to be
    #: in a dialect (``venturalitica``: :mod:`fairpolicy.policy.dialect`; left out otherwise)
    dialect: Annotated[str | None, Field(exclude_if=lambda v: v is None)] = None
    #: the columns ``--bind``/``--rename`` changed (left out when none did)
    bind_changes: Annotated[list[BindChange], Field(exclude_if=lambda v: not v)] = field(
        default_factory=list
    )

    @property
    def has_interval(self) -> bool:
        """Whether a confidence interval with both ends was computed."""
        return self.ci is not None and self.ci.low is not None and self.ci.high is not None


@record
class WindowResult(Record):
    """One window of a monitoring run (``--window``): every control decided on that
    window's rows alone."""

    #: the window's label: its first day (``YYYY-MM-DD``) or the column's value; a pooled
    #: window is ``FIRST..LAST``
    window: str
    rows: int
    findings: list[Finding]
    #: the first day after a period window (exclusive; null for a column's own values)
    end: str | None = None
    #: the level of the window's intervals under the ``sequential`` gate (1 − α_t)
    level: float | None = None
    #: the windows pooled into this one (``--pool-windows``)
    pooled: list[str] = field(default_factory=list)
    #: why the window's findings cannot pass (too few rows)
    reason: str | None = None


@record
class WindowsInfo(Record):
    """The window axis of a monitoring run and its windows, oldest first."""

    column: str
    #: ``d``, ``w``, ``mo``, ``q``, ``y``; null: the column's own values are the windows
    period: str | None
    #: the time zone the calendar periods are cut in (null for a column's own values)
    tz: str | None
    described: str
    gate: Literal["last", "any", "sequential"]
    windows: list[WindowResult]
    min_rows: int | None = None
    pool: bool = False
    #: ``--reference FROM..TO``: the windows every change is measured against
    reference: str | None = None
    #: rows whose window column is empty (in no window)
    rows_outside: int = 0
    #: ``--state FILE``: the state file (path, SHA-256 after this run, batches held, this
    #: run's batch SHA-256, rows); the windows were evaluated from its count tables
    state: dict[str, Any] | None = None


@record
class Summary(Record):
    total: int
    pass_: Annotated[int, Field(alias="pass", serialization_alias="pass")]
    fail: int
    warn: int
    inconclusive: int
    error: int
    gate: Literal["pass", "fail", "error"]

    __pydantic_config__: ClassVar[dict[str, Any]] = {**RECORD_CONFIG, "populate_by_name": True}


#: ``--meta`` keys: OSCAL tokens (they become prop names in the OSCAL outputs)
META_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]{0,63}", re.ASCII)
#: longest ``--subject`` / ``--meta`` value, in characters
META_VALUE_MAX = 500


def run_metadata(
    subject: str | None, meta: Mapping[str, str] | None
) -> tuple[str | None, dict[str, str]]:
    """``--subject`` and ``--meta`` checked: one non-empty line each (surrounding spaces
    dropped), keys OSCAL tokens. Raises :class:`UsageError` naming the flag."""

    def value(flag: str, text: str) -> str:
        text = str(text).strip()
        import unicodedata

        control = any(unicodedata.category(ch) in ("Cc", "Cf") for ch in text)
        if not text or control or len(text) > META_VALUE_MAX:
            raise UsageError(
                f"{flag} needs one non-empty line of at most {META_VALUE_MAX} characters "
                f"without control characters (tabs, escapes), got {text[:60]!r}.",
                hint=f"e.g. {flag} " + ('"model v4.2"' if flag == "--subject" else "ticket=ML-42"),
            )
        return text

    out: dict[str, str] = {}
    for key, text in (meta or {}).items():
        if not META_KEY.fullmatch(str(key)):
            raise UsageError(
                f"--meta {key}=…: the key must start with a letter or '_' and hold only "
                "letters, digits, '.', '-' and '_' (at most 64).",
                hint="e.g. --meta git_sha=$GITHUB_SHA --meta ticket=ML-42",
            )
        out[str(key)] = value(f"--meta {key}=", text)
    return (None if subject is None else value("--subject", subject)), out


@record
class Results(Record):
    schema_version: str = SCHEMA_VERSION
    tool: Tool
    policy: PolicyInfo
    data: DataInfo
    run: RunInfo
    summary: Summary
    findings: list[Finding]
    warnings: list[str] = field(default_factory=list)
    #: the baseline this run was compared with (``--baseline``; left out without one)
    baseline: Annotated[BaselineRef | None, Field(exclude_if=lambda v: v is None)] = None
    #: the assessed system (``--subject "model v4.2"``; left out without one)
    subject: Annotated[str | None, Field(exclude_if=lambda v: v is None)] = None
    #: run metadata (``--meta KEY=VALUE``: git SHA, ticket, reviewer; left out when empty)
    meta: Annotated[dict[str, str], Field(exclude_if=lambda v: not v)] = field(default_factory=dict)
    #: the windows of a monitoring run (``--window``; left out without one): each
    #: finding above is its control's decision across them (``--window-gate``)
    windows: Annotated[WindowsInfo | None, Field(exclude_if=lambda v: v is None)] = None

    @property
    def exit_code(self) -> int:
        """0 every gating control passed; 1 a gating control failed; 2 could not evaluate."""
        return {"pass": EXIT_PASS, "fail": EXIT_FAIL, "error": EXIT_ERROR}[self.summary.gate]

    def __post_init__(self) -> None:
        """Every finding's gate effect and the summary come from :func:`gate_effect` and
        :func:`summarize`, however the results were built (a run, a copy, or a JSON file
        read back by ``export``): a stored effect or summary can never disagree with the
        table."""
        run = self.run
        findings = [
            f
            if f.gate_effect == (e := gate_effect(f, run.inconclusive, run.fail_on))
            else f.model_copy(update={"gate_effect": e})
            for f in self.findings
        ]
        object.__setattr__(self, "findings", findings)
        object.__setattr__(self, "summary", summarize(findings, run.inconclusive, run.fail_on))
        super().__post_init__()

    def effect(self, f: Finding) -> GateEffect:
        """``f``'s effect on the gate under this run's options (the one table)."""
        return gate_effect(f, self.run.inconclusive, self.run.fail_on)

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False, ensure_ascii=False)

    # the views of a notebook and a script (repr, _repr_html_, to_frame, render, write) are
    # on the public subclass, fairpolicy.present.Results, one layer up (what check returns)

    @property
    def passed(self) -> bool:
        """True only when the gate passed (exit code 0)."""
        return self.summary.gate == "pass"


def load_results(path: str) -> Results:
    """Read a results JSON written by ``-o json`` (for ``fairpolicy export``)."""
    from pathlib import Path

    from pydantic import ValidationError

    from fairpolicy.errors import DataError
    from fairpolicy.files import open_regular

    try:
        with open_regular(Path(path), DataError, "results JSON") as fh:  # a FIFO would block
            text = fh.read().decode("utf-8")
    except OSError as exc:
        raise DataError(f"cannot read the results file: {exc.strerror}.", file=path) from None
    except UnicodeDecodeError as exc:
        raise DataError(
            f"the results file is not UTF-8 (byte {exc.start}).",
            file=path,
            hint="pass the file written by `fairpolicy check -o json=PATH`.",
        ) from None
    try:
        results = Results.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise DataError(
            f"not a fairpolicy results JSON ({exc.error_count()} problem(s); first at "
            f"'{where}': {first['msg']}).",
            file=path,
            hint="pass the file written by `fairpolicy check -o json=PATH`.",
        ) from None
    _refuse_non_finite(results, path)
    return results


def _refuse_non_finite(results: Results, path: str) -> None:
    """DataError naming the finding and field where a value is NaN or infinite: fairpolicy
    never writes one (an undefined value is null with a reason), so the file was edited
    or written by something else, and no report may be rendered from it."""
    import math

    from fairpolicy.errors import DataError

    def first(obj: Any, where: str) -> str | None:
        if isinstance(obj, float) and not math.isfinite(obj):
            return where
        if isinstance(obj, dict):
            items: Any = obj.items()
        elif isinstance(obj, list | tuple):
            items = enumerate(obj)
        else:
            return None
        for k, v in items:
            if (found := first(v, f"{where}.{k}" if where else str(k))) is not None:
                return found
        return None

    doc = results.model_dump()
    for i, f in enumerate(doc["findings"]):
        if (where := first(f, "")) is not None:
            raise DataError(
                f"finding {i + 1} (control '{f['control_id']}') holds a value that is not a "
                f"finite number at '{where}' (NaN or Infinity); fairpolicy writes undefined "
                "values as null with a reason.",
                file=path,
                key=where,
                hint="rerun `fairpolicy check -o json=PATH` to get an unedited results file.",
            )
    rest = {k: v for k, v in doc.items() if k != "findings"}
    if (where := first(rest, "")) is not None:
        raise DataError(
            f"the results hold a value that is not a finite number at '{where}' (NaN or Infinity).",
            file=path,
            key=where,
            hint="rerun `fairpolicy check -o json=PATH` to get an unedited results file.",
        )


def gate_effect(f: Finding, inconclusive: InconclusivePolicy, fail_on: FailOn) -> GateEffect:
    """The one table that decides what a finding does to the release gate.

    1. ``error`` → ``error`` (exit 2, whatever the options); ``pass`` → ``pass`` unless the
       change against a baseline regressed beyond ``max_regression`` (then as ``fail``)
       or could not be decided (then as ``inconclusive``).
    2. What the finding amounts to: a violation (status ``fail``, or ``warn`` for a warn/
       monitor control) is ``fail``. An ``inconclusive`` one is what ``--inconclusive``
       says (``fail`` by default) — with one exception: under ``decision: ci_lower`` an
       interval that *was computed* and straddles the threshold proves no violation, so it
       is ``warn``. No interval (not computed, or undefined) never earns that exception.
    3. Enforcement caps it: a ``warn`` or ``monitor`` control never gives more than ``warn``.
    4. ``--fail-on warning`` turns ``warn`` into ``fail`` (block and warn-mode controls; a
       monitor control never gates); ``--fail-on never`` turns ``fail`` into ``warn``.
    """
    if f.status == "error":
        return "error"
    verdict = f.change.verdict if f.change is not None else "none"
    if f.status == "pass" and verdict in ("regressed", "inconclusive"):
        # a regression beyond max_regression (or an undecidable one) never passes: the
        # comparison sets the status, this guards a results file edited afterwards
        f = f.model_copy(update={"status": "fail" if verdict == "regressed" else "inconclusive"})
    if f.status == "pass":
        return "pass"
    effect: GateEffect
    if f.status == "inconclusive":
        if f.decision == "ci_lower" and f.value is not None and f.has_interval:
            effect = "warn"
        else:
            effect = inconclusive
    else:
        effect = "fail"
    if effect == "pass":
        return "pass"
    if f.enforcement_mode != "block":
        effect = "warn"
    if fail_on == "warning" and effect == "warn" and f.enforcement_mode != "monitor":
        effect = "fail"
    if fail_on == "never" and effect == "fail":
        effect = "warn"
    return effect


def summarize(
    findings: list[Finding], inconclusive: InconclusivePolicy, fail_on: FailOn = "error"
) -> Summary:
    """Counts per status and the gate verdict.

    The gate is ``error`` if any control could not be evaluated, ``fail`` if any
    finding's :func:`gate_effect` is ``fail``, else ``pass``.
    """
    counts = {s: 0 for s in ("pass", "fail", "warn", "inconclusive", "error")}
    effects = set()
    for f in findings:
        counts[f.status] += 1
        effects.add(gate_effect(f, inconclusive, fail_on))
    gate: Literal["pass", "fail", "error"] = "pass"
    if "error" in effects:
        gate = "error"
    elif "fail" in effects:
        gate = "fail"
    return Summary(
        total=len(findings),
        pass_=counts["pass"],
        fail=counts["fail"],
        warn=counts["warn"],
        inconclusive=counts["inconclusive"],
        error=counts["error"],
        gate=gate,
    )


def json_schema() -> dict[str, Any]:
    """The JSON Schema of the results file (by alias, as serialised)."""
    schema = Results.model_json_schema(by_alias=True, mode="serialization")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://fairpolicy.example.org/schemas/results.schema.json"
    return schema


if __name__ == "__main__":  # python -m fairpolicy.results > schemas/results.schema.json
    print(json.dumps(json_schema(), indent=2, sort_keys=True))
