"""The pipeline, in one direction: load → read → bind → count → measure → decide.

``check(policy, data)`` is the public entry point (re-exported as
``fairpolicy.check``). It reads like the pipeline: settle the options, prepare the
policy and pick the engine, read the bound columns, plan the controls, evaluate them,
assemble the results. Rows are scanned once per label binding: every control that reads
the same target/prediction pair shares one count table, and every dimension grouping of
those controls is a sum over its intersectional cells.

The run is split by what each step needs (issue 17), lowest first:

- :mod:`fairpolicy.assemble` — findings and provenance → ``Results`` (timestamps, the
  policy's documents, the run record);
- :mod:`fairpolicy.planning` — options, policy, controls → bindings → requests, with no
  row read (what ``validate``, ``plan`` and ``check`` share);
- :mod:`fairpolicy.evaluator` — the count tables, cached across controls, and their
  intervals and permutation tests;
- :mod:`fairpolicy.evaluation` — requests → findings (measure, decide);
- this module — :func:`check` and the one place the data is read (the embedded read with
  its speculative prefetch, or an engine's source).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Literal

from fairpolicy.assemble import assemble
from fairpolicy.data.bind.count_table import expand_counts
from fairpolicy.data.bind.weights import apply_weights
from fairpolicy.data.prefetch import WINDOW_ROLE, WINDOW_TEXT_ROLE, Prefetch
from fairpolicy.data.sources import Bound, Table, resolve_engine
from fairpolicy.data.sources.opened import Opened
from fairpolicy.evaluation import evaluate_all
from fairpolicy.evaluator import Evaluator
from fairpolicy.monitor import (
    Monitoring,
    monitoring,
    refuse_unsupported,
    run_windows,
    windowed_bound,
)
from fairpolicy.planning import (
    Settings,
    engine_request,
    one_column_notes,
    plan_controls,
    policy_columns,
    prefetchable,
    prepare_policy,
    settle,
)
from fairpolicy.policy.binds import Binds, refuse_moves
from fairpolicy.policy.schema import Policy
from fairpolicy.results import FailOn, Finding, InconclusivePolicy, Results
from fairpolicy.window_counts import Seed


def check(
    policy: Any,
    data: Any,
    *,
    bind: Mapping[str, str] | Binds | None = None,
    rename: Mapping[str, str] | None = None,
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
    baseline: str | os.PathLike[str] | Results | None = None,
    max_regression: float | str | None = None,
    allow_policy_change: bool = False,
    strict: bool = False,
    subject: str | None = None,
    meta: Mapping[str, str] | None = None,
    max_regression_source: Literal["flag", "config", "api"] = "api",
    positive_label: str | None = None,
    window: str | None = None,
    window_tz: str | None = None,
    window_gate: str | None = None,
    min_window_rows: int | None = None,
    pool_windows: bool = False,
    reference: str | None = None,
    state: str | os.PathLike[str] | None = None,
) -> Results:
    """Evaluate every control of ``policy`` on ``data``.

    ``policy``: a path to a YAML/JSON policy, a parsed mapping/list, or a
    :class:`~fairpolicy.policy.schema.Policy`. ``data``: a path to a CSV or
    Parquet file, a glob of such files (``data/*.parquet``; DuckDB or Spark), a
    pandas or polars DataFrame, a pyarrow Table, a DuckDB relation (``duckdb.sql(...)``)
    or any table exporting the Arrow C stream (all evaluated in memory), or a pyspark
    DataFrame (evaluated by Spark where it lives); anything else is a
    :class:`~fairpolicy.errors.UsageError`. The same rows give the same findings whatever
    the input type.
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
    ``baseline``: a results JSON of an earlier run (``--baseline``), or its ``Results``:
    every finding gets its change against it, and ``max_regression`` fails a control that
    got worse by more than it — or a control's own ``max_regression`` (the policy) where
    that is stricter: the stricter applies, never the looser (:mod:`fairpolicy.baseline`);
    ``max_regression_source`` names where it came from in the results (``api``; the
    command line passes ``flag`` or ``config``);
    ``allow_policy_change`` compares with a baseline of another policy version.
    ``strict`` (``--strict``): the policy must be valid OSCAL; by default what NIST's
    schema would reject in an OSCAL-shaped document is one warning and it is evaluated.
    ``subject`` (``--subject``): the assessed system's title; ``meta`` (``--meta``): run
    metadata (git SHA, ticket, reviewer); both are recorded in the results and shown by
    every report.
    ``positive_label`` (``--positive-label``): the positive (favourable or selected)
    label of every control that does not name its own; it wins over the policy-wide
    ``metadata.props`` value, and the results' warnings say which applied to which control.
    ``window`` (``--window COLUMN=PERIOD`` or ``COLUMN``), ``window_tz``, ``window_gate``
    (``last``, ``any``, ``sequential``: the default), ``min_window_rows``, ``pool_windows``
    ``reference`` (``FROM..TO``) and ``state`` (a file of the windows' count tables, kept
    between runs: :mod:`fairpolicy.data.state`): a monitoring run, every control in every window
    (:mod:`fairpolicy.monitor`; the results' ``windows``).
    ``bind``: role → column for every control (``{"dimension": "gender"}``) or, keyed
    ``"CONTROL:ROLE"``, for one control (``--bind``); ``rename``: a column the policy names
    → the data's name for it, wherever a control reads it (``--rename``). Every control
    whose columns they changed is named in the results (its finding's ``bind_changes``
    and a warning).
    Raises a :class:`FairpolicyError` when the policy or data cannot be read at
    all; per-control problems (missing column, invalid labels) become findings
    with status ``error``.
    """
    from fairpolicy.results import run_metadata

    about = dict(zip(("subject", "meta"), run_metadata(subject, meta), strict=True))
    s = settle(
        data,
        bind=bind,
        rename=rename,
        num_classes=num_classes,
        inconclusive=inconclusive,
        fail_on=fail_on,
        deterministic=deterministic,
        bootstrap=bootstrap,
        ci_level=ci_level,
        ci_method=ci_method,
        resample=resample,
        decision=decision,
        p_value=p_value,
        bonferroni=bonferroni,
        seed=seed,
        engine=engine,
        memory_budget=memory_budget,
        score_decimals=score_decimals,
        max_rows=max_rows,
        timestamp=timestamp,
        max_groups=max_groups,
        max_classes=max_classes,
        max_resamples=max_resamples,
        max_cells=max_cells,
        max_resample_seconds=max_resample_seconds,
        allow_paths=allow_paths,
        strict=strict,
        positive_label=positive_label,
    )
    mon = monitoring(
        window, window_tz, window_gate, min_window_rows, pool_windows, reference,
        None if state is None else os.fspath(state),
    )  # fmt: skip
    if mon is not None:
        s = _monitored(s, mon, baseline)
    referenced = mon is not None and mon.reference is not None
    old = _baseline(baseline, None if referenced else max_regression)
    opened = _open(policy, data, s, mon)
    pol, decimals, engine_name, notes = _prepare(policy, opened, s)
    if mon is not None:
        try:
            refuse_unsupported(pol, mon)
        except BaseException:
            opened.wait()
            raise
    against = (
        None if mon is None else _against_reference(mon, max_regression, max_regression_source)
    )
    results = _evaluate(opened, pol, engine_name, decimals, s, notes, progress, mon, against)
    if about["subject"] is not None or about["meta"]:
        results = results.model_copy(update=about)
    if referenced:
        return results
    return _compare(
        results, pol, old, baseline, max_regression, max_regression_source, allow_policy_change
    )


def _monitored(s: Settings, mon: Monitoring, baseline: Any) -> Settings:
    """The settings of a monitoring run, its window options recorded."""
    from fairpolicy.errors import UsageError

    if baseline is not None:
        raise UsageError(
            "--baseline compares one run with another; a monitoring run (--window) compares "
            "each window with a reference period of its own data.",
            hint="pass --reference FROM..TO instead of --baseline",
        )
    options = {**s.record.options, **{k: v for k, v in mon.as_options().items() if v}}
    return dataclasses.replace(s, record=dataclasses.replace(s.record, options=options))


def _against_reference(
    mon: Monitoring,
    max_regression: float | str | None,
    source: Literal["flag", "config", "api"],
) -> Callable[[Results, Results], Results] | None:
    """``--reference``: each window's results compared with the reference period's, as
    with a baseline (:func:`fairpolicy.baseline.compare`)."""
    if mon.reference is None:
        return None
    import hashlib

    from fairpolicy.baseline import check_max_regression, compare

    if max_regression is not None:
        check_max_regression(max_regression, "--max-regression")

    def against(new: Results, ref: Results) -> Results:
        return compare(
            new,
            ref,
            path=f"--reference {'..'.join(mon.reference or ())}",
            sha256=hashlib.sha256(ref.to_json().encode()).hexdigest(),
            max_regression=max_regression,
            max_regression_source=source,
        )

    return against


def _open(policy: Any, data: Any, s: Settings, mon: Monitoring | None = None) -> Opened:
    """Step 1: the data, opened once; its speculative read starts now, beside the policy's
    validation (data/prefetch.py), with a monitoring run's window column."""
    opened = Opened(data, s.budget)
    opened.start_prefetch(lambda: _prefetch(policy, data, s, mon))
    return opened


def _prepare(policy: Any, opened: Opened, s: Settings) -> tuple[Policy, int, str, list[str]]:
    """Step 2: the policy with the run's overrides, its score grid, and the engine (chosen
    from the data's header and size)."""
    try:
        pol, decimals = prepare_policy(policy, s)
        engine_name, notes = opened.engine(
            s.engine, lambda: policy_columns(pol, opened.columns())[0], resolve_engine
        )
    except BaseException:
        opened.wait()
        raise
    return pol, decimals, engine_name, notes


def _evaluate(
    opened: Opened,
    pol: Policy,
    engine_name: str,
    decimals: int,
    s: Settings,
    notes: list[str],
    progress: Callable[[str, int, int], None] | None,
    mon: Monitoring | None = None,
    against: Callable[[Results, Results], Results] | None = None,
) -> Results:
    """Step 3: read the bound columns, plan and evaluate every control (in every window
    of a monitoring run), assemble."""
    if progress:
        progress("reading data", 0, 0)
    rounded = engine_name in ("duckdb", "spark")
    grid_used = False

    def evaluate(
        table: Table, p: Policy, seed: Seed | None = None
    ) -> tuple[list[Finding], list[str], Evaluator]:
        nonlocal grid_used
        plans = plan_controls(p, table)
        ev = Evaluator(
            table,
            s.record.seed,
            strings,
            decimals if rounded else None,
            grid=decimals,
            limits=s.caps,
            exact_box=mon is not None and mon.gate == "sequential",
        )
        if seed is not None:  # a window's count tables, cut from the run's one count
            seed.apply(ev)
        findings = evaluate_all(plans, ev, progress if mon is None else None)
        grid_used = grid_used or ev.grid_used
        return findings, ev.warnings, ev

    def results_of(table: Table, findings: list[Finding], warnings: list[str]) -> Results:
        return assemble(
            s.record,
            pol,
            table,
            read,
            findings,
            engine=engine_name,
            score_decimals=decimals if rounded or grid_used else None,
            warnings=[*one_column_notes(pol), *notes, *table.warnings, *warnings],
        )

    with _read(opened, pol, engine_name, decimals, s, mon) as (table, strings, wanted):
        refuse_moves(pol, table.available, table.path)
        if mon is None:
            findings, warnings, ev = evaluate(table, pol)
            read = _columns_read(wanted, table, ev)
        else:
            read = [c for c in wanted if c in set(table.read or table.columns)]
            findings, info, warnings = run_windows(
                table,
                pol,
                mon,
                s.record,
                lambda t, p, seed: evaluate(t, p, seed)[:2],
                results_of,
                against,
                wanted,
                strings,
                limits=s.caps,
            )
    if progress:
        progress("done", len(findings), len(findings))
    results = results_of(table, findings, warnings)
    return results if mon is None else results.model_copy(update={"windows": info})


def _compare(
    results: Results,
    pol: Policy,
    old: tuple[Results, str] | None,
    baseline: str | os.PathLike[str] | Results | None,
    max_regression: float | str | None,
    max_regression_source: Literal["flag", "config", "api"],
    allow_policy_change: bool,
) -> Results:
    """Step 4: the change of every finding against the baseline (--baseline)."""
    if old is None:
        if any(c.params.get("max_regression") is not None for c in pol.controls):
            note = (
                "max_regression is set in the policy but no --baseline was given: no control "
                "was checked for a regression"
            )
            return results.model_copy(update={"warnings": [*results.warnings, note]})
        return results
    from fairpolicy.baseline import compare

    return compare(
        results,
        old[0],
        path="(Results)" if isinstance(baseline, Results) else os.fspath(baseline or ""),
        sha256=old[1],
        max_regression=max_regression,
        max_regression_source=max_regression_source,
        allow_policy_change=allow_policy_change,
    )


def _baseline(
    path: str | os.PathLike[str] | Results | None, max_regression: float | str | None
) -> tuple[Results, str] | None:
    """The baseline results and hash, read (and δ checked) before any data is."""
    if path is None and max_regression is None:
        return None  # fairpolicy.baseline not imported
    import hashlib

    from fairpolicy.baseline import check_max_regression, load_baseline
    from fairpolicy.errors import UsageError

    if max_regression is not None:
        check_max_regression(max_regression, "--max-regression")
        if path is None:
            raise UsageError(
                "--max-regression needs --baseline: there is no earlier result to compare with.",
                hint="pass --baseline RESULTS.json (written by `fairpolicy check -o json`).",
            )
    if path is None:
        return None
    if isinstance(path, Results):  # the Python API: an earlier run's Results
        return path, hashlib.sha256(path.to_json().encode()).hexdigest()
    return load_baseline(os.fspath(path))


def _prefetch(
    policy: Any, data: Any, s: Settings, mon: Monitoring | None = None
) -> Prefetch | None:
    """The speculative read — only for the embedded engine and a file small enough that
    reading it cannot hurt (with no --max-rows or --memory-budget: those limits are
    checked by the real read). A monitoring run's window column is read with the rest
    (as text for a discrete window), else the prefetch is thrown away and read again."""
    speculate = (
        s.max_rows is None and s.memory_budget is None and prefetchable(s.engine, data, s.budget)
    )
    pairs = s.bind.prefetch_pairs()
    if mon is not None:
        pairs[WINDOW_ROLE if mon.spec.period else WINDOW_TEXT_ROLE] = mon.spec.column
    return Prefetch.start(policy, data, pairs) if speculate else None


def _columns_read(wanted: list[str], table: Table, ev: Evaluator) -> list[str]:
    """The columns the run read: the table's, and on an engine also those its own
    aggregations read (regression and ranking tuples, pushed-down sums), in the policy's
    order, as the embedded reader lists them."""
    read = list(table.read or table.columns)
    read += [c for t in ev.subtables.values() for c in (t.read or t.columns)]
    read += ev.pushed
    return [c for c in wanted if c in set(read)]


@contextmanager
def _read(
    opened: Opened,
    pol: Policy,
    engine_name: str,
    decimals: int,
    s: Settings,
    mon: Monitoring | None = None,
) -> Iterator[tuple[Table, list[str], list[str]]]:
    """The bound columns as a table (the prefetched one when it read what is needed), the
    columns read as text, and the bound columns in the policy's order; the source the
    opened data picked for the engine is closed on exit. A monitoring run reads its window
    column too (engines: group on each row's window)."""
    with opened.open(engine_name) as source:
        wanted, strings = policy_columns(pol, source.available)
        bound = Bound(
            wanted,
            strings,
            engine_request(pol, source.available, strings, decimals),
            max_rows=s.max_rows,
            memory_budget=None if s.memory_budget is None else s.budget,
        )
        if mon is not None:
            bound = windowed_bound(bound, mon, source.available, source.path)
        table = source.read(bound)
        yield apply_weights(expand_counts(table, pol), pol), bound.strings, wanted
