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
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from fairpolicy import __version__
from fairpolicy.data import limits as _limits
from fairpolicy.data.bind import (
    CLASS_FREE_SCORES,
    GroupColumn,
    LabelKey,
    Labels,
    emptied_groups,
    encode_group_column,
    encode_labels,
    missing_column_problem,
    numeric_column,
    parse_missing_values,
    require_complete,
    same_column_problems,
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
from fairpolicy.data.limits import Limits, check_rows
from fairpolicy.data.prefetch import Prefetch, bound_columns
from fairpolicy.data.read import Table, peek_columns, read_table
from fairpolicy.decide import describe, status_for, violated_throughout, within
from fairpolicy.errors import BindingError, FairpolicyError, MetricError, Problem, UsageError
from fairpolicy.exact import decimal_fraction, with_exact
from fairpolicy.metrics.base import Excluded, MetricSpec, MetricValue
from fairpolicy.metrics.grid import grid_error
from fairpolicy.metrics.registry import lookup
from fairpolicy.policy.schema import ROLES, Control, Operator, Policy
from fairpolicy.results import (
    ConfidenceInterval,
    DataInfo,
    DocumentRef,
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
    MISSING_GROUP,
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
#: groups a warning names before it says how many more there are
NAMED_IN_WARNING = 20

#: a warning is raised when more than this share of the rows has no group value
MISSING_SHARE_WARNING = 0.05


def _tokens(control: Control) -> frozenset[str]:
    """The control's extra missing-value tokens for group columns (``missing_values``)."""
    return parse_missing_values(control.params.get("missing_values"))


def group_column_notes(column: str, col: GroupColumn) -> list[str]:
    """Warnings on group values that look alike: written differently only by surrounding
    spaces (counted as one group), or only by Unicode normalization (kept apart)."""
    import unicodedata

    notes = [
        f"column '{column}': the values {', '.join(repr(v) for v in forms)} differ only by "
        f"surrounding spaces; they are counted as one group {name!r}"
        for name, forms in col.spaced.items()
    ]
    alike: dict[str, list[str]] = {}
    for name in col.names:
        alike.setdefault(unicodedata.normalize("NFKC", name), []).append(name)
    notes += [
        f"column '{column}': the groups {', '.join(ascii(v) for v in names)} differ only by "
        "Unicode normalization (they may look identical); they are kept apart as different "
        "groups: normalize the column (e.g. to NFC) if they are one group"
        for names in alike.values()
        if len(names) > 1
    ]
    return notes


def _now(deterministic: bool = False) -> str:
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


def _load(policy: Any, allow_paths: Sequence[str | os.PathLike[str]] = ()) -> Policy:
    if isinstance(policy, Policy):
        return policy
    from fairpolicy.policy.load import load_policy

    loaded: Policy = load_policy(policy, allow_paths=allow_paths)
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
        classes=None if p.get("classes") is None else str(p["classes"]),
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
        grid: int | None = None,
        limits: Limits | None = None,
    ) -> None:
        self.table = table
        #: caps on groups, classes and cells (data/limits.py), checked before the work
        self.limits = limits or Limits()
        self.seed = seed
        #: the score grid's decimals when the engine rounded scores (None: exact scores)
        self.decimals = decimals
        #: the score grid every engine resamples (bootstrap, permutations) on: the engines'
        #: own grid, or on the embedded engine the same 10**-grid rounding of its exact scores
        self.grid = decimals if decimals is not None else grid
        #: the embedded engine resampled some score statistics on the grid (run options)
        self.grid_used = False
        #: columns read as text (dimension and site columns anywhere in the policy)
        self.strings = frozenset(strings)
        #: engines: the tuples of a regression/ranking binding's own columns
        self.subtables: dict[tuple[str, ...], Table] = {}
        #: engines: columns read by aggregations that return no tuples (regression sums)
        self.pushed: list[str] = []
        #: (id of the statistics, resamples, rows) → (statistics, their bootstrap replicates)
        self.replicates: dict[tuple[int, int, bool], tuple[GroupStats, Any]] = {}
        self.labels: dict[LabelKey, Labels] = {}
        #: (group column, extra missing tokens) → its codes and group names
        self.dims: dict[tuple[str, frozenset[str]], tuple[np.ndarray, list[str]]] = {}
        #: (binding key, dimension, with scores, secondary column, missing tokens) → statistics
        self.stats: dict[
            tuple[Hashable, tuple[str, ...], bool, str | None, frozenset[str]], GroupStats
        ] = {}
        self.warnings: list[str] = []
        #: (binding key, dimension) → (table, rows kept under ``missing: drop``)
        self.drops: dict[tuple[Hashable, tuple[str, ...]], tuple[Table, np.ndarray | None]] = {}

    def emptied(self, plan: _Plan) -> list[Excluded]:
        """Groups that have rows in the data but lost all of them to ``missing: drop``:
        excluded with the reason (and a warning), never silently absent."""
        c = plan.control
        dim = c.dimension_columns
        if plan.spec.kind == "classification":
            table, keep = self.table, self.label(plan).keep
        else:
            table, keep = self.drops.get((plan.key, dim), (self.table, None))
        if keep is None or not dim:
            return []
        tokens = _tokens(c)
        cache = {col: v for (col, t), v in self.dims.items() if t == tokens}
        found = emptied_groups(table, dim, keep, cache if table is self.table else None)
        if not found:
            return []
        listed = ", ".join(f"{g} ({n} rows)" for g, n in found)
        self.warnings.append(
            f"control '{c.control_id}': missing: drop removed every row of group(s) {listed} "
            f"of '{','.join(dim)}'; they are left out of the comparison (excluded groups)"
        )
        return [
            Excluded(
                g,
                n,
                f"all {n} rows dropped: a missing target or prediction value (missing: drop)",
            )
            for g, n in found
        ]

    def dimension(
        self, col: str, tokens: frozenset[str] = frozenset(), control: str | None = None
    ) -> tuple[np.ndarray, list[str]]:
        if (col, tokens) not in self.dims:
            encoded = encode_group(self.table, col, tokens)
            _limits.check_groups(len(encoded.names), col, self.limits, self.table.path, control)
            notes = [n for n in group_column_notes(col, encoded) if n not in self.warnings]
            self.warnings += notes
            self.dims[(col, tokens)] = (encoded.codes, encoded.names)
        return self.dims[(col, tokens)]

    def warn_missing(self, control: Control, stats: GroupStats) -> None:
        """Warn (once per grouping) when more than 5 % of the rows have no group value."""
        total = int(stats.n.sum()) + stats.unknown_n
        if not stats.unknown_n or stats.unknown_n <= MISSING_SHARE_WARNING * total:
            return
        dim = ",".join(stats.dimension)
        tokens = _tokens(control)
        extra = f" or one of the missing_values {sorted(tokens)}" if tokens else ""
        note = (
            f"{stats.unknown_n} of {total} rows ({stats.unknown_n / total:.1%}) have no value in "
            f"'{dim}' (an empty cell or a null{extra}); they form the excluded group "
            f"{MISSING_GROUP} and are compared with no group"
        )
        if note not in self.warnings:
            self.warnings.append(note)

    def label(self, plan: _Plan) -> Labels:
        assert isinstance(plan.key, LabelKey)
        if plan.key not in self.labels:
            lab = encode_labels(
                self.table, plan.control, plan.key, plan.spec.multiclass_replacement
            )
            _limits.check_classes(
                len(lab.classes),
                plan.key.target,
                self.limits,
                self.table.path,
                plan.control.control_id,
            )
            if lab.score_columns:
                lab.warnings += validate_scores(self.table, plan.control, lab.score_columns)
            self.warnings += lab.warnings
            self.labels[plan.key] = lab
        return self.labels[plan.key]

    def dims_for(
        self,
        columns: Sequence[str],
        keep: np.ndarray | None,
        tokens: frozenset[str] = frozenset(),
        control: str | None = None,
    ) -> DimCodes:
        out = {}
        for col in columns:
            codes, names = self.dimension(col, tokens, control)
            out[col] = (codes if keep is None else codes[keep], names)
        return out

    def group_stats(self, plan: _Plan, plans: Sequence[_Plan]) -> GroupStats:
        """The statistics this plan's metric reads, built once per binding."""
        dim = plan.control.dimension_columns
        role = plan.spec.secondary_role
        second = plan.control.inputs.get(role) if role else None
        cache = (plan.key, dim, plan.spec.needs_scores, second, _tokens(plan.control))
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
            _limits.check_groups(
                len(st.groups), ",".join(dim), self.limits, self.table.path, plan.control.control_id
            )
            self.stats[cache] = st
        return self.stats[cache]

    def _counts(self, plan: _Plan, plans: Sequence[_Plan]) -> GroupStats:
        """Count table for this plan's dimension, built with its siblings in one pass."""
        dim = plan.control.dimension_columns
        tokens = _tokens(plan.control)
        key = (plan.key, dim, False, None, tokens)
        if key not in self.stats:
            lab = self.label(plan)
            requests = list(
                dict.fromkeys(
                    p.control.dimension_columns
                    for p in plans
                    if p.key == plan.key and p.error is None and _tokens(p.control) == tokens
                )
            )
            dims = self.dims_for(
                [c for r in requests for c in r], lab.keep, tokens, plan.control.control_id
            )
            # the intersection cells are at most the product of the columns' groups (each
            # with a "missing" slot) and at most the rows: refuse a table over --max-cells
            k = len(lab.classes)
            for req in requests:
                bound = min(math.prod(len(dims[c][1]) + 1 for c in req), len(lab.true_codes))
                _limits.check_cells(
                    bound * k * k,
                    f"the count table of '{','.join(req)}' ({bound:,} groups × {k}² classes)",
                    self.limits,
                    self.table.path,
                    plan.control.control_id,
                )
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
                self.stats[(plan.key, req, False, None, tokens)] = st
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
        from fairpolicy.stats import bootstrap, resample

        stats, point = self.resampled(plan, stats, keep, mv)
        rows = str(c.params.get("resample", "stratified")) == "rows"
        key = (id(stats), resamples, rows)
        if key not in self.replicates:
            seed = self._seed(plan, stats, "bootstrap")
            self.replicates[key] = (
                stats,  # keeps the object (and so its id) alive with its replicates
                resample.draw(stats, resamples, seed, rows=rows),
            )
        reps = self.replicates[key][1]
        iv = bootstrap.confidence(
            plan.spec,
            stats,
            keep,
            plan.spec.resolve_params(c.params),
            point,
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
        from fairpolicy.stats import permutation

        bonferroni = bool(c.params.get("bonferroni", False))
        stats, point = self.resampled(plan, stats, keep, mv)
        res = permutation.permutation_test(
            plan.spec,
            stats.select(keep),
            plan.spec.resolve_params(c.params),
            point,
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
            stratum=res.stratum,
            null_hypothesis=res.null_hypothesis,
            comparisons=res.comparisons,
        )

    def resampled(
        self, plan: _Plan, stats: GroupStats, keep: np.ndarray, mv: MetricValue
    ) -> tuple[GroupStats, float]:
        """(statistics, point value) a score metric's bootstrap and permutation test resample.

        Every engine resamples the same cells: the DuckDB and Spark engines aggregate scores
        on the grid of ``10**-decimals`` (``--score-decimals``), so the embedded engine
        resamples its scores rounded to that same grid (``data.engines._common.snap``, the
        engines' own rounding), not its exact per-row cells. With the same seed the
        replicates, intervals and p-values are then identical on every engine; the runner
        widens the interval by the grid's error bound (:meth:`ci_grid_error`) before it
        decides. The point value stays exact. Count metrics are unchanged.
        """
        assert mv.value is not None
        if (
            not plan.spec.needs_scores
            or self.decimals is not None
            or self.grid is None
            or stats.scores is None
            or stats.secondary is not None  # no interval or p-value anyway
        ):
            return stats, mv.value
        dim = plan.control.dimension_columns
        tokens = _tokens(plan.control)
        cache = (plan.key, dim, True, f"grid:{self.grid}", tokens)
        if cache not in self.stats:
            counts = self.stats.get((plan.key, dim, False, None, tokens), stats)
            self.stats[cache] = self._scores(plan, counts, self.grid)
        grid = self.stats[cache]
        self.grid_used = True
        value = plan.spec.fn(grid.select(keep), plan.spec.resolve_params(plan.control.params)).value
        return grid, mv.value if value is None else value

    def ci_grid_error(
        self, plan: _Plan, stats: GroupStats, keep: np.ndarray, mv: MetricValue
    ) -> float:
        """How far an interval resampled on the score grid may lie from the exact scores'
        interval: the grid's error bound of the metric on the grid statistics (the same
        number on every engine); 0 for count metrics."""
        if not plan.spec.needs_scores or self.grid is None or mv.value is None:
            return 0.0
        grid, _ = self.resampled(plan, stats, keep, mv)
        params = plan.spec.resolve_params(plan.control.params)
        on_grid = mv if grid is stats else plan.spec.fn(grid.select(keep), params)
        if on_grid.value is None:
            return math.inf
        return grid_error(plan.spec.key, grid.select(keep), params, on_grid, self.grid)

    def _scores(self, plan: _Plan, st: GroupStats, decimals: int | None = None) -> GroupStats:
        """``st`` with the score statistics of this plan's score columns (with ``decimals``:
        every score in [0, 1] rounded to the engines' grid of 10**-decimals)."""
        lab = self.label(plan)
        if lab.score_problem is not None and plan.spec.key not in CLASS_FREE_SCORES:
            raise BindingError(lab.score_problem)
        if not lab.score_columns:
            raise BindingError(
                Problem(
                    f"metric '{plan.spec.key}' reads scores, but no score column is bound.",
                    file=self.table.path,
                    control=plan.control.control_id,
                    hint="add input.score (a column, a list, or a prefix such as y_score).",
                )
            )
        dims = self.dims_for(
            plan.control.dimension_columns, lab.keep, _tokens(plan.control), plan.control.control_id
        )
        rows = row_groups(dims, plan.control.dimension_columns, st.groups)
        cols = [self.table.columns[c].to_numpy(zero_copy_only=False) for c in lab.score_columns]
        matrix = np.column_stack([np.asarray(c, dtype=np.float64) for c in cols])
        if lab.keep is not None:
            matrix = matrix[lab.keep]
        if decimals is not None:
            from fairpolicy.data.engines._common import snap

            with np.errstate(invalid="ignore"):
                inside = (matrix >= 0.0) & (matrix <= 1.0)
            matrix = np.where(inside, snap(matrix, decimals), matrix)
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
        self.drops[(plan.key, c.dimension_columns)] = (table, keep)
        weights = table.weights
        if weights is not None and keep is not None:
            weights = weights[keep]
        if table is self.table:
            dims = self.dims_for(c.dimension_columns, keep, _tokens(c), c.control_id)
        else:
            dims = _encode_dims(table, c.dimension_columns, keep, _tokens(c))
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
        self.drops[(plan.key, c.dimension_columns)] = (sub, keep)
        assert sub.weights is not None
        weights = sub.weights if keep is None else sub.weights[keep]
        sums = agg.sums if keep is None else agg.sums[keep]
        names, rows, unknown, keys = group_index(
            _encode_dims(sub, c.dimension_columns, keep, _tokens(c)), c.dimension_columns, weights
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


def _encode_dims(
    table: Table, columns: Sequence[str], keep: np.ndarray | None, tokens: frozenset[str]
) -> DimCodes:
    out = {}
    for col in columns:
        encoded = encode_group(table, col, tokens)
        out[col] = (encoded.codes if keep is None else encoded.codes[keep], encoded.names)
    return out


def encode_group(table: Table, column: str, tokens: frozenset[str]) -> GroupColumn:
    """:func:`encode_group_column` of a table's column; a type without a text form is an
    error naming the column."""
    from fairpolicy.errors import DataError

    try:
        return encode_group_column(table.columns[column], tokens)
    except TypeError as exc:
        raise DataError(
            f"{exc}.",
            file=table.path or "<DataFrame>",
            column=column,
            hint="bind input.dimension (or input.site) to a column of text or numbers.",
        ) from None


def _one_column_notes(policy: Policy) -> list[str]:
    """A selection-rate metric (which reads only predictions) may bind target and prediction
    to one column on purpose (an LL144 selection column); say so, since bound by mistake it
    measures the labels' base rates, not the model's decisions."""
    from fairpolicy.data.bind import PREDICTION_ONLY

    return [
        f"control '{c.control_id}': target and prediction are both bound to column "
        f"'{c.inputs['target']}': {c.metric_key} then compares the groups' rates of that "
        "column, not the model's predictions (meant for a selection column; otherwise bind "
        "input.prediction to the predictions)"
        for c in policy.controls
        if c.inputs.get("target") is not None
        and c.inputs.get("prediction") == c.inputs.get("target")
        and c.metric_key in PREDICTION_ONLY
    ]


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
            if role == "score" and spec.kind == "classification":
                if not score_column_names(table.available, value):
                    problems.append(missing_column_problem(table, c, role, value))
                continue
            problems += [
                missing_column_problem(table, c, role, col)
                for col in cols
                if col not in table.available
            ]
        reads = (*spec.inputs, *spec.one_of, *(("score",) if spec.needs_scores else ()))
        problems += same_column_problems(c, reads, table.path or "<DataFrame>")
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
        total = max(int(n.sum()) + stats.unknown_n, 1)
        share = n / total
        # decided exactly: a group holding exactly min_share of the rows is kept
        floor = decimal_fraction(float(min_share))
        low = keep & np.array([Fraction(int(k), total) < floor for k in n], dtype=bool)
        excluded += [
            Excluded(g, int(n[i]), f"{share[i]:.2%} of the rows, below min_share={min_share:g}")
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
                    if (tokens := _tokens(control))
                    else ""
                )
                + ")",
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
    return MetricValue(
        mv.value,
        mv.groups,
        (*excluded, *mv.excluded),
        mv.details,
        mv.reason,
        mv.worst_group,
        mv.exact,
        mv.bounds,
    ), keep


def _evaluate(plan: _Plan, plans: Sequence[_Plan], ev: _Evaluator) -> Finding:
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
            mv, keep = _measure(stats, c, spec, ev.table.path or "<DataFrame>")
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
    status, why = status_for(c, value, decision, interval)
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
    ev.warn_missing(c, stats)
    if stats.secondary is not None:  # the site column of a composite
        ev.warn_missing(c, stats.secondary)
    keys = _group_keys(stats)
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
    return _finding(
        c,
        spec,
        value=float(value) if value is not None else None,  # float(exact) when exact
        status=status,
        message=describe(c, value, status, reason, ci),
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
        details=_jsonable(details),
        worst_group=mv.worst_group,
        classes=list(stats.classes),
        counts={g: stats.counts[i].tolist() for i, g in enumerate(stats.groups) if keep[i]}
        if stats.classes
        else {},
    )


def _group_keys(stats: GroupStats) -> dict[str, list[str]]:
    """Group name → its values (one per dimension column), for the groups of ``stats`` and
    of its secondary grouping (site). Names are unambiguous (:func:`group_name`)."""
    out: dict[str, list[str]] = {}
    for st in (stats.secondary, stats):
        if st is not None and len(st.group_keys) == len(st.groups):
            out.update({g: list(k) for g, k in zip(st.groups, st.group_keys, strict=True)})
    return out


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
    timestamp: str | None = None,
    max_groups: int | None = None,
    max_classes: int | None = None,
    max_resamples: int | None = None,
    max_cells: int | None = None,
    max_resample_seconds: int | None = None,
    allow_paths: Sequence[str | os.PathLike[str]] = (),
) -> Results:
    """Evaluate every control of ``policy`` on ``data``.

    ``policy``: a path to a YAML/JSON policy, a parsed mapping/list, or a
    :class:`~fairpolicy.policy.schema.Policy`. ``data``: a path to a CSV or
    Parquet file, a glob of such files (``data/*.parquet``; DuckDB or Spark), a
    pandas or polars DataFrame, a pyarrow Table (or any table exporting the Arrow C
    stream), or a pyspark DataFrame (evaluated by Spark where it lives); anything else is
    a :class:`~fairpolicy.errors.UsageError`.
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
    ``max_groups``, ``max_classes``, ``max_resamples``, ``max_cells``: the caps on the
    work a policy can ask for (defaults in :mod:`fairpolicy.data.limits`; the command
    line's ``--max-groups`` …): distinct groups per grouping, classes, ``ci``/``p_value``
    resamples (checked before the data is read), cells of a count table or of its
    bootstrap replicates (resamples × cells), and ``max_resample_seconds``, the estimated
    time of a bootstrap or permutation test (checked before it starts).
    ``allow_paths``: folders outside the policy's own folder tree that its hrefs and
    sources may name (``--allow-path``).
    Raises a :class:`FairpolicyError` when the policy or data cannot be read at
    all; per-control problems (missing column, invalid labels) become findings
    with status ``error``.
    """
    from fairpolicy.data.read import require_data_kind

    require_data_kind(data)  # None, a dict, a NumPy array…: a clear UsageError, not a TypeError
    if inconclusive not in ("pass", "warn", "fail"):
        raise UsageError(f"inconclusive must be pass, warn or fail, not {inconclusive!r}.")
    if fail_on not in ("error", "warning", "never"):
        raise UsageError(f"fail_on must be error, warning or never, not {fail_on!r}.")
    fixed = fixed_timestamp(timestamp)
    started = fixed or _now(deterministic)
    epoch_note = (
        [
            "--deterministic without SOURCE_DATE_EPOCH or --timestamp: the run is dated "
            "1970-01-01T00:00:00+00:00; pass --timestamp ISO8601 (or set SOURCE_DATE_EPOCH) "
            "to date it"
        ]
        if deterministic and fixed is None and not os.environ.get("SOURCE_DATE_EPOCH")
        else []
    )
    clock = time.perf_counter()
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
    caps = Limits.of(
        max_groups=max_groups,
        max_classes=max_classes,
        max_resamples=max_resamples,
        max_cells=max_cells,
        max_resample_seconds=max_resample_seconds,
    )
    for name, value in (("ci", bootstrap), ("p_value", p_value), ("num_classes", num_classes)):
        if value is not None:
            _limits.check_requested(name, int(value), caps, from_flag=True)
    run_seed = DEFAULT_SEED if seed is None else int(seed)
    budget = default_memory_budget() if memory_budget is None else parse_size(memory_budget)
    # the data read starts now, beside the policy's validation (data/prefetch.py) — only
    # for the embedded engine and a file small enough that reading it cannot hurt
    # (with no --max-rows or --memory-budget: those limits are checked by the real read)
    speculate = max_rows is None and memory_budget is None and _prefetchable(engine, data, budget)
    prefetch = Prefetch.start(policy, data, bind) if speculate else None
    try:
        pol = apply_overrides(_load(policy, allow_paths), bind, num_classes, stats_options)
        _check_requested(pol, caps)
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
        ev = _Evaluator(
            table, run_seed, strings, decimals if rounded else None, grid=decimals, limits=caps
        )
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
        "timestamp": fixed,
        **stats_options,
    }
    if engine_name in ("duckdb", "spark") or ev.grid_used:
        run_options["score_decimals"] = decimals
    return Results(
        tool=Tool(version=__version__),
        policy=policy_info(pol),
        data=DataInfo(
            path=table.path,
            sha256=table.sha256,
            rows=table.rows,
            columns=list(dict.fromkeys(read)),
        ),
        run=RunInfo(
            started=started,
            finished=fixed or _now(deterministic),
            seconds=0.0 if is_deterministic(deterministic) else time.perf_counter() - clock,
            inconclusive=inconclusive,
            fail_on=fail_on,
            seed=run_seed,
            engine=engine_name,
            options={k: v for k, v in run_options.items() if v or k == "score_decimals"},
            cwd=None if deterministic else os.getcwd(),
        ),
        summary=summarize(findings, inconclusive, fail_on),
        findings=findings,
        warnings=[
            *epoch_note,
            *pol.warnings,
            *_one_column_notes(pol),
            *notes,
            *table.warnings,
            *ev.warnings,
        ],
    )


def _check_requested(pol: Policy, caps: Limits) -> None:
    """Every control's resample and class counts within their caps, before any data is
    read (a control's own props and the policy-wide ``metadata.props`` alike)."""
    for c in pol.controls:
        for name in ("ci", "p_value", "num_classes"):
            value = c.params.get(name)
            if isinstance(value, int) and not isinstance(value, bool):
                _limits.check_requested(
                    name,
                    value,
                    caps,
                    file=c.source.file if c.source and c.source.file else pol.path,
                    control=c.control_id,
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
    from fairpolicy.data.read import csv_compression

    if csv_compression(Path(data)) is not None:
        return False  # decompressing needs pyarrow's codecs: imported on this thread first
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
