"""The one frozen results model. It decides the gate; formatters only render it.

The JSON written by ``-o json`` is ``Results.model_dump(mode="json")``; its
JSON Schema lives in ``schemas/results.schema.json`` (generated from this
model, checked by a test). Undefined numbers are ``null`` with a reason, never
NaN. Later versions add fields; they never remove these.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from fairpolicy.errors import EXIT_ERROR, EXIT_FAIL, EXIT_PASS

SCHEMA_VERSION = "1.0"

Status = Literal["pass", "fail", "warn", "inconclusive", "error"]
InconclusivePolicy = Literal["pass", "warn", "fail"]
FailOn = Literal["error", "warning", "never"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Tool(_Frozen):
    name: str = "fairpolicy"
    version: str


class PolicyInfo(_Frozen):
    path: str | None
    sha256: str | None
    title: str | None = None
    version: str | None = None
    form: str | None = None


class DataInfo(_Frozen):
    path: str | None
    sha256: str | None
    rows: int
    columns: list[str] = Field(default_factory=list, description="the columns read")


class RunInfo(_Frozen):
    started: str
    finished: str
    engine: str = "embedded"
    inconclusive: InconclusivePolicy = "fail"
    #: which statuses fail the gate: failures (``error``, default), also warnings
    #: (``warning``), or none (``never``: exit 0 unless a control could not be evaluated)
    fail_on: FailOn = "error"
    #: seed of every bootstrap and permutation draw of the run
    seed: int | None = None
    options: dict[str, Any] = Field(default_factory=dict)


class GroupResult(_Frozen):
    group: str
    n: int
    value: float | None
    #: bootstrap interval of the group's own value, when the control asked for one
    ci_low: float | None = None
    ci_high: float | None = None


class ConfidenceInterval(_Frozen):
    """A bootstrap interval of the control's value (stratified by group unless ``resample`` is
    rows; gaps and ratios over groups: the simultaneous band, ``method`` band)."""

    low: float | None
    high: float | None
    level: float
    #: band: simultaneous band of the per-group values projected onto the gap or ratio
    method: Literal["percentile", "bca", "band"]
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


class PValue(_Frozen):
    """Permutation test of the group labels (done on counts)."""

    p_value: float | None
    permutations: int
    seed: int
    #: per group (that group against the rest), Bonferroni-adjusted when asked
    groups: dict[str, float] | None = None
    family_size: int | None = None
    bonferroni: bool = False
    reason: str | None = None


class ExcludedGroup(_Frozen):
    group: str
    n: int
    reason: str


class SourceRef(_Frozen):
    file: str
    line: int | None = None


class Finding(_Frozen):
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
    groups: list[GroupResult] = Field(default_factory=list)
    excluded_groups: list[ExcludedGroup] = Field(default_factory=list)
    details: dict[str, Any] = Field(default_factory=dict)
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
    classes: list[str] = Field(default_factory=list)
    #: the compared groups' confusion tables, ``counts[group][y_true][y_pred]`` in the order
    #: of ``classes`` — everything a reader needs to recompute a count-based value
    counts: dict[str, list[list[int]]] = Field(default_factory=dict)
    source: SourceRef | None = None
    #: bootstrap confidence interval of ``value`` (``ci``/``--bootstrap``)
    ci: ConfidenceInterval | None = None
    #: the rule that decided the status: point value, or the interval (ci_upper/ci_lower)
    decision: Literal["point", "ci_upper", "ci_lower"] = "point"
    p_value: PValue | None = None
    #: where the threshold came from (component-definition, profile, catalog, prop)
    threshold_source: str | None = None
    objective_id: str | None = None
    statement_id: str | None = None


class Summary(_Frozen):
    total: int
    pass_: int = Field(alias="pass", serialization_alias="pass")
    fail: int
    warn: int
    inconclusive: int
    error: int
    gate: Literal["pass", "fail", "error"]

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class Results(_Frozen):
    schema_version: str = SCHEMA_VERSION
    tool: Tool
    policy: PolicyInfo
    data: DataInfo
    run: RunInfo
    summary: Summary
    findings: list[Finding]
    warnings: list[str] = Field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """0 every gating control passed; 1 a gating control failed; 2 could not evaluate."""
        return {"pass": EXIT_PASS, "fail": EXIT_FAIL, "error": EXIT_ERROR}[self.summary.gate]

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False, ensure_ascii=False)


def load_results(path: str) -> Results:
    """Read a results JSON written by ``-o json`` (for ``fairpolicy export``)."""
    from pathlib import Path

    from pydantic import ValidationError

    from fairpolicy.errors import DataError

    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise DataError(f"cannot read the results file: {exc.strerror}.", file=path) from None
    try:
        return Results.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise DataError(
            f"not a fairpolicy results JSON ({exc.error_count()} problem(s); first at "
            f"'{where}': {first['msg']}).",
            file=path,
            hint="pass the file written by `fairpolicy check -o json=PATH`.",
        ) from None


def _fails_gate(f: Finding, inconclusive: InconclusivePolicy, fail_on: FailOn) -> bool:
    """A failed control fails the gate (a ``warn`` one too under ``--fail-on warning``);
    so does an inconclusive one under ``--inconclusive fail`` — except under
    ``decision: ci_lower``, which fails only on a proven violation. ``--fail-on never``
    fails nothing."""
    if fail_on == "never":
        return False
    if f.status == "fail" or (f.status == "warn" and fail_on == "warning"):
        return True
    if f.status != "inconclusive":
        return False
    if f.decision == "ci_lower" and f.value is not None:
        return False
    return inconclusive == "fail"


def summarize(
    findings: list[Finding], inconclusive: InconclusivePolicy, fail_on: FailOn = "error"
) -> Summary:
    """Counts per status and the gate verdict.

    The gate is ``error`` if any control could not be evaluated, ``fail`` if a
    gating control failed (or is inconclusive while ``inconclusive`` is
    ``fail``), else ``pass``.
    """
    counts = {s: 0 for s in ("pass", "fail", "warn", "inconclusive", "error")}
    for f in findings:
        counts[f.status] += 1
    gate: Literal["pass", "fail", "error"] = "pass"
    if counts["error"]:
        gate = "error"
    elif any(
        _fails_gate(f, inconclusive, fail_on)
        and (f.gating or (fail_on == "warning" and f.enforcement_mode == "warn"))
        for f in findings
    ):
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
