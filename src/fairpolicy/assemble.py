"""Results assembly: findings + provenance → :class:`~fairpolicy.results.Results`.

The run's timestamps (``--timestamp``, ``SOURCE_DATE_EPOCH``, ``--deterministic``), the
policy as the results record it (every document hashed), one :class:`Finding` per control
(:func:`finding`, also the plan's "planned: not evaluated" findings) and the run record
(:class:`RunRecord`, :func:`assemble`). Nothing here measures or decides.
"""

from __future__ import annotations

import datetime as _dt
import os
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from fairpolicy import present
from fairpolicy.data.sources import Table
from fairpolicy.errors import UsageError
from fairpolicy.metrics.base import MetricSpec
from fairpolicy.metrics.direction import resolve
from fairpolicy.policy.schema import Control, Operator, Policy
from fairpolicy.records import lean
from fairpolicy.results import (
    BindChange,
    DataInfo,
    DocumentRef,
    FailOn,
    Finding,
    InconclusivePolicy,
    PolicyInfo,
    Results,
    RunInfo,
    SourceRef,
    Tool,
    WeightInfo,
    summarize,
)
from fairpolicy.stats import (
    GroupStats,
)
from fairpolicy.version import __version__


def now(deterministic: bool = False) -> str:
    """UTC now; ``SOURCE_DATE_EPOCH`` when set; the epoch itself under ``deterministic``."""
    from fairpolicy.env import source_date_epoch

    epoch = source_date_epoch()
    if epoch is not None:
        t = _dt.datetime.fromtimestamp(epoch, tz=_dt.UTC)
    elif deterministic:
        t = _dt.datetime.fromtimestamp(0, tz=_dt.UTC)
    else:
        t = _dt.datetime.now(tz=_dt.UTC)
    return t.isoformat(timespec="seconds")


def fixed_timestamp(text: str | None) -> str | None:
    """``--timestamp``: an ISO 8601 date-time with a UTC offset (``2026-01-31T12:00:00Z``),
    as the run's start and end, in UTC, to the second. Raises UsageError."""
    if text is None:
        return None
    try:
        t = _dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        t = None
    if t is None or t.tzinfo is None:
        raise UsageError(
            f"--timestamp '{text}' is not an ISO 8601 date-time with a UTC offset; write e.g. "
            "2026-01-31T12:00:00Z or 2026-01-31T13:00:00+01:00."
        )
    return t.astimezone(_dt.UTC).isoformat(timespec="seconds")


def policy_info(pol: Policy) -> PolicyInfo:
    """The policy as the results record it: the file, its hash, and every other document
    read while resolving it, with theirs."""
    return PolicyInfo(
        path=pol.path,
        sha256=pol.sha256,
        title=pol.title,
        version=pol.version,
        form=pol.form,
        documents=[DocumentRef(path=p, sha256=h, kind=k) for p, h, k in pol.documents],
        assessors=list(pol.assessors),
        organization=pol.organization,
    )


def is_deterministic(flag: bool = False) -> bool:
    """``--deterministic`` or ``SOURCE_DATE_EPOCH`` set: reproducible timestamps and UUIDs."""
    from fairpolicy.env import source_date_epoch

    return flag or source_date_epoch() is not None  # also validates it (exit 2)


def _written(control: Control) -> str | None:
    """The threshold as the policy wrote it (``0.09999999999999999999``, ``1e-400``;
    ``0.8,1.25`` for ``between``)."""
    return control.threshold.text


def _threshold(control: Control) -> float | list[float] | None:
    t = control.threshold
    if control.operator is Operator.BETWEEN:
        assert t.low is not None and t.high is not None
        return [t.low, t.high]
    return t.value


def finding(control: Control, spec: MetricSpec, **fields: Any) -> Finding:
    params = spec.resolve_params(control.params)
    params.update({k: v for k, v in control.params.items() if k not in params})
    better, ideal = resolve(spec, params)
    return Finding(
        better=better,
        ideal=ideal,
        control_id=control.control_id,
        title=control.title,
        description=control.description,
        metric_key=control.metric_key,
        inputs=dict(control.inputs),
        params=params,
        operator=control.operator.value,
        threshold=_threshold(control),
        threshold_written=_written(control),
        enforcement_mode=control.enforcement_mode.value,
        gating=control.gating,
        severity=control.severity,
        lifecycle_phase=control.lifecycle_phase,
        risk_id=control.risk_id,
        min_samples=control.min_samples,
        threshold_source=control.threshold_source,
        objective_id=control.objective_id,
        statement_id=control.statement_id,
        source=SourceRef(file=control.source.file, line=control.source.line)
        if control.source
        else None,
        dialect=control.dialect,
        bind_changes=[
            BindChange(role=r, written=w, read=n, by=b) for r, w, n, b in control.bind_changes
        ],
        **fields,
    )


def group_keys(stats: GroupStats) -> dict[str, list[str]]:
    """Group name → its values (one per dimension column), for the groups of ``stats`` and
    of its secondary grouping (site). Names are unambiguous (:func:`group_name`)."""
    out: dict[str, list[str]] = {}
    for st in (stats.secondary, stats):
        if st is not None and len(st.group_keys) == len(st.groups):
            out.update({g: list(k) for g, k in zip(st.groups, st.group_keys, strict=True)})
    return out


def jsonable(obj: Any) -> Any:
    """Plain JSON types only (numpy scalars converted; NaN is a bug, so it raises)."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and obj != obj:
        raise ValueError("NaN reached a result; metrics must return None with a reason")
    return obj


@lean
class RunRecord:
    """The run as the results record it, settled before anything is read
    (:func:`fairpolicy.planning.settle`)."""

    started: str
    #: ``--timestamp`` in UTC (the run's start and end), or None
    fixed: str | None
    #: ``time.perf_counter()`` at the start
    clock: float
    deterministic: bool
    inconclusive: InconclusivePolicy
    fail_on: FailOn
    seed: int
    #: the run options recorded in the results (``--bind``, the statistics options, ...)
    options: dict[str, Any]
    #: the warning that a deterministic run without a date is dated at the epoch
    epoch_note: tuple[str, ...] = ()


def weight_info(pol: Policy) -> WeightInfo | None:
    """The run's weight reading: ``weight_kind`` when declared, else the survey default."""
    from fairpolicy.data.bind.weights import weight_column, weight_kind

    column = weight_column(pol)
    if column is None:
        return None
    kind = weight_kind(pol)
    return WeightInfo(
        column=column,
        kind="frequency" if kind == "frequency" else "survey",
        declared=kind is not None,
    )


def assemble(
    record: RunRecord,
    pol: Policy,
    table: Table,
    read: Sequence[str],
    findings: list[Finding],
    *,
    engine: str,
    score_decimals: int | None,
    warnings: Sequence[str],
) -> Results:
    """The results of a run: ``read`` the columns read, ``score_decimals`` the score grid
    when one was used (recorded in the run options), ``warnings`` after the policy's."""
    run_options = dict(record.options)
    if score_decimals is not None:
        run_options["score_decimals"] = score_decimals
    return present.Results(
        tool=Tool(version=__version__),
        policy=policy_info(pol),
        data=DataInfo(
            path=table.path,
            sha256=table.sha256,
            rows=table.rows,
            columns=list(dict.fromkeys(read)),
            weights=weight_info(pol),
        ),
        run=RunInfo(
            started=record.started,
            finished=record.fixed or now(record.deterministic),
            seconds=0.0
            if is_deterministic(record.deterministic)
            else time.perf_counter() - record.clock,
            inconclusive=record.inconclusive,
            fail_on=record.fail_on,
            seed=record.seed,
            engine=engine,
            options={k: v for k, v in run_options.items() if v or k == "score_decimals"},
            cwd=None if record.deterministic else os.getcwd(),
        ),
        summary=summarize(findings, record.inconclusive, record.fail_on),
        findings=findings,
        warnings=[*record.epoch_note, *pol.warnings, *warnings],
    )
