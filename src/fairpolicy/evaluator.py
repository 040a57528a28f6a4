"""The shared state of one evaluation: :class:`Evaluator` caches label encodings,
dimension codes and count tables across controls (every control that reads the same
target/prediction pair shares one count table; every dimension grouping is a sum over its
intersectional cells), and computes the bootstrap intervals and permutation p-values of a
control's value. :mod:`fairpolicy.evaluation` turns its statistics into findings.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections.abc import Hashable, Sequence
from typing import Any, NamedTuple

import numpy as np

from fairpolicy.data import limits as _limits
from fairpolicy.data.bind.groups import (
    GroupColumn,
    emptied_groups,
    encode_group_column,
    missing_mask,
    parse_missing_values,
)
from fairpolicy.data.bind.label_types import LabelKey, Labels
from fairpolicy.data.bind.labels import encode_labels
from fairpolicy.data.bind.roles import CLASS_FREE_SCORES
from fairpolicy.data.bind.rows import numeric_column, require_complete
from fairpolicy.data.bind.scores import validate_scores
from fairpolicy.data.bind.weights import fold_weights, survey_refused
from fairpolicy.data.limits import Limits
from fairpolicy.data.sources import Request, Table
from fairpolicy.errors import BindingError, Problem
from fairpolicy.metrics.base import Excluded, MetricValue
from fairpolicy.metrics.grid import grid_error
from fairpolicy.planning import Plan
from fairpolicy.policy.schema import Control
from fairpolicy.results import (
    ConfidenceInterval,
    PValue,
)
from fairpolicy.stats import (
    MISSING_GROUP,
    ColumnCounts,
    GroupStats,
    SurveyCells,
    build_group_stats,
    group_index,
    row_groups,
    weighted_bincount,
)
from fairpolicy.stats.exactsum import exact_bincount, exact_total

DimCodes = dict[str, tuple[np.ndarray, list[str]]]

#: columns a warning names before it says how many more there are
NAMED_COLUMNS = 20

#: a warning is raised when more than this share of the rows has no group value
MISSING_SHARE_WARNING = 0.05
#: a group-size binding under fractional weights has no resampling units (no interval)
_NO_UNITS = (np.zeros(0, np.int64), np.zeros(0, np.float64), np.zeros(0, np.int64))


def missing_tokens(control: Control) -> frozenset[str]:
    """The control's extra missing-value tokens for group columns (``missing_values``)."""
    return parse_missing_values(control.params.get("missing_values"))


class GroupRule(NamedTuple):
    """How a control reads its group columns: the extra missing-value tokens
    (``missing_values``) and the ``bins`` of its numeric columns (as written)."""

    missing: frozenset[str]
    bins: str | None = None


#: the rule of a control without missing_values or bins
PLAIN_RULE = GroupRule(frozenset())


def group_rule(control: Control) -> GroupRule:
    """The control's :class:`GroupRule` (controls with equal rules share group codes)."""
    bins = control.params.get("bins")
    return GroupRule(missing_tokens(control), None if bins is None else str(bins))


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


class Evaluator:
    """Caches label encodings, dimension codes and count tables across controls."""

    def __init__(
        self,
        table: Table,
        seed: int = 0,
        strings: Sequence[str] = (),
        decimals: int | None = None,
        grid: int | None = None,
        limits: Limits | None = None,
        exact_box: bool = False,
    ) -> None:
        self.table = table
        #: score intervals carry their exact Clopper–Pearson box (``ci.exact_box``): the
        #: ``sequential`` window gate confirms its alarms with it
        self.exact_box = exact_box
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
        #: (group column, group rule) → its codes and group names
        self.dims: dict[tuple[str, GroupRule], tuple[np.ndarray, list[str]]] = {}
        #: (binding key, dimension, with scores, secondary column, group rule) → statistics
        self.stats: dict[
            tuple[Hashable, tuple[str, ...], bool, str | None, GroupRule], GroupStats
        ] = {}
        self.warnings: list[str] = []
        #: (binding key, dimension) → (table, rows kept under ``missing: drop``)
        self.drops: dict[tuple[Hashable, tuple[str, ...]], tuple[Table, np.ndarray | None]] = {}

    def emptied(self, plan: Plan) -> list[Excluded]:
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
        rule = group_rule(c)
        cache = {col: v for (col, t), v in self.dims.items() if t == rule}
        if table is not self.table:
            cache = {}
            for col in dim:
                encoded = encode_group(table, col, rule, c.control_id)
                cache[col] = (encoded.codes, encoded.names)
        found = emptied_groups(table, dim, keep, cache)
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
        self, col: str, rule: GroupRule = PLAIN_RULE, control: str | None = None
    ) -> tuple[np.ndarray, list[str]]:
        if (col, rule) not in self.dims:
            encoded = encode_group(self.table, col, rule, control)
            _limits.check_groups(len(encoded.names), col, self.limits, self.table.path, control)
            notes = [n for n in group_column_notes(col, encoded) if n not in self.warnings]
            self.warnings += notes
            self.dims[(col, rule)] = (encoded.codes, encoded.names)
        return self.dims[(col, rule)]

    def warn_missing(self, control: Control, stats: GroupStats) -> None:
        """Warn (once per grouping) when more than 5 % of the rows have no group value."""
        total = int(stats.rows_n.sum()) + stats.unknown_n
        if not stats.unknown_n or stats.unknown_n <= MISSING_SHARE_WARNING * total:
            return
        dim = ",".join(stats.dimension)
        tokens = missing_tokens(control)
        extra = f" or one of the missing_values {sorted(tokens)}" if tokens else ""
        note = (
            f"{stats.unknown_n} of {total} rows ({stats.unknown_n / total:.1%}) have no value in "
            f"'{dim}' (an empty cell or a null{extra}); they form the excluded group "
            f"{MISSING_GROUP} and are compared with no group"
        )
        if note not in self.warnings:
            self.warnings.append(note)

    def label(self, plan: Plan) -> Labels:
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
        rule: GroupRule = PLAIN_RULE,
        control: str | None = None,
    ) -> DimCodes:
        out = {}
        for col in columns:
            codes, names = self.dimension(col, rule, control)
            out[col] = (codes if keep is None else codes[keep], names)
        return out

    def group_stats(self, plan: Plan, plans: Sequence[Plan]) -> GroupStats:
        """The statistics this plan's metric reads, built once per binding."""
        spec, weight = plan.spec, plan.control.inputs.get("weight")
        if (
            self.table.sample_weights is not None
            and weight is not None
            and (spec.kind in ("regression", "ranking") or spec.needs_scores)
        ):  # fractional weights reach count tables only (data/bind/weights.py)
            raise survey_refused(self.table, weight, plan.control.control_id, spec.key)
        dim = plan.control.dimension_columns
        _check_bins(plan.control, self.table.path)
        role = plan.spec.secondary_role
        second = plan.control.inputs.get(role) if role else None
        cache = (plan.key, dim, plan.spec.needs_scores, second, group_rule(plan.control))
        if cache not in self.stats:
            if plan.spec.column_counts is not None:
                self.stats[cache] = self._column_stats(plan)
                return self.stats[cache]
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
                twin = Plan(plan.control.model_copy(update={"inputs": inputs}), plan.spec)
                twin.key = plan.key
                spec = dataclasses.replace(plan.spec, secondary_role=None)
                twin.spec = spec
                st = st.with_extras(secondary=self.group_stats(twin, [twin]))
            _limits.check_groups(
                len(st.groups), ",".join(dim), self.limits, self.table.path, plan.control.control_id
            )
            self.stats[cache] = st
        return self.stats[cache]

    def _counts(self, plan: Plan, plans: Sequence[Plan]) -> GroupStats:
        """Count table for this plan's dimension, built with its siblings in one pass."""
        dim = plan.control.dimension_columns
        tokens = group_rule(plan.control)
        key = (plan.key, dim, False, None, tokens)
        if key not in self.stats:
            lab = self.label(plan)
            requests = list(
                dict.fromkeys(
                    p.control.dimension_columns
                    for p in plans
                    if p.key == plan.key and p.error is None and group_rule(p.control) == tokens
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
            args = (lab.true_codes, lab.pred_codes, lab.classes, dims, requests, lab.positive)
            if lab.sample_weights is not None:  # fractional weights: stats/survey.py
                from fairpolicy.stats.survey import build_survey_stats

                built = build_survey_stats(*args, lab.weights, lab.sample_weights)
            else:
                built = build_group_stats(*args, lab.weights)
            for req, st in built.items():
                self.stats[(plan.key, req, False, None, tokens)] = st
        return self.stats[key]

    def _column_stats(self, plan: Plan) -> GroupStats:
        """The data-quality metrics' statistics: one group of every row, with the missing
        values of the measured columns (:class:`~fairpolicy.stats.ColumnCounts`)."""
        c, spec = plan.control, plan.spec
        named = c.role_columns(spec.column_role or "")
        # sample weights describe the rows: a row of weight w counts as w rows, and the
        # weight column is not one of the data's columns here
        weight = c.inputs.get("weight")
        available = tuple(col for col in self.table.available if col != weight)
        columns = named or available
        t = self.table
        rows: float = t.rows if t.weights is None or t.source is not None else int(t.weights.sum())
        exact_rows: int | None = None
        if t.sample_weights is not None:  # fractional weights: every count is a weight sum
            rows = float(_effective(t).sum())
            exact_rows = exact_total(t.sample_weights, t.weights)
        missing: tuple[float, ...] = ()
        exact_missing: tuple[int | None, ...] = ()
        complete = exact_complete = None
        if spec.column_counts != "names":
            tokens = missing_tokens(c)
            each = [self._missing((col,), tokens, c) for col in columns]
            missing = tuple(m for m, _ in each)
            exact_missing = tuple(e for _, e in each)
            if spec.column_counts == "joint":
                gone, exact_gone = self._missing(columns, tokens, c)
                complete = rows - gone
                if exact_rows is not None and exact_gone is not None:
                    exact_complete = exact_rows - exact_gone
        exact = None
        if exact_rows is not None and all(e is not None for e in exact_missing):
            exact = (exact_rows, tuple(e for e in exact_missing if e is not None), exact_complete)
        counts = ColumnCounts(rows, columns, missing, complete, available, bool(named), exact=exact)
        if not named and spec.column_counts == "each":
            shown = ", ".join(columns[:NAMED_COLUMNS]) + (
                f", … ({len(columns) - NAMED_COLUMNS} more)" if len(columns) > NAMED_COLUMNS else ""
            )
            self.warnings.append(
                f"control '{c.control_id}': no input.{spec.column_role} is bound, so "
                f"{spec.key} is measured over all {len(columns)} columns: {shown} (bind "
                f"input.{spec.column_role} to measure only some)"
            )
        return GroupStats(
            dimension=(),
            groups=("",),
            classes=(),
            counts=np.zeros((1, 0, 0), dtype=np.int64),
            sizes=np.array([rows], dtype=np.int64),
            columns=counts,
        )

    def _missing(
        self, columns: tuple[str, ...], tokens: frozenset[str], control: Control
    ) -> tuple[float, int | None]:
        """Data rows where any of ``columns`` holds no value (:func:`missing_mask`): over
        the rows read (embedded), or an engine's distinct tuples of those columns (with
        the sample weight column, folded into the row counts)."""
        from fairpolicy.errors import DataError

        table = self.table
        if table.source is not None:
            weight = control.inputs.get("weight")
            read = tuple(dict.fromkeys([*columns, *filter(None, [weight])]))
            if read not in self.subtables:
                sub = table.source.tuples(Request(read, self.strings & set(read)))
                if weight is not None:
                    sub = fold_weights(sub, weight, [], kind=control.params.get("weight_kind"))
                self.subtables[read] = sub
            table = self.subtables[read]
        mask = np.zeros(len(table.columns[columns[0]]), dtype=bool)
        for col in columns:
            try:
                mask |= missing_mask(table.columns[col], tokens)
            except TypeError as exc:
                raise DataError(
                    f"{exc}.",
                    file=table.path or "<DataFrame>",
                    control=control.control_id,
                    column=col,
                    hint="measure columns of text, numbers, booleans or dates "
                    "(input.columns / input.fields).",
                ) from None
        if table.sample_weights is not None:  # the float sum, and the exact one
            w = table.sample_weights[mask]
            n = None if table.weights is None else table.weights[mask]
            return float(_effective(table)[mask].sum()), exact_total(w, n)
        return table.count(mask), None

    def _seed(self, plan: Plan, stats: GroupStats, salt: str) -> int:
        """A seed per binding and grouping: controls sharing statistics share replicates,
        and adding a control elsewhere in the policy changes no other interval."""
        inputs = sorted((r, col) for r, col in plan.control.inputs.items() if r != "dimension")
        text = f"{self.seed}|{salt}|{inputs}|{','.join(stats.dimension)}"
        return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")

    def interval(
        self, plan: Plan, stats: GroupStats, keep: np.ndarray, mv: MetricValue
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
            exact_box=self.exact_box,
        )
        ci = ConfidenceInterval(
            low=iv.low,
            high=iv.high,
            level=iv.level,
            method="bca"
            if iv.method == "bca"
            else "band"
            if iv.method == "band"
            else "score"
            if iv.method == "score"
            else "percentile",
            resamples=iv.resamples,
            seed=iv.seed,
            valid=iv.valid,
            reason=iv.reason,
            note=iv.note,
            resample="rows" if rows else "stratified",
            exact_box=None if iv.box is None else [iv.box[0], iv.box[1]],
            exact_box_kind="hoeffding" if iv.box_kind == "hoeffding" else None,
        )
        return ci, dict(iv.groups or {})

    def permutation(
        self, plan: Plan, stats: GroupStats, keep: np.ndarray, mv: MetricValue
    ) -> PValue | None:
        c = plan.control
        permutations = int(c.params.get("p_value") or 0)
        if permutations <= 0 or mv.value is None:
            return None
        from fairpolicy.stats import permutation

        bonferroni = bool(c.params.get("bonferroni", False))
        from fairpolicy.metrics.direction import resolve

        stats, point = self.resampled(plan, stats, keep, mv)
        params = plan.spec.resolve_params(c.params)
        res = permutation.permutation_test(
            plan.spec,
            stats.select(keep),
            params,
            point,
            permutations,
            self._seed(plan, stats, "permutation"),
            bonferroni,
            resolve(plan.spec, params),  # the value's direction, not the key's
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
        self, plan: Plan, stats: GroupStats, keep: np.ndarray, mv: MetricValue
    ) -> tuple[GroupStats, float]:
        """(statistics, point value) a score metric's bootstrap and permutation test resample.

        Every engine resamples the same cells: the DuckDB and Spark engines aggregate scores
        on the grid of ``10**-decimals`` (``--score-decimals``), so the embedded engine
        resamples its scores rounded to that same grid (``data.sources.aggregate.snap``, the
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
        tokens = group_rule(plan.control)
        cache = (plan.key, dim, True, f"grid:{self.grid}", tokens)
        if cache not in self.stats:
            counts = self.stats.get((plan.key, dim, False, None, tokens), stats)
            self.stats[cache] = self._scores(plan, counts, self.grid)
        grid = self.stats[cache]
        self.grid_used = True
        value = plan.spec.fn(grid.select(keep), plan.spec.resolve_params(plan.control.params)).value
        return grid, mv.value if value is None else value

    def ci_grid_error(
        self, plan: Plan, stats: GroupStats, keep: np.ndarray, mv: MetricValue
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

    def _scores(self, plan: Plan, st: GroupStats, decimals: int | None = None) -> GroupStats:
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
            plan.control.dimension_columns,
            lab.keep,
            group_rule(plan.control),
            plan.control.control_id,
        )
        rows = row_groups(dims, plan.control.dimension_columns, st.groups)
        cols = [self.table.columns[c].to_numpy(zero_copy_only=False) for c in lab.score_columns]
        matrix = np.column_stack([np.asarray(c, dtype=np.float64) for c in cols])
        if lab.keep is not None:
            matrix = matrix[lab.keep]
        if decimals is not None:
            from fairpolicy.data.sources.aggregate import snap

            with np.errstate(invalid="ignore"):
                inside = (matrix >= 0.0) & (matrix <= 1.0)
            matrix = np.where(inside, snap(matrix, decimals), matrix)
        from fairpolicy.stats.scores import build_score_stats

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

    def _rows(self, plan: Plan, keep_cells: bool = False) -> GroupStats:
        """Regression sums, ranking order or plain group sizes for one control; with
        ``keep_cells`` also the regression (y, ŷ) cells a bootstrap resamples (on an
        engine the sums are then built from the distinct tuples, not pushed down)."""
        c, spec = plan.control, plan.spec
        table = self.table
        if table.source is not None and spec.kind in ("regression", "ranking"):
            if spec.kind == "regression" and not keep_cells and "weight" not in c.inputs:
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
            dims = self.dims_for(c.dimension_columns, keep, group_rule(c), c.control_id)
        else:
            dims = _encode_dims(table, c.dimension_columns, keep, group_rule(c), c.control_id)
        names, rows, unknown, keys = group_index(dims, c.dimension_columns, weights)
        ok = rows >= 0
        sizes = weighted_bincount(rows[ok], None if weights is None else weights[ok], len(names))
        survey = None
        exact: dict[str, Any] = {}
        if table.sample_weights is not None:  # fractional weights: sizes are total weights
            eff = _effective(table) if keep is None else _effective(table)[keep]
            unknown_w = float(eff[~ok].sum())
            survey = SurveyCells(sizes, tuple(_NO_UNITS for _ in names), unknown_w)
            sizes = np.bincount(rows[ok], weights=eff[ok], minlength=len(names))
            sw = table.sample_weights if keep is None else table.sample_weights[keep]
            n_rows = weights if weights is not None else np.ones(len(sw), dtype=np.int64)
            exact = {  # the same sums exactly (stats/exactsum.py): the decision's sizes
                "exact_counts": exact_bincount(rows[ok], sw[ok], n_rows[ok], len(names)),
                "exact_unknown": exact_total(sw[~ok], n_rows[~ok]),
            }
        st = GroupStats(
            dimension=c.dimension_columns,
            groups=names,
            classes=(),
            counts=np.zeros((len(names), 0, 0), dtype=np.int64),
            unknown_n=unknown,
            sizes=sizes,
            group_keys=keys,
            survey=survey,
            **exact,
        )
        if keep is not None:
            numeric = {r: v[keep] for r, v in numeric.items()}
        if spec.kind == "regression":
            from fairpolicy.stats.regression import build_regression_stats

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
            from fairpolicy.stats.ranking import RankingStats

            return st.with_extras(ranking=RankingStats(ranked))
        return st

    def _subtable(self, plan: Plan) -> Table:
        """Engines: the distinct tuples of a regression/ranking binding's columns."""
        c, spec = plan.control, plan.spec
        roles = ("target", "prediction") if spec.kind == "regression" else ("rank", "score")
        numeric = [c.inputs[r] for r in roles if r in c.inputs]
        if spec.kind == "ranking":
            numeric = numeric[:1]
        weight = c.inputs.get("weight") if spec.kind == "regression" else None
        columns = tuple(dict.fromkeys([*c.dimension_columns, *numeric, *filter(None, [weight])]))
        if columns not in self.subtables:
            assert self.table.source is not None
            sub = self.table.source.tuples(
                Request(columns=columns, strings=self.strings & set(columns))
            )
            if weight is not None:  # sample weights: data/bind/weights.py
                refusal = survey_refused(sub, weight, c.control_id, spec.key)
                kind = c.params.get("weight_kind")
                groups = [(c.dimension_columns, missing_tokens(c))]
                sub = fold_weights(sub, weight, groups, refusal, kind)
            self.subtables[columns] = sub
        return self.subtables[columns]

    def _regression_sums(self, plan: Plan) -> GroupStats | None:
        """Engines: per-group regression sums aggregated by the engine, or None when the
        binding's values need the tuples to be judged exactly as the embedded path does."""
        c = plan.control
        assert self.table.source is not None
        dims = list(c.dimension_columns)
        agg = self.table.source.regression(dims, c.inputs["target"], c.inputs["prediction"])
        if agg is None:
            return None
        from fairpolicy.stats.regression import RegressionStats

        sub = agg.table
        self.pushed += sub.read or []
        keep, warnings = require_complete(sub, c, agg.missing, c.missing)
        self.warnings += warnings
        self.drops[(plan.key, c.dimension_columns)] = (sub, keep)
        assert sub.weights is not None
        weights = sub.weights if keep is None else sub.weights[keep]
        sums = agg.sums if keep is None else agg.sums[keep]
        names, rows, unknown, keys = group_index(
            _encode_dims(sub, c.dimension_columns, keep, group_rule(c), c.control_id),
            c.dimension_columns,
            weights,
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


def _check_bins(control: Control, file: str | None) -> None:
    """The control's ``bins`` against its dimension columns as bound for this run (a
    ``--bind dimension=…`` the policy could not see): a spec for a column the control does
    not group by, or a plain spec on an intersection, is the control's error."""
    bins = control.params.get("bins")
    if bins is None:
        return
    from fairpolicy.policy.bins import BINS_HINT, parse_bins

    try:
        parse_bins(str(bins), control.dimension_columns)
    except ValueError as exc:
        raise BindingError(
            Problem(
                f"bins: {exc}.",
                file=file,
                control=control.control_id,
                key="bins",
                hint=BINS_HINT,
            )
        ) from None


def _effective(table: Table) -> np.ndarray:
    """Each entry's total sample weight: its rows times their fractional weight."""
    assert table.sample_weights is not None
    w = table.sample_weights
    return w if table.weights is None else w * table.weights


def _encode_dims(
    table: Table,
    columns: Sequence[str],
    keep: np.ndarray | None,
    rule: GroupRule,
    control: str | None = None,
) -> DimCodes:
    out = {}
    for col in columns:
        encoded = encode_group(table, col, rule, control)
        out[col] = (encoded.codes if keep is None else encoded.codes[keep], encoded.names)
    return out


def encode_group(
    table: Table, column: str, rule: GroupRule, control: str | None = None
) -> GroupColumn:
    """:func:`encode_group_column` of a table's column, binned when the rule bins it
    (:mod:`fairpolicy.data.bind.bins`); a type without a text form is an error naming the
    column."""
    from fairpolicy.errors import DataError

    try:
        encoded = encode_group_column(table.columns[column], rule.missing)
    except TypeError as exc:
        raise DataError(
            f"{exc}.",
            file=table.path or "<DataFrame>",
            column=column,
            hint="bind input.dimension (or input.site) to a column of text or numbers.",
        ) from None
    if rule.bins is None:
        return encoded
    from fairpolicy.data.bind.bins import bin_column
    from fairpolicy.policy.bins import parse_bins

    spec = parse_bins(rule.bins).for_column(column)
    if spec is None:
        return encoded
    return bin_column(encoded, spec, table.weights, column=column, file=table.path, control=control)
