"""Monitoring runs (issue 30): every control of the policy in every window, from one read.

``check(..., window="decided_at=1w")`` (``--window``) reads the bound columns and the
window column once: the embedded engine reads the rows and sorts them by window once; DuckDB
and Spark group on each row's window label inside their one ``GROUP BY``
(:mod:`fairpolicy.data.window`). Each window's rows (or tuples) are then a table of their
own, and every control is planned, measured and decided on it exactly as a separate
``check`` on that window's rows would be (the tests compare them). The count tables of
the count metrics are not rebuilt per window: labels and groups are encoded once and
counted with one ``bincount`` over (window, cell, classes), and each window's tables are
slices of it (:mod:`fairpolicy.window_counts`; a window whose label values differ from
the data's is counted from its own rows). Across the windows,
:func:`fairpolicy.decide.window_gate` decides each control once (``--window-gate``); the
results' findings are those decisions, and ``results.windows`` holds every window's
findings.

- ``--min-window-rows N``: a window with fewer rows is ``inconclusive`` with the reason,
  never a pass (its values are still shown); ``--pool-windows`` pools each short window
  with the windows after it until the pool has N rows.
- ``--reference FROM..TO``: the windows whose labels lie in that range (inclusive) are
  pooled into one reference table; every window's finding gets its change against it,
  with ``--baseline``'s direction semantics and ``--max-regression``
  (:func:`fairpolicy.baseline.compare`).
- ``sequential``: window t's intervals are computed at the level 1 − α_t
  (:func:`fairpolicy.stats.sequential.window_level`, α = 1 − the control's ``ci_level``);
  a control without ``ci`` gets :data:`SEQUENTIAL_RESAMPLES` (a warning says so). A score
  interval (binary rates) alarms only when its exact Clopper–Pearson box at the same level
  lies beyond the threshold too (:func:`fairpolicy.decide.alarm_interval`); a multi-class
  gap over classes reads the exact box of its (group, class) rates, and survey weights
  Hoeffding's box on Kish's effective rows. Each window's finding shows its interval as
  ``ci`` (the box as ``ci.exact_box``) and records the interval the alarm read as
  ``details.alarm_interval`` (low, high, ``used``: which of them; null ends and a
  ``reason`` when the window cannot alarm).

Not supported with windows (exit 2): regression and ranking metrics (their engines run
aggregations of their own), count-table inputs, and ``--baseline`` (use ``--reference``).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from fairpolicy.assemble import RunRecord
from fairpolicy.data.limits import Limits
from fairpolicy.data.sources import Bound, Table
from fairpolicy.data.window import (
    KEY,
    WindowSpec,
    parse_window,
    refuse_bad_keys,
    window_end,
    window_keys,
    window_order,
)
from fairpolicy.decide import WINDOW_GATES, WindowGate, alarm_interval, window_gate
from fairpolicy.errors import DataError, UsageError
from fairpolicy.policy.schema import Policy
from fairpolicy.results import (
    Finding,
    Results,
    WindowResult,
    WindowsInfo,
    gate_effect,
)
from fairpolicy.window_counts import Seed, window_seeds

#: bootstrap resamples a control without ``ci`` gets under the ``sequential`` gate (a score
#: interval, e.g. of a binary rate gap, is computed in closed form at any level)
SEQUENTIAL_RESAMPLES = 1000


@dataclass(frozen=True)
class Monitoring:
    """The window settings of one run, validated."""

    spec: WindowSpec
    gate: WindowGate = "sequential"
    min_rows: int | None = None
    pool: bool = False
    #: ``--reference FROM..TO``: (FROM, TO) window labels, inclusive
    reference: tuple[str, str] | None = None
    #: ``--state FILE``: the count tables kept between runs (:mod:`fairpolicy.data.state`)
    state: str | None = None

    def as_options(self) -> dict[str, Any]:
        """What the results' run options record."""
        return {
            **self.spec.as_options(),
            "window_gate": self.gate,
            "min_window_rows": self.min_rows,
            "pool_windows": self.pool or None,
            "reference": None if self.reference is None else "..".join(self.reference),
            "state": self.state,
        }


def monitoring(
    window: str | None,
    window_tz: str | None = None,
    window_gate: str | None = None,
    min_window_rows: int | None = None,
    pool_windows: bool = False,
    reference: str | None = None,
    state: str | None = None,
) -> Monitoring | None:
    """The run's window settings (None: no windows); UsageError naming the flag."""
    if window is None:
        for flag, given in (
            ("--window-tz", window_tz),
            ("--window-gate", window_gate),
            ("--min-window-rows", min_window_rows),
            ("--pool-windows", pool_windows or None),
            ("--reference", reference),
            ("--state", state),
        ):
            if given is not None:
                raise UsageError(
                    f"{flag} needs --window: without windows the run has one table.",
                    hint="add --window COLUMN=PERIOD (e.g. --window decided_at=1w)",
                )
        return None
    spec = parse_window(window, window_tz)
    gate = next((g for g in WINDOW_GATES if g == (window_gate or "sequential")), None)
    if gate is None:
        raise UsageError(
            f"--window-gate {window_gate}: unknown gate. Gates: {', '.join(WINDOW_GATES)}.",
            hint="last decides on the newest window, any fails if any window fails, "
            "sequential (default) alarms with a false-alarm rate ≤ α over all windows",
        )
    if min_window_rows is not None and (
        isinstance(min_window_rows, bool)
        or not isinstance(min_window_rows, int)
        or min_window_rows < 1
    ):
        raise UsageError(f"--min-window-rows must be a whole number ≥ 1, got {min_window_rows!r}.")
    if pool_windows and min_window_rows is None:
        raise UsageError(
            "--pool-windows pools a window with the next ones until it has "
            "--min-window-rows rows; give --min-window-rows N too."
        )
    ref = None
    if reference is not None:
        first, sep, last = str(reference).partition("..")
        if not sep or not first.strip() or not last.strip():
            raise UsageError(
                f"--reference {reference}: write FROM..TO, the first and last window of the "
                "reference period (inclusive).",
                hint="e.g. --reference 2024-01-01..2024-03-31",
            )
        ref = (first.strip(), last.strip())
        if window_order(ref[0]) > window_order(ref[1]):
            raise UsageError(f"--reference {reference}: FROM is after TO.")
    if state is not None and (not isinstance(state, str | os.PathLike) or not str(state)):
        raise UsageError(f"--state needs a file path, got {state!r}.")
    return Monitoring(
        spec, gate, min_window_rows, pool_windows, ref, None if state is None else str(state)
    )


def refuse_unsupported(pol: Policy, m: Monitoring) -> None:
    """Exit 2 for what a windowed run does not support, naming the control."""
    from fairpolicy.metrics.registry import lookup

    for c in pol.controls:
        try:
            kind = lookup(c.metric_key).kind
        except Exception:
            continue
        if kind in ("regression", "ranking"):
            raise UsageError(
                f"--window {m.spec.text}: control '{c.control_id}' measures a {kind} metric "
                f"({c.metric_key}); windows support classification, score and data-check "
                "metrics only.",
                key="--window",
                hint="run the regression/ranking controls without --window (a policy of "
                "their own), or slice the data per window yourself",
            )
        if "count" in c.inputs:
            raise UsageError(
                f"--window {m.spec.text}: control '{c.control_id}' reads a count table "
                "(input.count), which has no rows to cut into windows.",
                key="--window",
                hint="give the rows, or one count table per window",
            )


def windowed_bound(bound: Bound, m: Monitoring, available: list[str], file: str | None) -> Bound:
    """``bound`` with the window column read too (embedded) and grouped on (engines)."""
    col = m.spec.column
    if col not in available:
        from fairpolicy.errors import did_you_mean

        raise DataError(
            f"--window {m.spec.text}: the data has no column '{col}'."
            + did_you_mean(col, available),
            file=file or "<DataFrame>",
            column=col,
            hint=f"name the time (or period) column; the data has {', '.join(available[:12])}",
        )
    discrete = m.spec.period is None
    req = bound.request
    if discrete:
        req = dataclasses.replace(
            req,
            columns=(*req.columns, col) if col not in req.columns else req.columns,
            strings=req.strings | {col},
        )
    else:
        req = dataclasses.replace(req, window=m.spec)
    return dataclasses.replace(
        bound,
        columns=list(dict.fromkeys([*bound.columns, col])),
        strings=list(dict.fromkeys([*bound.strings, col])) if discrete else bound.strings,
        request=req,
    )


def split(
    table: Table, m: Monitoring, file: str | None
) -> tuple[list[tuple[str, NDArray[np.int64]]], int]:
    """Each window's label and entries (indices into ``table``), oldest first, and the
    rows in no window (an empty window column)."""
    codes, labels = entry_windows(table, m, file)
    small = len(labels) < np.iinfo(np.int16).max  # a radix sort, linear in the rows
    order = np.argsort(codes.astype(np.int16) if small else codes, kind="stable")
    counts = np.bincount(codes + 1, minlength=len(labels) + 1)
    outside_entries = order[: counts[0]]
    outside = (
        len(outside_entries) if table.weights is None else int(table.weights[outside_entries].sum())
    )
    bounds = np.cumsum(counts)
    windows = [(labels[i], order[bounds[i] : bounds[i + 1]]) for i in range(len(labels))]
    return windows, outside


def entry_windows(
    table: Table, m: Monitoring, file: str | None
) -> tuple[NDArray[np.int64], list[str]]:
    """Each entry's window index (-1: none) and the labels, oldest first (an engine's or
    a state's label column is taken out of the table)."""
    if KEY in table.columns:  # an engine grouped on the label
        codes, labels = window_keys(table.columns.pop(KEY), WindowSpec(KEY), file)
        refuse_bad_keys(labels, m.spec, file)
        return codes, labels
    return window_keys(table.columns[m.spec.column], m.spec, file)


def with_state(
    table: Table, m: Monitoring, pol: Policy, wanted: list[str], strings: list[str]
) -> tuple[Table, dict[str, Any]]:
    """``--state``: this run's rows reduced to per-window count tables, added to the
    state file, and the merged tables as one weighted table with its window labels."""
    import pyarrow as pa

    from fairpolicy.data import state as st

    path = Path(str(m.state))
    if table.sample_weights is not None or table.sum_flags:
        raise UsageError(
            f"--state {path}: the policy reads a weight column or a multi-column score, "
            "whose per-row parts a count table does not keep.",
            hint="run those controls without --state",
        )
    codes, labels = entry_windows(table, m, table.path)
    keep = [c for c in table.columns if c in wanted and c != KEY]
    inside = codes >= 0
    idx = pa.array(np.flatnonzero(inside), pa.int64())
    counts = np.ones(len(codes), np.int64) if table.weights is None else table.weights
    outside = int(counts[~inside].sum())
    label_arr = pa.array(
        np.asarray(labels, dtype=object)[codes[inside]] if labels else [], pa.string()
    )
    batch = pa.table(
        {
            **{c: _plain(table.columns[c].take(idx)) for c in keep},
            st.LABEL: label_arr,
            st.COUNT: pa.array(counts[inside], pa.int64()),
        }
    )
    batch = st.canonical(batch)
    header = {
        "policy_sha256": pol.sha256,
        "binding": {
            "window": m.spec.text,
            "tz": m.spec.tz if m.spec.period else None,
            "columns": keep,
            "strings": sorted(set(strings) & set(keep)),
            "types": [str(batch.schema.field(c).type) for c in keep],
        },
    }
    with st.locked(path):
        before = st.file_sha256(path) if path.is_file() else None
        state = st.read_state(path, header)
        added = st.add_batch(state, batch, outside)
        sha = st.write_state(state)
    merged = state.table
    assert merged is not None
    weights = np.asarray(merged.column(st.COUNT).to_numpy(), dtype=np.int64)
    out = dataclasses.replace(
        table,
        columns={
            **{c: merged.column(c) for c in keep},
            KEY: merged.column(st.LABEL),
        },
        rows=int(weights.sum()),
        weights=weights,
        sample_weights=None,
        sum_flags={},
        row_ids=None,
        source=None,
    )
    info = {
        "path": str(path),
        "sha256": sha,
        "batches": len(state.batches),
        "batch_sha256": added,
        "rows": int(weights.sum()),
        "rows_outside": int(state.header.get("rows_outside", 0)),
    }
    if before is not None:  # the state this run started from (None: a new state)
        info["sha256_before"] = before
    return out, info


def _plain(arr: Any) -> Any:
    """A dictionary-encoded column (CSV text) as its values: a state sorts and compares
    values, never dictionary codes."""
    import pyarrow as pa

    return arr.cast(arr.type.value_type) if pa.types.is_dictionary(arr.type) else arr


def take(table: Table, idx: NDArray[np.int64]) -> Table:
    """The entries ``idx`` of ``table`` as a table of their own; embedded entries keep
    their data-row numbers (``row_ids``), so messages name rows of the whole data."""
    import pyarrow as pa

    contiguous = len(idx) > 0 and int(idx[-1]) - int(idx[0]) + 1 == len(idx)
    if contiguous and bool(np.all(np.diff(idx) == 1)):  # a window of the sorted table
        lo, hi = int(idx[0]), int(idx[-1]) + 1
        columns = {c: a.slice(lo, hi - lo) for c, a in table.columns.items()}
    else:
        pidx = pa.array(idx, pa.int64())
        columns = {c: a.take(pidx) for c, a in table.columns.items()}
    weights = None if table.weights is None else table.weights[idx]
    rows = len(idx) if weights is None else int(weights.sum())
    row_ids = table.row_ids[idx] if table.row_ids is not None else None
    if table.weights is None and row_ids is None:
        row_ids = idx.astype(np.int64)
    return dataclasses.replace(
        table,
        columns=columns,
        rows=rows,
        weights=weights,
        sample_weights=None if table.sample_weights is None else table.sample_weights[idx],
        sum_flags={k: v[idx] for k, v in table.sum_flags.items()},
        row_ids=row_ids,
        warnings=[],
    )


def as_codes(table: Table, pol: Policy, strings: Sequence[str]) -> Table:
    """``table`` with its text group columns dictionary-encoded once, before the rows are
    gathered by window.

    Gathering a text column moves its bytes (seconds for 10M rows), and each window would
    then hash its slice again to encode its groups; a dictionary column gathers only its
    indices, and each window's groups are read from its slice of them
    (:func:`~fairpolicy.data.bind.groups.encode_group_column` keeps only the values some
    row of the window has). A column is left as text when two of its values differ only by
    surrounding spaces (the per-window note on them names the forms that window holds,
    which a shared dictionary would not tell) and when any control reads it in a role
    other than dimension or site (labels, scores and weights read the values)."""
    import pyarrow as pa

    from fairpolicy.data.kernels import call

    other = {
        col
        for c in pol.controls
        for role in c.inputs
        if role not in ("dimension", "site")
        for col in c.role_columns(role)
    }
    columns = dict(table.columns)
    for col in strings:
        arr = columns.get(col)
        if col in other or arr is None:
            continue
        if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
            continue
        encoded = call("dictionary_encode", arr)
        if isinstance(encoded, pa.ChunkedArray):
            encoded = encoded.combine_chunks()  # one dictionary for every chunk
        trimmed = call("utf8_trim_whitespace", encoded.dictionary)
        if len(call("unique", trimmed)) != len(trimmed):
            continue
        columns[col] = pa.chunked_array([encoded], type=encoded.type)
    return dataclasses.replace(table, columns=columns)


def _none() -> NDArray[np.int64]:
    return np.zeros(0, np.int64)


def pooled(
    windows: list[tuple[str, NDArray[np.int64]]], table: Table, m: Monitoring
) -> list[tuple[str, NDArray[np.int64], list[str]]]:
    """``--pool-windows``: each window under ``--min-window-rows`` pooled with the next
    ones until the pool has enough rows (a last pool short of it stays short)."""

    def rows(idx: NDArray[np.int64]) -> int:
        return len(idx) if table.weights is None else int(table.weights[idx].sum())

    if not m.pool or m.min_rows is None:
        return [(w, idx, []) for w, idx in windows]
    out: list[tuple[str, NDArray[np.int64], list[str]]] = []
    group: list[tuple[str, NDArray[np.int64]]] = []
    for w, idx in windows:
        group.append((w, idx))
        joined = np.concatenate([i for _, i in group])
        if rows(joined) >= m.min_rows:
            out.append(_pool(group))
            group = []
    if group:
        out.append(_pool(group))
    return out


def _pool(group: list[tuple[str, NDArray[np.int64]]]) -> tuple[str, NDArray[np.int64], list[str]]:
    if len(group) == 1:
        return group[0][0], group[0][1], []
    label = f"{group[0][0]}..{group[-1][0]}"
    return label, np.sort(np.concatenate([i for _, i in group])), [w for w, _ in group]


#: evaluates a policy on a table (with a window's count tables already built, or None):
#: its findings and warnings
Evaluate = Callable[[Table, Policy, Seed | None], tuple[list[Finding], list[str]]]


def _at_level(pol: Policy, t: int) -> tuple[Policy, float]:
    """The policy with every control's interval at window t's sequential level."""
    from fairpolicy.stats.sequential import window_level

    controls = []
    level = 0.0
    for c in pol.controls:
        alpha = 1.0 - float(c.params.get("ci_level", 0.95))
        level = window_level(t, alpha)
        ci = c.params.get("ci") or SEQUENTIAL_RESAMPLES
        controls.append(c.model_copy(update={"params": {**c.params, "ci": ci, "ci_level": level}}))
    return pol.model_copy(update={"controls": tuple(controls)}), level


def run_windows(
    table: Table,
    pol: Policy,
    m: Monitoring,
    record: RunRecord,
    evaluate: Evaluate,
    results_of: Callable[[Table, list[Finding], list[str]], Results],
    compare_with: Callable[[Results, Results], Results] | None,
    wanted: Sequence[str] = (),
    strings: Sequence[str] = (),
    limits: Limits | None = None,
) -> tuple[list[Finding], WindowsInfo, list[str]]:
    """Every control in every window; the gated findings, the windows, warnings."""
    file = table.path
    kept = None
    if m.state is not None:
        table, kept = with_state(table, m, pol, list(wanted), list(strings))
    windows, outside = split(table, m, file)
    if kept is not None:
        outside = int(kept["rows_outside"])
    # the rows sorted by window once: each window is then a slice of it (the period
    # window's timestamp column is not carried along unless a control reads it)
    if m.spec.period is not None and m.spec.column not in wanted:
        table = dataclasses.replace(
            table, columns={c: a for c, a in table.columns.items() if c != m.spec.column}
        )
    table = take(
        as_codes(table, pol, strings),
        np.concatenate([idx for _, idx in windows]) if windows else _none(),
    )
    starts = np.cumsum([0, *(len(idx) for _, idx in windows)])
    windows = [
        (w, np.arange(starts[i], starts[i + 1], dtype=np.int64)) for i, (w, _) in enumerate(windows)
    ]
    warnings: list[str] = []
    if outside:
        warnings.append(
            f"--window {m.spec.text}: {outside} row(s) have an empty '{m.spec.column}' and lie "
            "in no window"
        )
    if not windows:
        raise DataError(
            f"--window {m.spec.text}: no row has a value in column '{m.spec.column}'.",
            file=file or "<DataFrame>",
            column=m.spec.column,
        )
    reference = None
    if m.reference is not None:
        lo, hi = (window_order(x) for x in m.reference)
        inside = [idx for w, idx in windows if lo <= window_order(w) <= hi]
        if not inside:
            raise DataError(
                f"--reference {'..'.join(m.reference)}: no window of the data lies in that "
                f"range; the windows run from {windows[0][0]} to {windows[-1][0]}.",
                file=file or "<DataFrame>",
                column=m.spec.column,
                hint="give a range of window labels (first days, YYYY-MM-DD) inside the data",
            )
        ref_table = take(table, np.sort(np.concatenate(inside)))
        if m.gate != "sequential":  # under sequential: at each window's own level, below
            ref_findings, _ = evaluate(ref_table, pol, None)
            reference = results_of(ref_table, ref_findings, [])
    if m.gate == "sequential" and any(not c.params.get("ci") for c in pol.controls):
        warnings.append(
            f"--window-gate sequential: control(s) without ci get {SEQUENTIAL_RESAMPLES} "
            "resamples; each window's interval is computed at its own level 1 − α_t"
        )
    blocks: list[WindowResult] = []
    seen: dict[str, list[str]] = {}
    runs = pooled(windows, table, m)
    # every window's count tables from one count over (window, cell, classes)
    seeds = window_seeds(table, pol, _starts([idx for _, idx, _ in runs]), strings, limits)
    for t, (w, idx, members) in enumerate(runs, start=1):
        sub = take(table, idx)
        level = None
        wpol = pol
        if m.gate == "sequential":
            wpol, level = _at_level(pol, t)
        findings, notes = evaluate(sub, wpol, seeds[t - 1] if seeds else None)
        for n in notes:
            seen.setdefault(n, []).append(w)
        if compare_with is not None and m.reference is not None:
            if m.gate == "sequential":
                # the reference at the window's level: a change is the MOVER of two intervals
                # at one level, and the controls compared must have the same parameters
                ref_findings, _ = evaluate(ref_table, wpol, None)
                reference = results_of(ref_table, ref_findings, [])
            assert reference is not None
            findings = compare_with(results_of(sub, findings, []), reference).findings
        reason = None
        if m.min_rows is not None and sub.rows < m.min_rows:
            reason = (
                f"window {w} has {sub.rows} row(s), fewer than --min-window-rows {m.min_rows}: "
                "it cannot pass"
            )
            findings = [_short(f, reason) for f in findings]
        findings = [
            f.model_copy(
                update={"gate_effect": gate_effect(f, record.inconclusive, record.fail_on)}
            )
            for f in findings
        ]
        if m.gate == "sequential":  # what the alarm reads, decided in decide.alarm_interval
            findings = [
                f.model_copy(
                    update={
                        "details": {**f.details, "alarm_interval": alarm_interval(f).as_details()}
                    }
                )
                for f in findings
            ]
        blocks.append(
            WindowResult(
                window=w,
                rows=sub.rows,
                findings=findings,
                end=None if members else window_end(w, m.spec),
                level=level,
                pooled=members,
                reason=reason,
            )
        )
    warnings += [
        f"window {ws[0]}: {n}" if len(ws) == 1 else f"{len(ws)} windows (first {ws[0]}): {n}"
        for n, ws in seen.items()
    ]
    gated = [_gated(f.control_id, blocks, pol, m) for f in blocks[-1].findings]
    info = WindowsInfo(
        column=m.spec.column,
        period=m.spec.period,
        tz=m.spec.tz if m.spec.period else None,
        described=m.spec.describe(),
        gate=m.gate,
        windows=blocks,
        min_rows=m.min_rows,
        pool=m.pool,
        reference=None if m.reference is None else "..".join(m.reference),
        rows_outside=outside,
        state=kept,
    )
    return gated, info, warnings


def _starts(runs: list[NDArray[np.int64]]) -> list[int]:
    """Where each window's rows start in the sorted table (and where the last ends); []
    when the windows are not consecutive slices of it (then nothing is shared)."""
    starts = [0]
    for idx in runs:
        lo = starts[-1]
        if len(idx) == 0 or int(idx[0]) != lo or int(idx[-1]) != lo + len(idx) - 1:
            return []
        starts.append(lo + len(idx))
    return starts


def _short(f: Finding, reason: str) -> Finding:
    """A finding of a window with too few rows: inconclusive (an error stays an error)."""
    if f.status == "error":
        return f
    return f.model_copy(
        update={
            "status": "inconclusive",
            "reason": reason,
            "message": f"inconclusive: {reason} ({f.message})",
            "details": {**f.details, "window_short": True},
        }
    )


def _gated(cid: str, blocks: Sequence[WindowResult], pol: Policy, m: Monitoring) -> Finding:
    """Control ``cid``'s finding: the newest window's (``any``: the deciding window's),
    with the gate's status and reason."""
    control = next(c for c in pol.controls if c.control_id == cid)
    per = [(b.window, next(f for f in b.findings if f.control_id == cid)) for b in blocks]
    status, reason, at = window_gate(control, per, m.gate)
    deciding = next((f for w, f in per if w == at), per[-1][1])
    newest = per[-1][1]
    base = deciding if m.gate != "sequential" else newest
    update: dict[str, Any] = {
        "status": status,
        "message": f"{m.gate} window gate over {m.spec.describe()}: {reason}",
        "details": {
            **base.details,
            "window_gate": {"gate": m.gate, "window": at, "windows": len(per), "reason": reason},
        },
    }
    if status != "pass" and base.reason is None:
        update["reason"] = reason
    if m.gate == "sequential":
        update["change"] = None  # the alarm reads intervals; changes are per window
    return base.model_copy(update=update)
