"""Resource limits: the embedded engine's memory guard, ``--max-rows``, and the caps on
the work a policy asks for.

The memory guard (embedded engine) compares what reading adds, estimated as the engines
do (:func:`fairpolicy.data.sources.estimate_embedded_peak`: 56 B per row and bound
column, measured; the base is the running process itself) plus the bound columns' text,
with what is left: of ``--memory-budget`` when given, else of the memory the machine (or
its cgroup) has available. Over it is a clear error suggesting the out-of-core engine,
not an OOM kill. The CSV's pre-read scan is :mod:`fairpolicy.data.sources.csv_guard`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from fairpolicy.errors import DataError
from fairpolicy.records import lean

#: the embedded engine's estimated peak memory: this many bytes per row and bound column,
#: plus a base (measured by ``benchmarks/duckdb_scale.py``)
EMBEDDED_BYTES_PER_CELL = 56
EMBEDDED_BASE_BYTES = 300 << 20


def human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if n < 1024 or unit == "EiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError  # pragma: no cover


def available_memory() -> int | None:
    """Bytes this process can still use: MemAvailable, capped by a cgroup limit."""
    found: list[int] = []
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    found.append(int(line.split()[1]) * 1024)
    except (OSError, ValueError, IndexError):
        pass
    for limit, usage in (
        ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
        (
            "/sys/fs/cgroup/memory/memory.limit_in_bytes",
            "/sys/fs/cgroup/memory/memory.usage_in_bytes",
        ),
    ):
        try:
            cap = Path(limit).read_text().strip()
            used = int(Path(usage).read_text().strip())
        except (OSError, ValueError):
            continue
        if cap.isdigit() and int(cap) < 1 << 60:
            found.append(max(int(cap) - used, 0))
        break
    return min(found) if found else None


def check_rows(rows: int, max_rows: int | None, file: str, *, exact: bool = True) -> None:
    """DataError when ``rows`` (a count, or with ``exact=False`` a count stopped early)
    exceeds ``max_rows``."""
    if max_rows is not None and rows > max_rows:
        counted = f"{rows} rows, " if exact else ""
        raise DataError(
            f"the data has {counted}more than {max_rows} rows (--max-rows {max_rows}).",
            file=file,
            hint="raise --max-rows, or evaluate a sample or a partition of the data.",
        )


def estimate_bytes(rows: int, columns: int, text_bytes: int = 0) -> int:
    """Bytes the embedded engine adds to the running process for ``columns`` bound columns
    of ``rows`` rows: the engines' measured per-cell cost, plus the bound columns' text
    (long group names cost what they weigh)."""
    return EMBEDDED_BYTES_PER_CELL * rows * max(columns, 1) + text_bytes


def resident_bytes() -> int:
    """This process's resident memory (0 when the platform does not say)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            pages = int(fh.read().split()[1])
        import os

        return pages * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        return 0


def check_memory(
    rows: int, columns: int, budget: int | None, file: str, text_bytes: int = 0
) -> None:
    """DataError when reading ``columns`` bound columns of ``rows`` rows (``text_bytes``
    of their text) would take more than what is left of ``budget`` (the process's own
    memory counts against it) or, without a budget, more than the memory available (no
    guard when that is unknown)."""
    need = estimate_bytes(rows, columns, text_bytes)
    if budget is None:
        left, source = available_memory(), "the memory available"
    else:
        used = resident_bytes()
        left = budget - used
        source = f"what is left of --memory-budget {human(budget)} beside {human(used)} in use"
    if left is None or need <= left:
        return
    raise DataError(
        f"the embedded engine would need an estimated {human(need)} for {columns} bound "
        f"column(s) of about {rows} rows, more than {human(max(left, 0))} ({source}).",
        file=file,
        hint="run with --engine duckdb (out of core, spills to disk; pip install duckdb), "
        "or evaluate a sample or partition of the data.",
    )


# ---------------------------------------------------------------- work a policy asks for
#
# A policy file is input: every count it controls that drives time or memory has a cap,
# checked before the work starts, with a message that states the estimated cost and the
# flag (``check`` keyword) that raises the cap.

#: defaults of ``--max-groups``, ``--max-classes``, ``--max-resamples``, ``--max-cells``,
#: ``--max-resample-seconds``
DEFAULT_MAX_GROUPS = 10_000
DEFAULT_MAX_CLASSES = 1_000
DEFAULT_MAX_RESAMPLES = 100_000
DEFAULT_MAX_CELLS = 20_000_000
DEFAULT_MAX_RESAMPLE_SECONDS = 600

#: measured cost of one resample (seconds): a fixed part, a part per cell of the count
#: table (groups × classes² + score, regression and ranking cells) and a part per pair of
#: groups (the permutation test's per-group p-values compare each group with the rest).
#: Embedded engine, one core of the 2-core CI machine, demographic parity, binary labels:
#: bootstrap 4 µs/resample on 2 groups, 0.92 ms on 1,000; permutations 36 µs on 2 groups
#: in the statistics alone (issue 13's whole run: 1e8 permutations in ~3.5 h, 126 µs
#: each, the fixed part used here), 52 ms on 1,000 groups, 9.4 s on 10,000 (quadratic).
BOOTSTRAP_SECONDS = (4e-6, 2.5e-7, 0.0)
PERMUTATION_SECONDS = (1.2e-4, 2.5e-6, 9.5e-8)


@lean
class Limits:
    """Caps on the work a policy (or the command line) can ask for; each has a flag."""

    max_groups: int = DEFAULT_MAX_GROUPS
    max_classes: int = DEFAULT_MAX_CLASSES
    max_resamples: int = DEFAULT_MAX_RESAMPLES
    max_cells: int = DEFAULT_MAX_CELLS
    max_resample_seconds: int = DEFAULT_MAX_RESAMPLE_SECONDS

    #: the command-line flag of each cap, as the messages name it
    FLAGS: ClassVar[dict[str, str]] = {
        "max_groups": "--max-groups",
        "max_classes": "--max-classes",
        "max_resamples": "--max-resamples",
        "max_cells": "--max-cells",
        "max_resample_seconds": "--max-resample-seconds",
    }

    @classmethod
    def of(cls, **given: int | None) -> Limits:
        """The caps given (None: the default), each a whole number ≥ 1 (UsageError)."""
        from fairpolicy.errors import UsageError

        values: dict[str, int] = {}
        for name, value in given.items():
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise UsageError(
                    f"{cls.FLAGS[name]} must be a whole number of at least 1, got {value!r}."
                )
            values[name] = value
        return cls(**values)


def duration(seconds: float) -> str:
    """A rough human duration: '40 s', '12 min', '3.5 h', '9 days'."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    if seconds < 172_800:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:,.0f} days"


def resample_seconds(kind: str, resamples: int, cells: int, groups: int = 2) -> float:
    """The estimated time of ``resamples`` bootstrap replicates or permutations of a
    count table of ``cells`` cells over ``groups`` groups (:data:`BOOTSTRAP_SECONDS`)."""
    fixed, per_cell, per_pair = BOOTSTRAP_SECONDS if kind == "ci" else PERMUTATION_SECONDS
    return resamples * (fixed + per_cell * cells + per_pair * groups * groups)


_WHAT = {"ci": "bootstrap resamples", "p_value": "permutations", "num_classes": "classes"}
_OPTION = {"ci": "--bootstrap", "p_value": "--p-value", "num_classes": "--num-classes"}


def check_requested(
    name: str,
    value: int,
    limits: Limits,
    *,
    file: str | None = None,
    control: str | None = None,
    from_flag: bool = False,
) -> None:
    """Refuse, before any data is read, a resample count (``ci``, ``p_value``) or a
    declared class count (``num_classes``) above its cap. ``from_flag``: the value came
    from the command line (a UsageError naming the option), else from the policy (a
    PolicyError naming the file, control and key)."""
    from fairpolicy.errors import PolicyError, Problem, UsageError

    if name == "num_classes":
        cap, flag = limits.max_classes, Limits.FLAGS["max_classes"]
        if value <= cap:
            return
        cost = (
            f"a count table of {value:,}² = {value * value:,} cells per group "
            f"(~{human(8.0 * value * value)} per group)"
        )
    else:
        cap, flag = limits.max_resamples, Limits.FLAGS["max_resamples"]
        if value <= cap:
            return
        # the smallest table there is: 2 groups × 2 classes² = 8 cells
        cost = f"at least ~{duration(resample_seconds(name, value, 8))}"
        if name == "ci":  # every replicate of the count table is held at once
            cost += f" and ~{human(8.0 * 8 * value)} of memory"
        cost += " even on two groups"
    what = _WHAT[name]
    message = (
        f"{value:,} {what} is more than the limit of {cap:,} ({flag} {cap}); it would take {cost}."
    )
    hint = f"use fewer {what}, or raise the limit with {flag} N if this is intended."
    if from_flag:
        raise UsageError(f"{_OPTION[name]} {value}: {message} Fix: {hint}")
    raise PolicyError(Problem(message, file=file, control=control, key=name, hint=hint))


def check_groups(
    groups: int, columns: str, limits: Limits, file: str | None, control: str | None = None
) -> None:
    """Refuse more distinct groups than ``--max-groups``."""
    if groups <= limits.max_groups:
        return
    raise DataError(
        f"'{columns}' has {groups:,} distinct groups, more than the limit of "
        f"{limits.max_groups:,} (--max-groups {limits.max_groups}); a fairness gate over that "
        "many groups compares mostly tiny groups, and its reports grow with each one.",
        file=file,
        control=control,
        column=columns,
        hint="bind a coarser column (or bucket this one), or raise --max-groups if every "
        "group is meant to be compared.",
    )


def check_classes(
    classes: int, column: str, limits: Limits, file: str | None, control: str
) -> None:
    """Refuse more distinct classes than ``--max-classes`` (the count table is K² per group)."""
    if classes <= limits.max_classes:
        return
    raise DataError(
        f"'{column}' has {classes:,} distinct classes, more than the limit of "
        f"{limits.max_classes:,} (--max-classes {limits.max_classes}); the count table holds "
        f"{classes:,}² cells per group (~{human(8.0 * classes * classes)} per group).",
        file=file,
        control=control,
        column=column,
        hint="bind the class-label columns (not an id or a score), or raise --max-classes.",
    )


def check_cells(
    cells: int, what: str, limits: Limits, file: str | None, control: str | None
) -> None:
    """Refuse a count table of more than ``--max-cells`` cells before it is allocated."""
    if cells <= limits.max_cells:
        return
    raise DataError(
        f"{what} would hold {cells:,} cells (~{human(8.0 * cells)}), more than the limit of "
        f"{limits.max_cells:,} (--max-cells {limits.max_cells}).",
        file=file,
        control=control,
        hint="bind fewer or coarser dimension columns, or raise --max-cells.",
    )


def check_resampling(
    kind: str,
    resamples: int,
    cells: int,
    groups: int,
    limits: Limits,
    file: str | None,
    control: str | None,
) -> None:
    """Refuse, before it starts, resampling over its caps: a bootstrap whose replicates
    (resamples × cells, all held at once) exceed ``--max-cells``, or any resampling whose
    estimated time (:func:`resample_seconds`) exceeds ``--max-resample-seconds``."""
    what = _WHAT[kind]
    seconds = resample_seconds(kind, resamples, cells, groups)
    work = resamples * cells
    if kind == "ci" and work > limits.max_cells:
        raise DataError(
            f"{resamples:,} {what} × {cells:,} cells of the count table = {work:,} resampled "
            f"cells (~{human(8.0 * work)} of replicates held at once), more than the limit "
            f"of {limits.max_cells:,} (--max-cells {limits.max_cells}); an estimated "
            f"~{duration(seconds)}.",
            file=file,
            control=control,
            key=kind,
            hint=f"use fewer {what} or fewer/coarser groups, or raise --max-cells.",
        )
    if seconds > limits.max_resample_seconds:
        raise DataError(
            f"{resamples:,} {what} of a count table of {cells:,} cells over {groups:,} "
            f"groups would run an estimated ~{duration(seconds)}, more than the limit of "
            f"{limits.max_resample_seconds:,} s (--max-resample-seconds "
            f"{limits.max_resample_seconds}).",
            file=file,
            control=control,
            key=kind,
            hint=f"use fewer {what} or fewer/coarser groups, or raise "
            "--max-resample-seconds if the wait is intended.",
        )


def resampled_cells(stats: Any) -> int:
    """The cells one resample of ``stats`` (a GroupStats) draws: the count table plus the
    score, regression and ranking cells it carries."""
    cells = int(stats.counts.size) or len(stats.groups)
    if stats.scores is not None:
        cells += sum(int(c.size) for per_group in stats.scores.counts for c in per_group)
    if stats.regression is not None and stats.regression.cells is not None:
        cells += sum(len(c.counts) for c in stats.regression.cells)
    if stats.ranking is not None:
        cells += len(stats.ranking.order)
    return cells
