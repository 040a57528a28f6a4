"""One count table over the attribute columns and the label cells.

The data is read once (:func:`fairpolicy.data.sources.read_table`, the same guards as
``check``: file kinds, row and memory limits, CSV parsing). Each attribute becomes an
integer code per row; the two binary label columns become one *cell* per row
(``2·target + prediction``: 0 = TN, 1 = FP, 2 = FN, 3 = TP). The rows are then
collapsed to the distinct (codes…, cell) tuples with their row counts: every slice's
rate is a sum over that table, so the search never touches the rows again.

Attribute values follow the group rules of ``check`` (DESIGN §8): only an empty cell or
a true null is missing, shown as ``(missing)``; ``NA``/``null`` are values.

A real value written ``(missing)`` is a value, shown quoted (``"(missing)"``) as
``check`` shows such a group (:func:`fairpolicy.stats.groups.group_name`).

Binning rule (``--bins``, the grammar of a control's ``bins`` prop,
:mod:`fairpolicy.policy.bins`; default 5): with a count ``B`` (or ``qB``) an attribute
whose every present value is a number and that has more than ``B`` distinct values is cut
into ``B`` equal-frequency bins at the quantiles ``k/B`` of its present values
(``numpy.quantile``, linear interpolation, computed from the distinct values and their
counts); equal edges are merged, so a bin never holds a single edge twice. With edges
(``0,25,60,inf``) every numeric attribute is cut at them; ``age=0,25,60,inf;income=q4``
bins the named columns (a non-number in one is refused) and the others by the default 5.
Bin labels are ``[lo, hi)`` with the last bin closed ``[lo, hi]`` when ``hi`` is finite,
exactly as ``check`` labels its bins. Every other attribute is categorical, one slice
value per distinct text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from fairpolicy.errors import DataError, UsageError, did_you_mean
from fairpolicy.policy.bins import BinsRule

MISSING = "(missing)"


@dataclass
class Attribute:
    """One attribute column: the display name of each code, and how it was encoded."""

    name: str
    values: list[str]
    binned: bool = False
    #: bin edges (binned attributes only)
    edges: list[float] = field(default_factory=list)


@dataclass
class CountTable:
    """Distinct (attribute codes, cell) tuples with their row counts."""

    attributes: list[Attribute]
    #: codes[i, j]: attribute j's code of tuple i (int32)
    codes: NDArray[np.int32]
    #: the label cell of tuple i: 2·target + prediction
    cells: NDArray[np.int8]
    #: rows per tuple (int64, ≥ 1)
    weights: NDArray[np.int64]
    rows: int
    file: str
    sha256: str | None
    positive_label: str
    target: str
    prediction: str


def _label_values(arr: Any, column: str, file: str) -> tuple[NDArray[np.int64], list[str]]:
    """Codes and the distinct values (as text) of a label column; nulls refused."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if arr.null_count:
        first = int(np.flatnonzero(np.asarray(pc.is_null(arr)))[0])
        raise DataError(
            f"the label column has {arr.null_count} missing value(s) (first at data row "
            f"{first + 1}); explore needs a target and a prediction on every row.",
            file=file,
            column=column,
            hint="drop or fill the rows without a label before exploring.",
        )
    if pa.types.is_integer(arr.type) or pa.types.is_boolean(arr.type):
        values = arr.to_numpy()
        if values.dtype == np.bool_:
            values = values.view(np.uint8)
        low, high = int(values.min()), int(values.max())
        if high - low <= 1 << 20:  # a lookup table instead of a sort or a text cast
            index = values if low >= 0 else values.astype(np.int64) - low
            base = 0 if low >= 0 else low
            seen = np.flatnonzero(np.bincount(index, minlength=high - base + 1))
            lookup = np.zeros(high - base + 1, dtype=np.int64)
            lookup[seen] = np.arange(len(seen))
            shown = [str(int(v) + base) for v in seen]
            if pa.types.is_boolean(arr.type):
                shown = ["true" if v == "1" else "false" for v in shown]
            return lookup[index], shown
    if pa.types.is_floating(arr.type):
        values = np.asarray(arr.to_numpy(), dtype=np.float64)
        if np.all(values == np.round(values)):
            arr = pa.chunked_array([pa.array(values.astype(np.int64))])
    enc = arr.cast(pa.string()).combine_chunks().dictionary_encode()
    return np.asarray(enc.indices, dtype=np.int64), [str(v) for v in enc.dictionary.to_pylist()]


def _binary(
    tcodes: NDArray[np.int64],
    tvals: list[str],
    pcodes: NDArray[np.int64],
    pvals: list[str],
    target: str,
    prediction: str,
    positive: str | None,
    file: str,
) -> tuple[NDArray[np.int8], str]:
    labels = sorted(set(tvals) | set(pvals))
    if len(labels) > 2:
        raise DataError(
            f"the target and prediction columns hold {len(labels)} distinct labels "
            f"({', '.join(labels[:6])}{'…' if len(labels) > 6 else ''}); explore compares "
            "binary rates.",
            file=file,
            column=f"{target}/{prediction}",
            hint="map the labels to two classes (e.g. one class against the rest) first.",
        )
    if positive is None:
        if set(labels) <= {"0", "1"}:
            positive = "1"
        elif set(labels) <= {"true", "false", "True", "False"}:
            positive = "true" if "true" in labels else "True"
        else:
            raise UsageError(
                f"the labels are {', '.join(repr(v) for v in labels)}: which one is positive "
                "is not obvious.",
                file=file,
                column=target,
                hint="name it with --positive-label LABEL.",
            )
    elif positive not in labels:
        raise UsageError(
            f"--positive-label {positive!r} is not a label of the data (labels: "
            f"{', '.join(repr(v) for v in labels)}).{did_you_mean(positive, labels)}",
            file=file,
            column=target,
            hint="name one of the labels the target and prediction columns hold.",
        )
    t_pos = np.array([v == positive for v in tvals] or [False])[tcodes]
    p_pos = np.array([v == positive for v in pvals] or [False])[pcodes]
    return (2 * t_pos.astype(np.int8) + p_pos.astype(np.int8)).astype(np.int8), positive


def _encode_attribute(
    arr: Any, name: str, rule: BinsRule, file: str
) -> tuple[NDArray[np.int32], Attribute]:
    # the group encoding ``check`` uses: trimmed text, empty cell or true null missing
    from fairpolicy.data.bind.bins import binned_with_edges, numbers_of
    from fairpolicy.data.bind.groups import encode_group_column
    from fairpolicy.stats.groups import group_name

    col = encode_group_column(arr)
    spec = rule.for_column(name)
    named = any(c == name for c, _ in rule.columns)
    numeric = bool(col.names) and numbers_of(col.names) is not None
    # a count (qN) bins a numeric attribute with more distinct values than N; edges, or
    # bins named for this column, bin it whatever its values (a non-number is refused)
    binned = spec is not None and (
        named or (numeric and (bool(spec.edges) or len(col.names) > spec.quantiles))
    )
    edges: list[float] = []
    if binned:
        assert spec is not None
        col, cut = binned_with_edges(col, spec, None, column=name, file=file)
        edges = [float(e) for e in cut]
        values = list(col.names)
    else:  # a real value "(missing)" is quoted, as check's group names are
        values = [group_name((v,)) for v in col.names]
    codes = col.codes  # narrow integers, -1 = missing
    has_missing = bool(len(codes)) and int(codes.min()) < 0
    attr = Attribute(name, values, binned=binned, edges=edges)
    lookup = np.arange(len(values) + 1, dtype=np.int32)
    if has_missing:
        attr.values = [*values, MISSING]
    else:
        lookup[-1] = 0  # unused
    # code -1 takes the lookup's last entry (missing)
    out: NDArray[np.int32] = lookup[codes]
    return out, attr


def bins_rule(bins: int | str, attributes: list[str]) -> BinsRule:
    """``--bins`` read with the policy's ``bins`` grammar; UsageError naming the flag."""
    from fairpolicy.policy.bins import BINS_HINT, parse_bins

    try:
        rule = parse_bins(str(bins))
    except ValueError as exc:
        raise UsageError(f"--bins {bins}: {exc}.", key="--bins", hint=BINS_HINT + ".") from None
    unknown = [c for c, _ in rule.columns if c not in attributes]
    if unknown:
        raise UsageError(
            f"--bins {bins}: '{unknown[0]}' is not one of the attributes "
            f"({', '.join(attributes)}).{did_you_mean(unknown[0], attributes)}",
            key="--bins",
            hint="name bins only for columns listed in --attributes.",
        )
    if rule.columns and rule.default is None:  # other numeric attributes: the default q5
        rule = BinsRule(rule.text, default=parse_bins("5").default, columns=rule.columns)
    return rule


def build(
    data: Any,
    *,
    target: str,
    prediction: str,
    attributes: list[str],
    bins: int | str = 5,
    positive_label: str | None = None,
    max_rows: int | None = None,
) -> CountTable:
    """Read ``data`` once and collapse it into its count table (``bins``: the grammar of
    :mod:`fairpolicy.policy.bins`, a whole number N meaning qN)."""
    from fairpolicy.data.sources import read_table, require_data_kind
    from fairpolicy.data.sources.frames import in_memory_name

    require_data_kind(data)
    if target in attributes or prediction in attributes:
        raise UsageError(
            "an attribute is also the target or the prediction column.",
            column=target if target in attributes else prediction,
            hint="list only the columns to slice by in --attributes.",
        )
    table = read_table(
        data,
        [target, prediction, *attributes],
        string_columns=attributes,
        max_rows=max_rows,
    )
    file = table.path or (in_memory_name(data) if not isinstance(data, str) else str(data))
    missing = [c for c in [target, prediction, *attributes] if c not in table.columns]
    if missing:
        raise DataError(
            f"the data has no column '{missing[0]}'.{did_you_mean(missing[0], table.available)}",
            file=file,
            column=missing[0],
            hint=f"name one of its columns: {', '.join(table.available[:12])}"
            + ("…" if len(table.available) > 12 else "")
            + ".",
        )
    tcodes, tvals = _label_values(table.columns[target], target, file)
    pcodes, pvals = _label_values(table.columns[prediction], prediction, file)
    cells, positive = _binary(
        tcodes, tvals, pcodes, pvals, target, prediction, positive_label, file
    )
    columns: list[NDArray[np.int32]] = []
    attrs: list[Attribute] = []
    rule = bins_rule(bins, attributes)
    for name in attributes:
        codes, attr = _encode_attribute(table.columns[name], name, rule, file)
        if len(attr.values) < 2:
            raise DataError(
                f"the attribute has one value ({attr.values[0]!r}) on every row, so no slice "
                "of it differs from the rest of the data.",
                file=file,
                column=name,
                hint="drop it from --attributes (or check that the right column is named).",
            )
        columns.append(codes)
        attrs.append(attr)
    # one int64 key per row, in mixed radix (attribute codes, then the cell)
    key = cells.astype(np.int64)
    radix = 4
    mixed = True
    for codes, attr in zip(columns, attrs, strict=True):
        if radix * len(attr.values) >= 2**62:
            mixed = False
            break
        key = key + codes.astype(np.int64) * radix
        radix *= len(attr.values)
    if mixed:
        uniq, weights = np.unique(key, return_counts=True)
        cell_out = (uniq % 4).astype(np.int8)
        rest = uniq // 4
        code_cols = []
        for attr in attrs:
            code_cols.append(rest % len(attr.values))
            rest = rest // len(attr.values)
        matrix = np.stack(code_cols, axis=1).astype(np.int32)
    else:  # too many combinations for one key: unique rows of the code matrix
        stacked = np.stack([*columns, cells.astype(np.int32)], axis=1)
        uniq_rows, weights = np.unique(stacked, axis=0, return_counts=True)
        matrix = uniq_rows[:, :-1].astype(np.int32)
        cell_out = uniq_rows[:, -1].astype(np.int8)
    return CountTable(
        attributes=attrs,
        codes=matrix,
        cells=cell_out,
        weights=weights.astype(np.int64),
        rows=int(table.rows),
        file=file,
        sha256=table.sha256,
        positive_label=positive,
        target=target,
        prediction=prediction,
    )
