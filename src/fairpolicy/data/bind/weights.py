"""Sample weights (``input.weight`` / ``--bind weight=COLUMN``): one weight per data row.

Two readings, decided by the ``weight_kind`` declaration — never by the values (said in
every report: a note and the results' ``data.weights``):

- **``weight_kind: frequency``** — a row of weight w counts as w identical rows.
  The pipeline already counts weighted tuples (an engine's distinct tuples carry their
  row counts in :attr:`~fairpolicy.data.sources.base.Table.weights`), so the column is
  folded into those counts once, right after the read, on every engine and input type:
  every count-based statistic, ``min_samples`` and the bootstrap then count weight (a row
  of weight w is resampled as w rows, exactly as w copies of it would be).
- **``weight_kind: survey``, and the default (unset or ``auto``)** — survey / importance
  weights: a row is one sampled unit that
  stands for w of the population. Values are ratios of weighted sums (scikit-learn's
  ``sample_weight``, fairlearn's ``sample_params``); ``min_samples`` and the reported n
  count rows; the bootstrap resamples rows, each with its weight
  (:mod:`fairpolicy.stats.survey`). The weights travel beside the row counts
  (:attr:`~fairpolicy.data.sources.base.Table.sample_weights`). Count-table metrics and
  group-size data checks take them; score, regression and ranking metrics are refused
  (their resampling units are not weighted), and so are permutation p-values and BCa's
  jackknife (no result, with the reason; the percentile interval stands in for BCa).

Why the default is the survey reading (issue 28). Whole numbers are no evidence of
frequency weights: survey weights of 2 and 4 read as row counts overstated the sample
2.8-fold and the intervals under-covered (0.933, wrong PASS 3.5 %). Read as survey
weights, row counts are still valid (each row is resampled with its weight; the interval
is conservative where the rows really were w identical rows), so the reading that is
valid either way is the default, and a policy whose rows are aggregated counts declares
``weight_kind: frequency`` (tighter intervals, permutation p-values, score and regression
metrics).

What is refused (exit 2, naming the column and the value): a weight column that is not
numeric, a missing, non-finite or negative weight, a group whose rows all weigh 0,
controls of one run binding different weight columns (or some none), a weight column
bound to another role too, and a weight on a ranking metric (repeating an item of a
ranking is not meaningful). Regression sums weigh each row: on an engine a weighted
regression control reads its own tuples with the weight column (:func:`fold_weights`)
instead of pushing its sums down.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from fairpolicy.errors import DataError, FairpolicyError, PolicyError, Problem

if TYPE_CHECKING:
    from fairpolicy.data.sources.base import Table
    from fairpolicy.metrics.base import MetricSpec
    from fairpolicy.policy.schema import Control, Policy

#: metric kinds a weight applies to (counted from the weighted tuples)
WEIGHTED_KINDS = frozenset({"classification", "data", "regression"})

#: kinds counted from the main table (regression controls on an engine read their own)
MAIN_TABLE_KINDS = frozenset({"classification", "data"})

#: the largest total weight (whole counts stay exact in float64 bincounts below 2**53)
MAX_TOTAL_WEIGHT = 2**53


def weight_column(pol: Policy) -> str | None:
    """The one weight column of a run, or None. Controls that disagree (one weighted,
    another not, or two different columns) are exit 2: the run reads one weighted table."""
    bound = {c.control_id: c.inputs.get("weight") for c in pol.controls}
    columns = {v for v in bound.values() if v is not None}
    if not columns:
        return None
    if len(columns) == 1 and None not in bound.values():
        return columns.pop()
    first = next(cid for cid, v in bound.items() if v is not None)
    other = next(cid for cid, v in bound.items() if v != bound[first])
    raise PolicyError(
        f"control '{first}' is weighted by column '{bound[first]}' but control '{other}' "
        + ("binds no weight" if bound[other] is None else f"is weighted by column '{bound[other]}'")
        + "; every control of one run must use the same sample weights.",
        file=pol.path,
        control=other,
        key="input.weight",
        hint="set input.weight once for the whole policy (a policy-wide prop) or pass "
        "--bind weight=COLUMN, or run the differently weighted controls separately.",
    )


def _declared(kind: object) -> str | None:
    """The reading a ``weight_kind`` prop declares: None when unset or ``auto``."""
    return None if kind in (None, "auto") else str(kind)


def weight_kind(pol: Policy) -> str | None:
    """The declared reading of the run's weights (``weight_kind``), or None (decided by the
    values). Weighted controls that declare different readings are exit 2."""
    kinds = {
        c.control_id: _declared(c.params.get("weight_kind"))
        for c in pol.controls
        if "weight" in c.inputs
    }
    declared = set(kinds.values())
    if len(declared) <= 1:
        return next(iter(declared), None)
    first = next(iter(kinds))
    other = next(cid for cid in kinds if kinds[cid] != kinds[first])
    raise PolicyError(
        f"control '{first}' reads its weights as weight_kind "
        f"'{kinds[first] or '(decided by the values)'}' but control '{other}' as "
        f"'{kinds[other] or '(decided by the values)'}'; one run reads one weighted table.",
        file=pol.path,
        control=other,
        key="weight_kind",
        hint="set weight_kind once for the whole policy (a policy-wide prop), or run the "
        "controls separately.",
    )


def weight_problems(control: Control, spec: MetricSpec, file: str | None) -> list[Problem]:
    """A weight on a metric whose value is not counted from the weighted tuples, a weight
    column that the control also binds to another role, or a weight_kind without weights."""
    weight = control.inputs.get("weight")
    if weight is None:
        if "weight_kind" not in control.params:
            return []
        return [
            Problem(
                f"weight_kind '{control.params['weight_kind']}' is set but the control binds "
                "no weight column, so it would be ignored.",
                file=file,
                control=control.control_id,
                key="weight_kind",
                hint="bind input.weight (or --bind weight=COLUMN), or remove weight_kind.",
            )
        ]
    others = [
        role
        for role, value in control.inputs.items()
        if role not in ("weight", "count")  # a count table weighs by its count column
        and weight in ([c.strip() for c in value.split(",")] if role == "dimension" else [value])
    ]
    if others:
        return [
            Problem(
                f"column '{weight}' is bound both as the sample weight and as "
                f"input.{others[0]}, so the rows would be weighted by their own "
                f"{others[0]} values.",
                file=file,
                control=control.control_id,
                column=weight,
                key="input.weight",
                hint="bind input.weight to a column of row weights.",
            )
        ]
    if spec.kind in WEIGHTED_KINDS:
        return []
    return [
        Problem(
            f"metric '{spec.key}' is a {spec.kind} metric and cannot be weighted: sample "
            f"weights (input.weight = '{control.inputs['weight']}') apply to count-based "
            "metrics and regression sums only.",
            file=file,
            control=control.control_id,
            key="input.weight",
            hint="remove input.weight (or --bind weight=...) for this metric, or check it "
            "in a separate unweighted run.",
        )
    ]


def _bad(table: Table, column: str, what: str, value: object, hint: str) -> DataError:
    return DataError(
        f"the weight column holds {what} ({value!r}); every sample weight must be a finite, "
        "non-negative number.",
        file=table.path or "<DataFrame>",
        column=column,
        key="input.weight",
        hint=hint,
    )


def _number(value: object) -> bool:
    try:
        float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    return not isinstance(value, bool)


def weight_values(table: Table, column: str, reading: str | None = None) -> np.ndarray:
    """The weight column, validated (see the module docstring): int64 when the weights are
    declared frequency weights (``reading`` "frequency"), else float64 (survey / importance
    weights: ``reading`` "survey" or None, whatever the values)."""
    import pyarrow as pa

    from fairpolicy.data.kernels import numpy_of

    arr = table.columns[column]
    kind = arr.type.value_type if pa.types.is_dictionary(arr.type) else arr.type
    if pa.types.is_decimal(kind):  # Parquet decimals: exact whole numbers stay exact
        arr = arr.cast(pa.float64())
        kind = arr.type
    if not (pa.types.is_integer(kind) or pa.types.is_floating(kind)):
        import pyarrow.compute as pc

        sample = [v for v in pc.unique(pc.drop_null(arr)).to_pylist() if not _number(v)][:1]
        raise _bad(
            table,
            column,
            f"values of type {kind}, not numbers",
            sample[0] if sample else None,
            "bind input.weight to a numeric column of row weights.",
        )
    if arr.null_count:
        raise _bad(
            table,
            column,
            "a missing value",
            None,
            "give every row a weight (0 leaves a row out), or drop the rows first.",
        )
    values = np.asarray(numpy_of(arr), dtype=np.float64)
    checks = (
        (~np.isfinite(values), "a non-finite value", "remove or fix infinite/NaN weights."),
        (values < 0, "a negative value", "weights must be 0 or more."),
    )
    for bad, what, hint in checks:
        if bad.any():
            raise _bad(table, column, what, float(values[np.flatnonzero(bad)[0]]), hint)
    with np.errstate(over="ignore"):  # each entry weighs its rows (an engine's tuple counts)
        total = float(values.sum() if table.weights is None else values @ table.weights)
    fractional = values != np.floor(values)
    if reading == "frequency" and fractional.any():
        raise _bad(
            table,
            column,
            "a fractional value under weight_kind: frequency",
            float(values[np.flatnonzero(fractional)[0]]),
            "frequency weights are whole numbers (a row of weight w is w rows); for survey "
            "or importance weights set weight_kind: survey (or leave it out).",
        )
    if reading != "frequency":  # survey / importance weights: rows stay the sample
        tiny = (values > 0) & (values < 1e-300)
        if tiny.any():  # subnormal sums lose digits: ratios of them would be imprecise
            raise _bad(
                table,
                column,
                "a weight too small to sum precisely",
                float(values[np.flatnonzero(tiny)[0]]),
                "rescale the weights (divide them by their mean): ratios of weighted sums "
                "do not change with the scale.",
            )
        if not np.isfinite(total) or total > 1e300:
            raise _bad(
                table,
                column,
                "weights whose sum overflows a double",
                float(values.max()),
                "rescale the weights (divide them by their mean): ratios of weighted sums "
                "do not change with the scale.",
            )
        return values
    if total >= MAX_TOTAL_WEIGHT // 2:  # near the limit: the exact total decides
        from fairpolicy.stats.exactsum import EXACT_SCALE, exact_total

        total = exact_total(values, table.weights) >> EXACT_SCALE  # whole weights: exact
    if total >= MAX_TOTAL_WEIGHT:
        raise _bad(
            table,
            column,
            f"weights summing to about {total:.3g}",
            float(values.max()),
            f"the total weight must stay below 2**53 ({MAX_TOTAL_WEIGHT}) to count exactly.",
        )
    return values.astype(np.int64)


def _zero_groups(
    table: Table, column: str, w: np.ndarray, dims: Sequence[str], tokens: frozenset[str]
) -> None:
    """Exit 2 when a group of ``dims`` has rows but all of them weigh 0: it would vanish.
    The groups are the pipeline's own (:func:`encode_group_column`: values trimmed, the
    control's ``missing_values`` tokens missing)."""
    from fairpolicy.data.bind.groups import encode_group_column

    present = [d for d in dims if d in table.columns]
    if not present:
        return
    code = np.zeros(len(w), dtype=np.int64)
    missing = np.zeros(len(w), dtype=bool)
    names: dict[str, tuple[np.ndarray, list[str]]] = {}
    for d in present:  # the missing bucket (a missing group value) is no group: it may weigh 0
        col = encode_group_column(table.columns[d], tokens)
        codes = np.asarray(col.codes, dtype=np.int64)
        names[d] = (codes, col.names)
        code = code * (len(col.names) + 1) + np.where(codes < 0, len(col.names), codes)
        missing |= codes < 0
    rows = np.flatnonzero(~missing)
    cells, first, inverse = np.unique(code[rows], return_index=True, return_inverse=True)
    zero = np.bincount(inverse.ravel(), weights=w[rows], minlength=len(cells)) == 0
    if zero.any():
        i = int(rows[first[int(np.flatnonzero(zero)[0])]])
        group = {d: names[d][1][names[d][0][i]] for d in present}
        raise DataError(
            f"every row of group {group} has weight 0 in the weight column, so the group "
            "would silently drop out of the check.",
            file=table.path or "<DataFrame>",
            column=column,
            key="input.weight",
            hint="give the group's rows a positive weight, or drop the group from the data "
            "if it is meant to be left out.",
        )


def _unread(table: Table, column: str, pol: Policy) -> None:
    """The weight column was not read although a count-based control needs it: never a
    silently unweighted count."""
    from fairpolicy.metrics.registry import lookup

    for c in pol.controls:
        try:
            counted = lookup(c.metric_key).kind in MAIN_TABLE_KINDS
        except FairpolicyError:
            continue  # an unknown metric is reported per control
        if counted:
            raise DataError(
                f"the weight column was not read for control '{c.control_id}'.",
                file=table.path or "<DataFrame>",
                control=c.control_id,
                column=column,
                key="input.weight",
                hint="this is a fairpolicy bug: please report it with the policy.",
            )


def apply_weights(table: Table, pol: Policy) -> Table:
    """The table with the policy's weight column folded into its row counts; zero-weight
    rows are left out (after checking that no group loses all of its rows)."""
    column = weight_column(pol)
    kind = weight_kind(pol)
    if column is None or column not in table.available:
        return table  # no weights, or a missing column (reported per control)
    if kind is None and column in table.columns and any("count" in c.inputs for c in pol.controls):
        # a count table (input.count): its whole counts are applicants by declaration, so
        # frequency weights; fractional ones (rate × count) stay survey weights
        # (data/bind/count_table.py writes whole counts as integers)
        import pyarrow as pa

        if pa.types.is_integer(table.columns[column].type):
            kind = "frequency"
    frequency = (
        f"weighted by column '{column}': weight_kind: frequency, read as frequency "
        "weights: every count, min_samples and the bootstrap count a row of weight w as w "
        "rows"
    )
    survey = (
        f"weighted by column '{column}': "
        + (
            "weight_kind: survey"
            if kind == "survey"
            else "weight_kind not declared, so the weights are read as survey weights "
            "whatever their values (the reading valid for either kind; declare "
            "weight_kind: frequency if a row of weight w stands for w identical rows, or "
            "weight_kind: survey)"
        )
        + ", read as survey / importance weights: values are ratios of weighted sums "
        "(scikit-learn's sample_weight), while "
        "min_samples and the reported n count rows and the bootstrap resamples rows with "
        "their weights (intervals of rates use Kish's effective rows)"
    )
    note = frequency if kind == "frequency" else survey
    if column not in table.columns:
        _unread(table, column, pol)
        # engines: only regression/ranking controls are weighted; a regression control
        # folds the weights into its own tuples (fold_weights), a ranking one is refused
        return dataclasses.replace(table, warnings=[*table.warnings, note])
    from fairpolicy.data.bind.groups import parse_missing_values

    groups: list[tuple[tuple[str, ...], frozenset[str]]] = []
    for c in pol.controls:
        tokens = parse_missing_values(c.params.get("missing_values"))
        groups.append((tuple(c.dimension_columns), tokens))
        if "site" in c.inputs:
            groups.append(((c.inputs["site"],), tokens))
    out = fold_weights(table, column, groups, kind=kind)
    note = survey if out.sample_weights is not None else frequency
    if any("count" in c.inputs for c in pol.controls):
        return out  # a count table: data/bind/count_table.py's note says how it was read
    return dataclasses.replace(out, warnings=[*out.warnings, note])


def survey_refused(table: Table, column: str, control: str, key: str) -> DataError:
    return DataError(
        f"the weight column is read as survey / importance weights, which apply to "
        f"count-table metrics and group-size checks only; control '{control}' uses "
        f"'{key}', whose score, regression or ranking statistics are resampled without "
        "weights, so its value and interval would not be weighted consistently.",
        file=table.path or "<DataFrame>",
        control=control,
        column=column,
        key="input.weight",
        hint="if a row of weight w stands for w identical rows, declare weight_kind: "
        "frequency (undeclared weights are read as survey weights, whatever their values); "
        "otherwise check that control in a separate run without input.weight.",
    )


def fold_weights(
    table: Table,
    column: str,
    groups: Sequence[tuple[Sequence[str], frozenset[str]]],
    refuse_survey: DataError | None = None,
    kind: str | None = None,
) -> Table:
    """``table`` with ``column``'s validated weights applied and the zero-weight entries
    left out; a group of any of ``groups`` (dimension columns, ``missing_values`` tokens)
    whose rows all weigh 0 is exit 2. Whole-number
    weights are multiplied into the row counts; fractional ones are kept beside them as
    ``sample_weights`` (or ``refuse_survey`` is raised); ``kind`` is the ``weight_kind``
    prop (unset or ``auto``: survey, whatever the values). Used on the main table and on an engine's
    regression tuples."""
    values = weight_values(table, column, _declared(kind))
    fractional = values.dtype.kind == "f"
    if fractional and refuse_survey is not None:
        raise refuse_survey
    w = values if table.weights is None else values * table.weights
    for dims, tokens in dict.fromkeys((tuple(d), t) for d, t in groups):
        _zero_groups(table, column, w, dims, tokens)
    keep = w > 0
    # embedded reads: remember each entry's data row, so messages still name data rows
    ids = np.arange(len(w), dtype=np.int64) if table.source is None else None
    counts = table.weights if fractional else w
    sample = values if fractional else None
    if keep.all():
        return dataclasses.replace(table, weights=counts, sample_weights=sample, row_ids=ids)
    from fairpolicy.data.kernels import arrow_of

    idx = arrow_of(np.flatnonzero(keep))
    return dataclasses.replace(
        table,
        columns={k: v.take(idx) for k, v in table.columns.items()},
        weights=None if counts is None else counts[keep],
        sample_weights=None if sample is None else sample[keep],
        row_ids=None if ids is None else ids[keep],
        sum_flags={k: v[keep] for k, v in table.sum_flags.items()},
    )
