"""The window axis inside the count tables (issue 30, item 4).

A monitoring run's rows are sorted by window once (:mod:`fairpolicy.monitor`); each
window's rows are a contiguous slice. Instead of encoding each window's labels and groups
again and counting its rows into a count table of its own, :func:`window_seeds` encodes the
labels and groups of all the rows once and counts them with ONE ``bincount`` over
(window, group cell, true class, predicted class). Each window's count tables are then
summed from that array for every window at once (each grouping's cells into its groups,
:func:`_marginals`), and handed to the window's
:class:`~fairpolicy.evaluator.Evaluator` as already computed (:meth:`Seed.apply`). The
statistics are exactly those a separate check on the window's rows builds: integer counts
are exact in any order, and a count table's groups are the sorted names of its non-empty
cells, whatever codes they had.

A window gets no seed for a label binding (it is then encoded and counted from its rows
as before) when a separate check could encode it differently:

- the window does not hold the same label values as the whole data (its classes, positive
  class and warnings depend on the values it observes);
- the binding reads scores, weights, per-column positive labels or bins, drops rows with
  missing labels, or its encoding warns about anything (a warning names what a window
  observes);
- a group column's encoding warns (values that differ only by spaces or normalization),
  or the groups or cells exceed a limit (the separate path raises or decides);
- the dense (window × cell × class²) array would be larger than :data:`MAX_BINS`.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from fairpolicy.data import limits as _limits
from fairpolicy.data.bind.label_types import LabelKey, Labels
from fairpolicy.data.limits import Limits
from fairpolicy.data.sources import Table
from fairpolicy.errors import FairpolicyError
from fairpolicy.evaluator import Evaluator, GroupRule, group_rule
from fairpolicy.planning import Plan, plan_controls
from fairpolicy.policy.schema import Policy
from fairpolicy.stats import GroupStats
from fairpolicy.stats.groups import group_name

#: the largest (window × cell × class²) count array built at once (int64: 8 bytes each)
MAX_BINS = 8_000_000

StatsKey = tuple[Hashable, tuple[str, ...], bool, str | None, GroupRule]


@dataclass
class Seed:
    """One window's label encodings and count tables, computed from the whole data."""

    labels: dict[LabelKey, Labels] = field(default_factory=dict)
    stats: dict[StatsKey, GroupStats] = field(default_factory=dict)

    def apply(self, ev: Evaluator) -> None:
        """Give ``ev`` (the window's evaluator) what it would otherwise compute itself."""
        ev.labels.update(self.labels)
        ev.stats.update(self.stats)


def _countable(plan: Plan, table: Table) -> bool:
    """A plan whose statistics are a plain count table (see the module's list)."""
    c, spec = plan.control, plan.spec
    key = plan.key
    return (
        plan.error is None
        and isinstance(key, LabelKey)
        and spec.kind == "classification"
        and spec.column_counts is None
        and not spec.needs_scores
        and key.score is None
        and key.positive_target is None
        and key.positive_prediction is None
        and c.inputs.get("weight") is None
        and c.params.get("bins") is None
        and table.sample_weights is None
    )


def window_seeds(
    table: Table,
    pol: Policy,
    starts: Sequence[int],
    strings: Sequence[str] = (),
    limits: Limits | None = None,
) -> list[Seed]:
    """Each window's :class:`Seed`; window i holds the rows ``starts[i]:starts[i + 1]``
    of ``table`` (sorted by window). Empty seeds where nothing can be shared."""
    n_w = len(starts) - 1
    seeds = [Seed() for _ in range(n_w)]
    if n_w < 1 or (table.weights is not None and len(table.weights) and table.weights.min() < 1):
        return seeds
    plans = [p for p in plan_controls(pol, table) if _countable(p, table)]
    if not plans:
        return seeds
    ev = Evaluator(table, strings=strings, limits=limits)
    bounds: NDArray[np.int64] = np.asarray(starts, dtype=np.int64)
    lengths = bounds[1:] - bounds[:-1]
    window_of: NDArray[np.int32] | None = None
    noisy: set[str] = set()
    done: set[tuple[LabelKey, GroupRule]] = set()
    for plan in plans:
        key, rule = plan.key, group_rule(plan.control)
        assert isinstance(key, LabelKey)
        if (key, rule) in done:
            continue
        done.add((key, rule))
        requests = list(
            dict.fromkeys(
                p.control.dimension_columns
                for p in plans
                if p.key == key and group_rule(p.control) == rule
            )
        )
        cols = list(dict.fromkeys(c for r in requests for c in r))
        if not cols or noisy & set(cols):
            continue
        before = len(ev.warnings)
        try:
            lab = ev.label(plan)
            dims = ev.dims_for(cols, None, rule, plan.control.control_id)
        except FairpolicyError:
            continue
        if len(ev.warnings) > before:  # a label or group note: per window, not shared
            noisy |= set(cols)
            continue
        if lab.keep is not None or lab.warnings or lab.score_columns:
            continue
        k = len(lab.classes)
        radix = [len(dims[c][1]) + 1 for c in cols]
        total_cells = math.prod(radix)
        if n_w * total_cells * k * k > MAX_BINS:
            continue
        try:
            for req in requests:
                bound = min(math.prod(len(dims[c][1]) + 1 for c in req), len(lab.true_codes))
                _limits.check_cells(
                    bound * k * k, "count table", ev.limits, table.path, plan.control.control_id
                )
        except FairpolicyError:
            continue
        if window_of is None:
            window_of = np.repeat(np.arange(n_w, dtype=np.int32), lengths)
        flat = _count(window_of, cols, radix, dims, lab, n_w * total_cells * k * k)
        counts = flat.reshape(n_w, total_cells, k, k)
        # the label values each window observes (target or prediction), against the data's
        seen_t = counts.sum(axis=(1, 3)) > 0
        seen_p = counts.sum(axis=(1, 2)) > 0
        seen = seen_t | seen_p if key.prediction != key.target else seen_t
        everywhere = seen.any(axis=0)
        ok = np.flatnonzero((seen == everywhere).all(axis=1))  # else: other classes
        per_request = [(req, _marginals(counts[ok], cols, radix, dims, req)) for req in requests]
        for j, w in enumerate(ok.tolist()):
            stats = {
                req: _stats_of(req, keys, grouped[j], unknown[j], lab)
                for req, (keys, grouped, unknown) in per_request
            }
            try:
                for st in stats.values():
                    _limits.check_groups(
                        len(st.groups),
                        ",".join(st.dimension),
                        ev.limits,
                        table.path,
                        plan.control.control_id,
                    )
            except FairpolicyError:
                continue
            lo, hi = int(starts[w]), int(starts[w + 1])
            t_codes = lab.true_codes[lo:hi]
            seeds[w].labels[key] = Labels(
                classes=lab.classes,
                true_codes=t_codes,
                pred_codes=t_codes if lab.pred_codes is lab.true_codes else lab.pred_codes[lo:hi],
                keep=None,
                positive=lab.positive,
                weights=None if lab.weights is None else lab.weights[lo:hi],
            )
            for req, st in stats.items():
                seeds[w].stats[(key, req, False, None, rule)] = st
    return seeds


#: rows counted at a time (the index of a block stays small: no array as long as the data)
_BLOCK_ROWS = 1 << 20


def _count(
    window_of: NDArray[np.int32],
    cols: list[str],
    radix: list[int],
    dims: dict[str, tuple[NDArray[np.integer], list[str]]],
    lab: Labels,
    n_bins: int,
) -> NDArray[np.int64]:
    """The rows counted into (window, cell, true class, predicted class) bins, flat,
    block by block (integer counts are exact in any order)."""
    k = len(lab.classes)
    flat = np.zeros(n_bins, np.int64)
    n = len(window_of)
    step = max(_BLOCK_ROWS, n_bins)  # each block's bincount costs its rows + the bins
    for lo in range(0, n, step):
        hi = min(lo + step, n)
        index = window_of[lo:hi].astype(np.int64)
        for c, card in zip(cols, radix, strict=True):
            codes, names = dims[c]
            block = codes[lo:hi]
            index *= card
            index += np.where(block < 0, len(names), block)
        index *= k
        index += lab.true_codes[lo:hi]
        index *= k
        index += lab.pred_codes[lo:hi]
        if lab.weights is None:
            flat += np.bincount(index, minlength=n_bins)
        else:
            w = lab.weights[lo:hi]
            flat += np.rint(np.bincount(index, weights=w, minlength=n_bins)).astype(np.int64)
    return flat


def _marginals(
    counts: NDArray[np.int64],
    cols: list[str],
    radix: list[int],
    dims: dict[str, tuple[NDArray[np.integer], list[str]]],
    req: tuple[str, ...],
) -> tuple[list[tuple[str, ...]], NDArray[np.int64], NDArray[np.int64]]:
    """Every window's counts summed into the groups of ``req`` at once: (the group keys,
    sorted as :func:`~fairpolicy.stats.counts.marginalize` sorts them; counts (windows,
    groups, K, K); the counts of rows missing a value of ``req`` (windows, K, K)).

    ``counts`` is (windows, cells, K, K) over the mixed-radix cells of ``cols`` (slot
    ``len(names)`` of a column: missing). Only cells with rows in some window are read."""
    n_w, _, k, _ = counts.shape
    used = np.flatnonzero(counts.sum(axis=(0, 2, 3)))
    values: list[tuple[str | None, ...]] = []
    for cid in used.tolist():
        row: list[str | None] = []
        for c, card in zip(reversed(cols), reversed(radix), strict=True):
            cid, code = divmod(cid, card)
            names = dims[c][1]
            row.append(None if code == len(names) else names[code])
        values.append(tuple(reversed(row)))
    pos = [cols.index(c) for c in req]
    cell_keys = [tuple(v[j] for j in pos) for v in values]
    keys = sorted({key for key in cell_keys if all(x is not None for x in key)})
    index = {key: i for i, key in enumerate(keys)}
    grouped = np.zeros((n_w, len(keys) + 1, k, k), dtype=np.int64)  # last: missing
    for cid, key in zip(used.tolist(), cell_keys, strict=True):
        grouped[:, index.get(key, len(keys))] += counts[:, cid]
    return keys, grouped[:, : len(keys)], grouped[:, len(keys)]  # type: ignore[return-value]


def _stats_of(
    req: tuple[str, ...],
    keys: list[tuple[str, ...]],
    grouped: NDArray[np.int64],
    unknown: NDArray[np.int64],
    lab: Labels,
) -> GroupStats:
    """One window's count table of ``req`` from its row of :func:`_marginals`: the groups
    with rows in the window, as :func:`~fairpolicy.stats.build_group_stats` builds them
    from the window's rows."""
    present = np.flatnonzero(grouped.sum(axis=(1, 2)))
    mine = [keys[i] for i in present.tolist()]
    return GroupStats(
        unknown_counts=np.array(unknown, dtype=np.int64),
        group_keys=tuple(mine),
        dimension=req,
        groups=tuple(group_name(key) for key in mine),
        classes=lab.classes,
        counts=grouped[present],
        positive=lab.positive,
        unknown_n=int(unknown.sum()),
    )
