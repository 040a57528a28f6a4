"""The loaded, validated policy: frozen records every later stage reads.

Whatever form a policy file takes (Venturalitica assessment-plan, Venturalitica
component-definition, bare list, OSCAL catalog + profile), loading produces one
:class:`Policy` of :class:`Control` objects with canonical metric keys,
canonical operators, numeric thresholds and validated parameters.
"""

from __future__ import annotations

import math
from dataclasses import field
from enum import StrEnum
from fractions import Fraction
from typing import TYPE_CHECKING, Annotated, Any

from fairpolicy.exact import Bound, exact_bound, threshold_text, written_bounds, written_text
from fairpolicy.records import Record, record

if TYPE_CHECKING:
    from pydantic import Field

#: fairpolicy's namespace URI for OSCAL props it defines.
NS = "https://fairpolicy.example.org/ns/oscal"

#: Roles a control can bind to data columns.
ROLES = (
    "target",
    "prediction",
    "dimension",
    "score",
    "rank",
    "site",
    "weight",
    "count",
    "selected",
    "rate",
    "columns",
    "fields",
    "sensitive_columns",
)

#: Roles whose value is a comma list of columns (the dimension's intersection, and the
#: columns the data-quality metrics measure)
LIST_ROLES = ("dimension", "columns", "fields", "sensitive_columns")

#: Props that shape the control itself; every other prop is a metric parameter.
CONTROL_PROPS = (
    "metric_key",
    "threshold",
    "operator",
    "enforcement_mode",
    "severity",
    "lifecycle_phase",
    "risk_id",
    "threshold_param",
    "dialect",
)

#: Settings a policy may give once for every control, as ``metadata.props`` (OSCAL
#: metadata props in fairpolicy's ``ns`` or with none); a control's own prop wins.
POLICY_WIDE_PROPS = (
    "ci",
    "ci_level",
    "ci_method",
    "resample",
    "decision",
    "p_value",
    "bonferroni",
    "min_samples",
    "min_share",
    "comparator",
    "min_share_scope",
    "unknown_selection",
    "missing",
    "missing_values",
    "max_regression",
    "dialect",
    "input.weight",  # sample weights: data/bind/weights.py
    "input.count",  # count tables: data/bind/count_table.py
    "input.selected",
    "input.rate",
    "weight_kind",
    "positive_label",  # text labels named once (a control's own positive_label.* wins too)
)


class Operator(StrEnum):
    LT = "<"
    LE = "<="
    GT = ">"
    GE = ">="
    EQ = "=="
    NE = "!="
    BETWEEN = "between"


#: Every accepted spelling (lower-cased) → canonical operator.
OPERATOR_SPELLINGS: dict[str, Operator] = {
    "<": Operator.LT,
    "lt": Operator.LT,
    "<=": Operator.LE,
    "le": Operator.LE,
    "lte": Operator.LE,
    ">": Operator.GT,
    "gt": Operator.GT,
    ">=": Operator.GE,
    "ge": Operator.GE,
    "gte": Operator.GE,
    "==": Operator.EQ,
    "eq": Operator.EQ,
    "!=": Operator.NE,
    "ne": Operator.NE,
    "between": Operator.BETWEEN,
}


class EnforcementMode(StrEnum):
    """How a control's outcome gates the run (Venturalitica's vocabulary)."""

    BLOCK = "block"  # a failure fails the gate
    WARN = "warn"  # a failure is reported as `warn`, the gate passes
    MONITOR = "monitor"  # reported, never gates


@record
class Threshold(Record):
    """A numeric bound, or two bounds for ``between`` (inclusive)."""

    value: float | None = None
    low: float | None = None
    high: float | None = None
    #: the decimal the policy wrote when its double says another one
    #: (``"0.09999999999999999999"``, ``"1e-400"``; ``"low,high"`` for ``between``), in a
    #: canonical spelling (:func:`fairpolicy.exact.written_threshold`): the exact decimal
    #: the decision compares with and what every output prints. None: the floats' shortest
    #: decimals are what was written (``0.1``, ``0.10``), so equal thresholds are equal.
    text: str | None = None

    def __post_init__(self) -> None:
        for v in (self.value, self.low, self.high):
            if v is not None and not math.isfinite(v):
                raise ValueError("threshold must be a finite number")
        super().__post_init__()

    def bounds(self) -> tuple[Bound, Bound]:
        """(low, high) for the decision: the exact decimals written (Fractions), else the
        floats; a one-sided threshold gives its value twice."""
        if self.text is not None:
            parts = written_bounds(self.text)
            return (parts[0], parts[-1])
        if self.value is not None:
            return (self.value, self.value)
        assert self.low is not None and self.high is not None
        return (self.low, self.high)

    def render(self) -> str:
        """The threshold as written (``0.1``, or ``[0.8, 1.25]`` for ``between``)."""
        if self.text is not None:
            parts = [written_text(p) for p in self.text.split(",")]
            return parts[0] if len(parts) == 1 else f"[{parts[0]}, {parts[-1]}]"
        if self.value is not None:
            return threshold_text(self.value)
        assert self.low is not None and self.high is not None
        return f"[{threshold_text(self.low)}, {threshold_text(self.high)}]"

    def exact(self) -> tuple[bool, Fraction, Fraction]:
        """(one-sided, low, high) as exact decimals: what two equal thresholds share."""
        low, high = self.bounds()
        return (self.value is not None, exact_bound(low), exact_bound(high))

    def same(self, other: Threshold) -> bool:
        """Whether both say the same exact decimal(s) (``0.10`` is ``0.1``; ``0.1`` is not
        ``0.1000000000000000000001``, though both have one double)."""
        return self.exact() == other.exact()


@record
class SourceLocation(Record):
    file: str
    line: int | None = None


@record
class Control(Record):
    """One evaluable fairness control."""

    control_id: str
    title: str | None = None
    description: str | None = None
    metric_key: str  # canonical registry key (aliases resolved)
    metric_key_as_written: str
    threshold: Threshold
    operator: Operator
    #: role → column; ``dimension`` may name several columns joined by ``,``.
    inputs: dict[str, str]
    #: validated metric parameters (defaults not filled in; the metric spec does that).
    params: dict[str, Any] = field(default_factory=dict)
    enforcement_mode: EnforcementMode = EnforcementMode.BLOCK
    severity: str | None = None
    lifecycle_phase: str | None = None
    risk_id: str | None = None
    #: missing-value policy for target/prediction: ``error`` (default) or ``drop``.
    missing: str = "error"
    min_samples: int = 30
    source: SourceLocation | None = None
    #: where the threshold came from: ``component-definition``, ``profile``, ``catalog``
    #: (a param's value) or ``prop`` (a ``threshold`` prop)
    threshold_source: str | None = None
    #: id of the control's ``assessment-objective`` part in its catalog, if any
    objective_id: str | None = None
    #: id of the control's ``statement`` part in its catalog, if any
    statement_id: str | None = None
    #: what ``--bind``/``--rename`` changed: (role, column written or None, column read,
    #: the option), :func:`fairpolicy.policy.binds.apply_binds`
    bind_changes: tuple[tuple[str, str | None, str, str], ...] = ()
    #: ``venturalitica`` or ``fairpolicy`` when the policy declared or was recognised to
    #: be in a dialect and this control's key depends on it (:mod:`fairpolicy.policy.dialect`)
    dialect: str | None = None

    @property
    def dimension_columns(self) -> tuple[str, ...]:
        return self.role_columns("dimension")

    def role_columns(self, role: str) -> tuple[str, ...]:
        """The columns bound to ``role``: a comma list for :data:`LIST_ROLES`, else one."""
        raw = self.inputs.get(role, "")
        if role not in LIST_ROLES:
            return (raw,) if raw else ()
        return tuple(c.strip() for c in raw.split(",") if c.strip())

    @property
    def gating(self) -> bool:
        return self.enforcement_mode is EnforcementMode.BLOCK


@record
class Policy(Record):
    """A validated policy: its controls plus provenance."""

    path: str | None = None
    sha256: str | None = None
    title: str | None = None
    version: str | None = None
    #: which input form was recognised (``assessment-plan``, ``component-definition``,
    #: ``list``, ``catalog``, ``profile``).
    form: str
    controls: tuple[Control, ...]
    warnings: tuple[str, ...] = ()
    #: every other document that shaped the controls (imported profiles and catalogs, the
    #: source a component-definition implements): (path, SHA-256, OSCAL model)
    documents: tuple[tuple[str, str, str], ...] = ()
    #: the people of the assessment named in ``metadata.props`` (``assessor``,
    #: ``organization``); ``--assessor``/``--organization`` win
    assessors: tuple[str, ...] = ()
    organization: str | None = None
    #: control id → prop name → where the prop was written (file, and for OSCAL the
    #: document kind); what ``check --explain`` prints; not part of any output
    prop_where: Annotated[dict[str, dict[str, str]], Field(exclude=True)] = field(
        default_factory=dict
    )
