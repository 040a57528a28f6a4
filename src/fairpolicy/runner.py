"""The pipeline, in one direction: load → read → bind → count → measure → decide.

``check(policy, data)`` is the public entry point (re-exported as
``fairpolicy.check``). Rows are scanned once per label binding: every control
that reads the same target/prediction pair shares one count table, and every
dimension grouping of those controls is a sum over its intersectional cells.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import math
import os
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fairpolicy import __version__
from fairpolicy.data.bind import (
    LabelKey,
    Labels,
    encode_dimension,
    encode_labels,
    missing_column_problem,
    numeric_column,
    require_complete,
    score_column_names,
    validate_scores,
)
from fairpolicy.data.engines import (
    Request,
    default_memory_budget,
    open_source,
    parse_size,
    resolve_engine,
)
from fairpolicy.data.limits import check_rows
from fairpolicy.data.prefetch import Prefetch, bound_columns
from fairpolicy.data.read import Table, peek_columns, read_table
from fairpolicy.decide import describe, status_for, within
from fairpolicy.errors import BindingError, FairpolicyError, Problem, UsageError
from fairpolicy.metrics.base import Excluded, MetricSpec, MetricValue
from fairpolicy.metrics.grid import grid_error
from fairpolicy.metrics.registry import lookup
from fairpolicy.policy.schema import ROLES, Control, Operator, Policy
from fairpolicy.results import (
    ConfidenceInterval,
    DataInfo,
    ExcludedGroup,
    FailOn,
    Finding,
    GroupResult,
    InconclusivePolicy,
    PolicyInfo,
    PValue,
    Results,
    RunInfo,
    SourceRef,
    Tool,
    summarize,
)
from fairpolicy.stats import (
    UNKNOWN_GROUP,
    GroupStats,
    RankingStats,
    RegressionStats,
    build_group_stats,
    build_regression_stats,
    build_score_stats,
    group_index,
    row_groups,
    weighted_bincount,
)

DimCodes = dict[str, tuple[np.ndarray, list[str]]]

#: a warning is raised when a compared group has fewer rows than this
SMALL_GROUP_WARNING = 100


def _now(deterministic: bool = False) -> str:
    """UTC now; ``SOURCE_DATE_EPOCH`` when set; the epoch itself under ``deterministic``."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch and epoch.isdigit():
        t = _dt.datetime.fromtimestamp(int(epoch), tz=_dt.UTC)
    elif deterministic:
        t = _dt.datetime.fromtimestamp(0, tz=_dt.UTC)
    else:
        t = _dt.datetime.now(tz=_dt.UTC)
    return t.isoformat(timespec="seconds")


def is_deterministic(flag: bool = False) -> bool:
    """``--deterministic`` or ``SOURCE_DATE_EPOCH`` set: reproducible timestamps and UUIDs."""
    return flag or bool(os.environ.get("SOURCE_DATE_EPOCH"))


def _load(policy: Any) -> Policy:
    if isinstance(policy, Policy):
        return policy
    from fairpolicy.policy.load import load_policy

    loaded: Policy = load_policy(policy)
    return loaded


#: the seed of bootstrap and permutation draws when none is given (recorded in results)
DEFAULT_SEED = 20261122


def apply_overrides(
    policy: Policy,
    bind: Mapping[str, str] | None,
    num_classes: int | None,
    params: Mapping[str, Any] | None = None,
) -> Policy:
    """``--bind role=column``, ``--num-classes`` and the statistics options (``ci``,
    ``decision``, ...) applied to every control; the command line wins over the policy."""
    if not bind and num_classes is None and not params:
        return policy
    for role in bind or {}:
        if role not in ROLES:
            from fairpolicy.errors import did_you_mean

            raise UsageError(
                f"--bind {role}=...: unknown role '{role}'.{did_you_mean(role, ROLES)} "
                f"Roles: {', '.join(ROLES)}."
            )
    controls = []
    for c in policy.controls:
        update: dict[str, Any] = {}
        if bind:
            update["inputs"] = {**c.inputs, **bind}
        extra = dict(params or {})
        if num_classes is not None:
            extra["num_classes"] = num_classes
        if extra:
            update["params"] = {**c.params, **extra}
        controls.append(c.model_copy(update=update))
    return policy.model_copy(update={"controls": tuple(controls)})


def label_key(control: Control, spec: MetricSpec) -> LabelKey:
    p = control.params
    return LabelKey(
        target=control.inputs["target"],
        # a metric of the labels alone (class balance) counts the target against itself
        prediction=control.inputs.get("prediction", control.inputs["target"]),
        score=control.inputs.get("score"),
        positive_label=None if p.get("positive_label") is None else str(p["positive_label"]),
        num_classes=p.get("num_classes"),
        missing=control.missing,
        binary="multiclass" not in spec.tasks,
    )


@dataclass
class _Plan:
    control: Control
    spec: MetricSpec
    #: what rows this control's statistics share with others: a LabelKey for
    #: classification, a tuple naming the bound columns for the other kinds
    key: Hashable | None = None
    error: FairpolicyError | None = None


def plan_key(control: Control, spec: MetricSpec) -> Hashable:
    i = control.inputs
    if spec.kind == "classification":
        return label_key(control, spec)
    if spec.kind == "regression":
        return ("regression", i["target"], i["prediction"], control.missing)
    if spec.kind == "ranking":
        by = ("rank", i["rank"]) if "rank" in i else ("score", i["score"])
        return ("ranking", *by, control.missing)
    return ("data",)


class _Evaluator:
    """Caches label encodings, dimension codes and count tables across controls."""

    def __init__(
        self,
        table: Table,
        seed: int = 0,
        strings: Sequence[str] = (),
        decimals: int | None = None,
    ) -> None:
        self.table = table
        self.seed = seed
        #: the score grid's decimals when the engine rounded scores (None: exact scores)
        self.decimals = decimals
        #: columns read as text (dimension and site columns anywhere in the policy)
        self.strings = frozenset(strings)
        #: engines: the tuples of a regression/ranking binding's own columns
        self.subtables: dict[tuple[str, ...], Table] = {}
        #: engines: columns read by aggregations that return no tuples (regression sums)
        self.pushed: list[str] = []
        #: (id of the statistics, resamples, rows) → (statistics, their bootstrap replicates)
        self.replicates: dict[tuple[int, int, bool], tuple[GroupStats, Any]] = {}
        self.labels: dict[LabelKey, Labels] = {}
        self.dims: dict[str, tuple[np.ndarray, list[str]]] = {}
        #: (binding key, dimension, with scores, secondary column) → statistics
        self.stats: dict[tuple[Hashable, tuple[str, ...], bool, str | None], GroupStats] = {}
        self.warnings: list[str] = []

    def dimension(self, col: str) -> tuple[np.ndarray, list[str]]:
        if col not in self.dims:
            self.dims[col] = encode_dimension(self.table.columns[col])
        return self.dims[col]

    def label(self, plan: _Plan) -> Labels:
        assert isinstance(plan.key, LabelKey)
        if plan.key not in self.labels:
            lab = encode_labels(
                self.table, plan.control, plan.key, plan.spec.multiclass_replacement
            )
            if lab.score_columns:
                lab.warnings += validate_scores(self.table, plan.control, lab.score_columns)
            self.warnings += lab.warnings
            self.labels[plan.key] = lab
        return self.labels[plan.key]

    def dims_for(self, columns: Sequence[str], keep: np.ndarray | None) -> DimCodes:
        out = {}
        for col in columns:
            codes, names = self.dimension(col)
            out[col] = (codes if keep is None else codes[keep], names)
        return out

    def group_stats(self, plan: _Plan, plans: Sequence[_Plan]) -> GroupStats:
        """The statistics this plan's metric reads, built once per binding."""
        dim = plan.control.dimension_columns
        role = plan.spec.secondary_role
        second = plan.control.inputs.get(role) if role else None
        cache = (plan.key, dim, plan.spec.needs_scores, second)
        if cache not in self.stats:
            if plan.spec.kind == "classification":
                st = self._counts(plan, plans)
                if plan.spec.needs_scores:
                    st = self._scores(plan, st)
            else:
                resampled = any(
                    int(p.control.params.get("ci") or 0) > 0 for p in plans if p.key == plan.key
                )
                st = self._rows(plan, keep_cells=resampled)
            if second is not None:  # the same binding grouped by a second column
                inputs = {**plan.control.inputs, "dimension": second}
                twin = _Plan(plan.control.model_copy(update={"inputs": inputs}), plan.spec)
                twin.key = plan.key
                spec = dataclasses.replace(plan.spec, secondary_role=None)
                twin.spec = spec
                st = st.with_extras(secondary=self.group_stats(twin, [twin]))
            self.stats[cache] = st
        return self.stats[cache]

    def _counts(self, plan: _Plan, plans: Sequence[_Plan]) -> GroupStats:
        """Count table for this plan's dimension, built with its siblings in one pass."""
        dim = plan.control.dimension_columns
        key = (plan.key, dim, False, None)
        if key not in self.stats:
            lab = self.label(plan)
            requests = list(
                dict.fromkeys(
                    p.control.dimension_columns
                    for p in plans
                    if p.key == plan.key and p.error is None
                )
            )
            dims = self.dims_for([c for r in requests for c in r], lab.keep)
            built = build_group_stats(
                lab.true_codes,
                lab.pred_codes,
                lab.classes,
                dims,
                requests,
                lab.positive,
                lab.weights,
            )
            for req, st in built.items():
                self.stats[(plan.key, req, False, None)] = st
        return self.stats[key]

    def _seed(self, plan: _Plan, stats: GroupStats, salt: str) -> int:
        """A seed per binding and grouping: controls sharing statistics share replicates,
        and adding a control elsewhere in the policy changes no other interval."""
        inputs = sorted((r, col) for r, col in plan.control.inputs.items() if r != "dimension")
        text = f"{self.seed}|{salt}|{inputs}|{','.join(stats.dimension)}"
        return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")

    def interval(
        self, plan: _Plan, stats: GroupStats, keep: np.ndarray, mv: MetricValue
    ) -> tuple[ConfidenceInterval | None, dict[str, tuple[float, float]]]:
        """The control's bootstrap interval (``ci`` resamples), or None when not asked."""
        c = plan.control
        resamples = int(c.params.get("ci") or 0)
        if resamples <= 0 or mv.value is None:
            return None, {}
        from fairpolicy.stats import bootstrap

        rows = str(c.params.get("resample", "stratified")) == "rows"
        key = (id(stats), resamples, rows)
        if key not in self.replicates:
            seed = self._seed(plan, stats, "bootstrap")
            self.replicates[key] = (
                stats,  # keeps the object (and so its id) alive with its replicates
                bootstrap.draw(stats, resamples, seed, rows=rows),
            )
        reps = self.replicates[key][1]
        iv = bootstrap.confidence(
            plan.spec,
            stats,
            keep,
            plan.spec.resolve_params(c.params),
            mv.value,
            reps,
            float(c.params.get("ci_level", 0.95)),
            str(c.params.get("ci_method", "percentile")),
        )
        ci = ConfidenceInterval(
            low=iv.low,
            high=iv.high,
            level=iv.level,
            method=iv.method if iv.method in ("bca", "band") else "percentile",
            resamples=iv.resamples,
            seed=iv.seed,
            valid=iv.valid,
            reason=iv.reason,
            note=iv.note,
            resample="rows" if rows else "stratified",
        )
        return ci, dict(iv.groups or {})

    def permutation(
        self, plan: _Plan, stats: GroupStats, keep: np.ndarray, mv: MetricValue
    ) -> PValue | None:
        c = plan.control
        permutations = int(c.params.get("p_value") or 0)
        if permutations <= 0 or mv.value is None:
            return None
        from fairpolicy.stats import bootstrap

        bonferroni = bool(c.params.get("bonferroni", False))
        res = bootstrap.permutation_test(
            plan.spec,
            stats.select(keep),
            plan.spec.resolve_params(c.params),
            mv.value,
            permutations,
            self._seed(plan, stats, "permutation"),
            bonferroni,
        )
        return PValue(
            p_value=res.p_value,
            permutations=res.permutations,
            seed=res.seed,
            groups=res.groups,
            family_size=res.family_size,
            bonferroni=bonferroni,
            reason=res.reason,
        )

    def _scores(self, plan: _Plan, st: GroupStats) -> GroupStats:
        lab = self.label(plan)
        if not lab.score_columns:
            raise BindingError(
                Problem(
                    f"metric '{plan.spec.key}' reads scores, but no score column is bound.",
                    file=self.table.path,
                    control=plan.control.control_id,
                    hint="add input.score (a column, a list, or a prefix such as y_score).",
                )
            )
        dims = self.dims_for(plan.control.dimension_columns, lab.keep)
        rows = row_groups(dims, plan.control.dimension_columns, st.groups)
        cols = [self.table.columns[c].to_numpy(zero_copy_only=False) for c in lab.score_columns]
        matrix = np.column_stack([np.asarray(c, dtype=np.float64) for c in cols])
        if lab.keep is not None:
            matrix = matrix[lab.keep]
        scores = build_score_stats(
            rows,
            len(st.groups),
            lab.true_codes,
            matrix,
            lab.score_columns,
            len(lab.classes),
            lab.weights,
        )
        return st.with_extras(scores=scores)

    def _rows(self, plan: _Plan, keep_cells: bool = False) -> GroupStats:
        """Regression sums, ranking order or plain group sizes for one control; with
        ``keep_cells`` also the regression (y, ŷ) cells a bootstrap resamples (on an
        engine the sums are then built from the distinct tuples, not pushed down)."""
        c, spec = plan.control, plan.spec
        table = self.table
        if table.source is not None and spec.kind in ("regression", "ranking"):
            if spec.kind == "regression" and not keep_cells:
                pushed = self._regression_sums(plan)
                if pushed is not None:
                    return pushed
            table = self._subtable(plan)
        numeric: dict[str, np.ndarray] = {}
        masks: dict[str, np.ndarray] = {}
        roles = {"regression": ("target", "prediction"), "ranking": ("rank", "score")}
        for role in roles.get(spec.kind, ()):
            if role in c.inputs and (spec.kind != "ranking" or not numeric):
                col = c.inputs[role]
                numeric[role], masks[col] = numeric_column(table, c, col, role)
        keep, warnings = require_complete(table, c, masks, c.missing)
        self.warnings += warnings
        weights = table.weights
        if weights is not None and keep is not None:
            weights = weights[keep]
        if table is self.table:
            dims = self.dims_for(c.dimension_columns, keep)
        else:
            dims = _encode_dims(table, c.dimension_columns, keep)
        names, rows, unknown, keys = group_index(dims, c.dimension_columns, weights)
        ok = rows >= 0
        sizes = weighted_bincount(rows[ok], None if weights is None else weights[ok], len(names))
        st = GroupStats(
            dimension=c.dimension_columns,
            groups=names,
            classes=(),
            counts=np.zeros((len(names), 0, 0), dtype=np.int64),
            unknown_n=unknown,
            sizes=sizes,
            group_keys=keys,
        )
        if keep is not None:
            numeric = {r: v[keep] for r, v in numeric.items()}
        if spec.kind == "regression":
            reg = build_regression_stats(
                rows,
                len(names),
                numeric["target"],
                numeric["prediction"],
                weights,
                keep_cells=keep_cells,
            )
            return st.with_extras(regression=reg)
        if spec.kind == "ranking":
            # rank: smaller is better; score: larger is better. Ties keep row order.
            by = numeric["rank"] if "rank" in numeric else -numeric["score"]
            col = c.inputs["rank"] if "rank" in numeric else c.inputs["score"]
            if weights is None:
                order = np.argsort(by, kind="stable")
                ranked, ranked_by = rows[order], by[order]
                how = "tied items keep their row order, so the result depends on it"
            else:  # an engine's tuples: positions expand by weight; ties ordered by group
                order = np.lexsort((rows, by))
                ranked = np.repeat(rows[order], weights[order])
                ranked_by = np.repeat(by[order], weights[order])
                how = (
                    f"the {table.source.name if table.source else 'engine'} engine does not "
                    "keep row order, so tied items are ordered by group and the result "
                    "depends on that"
                )
            ties = int((np.diff(ranked_by) == 0).sum())
            if ties:
                self.warnings.append(f"control '{c.control_id}': {ties} tie(s) in '{col}'; {how}")
            return st.with_extras(ranking=RankingStats(ranked))
        return st

    def _subtable(self, plan: _Plan) -> Table:
        """Engines: the distinct tuples of a regression/ranking binding's columns."""
        c, spec = plan.control, plan.spec
        roles = ("target", "prediction") if spec.kind == "regression" else ("rank", "score")
        numeric = [c.inputs[r] for r in roles if r in c.inputs]
        if spec.kind == "ranking":
            numeric = numeric[:1]
        columns = tuple(dict.fromkeys([*c.dimension_columns, *numeric]))
        if columns not in self.subtables:
            assert self.table.source is not None
            self.subtables[columns] = self.table.source.tuples(
                Request(columns=columns, strings=self.strings & set(columns))
            )
        return self.subtables[columns]

    def _regression_sums(self, plan: _Plan) -> GroupStats | None:
        """Engines: per-group regression sums aggregated by the engine, or None when the
        binding's values need the tuples to be judged exactly as the embedded path does."""
        c = plan.control
        assert self.table.source is not None
        dims = list(c.dimension_columns)
        agg = self.table.source.regression(dims, c.inputs["target"], c.inputs["prediction"])
        if agg is None:
            return None
        sub = agg.table
        self.pushed += sub.read or []
        keep, warnings = require_complete(sub, c, agg.missing, c.missing)
        self.warnings += warnings
        assert sub.weights is not None
        weights = sub.weights if keep is None else sub.weights[keep]
        sums = agg.sums if keep is None else agg.sums[keep]
        names, rows, unknown, keys = group_index(
            _encode_dims(sub, c.dimension_columns, keep), c.dimension_columns, weights
        )
        ok = rows >= 0
        g = len(names)
        per_group = np.stack(
            [np.bincount(rows[ok], weights=sums[ok, j], minlength=g) for j in range(7)], axis=1
        ).reshape(g, 7)
        return GroupStats(
            dimension=c.dimension_columns,
            groups=names,
            classes=(),
            counts=np.zeros((g, 0, 0), dtype=np.int64),
            unknown_n=unknown,
            sizes=weighted_bincount(rows[ok], weights[ok], g),
            group_keys=keys,
            regression=RegressionStats(per_group.astype(np.float64)),
        )


def _encode_dims(table: Table, columns: Sequence[str], keep: np.ndarray | None) -> DimCodes:
    out = {}
    for col in columns:
        codes, names = encode_dimension(table.columns[col])
        out[col] = (codes if keep is None else codes[keep], names)
    return out


def _plan(policy: Policy, table: Table) -> list[_Plan]:
    plans = []
    for c in policy.controls:
        spec = lookup(c.metric_key)
        plan = _Plan(c, spec)
        problems = []
        for role in spec.inputs:
            if role not in c.inputs:
                problems.append(
                    Problem(
                        f"binds no column to role '{role}' (prop input.{role}).",
                        file=policy.path,
                        control=c.control_id,
                        hint=f"add input.{role} to the control or pass --bind {role}=COLUMN.",
                    )
                )
        if spec.one_of and not any(r in c.inputs for r in spec.one_of):
            problems.append(
                Problem(
                    f"metric '{spec.key}' needs one of "
                    + " or ".join(f"input.{r}" for r in spec.one_of)
                    + ".",
                    file=policy.path,
                    control=c.control_id,
                    hint=f"bind one, e.g. --bind {spec.one_of[0]}=COLUMN.",
                )
            )
        for role, value in c.inputs.items():
            cols = c.dimension_columns if role == "dimension" else (value,)
            if role == "score":
                if not score_column_names(table.available, value):
                    problems.append(missing_column_problem(table, c, role, value))
                continue
            problems += [
                missing_column_problem(table, c, role, col)
                for col in cols
                if col not in table.available
            ]
        if problems:
            plan.error = BindingError(problems)
        else:
            plan.key = plan_key(c, spec)
        plans.append(plan)
    return plans


def _threshold(control: Control) -> float | list[float] | None:
    t = control.threshold
    if control.operator is Operator.BETWEEN:
        assert t.low is not None and t.high is not None
        return [t.low, t.high]
    return t.value


def _finding(control: Control, spec: MetricSpec, **fields: Any) -> Finding:
    params = spec.resolve_params(control.params)
    params.update({k: v for k, v in control.params.items() if k not in params})
    return Finding(
        control_id=control.control_id,
        title=control.title,
        description=control.description,
        metric_key=control.metric_key,
        inputs=dict(control.inputs),
        params=params,
        operator=control.operator.value,
        threshold=_threshold(control),
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
        **fields,
    )


def _measure(
    stats: GroupStats, control: Control, spec: MetricSpec, file: str | None = None
) -> tuple[MetricValue, np.ndarray]:
    """Exclude the unknown and small groups, then apply the metric.

    Returns the value and the mask of the groups it compared (for the bootstrap).
    """
    if len(stats.groups) < 2:
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
    n = stats.n
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
        share = n / max(int(n.sum()) + stats.unknown_n, 1)
        low = keep & (share < min_share)
        excluded += [
            Excluded(g, int(n[i]), f"{share[i]:.2%} of the rows, below min_share={min_share:g}")
            for i, g in enumerate(stats.groups)
            if low[i]
        ]
        keep = keep & ~low
    if stats.unknown_n:
        excluded.append(
            Excluded(
                UNKNOWN_GROUP,
                stats.unknown_n,
                f"dimension value missing in '{','.join(stats.dimension)}'",
            )
        )
    eligible = stats.select(keep)
    if stats.secondary is not None:  # the second grouping obeys min_samples too
        sec = stats.secondary
        sec_keep = sec.n >= control.min_samples
        excluded += [
            Excluded(
                g,
                int(sec.n[i]),
                f"'{','.join(sec.dimension)}' group with fewer rows than "
                f"min_samples={control.min_samples}",
            )
            for i, g in enumerate(sec.groups)
            if not sec_keep[i]
        ]
        eligible = eligible.with_extras(secondary=sec.select(sec_keep))
    if len(eligible.groups) < 2:
        return MetricValue(
            None,
            excluded=tuple(excluded),
            reason=f"{len(eligible.groups)} group(s) with at least min_samples="
            f"{control.min_samples} rows in '{','.join(stats.dimension)}'; at least 2 are "
            "needed to compare",
        ), keep
    mv = spec.fn(eligible, spec.resolve_params(control.params))
    return MetricValue(
        mv.value,
        mv.groups,
        (*excluded, *mv.excluded),
        mv.details,
        mv.reason,
        mv.worst_group,
    ), keep


def _evaluate(plan: _Plan, plans: Sequence[_Plan], ev: _Evaluator) -> Finding:
    c, spec = plan.control, plan.spec
    try:
        if plan.error is not None:
            raise plan.error
        stats = ev.group_stats(plan, plans)
        mv, keep = _measure(stats, c, spec, ev.table.path or "<DataFrame>")
        ci, group_ci = ev.interval(plan, stats, keep, mv)
        pv = ev.permutation(plan, stats, keep, mv)
    except FairpolicyError as exc:
        text = " ".join(p.render() for p in exc.problems)
        return _finding(c, spec, value=None, status="error", message=text, reason=text)
    decision = c.params.get("decision", "point")
    details = dict(mv.details)
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
    if error and interval and interval[0] is not None and interval[1] is not None:
        interval = (interval[0] - error, interval[1] + error)
    status, why = status_for(c, mv.value, decision, interval)
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
    reason = mv.reason or why
    small = [g.group for g in mv.groups if g.n < SMALL_GROUP_WARNING]
    if small and mv.value is not None:
        ev.warnings.append(
            f"control '{c.control_id}': the value rests on group(s) with fewer than "
            f"{SMALL_GROUP_WARNING} rows: {', '.join(small)}"
        )
    return _finding(
        c,
        spec,
        value=mv.value,
        status=status,
        message=describe(c, mv.value, status, reason, ci),
        reason=reason,
        ci=ci,
        decision=decision,
        p_value=pv,
        groups=[
            GroupResult(
                group=g.group,
                n=g.n,
                value=g.value,
                ci_low=group_ci.get(g.group, (None, None))[0],
                ci_high=group_ci.get(g.group, (None, None))[1],
            )
            for g in mv.groups
        ],
        excluded_groups=[ExcludedGroup(group=e.group, n=e.n, reason=e.reason) for e in mv.excluded],
        details=_jsonable(details),
        worst_group=mv.worst_group,
        classes=list(stats.classes),
        counts={g: stats.counts[i].tolist() for i, g in enumerate(stats.groups) if keep[i]}
        if stats.classes
        else {},
    )


def _jsonable(obj: Any) -> Any:
    """Plain JSON types only (numpy scalars converted; NaN is a bug, so it raises)."""
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and obj != obj:
        raise ValueError("NaN reached a result; metrics must return None with a reason")
    return obj


def _check_stats_options(options: Mapping[str, Any]) -> None:
    """Validate the statistics options given to :func:`check` / the command line."""
    from fairpolicy.metrics.registry import COMMON_PARAMS

    specs = {p.name: p for p in COMMON_PARAMS}
    flags = {"ci": "--bootstrap", "p_value": "--p-value"}
    for name, value in options.items():
        p = specs[name]
        flag = flags.get(name, "--" + name.replace("_", "-"))
        if p.choices and value not in p.choices:
            raise UsageError(f"{flag} must be one of {', '.join(map(str, p.choices))}.")
        if name in ("ci", "p_value") and (int(value) < 0 or int(value) == 1):
            raise UsageError(f"{flag} needs 0 (off) or at least 2 resamples, got {value}.")
        if name == "ci_level" and not 0 < float(value) < 1:
            raise UsageError(f"{flag} must lie strictly between 0 and 1, got {value}.")


def check(
    policy: Any,
    data: Any,
    *,
    bind: Mapping[str, str] | None = None,
    num_classes: int | None = None,
    inconclusive: InconclusivePolicy = "fail",
    fail_on: FailOn = "error",
    deterministic: bool = False,
    bootstrap: int | None = None,
    ci_level: float | None = None,
    ci_method: str | None = None,
    resample: str | None = None,
    decision: str | None = None,
    p_value: int | None = None,
    bonferroni: bool | None = None,
    seed: int | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    engine: str = "auto",
    memory_budget: int | str | None = None,
    score_decimals: int | None = None,
    max_rows: int | None = None,
) -> Results:
    """Evaluate every control of ``policy`` on ``data``.

    ``policy``: a path to a YAML/JSON policy, a parsed mapping/list, or a
    :class:`~fairpolicy.policy.schema.Policy`. ``data``: a path to a CSV or
    Parquet file, a glob of such files (``data/*.parquet``; DuckDB or Spark), a
    pandas DataFrame, or a pyspark DataFrame (evaluated by Spark where it lives).
    ``deterministic`` fixes the run's
    timestamps (``SOURCE_DATE_EPOCH``, else the epoch) so reruns are identical.
    ``progress(stage, done, total)`` is called as the run advances (the CLI draws a
    progress bar with it on a terminal).
    ``engine``: ``auto`` (default: DuckDB for globs and for files whose bound columns
    would not fit ``memory_budget``, Spark for a Spark DataFrame, else embedded),
    ``embedded``, ``duckdb`` or ``spark``. ``memory_budget``: bytes or a size such as
    ``"4GB"`` / ``"25%"`` (default half the physical memory); DuckDB's memory limit.
    The embedded engine refuses, before reading rows, a file it estimates would need
    more than the given budget (or, when none is given, than the available memory).
    ``score_decimals``: the engines' score grid, 10**-N (default 4; recorded in the
    results' run options; the embedded engine reads scores exactly).
    ``max_rows``: refuse data with more rows (exit 2; embedded: before reading rows).
    Raises a :class:`FairpolicyError` when the policy or data cannot be read at
    all; per-control problems (missing column, invalid labels) become findings
    with status ``error``.
    """
    if inconclusive not in ("pass", "warn", "fail"):
        raise UsageError(f"inconclusive must be pass, warn or fail, not {inconclusive!r}.")
    if fail_on not in ("error", "warning", "never"):
        raise UsageError(f"fail_on must be error, warning or never, not {fail_on!r}.")
    started = _now(deterministic)
    stats_options = {
        k: v
        for k, v in {
            "ci": bootstrap,
            "ci_level": ci_level,
            "ci_method": ci_method,
            "resample": resample,
            "decision": decision,
            "p_value": p_value,
            "bonferroni": bonferroni,
        }.items()
        if v is not None
    }
    _check_stats_options(stats_options)
    if num_classes is not None and num_classes < 2:
        raise UsageError(f"--num-classes must be at least 2, got {num_classes}.")
    if max_rows is not None and max_rows < 1:
        raise UsageError(f"--max-rows must be at least 1, got {max_rows}.")
    run_seed = DEFAULT_SEED if seed is None else int(seed)
    budget = default_memory_budget() if memory_budget is None else parse_size(memory_budget)
    # the data read starts now, beside the policy's validation (data/prefetch.py) — only
    # for the embedded engine and a file small enough that reading it cannot hurt
    # (with no --max-rows or --memory-budget: those limits are checked by the real read)
    speculate = max_rows is None and memory_budget is None and _prefetchable(engine, data, budget)
    prefetch = Prefetch.start(policy, data, bind) if speculate else None
    try:
        pol = apply_overrides(_load(policy), bind, num_classes, stats_options)
        decimals = _score_decimals(score_decimals)
        engine_name, notes = resolve_engine(
            engine, data, lambda: _bound_columns(pol, peek_columns(data))[0], budget
        )
    except BaseException:
        if prefetch is not None:
            prefetch.wait()
        raise
    if progress:
        progress("reading data", 0, 0)
    source = None
    if engine_name == "embedded":
        available = peek_columns(data)
        wanted, strings = _bound_columns(pol, available)
        got = prefetch.take(wanted, strings, available) if prefetch is not None else None
        table = (
            got
            if got is not None
            else read_table(
                data,
                wanted,
                string_columns=strings,
                max_rows=max_rows,
                memory_budget=None if memory_budget is None else budget,
            )
        )
    else:
        if prefetch is not None:
            prefetch.wait()
            prefetch = None
        source = open_source(engine_name, data, budget)
    try:
        if source is not None:
            strings = _bound_columns(pol, source.available)[1]
            table = source.tuples(_engine_request(pol, source.available, strings, decimals))
            check_rows(table.rows, max_rows, table.path or str(data))
        plans = _plan(pol, table)
        rounded = engine_name in ("duckdb", "spark")
        ev = _Evaluator(table, run_seed, strings, decimals if rounded else None)
        findings = []
        for i, plan in enumerate(plans):
            if progress:
                progress(f"evaluating {plan.control.control_id}", i, len(plans))
            findings.append(_evaluate(plan, plans, ev))
        read = list(table.read or table.columns)
        if source is not None:  # in the policy's order, as the embedded reader lists them
            read += [c for t in ev.subtables.values() for c in (t.read or t.columns)]
            read += ev.pushed
            bound = _bound_columns(pol, source.available)[0]
            read = [c for c in bound if c in set(read)]
    finally:
        if source is not None:
            source.close()
    if progress:
        progress("done", len(plans), len(plans))
    run_options: dict[str, Any] = {
        "bind": dict(bind or {}),
        "num_classes": num_classes,
        "deterministic": deterministic,
        **stats_options,
    }
    if engine_name in ("duckdb", "spark"):
        run_options["score_decimals"] = decimals
    return Results(
        tool=Tool(version=__version__),
        policy=PolicyInfo(
            path=pol.path, sha256=pol.sha256, title=pol.title, version=pol.version, form=pol.form
        ),
        data=DataInfo(
            path=table.path,
            sha256=table.sha256,
            rows=table.rows,
            columns=list(dict.fromkeys(read)),
        ),
        run=RunInfo(
            started=started,
            finished=_now(deterministic),
            inconclusive=inconclusive,
            fail_on=fail_on,
            seed=run_seed,
            engine=engine_name,
            options={k: v for k, v in run_options.items() if v or k == "score_decimals"},
        ),
        summary=summarize(findings, inconclusive, fail_on),
        findings=findings,
        warnings=[*pol.warnings, *notes, *table.warnings, *ev.warnings],
    )


#: the largest score grid exponent (10**-12 is already below float resolution near 1)
MAX_SCORE_DECIMALS = 12


def _score_decimals(value: int | None) -> int:
    from fairpolicy.data.engines import DEFAULT_SCORE_DECIMALS

    if value is None:
        return DEFAULT_SCORE_DECIMALS
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or not 0 <= value <= MAX_SCORE_DECIMALS
    ):
        raise UsageError(
            f"--score-decimals must be a whole number from 0 to {MAX_SCORE_DECIMALS}, "
            f"got {value!r}."
        )
    return value


def _bound_columns(pol: Policy, available: list[str]) -> tuple[list[str], list[str]]:
    """(every column the policy binds, those read as text: dimension and site columns)."""
    wanted, strings = bound_columns(
        available, [(role, value) for c in pol.controls for role, value in c.inputs.items()]
    )
    return list(dict.fromkeys(wanted)), list(dict.fromkeys(strings))


#: the prefetch reads a file only when it is this many times smaller than the memory budget
#: (the embedded peak measured at up to ~20 bytes per CSV byte on narrow columns)
PREFETCH_SIZE_FACTOR = 20


def _prefetchable(engine: str, data: Any, budget: int) -> bool:
    """A speculative read only where the embedded engine will read that file anyway: engine
    auto/embedded, one existing file, and far below the memory budget (a file that auto may
    send to DuckDB, or the memory guard may refuse, is never read speculatively)."""
    if engine not in ("auto", "embedded") or not isinstance(data, str | os.PathLike):
        return False
    try:
        size = os.stat(data).st_size
    except (OSError, ValueError):
        return False
    return size * PREFETCH_SIZE_FACTOR <= budget


def _engine_request(
    pol: Policy, available: list[str], strings: list[str], decimals: int
) -> Request:
    """The main aggregation of an engine: the columns of classification and data-check
    controls (regression and ranking bindings aggregate their own columns)."""
    columns: list[str] = []
    scores: list[str] = []
    score_sets: list[tuple[str, ...]] = []
    for c in pol.controls:
        try:
            kind = lookup(c.metric_key).kind
        except FairpolicyError:
            continue  # reported per control
        if kind in ("regression", "ranking"):
            continue  # their own aggregations read their columns
        for role, value in c.inputs.items():
            if role == "dimension":
                columns += c.dimension_columns
            elif role == "score":
                cols = score_column_names(available, value)
                columns += cols
                scores += cols
                if len(cols) > 1:
                    score_sets.append(tuple(cols))
            else:
                columns.append(value)
    present = [col for col in dict.fromkeys(columns) if col in available]
    return Request(
        columns=tuple(present),
        strings=frozenset(strings) & set(present),
        scores=frozenset(scores) & set(present),
        score_sets=tuple(
            s for s in dict.fromkeys(score_sets) if all(col in available for col in s)
        ),
        decimals=decimals,
    )
