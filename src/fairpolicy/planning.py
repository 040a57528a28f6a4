"""Planning: policy → controls → bindings → requests, before any row is read.

:func:`settle` validates the run's options (a :class:`Settings`); :func:`prepare_policy`
loads the policy, applies the command line's overrides (:func:`apply_overrides`) and
checks the work it asks for against the caps; :func:`plan_controls` binds each control's
roles to the table's columns (one :class:`Plan` per control, with the binding key that
lets controls share one count table, or the binding error); :func:`engine_request` is
the aggregation an engine runs. This is the part ``validate``, ``plan`` and ``check``
share; :mod:`fairpolicy.evaluation` takes the plans from here.
"""

from __future__ import annotations

import os
import time
from collections.abc import Collection, Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

from fairpolicy.assemble import RunRecord, fixed_timestamp, now
from fairpolicy.data import limits as _limits
from fairpolicy.data.bind.label_types import LabelKey
from fairpolicy.data.bind.roles import same_column_problems
from fairpolicy.data.bind.rows import missing_column_problem
from fairpolicy.data.bind.scores import score_column_names
from fairpolicy.data.bind.weights import weight_problems
from fairpolicy.data.limits import Limits
from fairpolicy.data.prefetch import MEASURED_ROLES, bound_columns
from fairpolicy.data.sources import Request, Table, default_memory_budget, parse_size
from fairpolicy.errors import BindingError, FairpolicyError, Problem, UsageError
from fairpolicy.gate_settings import DEFAULT_SEED as DEFAULT_SEED
from fairpolicy.metrics.base import MetricSpec
from fairpolicy.metrics.registry import lookup
from fairpolicy.policy.binds import Binds, apply_binds, binds_from_api
from fairpolicy.policy.schema import Control, Policy
from fairpolicy.records import lean
from fairpolicy.results import (
    FailOn,
    InconclusivePolicy,
)

#: where a default the run gives every control (``--positive-label``) is said to come from
RUN_DEFAULT = "command line (--positive-label, or positive_label= in Python / the config)"


def apply_overrides(
    policy: Policy,
    bind: Binds | Mapping[str, str] | None,
    num_classes: int | None,
    params: Mapping[str, Any] | None = None,
    positive_label: str | None = None,
) -> Policy:
    """``--bind``/``--rename`` (:func:`fairpolicy.policy.binds.apply_binds`: every changed
    control recorded), ``--num-classes`` and the statistics options (``ci``, ``decision``,
    ...) applied to every control; the command line wins over the policy.
    ``positive_label`` (``--positive-label``) is a default: a control's own value (or its
    ``positive_label.target``/``.prediction``) wins, and it wins over the policy-wide
    ``metadata.props`` value; the results say which applied where."""
    if positive_label is not None:
        policy = _default_label(policy, positive_label)
    policy = _label_note(policy)
    binds = bind if isinstance(bind, Binds) else binds_from_api(bind)
    if not binds and num_classes is None and not params:
        return policy
    policy = apply_binds(policy, binds)
    extra = dict(params or {})
    if num_classes is not None:
        extra["num_classes"] = num_classes
    if not extra:
        return policy
    controls = [c.model_copy(update={"params": {**c.params, **extra}}) for c in policy.controls]
    return policy.model_copy(update={"controls": tuple(controls)})


def _own(policy: Policy, control: Control, name: str) -> bool:
    """The control wrote ``name`` itself (not a policy-wide or run default)."""
    where = policy.prop_where.get(control.control_id, {}).get(name, "")
    return name in control.params and "policy-wide" not in where and where != RUN_DEFAULT


def _default_label(policy: Policy, label: str) -> Policy:
    controls, where = [], {k: dict(v) for k, v in policy.prop_where.items()}
    for c in policy.controls:
        if any(_own(policy, c, n) for n in ("positive_label", *LABEL_PAIR)):
            controls.append(c)
            continue
        controls.append(c.model_copy(update={"params": {**c.params, "positive_label": label}}))
        where.setdefault(c.control_id, {})["positive_label"] = RUN_DEFAULT
    return policy.model_copy(update={"controls": tuple(controls), "prop_where": where})


#: a control's per-column positive labels
LABEL_PAIR = ("positive_label.target", "positive_label.prediction")


def _label_note(policy: Policy) -> Policy:
    """One note naming which positive_label applied to which control, when a policy-wide
    or run default gave one (a control's own value is its own business)."""
    by: dict[tuple[str, str], list[str]] = {}
    for c in policy.controls:
        if c.params.get("positive_label") is None:
            continue
        where = policy.prop_where.get(c.control_id, {}).get("positive_label", "")
        origin = (
            "the run's positive_label option (--positive-label, the config file or the API)"
            if where == RUN_DEFAULT
            else "the policy-wide metadata.props"
            if "policy-wide" in where
            else "the control's own prop"
        )
        by.setdefault((str(c.params["positive_label"]), origin), []).append(c.control_id)
    if not any(o != "the control's own prop" for _, o in by):
        return policy
    parts = [f"'{label}' from {origin} for {', '.join(ids)}" for (label, origin), ids in by.items()]
    note = "positive_label: " + "; ".join(parts)
    if note in policy.warnings:
        return policy
    return policy.model_copy(update={"warnings": (*policy.warnings, note)})


def label_key(control: Control, spec: MetricSpec) -> LabelKey:
    p = control.params
    i = control.inputs
    # a metric of the predictions alone may have no target (it is not read): the
    # prediction stands in; without a prediction, the target is read in its place (a data
    # audit of the labels, as for class balance)
    target = i.get("target", i.get("prediction"))
    assert target is not None  # planning checked the declared roles
    # a metric of the target alone (class balance, l-diversity, t-closeness) does not read
    # a prediction bound for every control (--bind prediction=…): its count table is the
    # target's, so the prediction's labels, missing values and vocabulary never stop it
    reads_prediction = spec.needs_scores or "prediction" in (
        *spec.inputs,
        *spec.one_of,
        *spec.optional,
    )
    return LabelKey(
        target=target,
        prediction=i.get("prediction", target) if reads_prediction else target,
        score=control.inputs.get("score"),
        positive_label=None if p.get("positive_label") is None else str(p["positive_label"]),
        num_classes=p.get("num_classes"),
        missing=control.missing,
        binary="multiclass" not in spec.tasks,
        classes=None if p.get("classes") is None else str(p["classes"]),
        positive_target=_text(p.get("positive_label.target")),
        positive_prediction=_text(p.get("positive_label.prediction")),
    )


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


@lean(frozen=False)
class Plan:
    control: Control
    spec: MetricSpec
    #: what rows this control's statistics share with others: a LabelKey for
    #: classification, a tuple naming the bound columns for the other kinds
    key: Hashable | None = None
    error: FairpolicyError | None = None


def plan_key(control: Control, spec: MetricSpec) -> Hashable:
    i = control.inputs
    if spec.column_counts is not None:  # the data-quality metrics: counts per column
        role = spec.column_role or ""
        return ("columns", spec.column_counts, control.role_columns(role) or None)
    if spec.kind == "classification":
        return label_key(control, spec)
    if spec.kind == "regression":
        return ("regression", i["target"], i["prediction"], control.missing)
    if spec.kind == "ranking":
        by = ("rank", i["rank"]) if "rank" in i else ("score", i["score"])
        return ("ranking", *by, control.missing)
    return ("data",)


def one_column_notes(policy: Policy) -> list[str]:
    """A selection-rate metric (which reads only predictions) may bind target and prediction
    to one column on purpose (an LL144 selection column); say so, since bound by mistake it
    measures the labels' base rates, not the model's decisions."""
    from fairpolicy.data.bind.roles import prediction_only

    same = [
        f"control '{c.control_id}': target and prediction are both bound to column "
        f"'{c.inputs['target']}': {c.metric_key} then compares the groups' rates of that "
        "column, not the model's predictions (meant for a selection column; otherwise bind "
        "input.prediction to the predictions)"
        for c in policy.controls
        if c.inputs.get("target") is not None
        and c.inputs.get("prediction") == c.inputs.get("target")
        and prediction_only(c)
    ]
    # a selection metric given only the target reads the labels: say which reading ran
    audit = [
        f"control '{c.control_id}': no prediction is bound, so {c.metric_key} is computed on "
        f"the target column '{c.inputs['target']}' (a data audit of the labels' positive "
        "rates, as Venturalitica's disparate_impact on a dataset); bind input.prediction to "
        "measure the model's decisions"
        for c in policy.controls
        if "prediction" not in c.inputs
        and "target" in c.inputs
        and lookup(c.metric_key).one_of == ("prediction", "target")
    ]
    return same + audit


def plan_controls(policy: Policy, table: Table) -> list[Plan]:
    plans = []
    for c in policy.controls:
        spec = lookup(c.metric_key)
        plan = Plan(c, spec)
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
            cols = c.role_columns(role)
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
        problems += weight_problems(c, spec, table.path or "<DataFrame>")
        if problems:
            plan.error = BindingError(problems)
        else:
            plan.key = plan_key(c, spec)
        plans.append(plan)
    return plans


#: the command-line flag of each numeric option of :func:`fairpolicy.runner.check`
_NUMBER_FLAGS = {
    "bootstrap": "--bootstrap",
    "p_value": "--p-value",
    "seed": "--seed",
    "num_classes": "--num-classes",
    "max_rows": "--max-rows",
    "ci_level": "--ci-level",
}


def option_number_arg(name: str, value: Any, whole: bool = True) -> Any:
    """A numeric option of the Python API read with the command line's grammar: an int (a
    float for ``ci_level``) or its plain ASCII text (``"1000"``, ``" 0.9 "``). ``"1_000"``,
    ``"5e2"`` for a count, other scripts' digits, a bool or another type are a UsageError
    naming the option, as on the command line (``int()`` read the first three)."""
    from fairpolicy.policy.numbers import NUMBER_HINT, option_number

    if value is None:
        return None
    kind = "a whole number (an int, or ASCII digits such as 1000)" if whole else "a number"
    try:
        return option_number(value, whole)
    except ValueError:
        hint = NUMBER_HINT if isinstance(value, str) and not whole else None
        raise UsageError(
            f"{_NUMBER_FLAGS[name]} must be {kind}, got {value!r}.", hint=hint
        ) from None


def check_stats_options(options: Mapping[str, Any]) -> None:
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


def score_decimals_arg(value: int | None) -> int:
    from fairpolicy.data.sources import DEFAULT_SCORE_DECIMALS

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


def policy_columns(pol: Policy, available: list[str]) -> tuple[list[str], list[str]]:
    """(every column the policy binds, those read as text: dimension and site columns).

    A ``data_completeness`` control that names no ``input.columns`` measures every
    column of the data, so every column is read."""
    wanted, strings = bound_columns(
        available, [(role, value) for c in pol.controls for role, value in c.inputs.items()]
    )
    if any(every_column(c) for c in pol.controls):
        wanted += available
    return list(dict.fromkeys(wanted)), list(dict.fromkeys(strings))


def every_column(control: Control) -> bool:
    """Whether the control measures every column of the data (its column role unbound)."""
    try:
        spec = lookup(control.metric_key)
    except KeyError:
        return False
    return spec.column_counts == "each" and spec.column_role not in control.inputs


#: the prefetch reads a file only when it is this many times smaller than the memory budget
#: (the embedded peak measured at up to ~20 bytes per CSV byte on narrow columns)
PREFETCH_SIZE_FACTOR = 20


def prefetchable(engine: str, data: Any, budget: int) -> bool:
    """A speculative read only where the embedded engine will read that file anyway: engine
    auto/embedded, one existing file, and far below the memory budget (a file that auto may
    send to DuckDB, or the memory guard may refuse, is never read speculatively)."""
    if engine not in ("auto", "embedded") or not isinstance(data, str | os.PathLike):
        return False
    from fairpolicy.data.sources.csv_guard import csv_compression

    if csv_compression(Path(data)) is not None:
        return False  # decompressing needs pyarrow's codecs: imported on this thread first
    try:
        size = os.stat(data).st_size
    except (OSError, ValueError):
        return False
    return size * PREFETCH_SIZE_FACTOR <= budget


def engine_request(pol: Policy, available: list[str], strings: list[str], decimals: int) -> Request:
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
            if role in MEASURED_ROLES:
                continue  # counted per column by their own reads (evaluator.py)
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


def load(
    policy: Any,
    allow_paths: Sequence[str | os.PathLike[str]] = (),
    strict: bool = False,
    bound: Collection[str] = (),
) -> Policy:
    """The policy; ``bound``: the roles ``--bind`` gives every control (a control need not
    name them itself)."""
    if isinstance(policy, Policy):
        return policy
    from fairpolicy.policy.load import load_policy

    loaded: Policy = load_policy(policy, allow_paths=allow_paths, strict=strict, bound=bound)
    return loaded


@lean
class Settings:
    """The options of one :func:`fairpolicy.runner.check`, validated (:func:`settle`)."""

    #: what the results record about the run
    record: RunRecord
    #: ``--bind`` and ``--rename`` (:mod:`fairpolicy.policy.binds`)
    bind: Binds
    num_classes: int | None
    #: the statistics options given for every control (``ci``, ``decision``, ...)
    stats_options: dict[str, Any]
    caps: Limits
    engine: str
    #: the memory budget in bytes (given, else the default)
    budget: int
    #: the memory budget as given (None: the default)
    memory_budget: int | str | None
    max_rows: int | None
    score_decimals: int | None
    allow_paths: Sequence[str | os.PathLike[str]]
    #: ``--strict``: the policy must be valid OSCAL (else one warning per document)
    strict: bool = False
    #: ``--positive-label``: the default positive label of every control
    positive_label: str | None = None


def settle(
    data: Any,
    *,
    bind: Binds | Mapping[str, str] | None,
    num_classes: int | None,
    inconclusive: InconclusivePolicy,
    fail_on: FailOn,
    deterministic: bool,
    bootstrap: int | None,
    ci_level: float | None,
    ci_method: str | None,
    resample: str | None,
    decision: str | None,
    p_value: int | None,
    bonferroni: bool | None,
    seed: int | None,
    engine: str,
    memory_budget: int | str | None,
    score_decimals: int | None,
    max_rows: int | None,
    timestamp: str | None,
    max_groups: int | None,
    max_classes: int | None,
    max_resamples: int | None,
    max_cells: int | None,
    max_resample_seconds: int | None,
    allow_paths: Sequence[str | os.PathLike[str]],
    strict: bool = False,
    positive_label: str | None = None,
    rename: Mapping[str, str] | None = None,
) -> Settings:
    """The options of :func:`fairpolicy.runner.check`, validated in the order a user
    meets them (the data's kind first); the run's clock starts here. Raises UsageError."""
    from fairpolicy.data.sources import require_data_kind

    require_data_kind(data)  # None, a dict, a NumPy array…: a clear UsageError, not a TypeError
    binds = binds_from_api(bind, rename)  # a list, a None column…: a UsageError naming it
    bootstrap = option_number_arg("bootstrap", bootstrap)
    p_value = option_number_arg("p_value", p_value)
    seed = option_number_arg("seed", seed)
    num_classes = option_number_arg("num_classes", num_classes)
    max_rows = option_number_arg("max_rows", max_rows)
    ci_level = option_number_arg("ci_level", ci_level, whole=False)
    if inconclusive not in ("pass", "warn", "fail"):
        raise UsageError(f"inconclusive must be pass, warn or fail, not {inconclusive!r}.")
    if fail_on not in ("error", "warning", "never"):
        raise UsageError(f"fail_on must be error, warning or never, not {fail_on!r}.")
    fixed = fixed_timestamp(timestamp)
    started = fixed or now(deterministic)
    epoch_note = (
        (
            "--deterministic without SOURCE_DATE_EPOCH or --timestamp: the run is dated "
            "1970-01-01T00:00:00+00:00; pass --timestamp ISO8601 (or set SOURCE_DATE_EPOCH) "
            "to date it",
        )
        if deterministic and fixed is None and not os.environ.get("SOURCE_DATE_EPOCH")
        else ()
    )
    clock = time.perf_counter()
    if positive_label is not None and (
        not isinstance(positive_label, str | int) or isinstance(positive_label, bool)
        or not str(positive_label).strip()
    ):  # fmt: skip
        raise UsageError(
            f"positive_label must be a label (text or a whole number), not {positive_label!r}.",
            key="--positive-label",
            hint="name the favourable or selected outcome as the data writes it, e.g. "
            "--positive-label approved",
        )
    label = None if positive_label is None else str(positive_label).strip()
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
    check_stats_options(stats_options)
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
    record = RunRecord(
        started=started,
        fixed=fixed,
        clock=clock,
        deterministic=deterministic,
        inconclusive=inconclusive,
        fail_on=fail_on,
        seed=run_seed,
        options={
            **binds.as_options(),
            "num_classes": num_classes,
            "deterministic": deterministic,
            "timestamp": fixed,
            **stats_options,
            **({"positive_label": label} if label is not None else {}),
            # as given: the grid a rounding engine uses (fairpolicy.assemble records the
            # one used); pinned by an approved plan (fairpolicy.gate_settings)
            **({} if score_decimals is None else {"score_decimals": score_decimals}),
        },
        epoch_note=epoch_note,
    )
    return Settings(
        record=record,
        bind=binds,
        num_classes=num_classes,
        stats_options=stats_options,
        caps=caps,
        engine=engine,
        budget=budget,
        memory_budget=memory_budget,
        max_rows=max_rows,
        score_decimals=score_decimals,
        allow_paths=allow_paths,
        strict=strict,
        positive_label=label,
    )


def prepare_policy(policy: Any, settings: Settings) -> tuple[Policy, int]:
    """The policy with the command line's overrides, its requested work within the caps,
    and the engines' score grid (``--score-decimals``). Raises PolicyError/UsageError."""
    s = settings
    pol = apply_overrides(
        load(policy, s.allow_paths, s.strict, s.bind.bound_roles()),
        s.bind,
        s.num_classes,
        s.stats_options,
        s.positive_label,
    )
    _check_requested(pol, s.caps)
    from fairpolicy.data.bind.count_table import count_policy

    return count_policy(pol), score_decimals_arg(s.score_decimals)
