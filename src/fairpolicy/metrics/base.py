"""Building blocks shared by every metric family.

A metric is a pure function ``(GroupStats, params) -> MetricValue``. The
helpers here turn per-group numerators/denominators into rates with an explicit
"undefined" mask, and reduce them to gaps or ratios while recording which
groups were left out and why. Nothing here ever returns NaN: an undefined value
is ``None`` with a reason.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import NDArray

from fairpolicy.records import lean
from fairpolicy.stats import GroupStats

# the statistical value types live in the stats layer (see fairpolicy.stats.values);
# re-exported here under their old names
from fairpolicy.stats.values import BatchFn as BatchFn
from fairpolicy.stats.values import Excluded as Excluded
from fairpolicy.stats.values import GroupValue as GroupValue
from fairpolicy.stats.values import MetricFn as MetricFn
from fairpolicy.stats.values import MetricValue as MetricValue
from fairpolicy.stats.values import Stratum as Stratum

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]

TaskKind = Literal["binary", "multiclass", "regression", "ranking", "data"]

#: How a metric's inputs are bound and which sufficient statistics it reads:
#: ``classification`` — class labels → ``counts`` (+ ``scores`` if ``needs_scores``);
#: ``regression`` — numeric target/prediction → ``regression`` sums;
#: ``ranking`` — a rank or score column → ``ranking`` order;
#: ``data`` — only the dimension (and target, if bound) → group sizes (+ ``counts``).
Kind = Literal["classification", "regression", "ranking", "data"]

#: the null hypothesis each stratum tests (``metrics show``, results, docs/statistics.md)
NULL_HYPOTHESES: dict[Stratum | None, str] = {
    "rows": "the groups are interchangeable: every group's rows come from one distribution of "
    "(actual class, prediction, scores); group labels are permuted over all compared rows",
    "actual": "within each actual class, predictions (and scores) have the same distribution "
    "in every group, whatever the groups' base rates; group labels are permuted within each "
    "actual class",
    "predicted": "within each predicted class, the actual class has the same distribution in "
    "every group, whatever the groups' selection rates; group labels are permuted within "
    "each predicted class",
    None: "no permutation test: the value pools the compared rows (it is not a comparison of "
    "groups), so permuting group labels cannot change it",
}


@lean
class ParamSpec:
    """A declared metric parameter."""

    name: str
    kind: type  # int, float, str or bool
    default: Any
    choices: tuple[Any, ...] | None = None
    help: str = ""


class Ref:
    """A metric function (or its vectorised twin) named by module and attribute, imported
    on first use: the registry holds every spec without importing every metric family
    (issue 17, a lean start). ``table`` (``"module:NAME"``) names a dict keyed by functions
    (``fairpolicy.metrics.binary:BATCH``): the reference is then ``table.get(function)``."""

    __slots__ = ("module", "name", "table")

    def __init__(self, module: str, name: str, table: str | None = None) -> None:
        self.module, self.name, self.table = module, name, table

    def resolve(self) -> Any:
        import importlib

        fn = getattr(importlib.import_module(self.module), self.name)
        if self.table is None:
            return fn
        module, _, name = self.table.partition(":")
        return getattr(importlib.import_module(module), name).get(fn)

    def __repr__(self) -> str:
        table = "" if self.table is None else f"[{self.table}]"
        return f"Ref({self.module}:{self.name}{table})"


class Family:
    """A metric family module not yet imported: ``family.name`` is a :class:`Ref`, so a
    registry entry reads ``binary.demographic_parity_diff`` as it would with the module."""

    def __init__(self, name: str) -> None:
        self._module = f"fairpolicy.metrics.{name}"

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return Ref(self._module, name)


class _Lazy:
    """A dataclass field holding a callable or a :class:`Ref`; reading it resolves the
    reference once and keeps the result (so ``spec.fn`` is the function itself)."""

    def __init__(self, default: Any = None, *, required: bool = True) -> None:
        self._default, self._required = default, required

    def __set_name__(self, owner: type, name: str) -> None:
        self._slot = "_lazy_" + name

    def __get__(self, obj: object | None, owner: type) -> Any:
        if obj is None:
            if self._required:  # no default: dataclass makes the field required
                raise AttributeError(self._slot)
            return self._default
        value = obj.__dict__[self._slot]
        if isinstance(value, Ref):
            value = value.resolve()
            obj.__dict__[self._slot] = value
        return value

    def __set__(self, obj: object, value: Any) -> None:
        obj.__dict__[self._slot] = value


@lean
class MetricSpec:
    """A registry entry: everything binding and listing need to know about a metric."""

    key: str
    #: the metric function (a :class:`Ref` given here is imported on first read)
    if TYPE_CHECKING:
        fn: MetricFn
    else:
        fn: MetricFn = _Lazy()
    summary: str
    #: roles that must be bound (``target``, ``prediction``, ``dimension``, ``score``)
    inputs: tuple[str, ...]
    tasks: tuple[TaskKind, ...]
    params: tuple[ParamSpec, ...] = ()
    aliases: tuple[str, ...] = ()
    ideal: float = 0.0
    #: "lower" (a gap: smaller is fairer) or "higher" (a ratio: closer to 1 is fairer)
    better: Literal["lower", "higher"] = "lower"
    value_range: tuple[float, float] = (0.0, 1.0)
    #: for binary-only metrics: the keys to use on K > 2 classes
    multiclass_replacement: tuple[str, ...] = ()
    kind: Kind = "classification"
    #: classification metrics that read per-group score distributions (``stats.scores``)
    needs_scores: bool = False
    #: at least one of these roles must be bound (e.g. ranking: ``rank`` or ``score``);
    #: the first bound one is read
    one_of: tuple[str, ...] = ()
    #: roles read when bound, not required (a score metric's prediction: its labels join
    #: the class list). A role a metric neither requires nor may read can still be bound
    #: (policies bind target and prediction once for all controls): it is not read.
    optional: tuple[str, ...] = ()
    #: optional vectorised twin of ``fn`` for bootstrap replicates:
    #: ``batch(counts (B, G, K, K), positive) -> (values (B,), per-group (B, G), defined)``
    if TYPE_CHECKING:
        batch: BatchFn | None = None
    else:
        batch: BatchFn | None = _Lazy(None, required=False)
    #: a role naming a second grouping column; its statistics arrive as ``stats.secondary``
    #: (e.g. ``site`` for fmm-fairness-eval's composite score)
    secondary_role: str | None = None
    #: an example operator/threshold for docs
    example_operator: str = "<"
    example_threshold: str = "0.1"
    #: False: the metric sees every group, however small, and applies its own size rule
    #: (NYC LL144's 2 % exclusion); the runner must then skip the ``min_samples`` exclusion
    #: as it does for ``kind="data"``
    min_samples_applies: bool = True
    #: groups needed for a value: 2 for a comparison, 1 for a measure of the groups
    #: themselves (k-anonymity of one quasi-identifier group is its size)
    groups_needed: int = 2
    #: the permutation test's stratum (:data:`Stratum`; None: no permutation test), or
    #: ``(parameter, {value: stratum})`` when a parameter picks the compared rate
    null_stratum: Stratum | tuple[str, Mapping[str, Stratum | None]] | None = "rows"
    #: the data-quality metrics (``metrics/quality.py``): the role naming the measured
    #: columns (a comma list), and what is counted of them (``stats.columns``): ``each``,
    #: the missing values per column (every column of the data when the role is unbound);
    #: ``joint``, also the rows with every one present; ``names``, no row at all
    column_role: str | None = None
    column_counts: Literal["each", "joint", "names"] | None = None

    def stratum(self, params: Mapping[str, Any]) -> Stratum | None:
        """The permutation stratum for these (resolved) parameters."""
        s = self.null_stratum
        if isinstance(s, tuple):
            name, by_value = s
            declared = self.param(name)
            return by_value[str(params.get(name, None if declared is None else declared.default))]
        return s

    def null_hypothesis(self, params: Mapping[str, Any]) -> str:
        """H0 of this metric's permutation test, in words."""
        return NULL_HYPOTHESES[self.stratum(params)]

    @property
    def formula(self) -> str:
        import inspect

        return inspect.cleandoc(self.fn.__doc__ or self.summary)

    def param(self, name: str) -> ParamSpec | None:
        for p in self.params:
            if p.name == name:
                return p
        return None

    def resolve_params(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """Declared defaults overlaid with the given (already validated) values."""
        out = {p.name: p.default for p in self.params}
        out.update({k: v for k, v in given.items() if k in out})
        return out


# ---------------------------------------------------------------------------
# rates and reductions


def safe_rate(num: NDArray[Any], den: NDArray[Any]) -> tuple[FloatArray, BoolArray]:
    """num/den elementwise, with a mask of where the rate is defined (den > 0).

    Undefined entries hold 0.0 in the value array and must not be read.
    """
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    if num.shape != den.shape:
        num, den = np.broadcast_arrays(num, den)
    defined = den > 0
    out = np.zeros(num.shape, dtype=np.float64)
    np.divide(num, den, out=out, where=defined)
    return out, defined


def _group_values(
    stats: GroupStats, values: FloatArray, defined: BoolArray
) -> tuple[GroupValue, ...]:
    return tuple(
        GroupValue(g, n, v if ok else None)
        for g, n, v, ok in zip(
            stats.groups, stats.n.tolist(), values.tolist(), defined.tolist(), strict=True
        )
    )


def _excluded(stats: GroupStats, defined: BoolArray, reason: str) -> tuple[Excluded, ...]:
    n = stats.n
    return tuple(
        Excluded(g, int(n[i]), reason) for i, g in enumerate(stats.groups) if not defined[i]
    )


def too_few_groups(stats: GroupStats, defined_count: int) -> str:
    return (
        f"only {defined_count} group(s) with a defined value across "
        f"'{','.join(stats.dimension)}'; at least 2 are needed to compare"
    )


#: the exact per-group values: their integer (numerators, denominators), or the
#: rationals themselves (None where undefined)
Exact = tuple[NDArray[Any], NDArray[Any]] | Sequence[Fraction | None]


def is_integral(*arrays: NDArray[Any]) -> bool:
    """Whether every array holds integers (counts, or the exact weight sums of
    :attr:`GroupStats.exact_table`: Python ints), so exact rationals can be formed."""
    for a in arrays:
        arr = np.asarray(a)
        if np.issubdtype(arr.dtype, np.integer):
            continue
        if arr.dtype != object or not all(type(x) is int for x in arr.ravel().tolist()):
            return False
    return True


def exact_parts(
    parts: Callable[[GroupStats], tuple[NDArray[Any], NDArray[Any]]], stats: GroupStats
) -> tuple[NDArray[Any], NDArray[Any]] | None:
    """``parts(stats)`` (a metric's exact numerators and denominators) computed on the
    exact counts (:func:`exact_stats`), or None when there are none."""
    ex = exact_stats(stats)
    return None if ex is None else parts(ex)


def exact_stats(stats: GroupStats) -> GroupStats | None:
    """``stats`` with a count table whose cells are integers in proportion to the exact
    counts (:attr:`GroupStats.exact_table`): ``stats`` itself for whole counts; under
    fractional sample weights the exact sums of the weights, so every ratio a metric forms
    from them is the exact ratio of the weighted sums (a constant weight changes none).
    None when there is no exact table. Only a metric's exact value is computed from it."""
    table = stats.exact_table
    if table is None:
        return None
    if table is stats.counts or table is stats.sizes:
        return stats
    import dataclasses

    unknown = stats.exact_unknown  # every count of the view in the one exact unit
    if stats.sizes is not None:
        return dataclasses.replace(
            stats, sizes=table, exact_counts=None, survey=None, unknown_n=unknown, secondary=None
        )
    return dataclasses.replace(
        stats, counts=table, exact_counts=None, survey=None, unknown_n=unknown, secondary=None
    )


def exact_rates(exact: Exact | None, idx: NDArray[np.intp]) -> list[Fraction] | None:
    """The exact values of the groups ``idx``, or None when there are none to offer
    (counts that are not integers)."""
    if exact is None:
        return None
    if isinstance(exact, tuple) and len(exact) == 2 and isinstance(exact[0], np.ndarray):
        num, den = np.broadcast_arrays(np.asarray(exact[0]), np.asarray(exact[1]))
        if not is_integral(num, den):
            return None
        return [Fraction(int(num[i]), int(den[i])) for i in idx.tolist()]
    out = [exact[i] for i in idx.tolist()]
    return None if any(x is None for x in out) else [x for x in out if x is not None]


def exact_matrix(
    num: NDArray[Any], den: NDArray[Any], defined: BoolArray
) -> list[list[Fraction | None]] | None:
    """Per-cell exact rates num/den of a (G, K) matrix (None where undefined), or None
    when the counts are not integers."""
    num, den = np.broadcast_arrays(np.asarray(num), np.asarray(den))
    if not is_integral(num, den):
        return None
    n, d = num.tolist(), den.tolist()
    return [
        [Fraction(n[i][j], d[i][j]) if defined[i, j] else None for j in range(num.shape[1])]
        for i in range(num.shape[0])
    ]


def _compare(
    stats: GroupStats,
    values: FloatArray,
    defined: BoolArray,
    undefined_reason: str,
    reduce: Literal["gap", "ratio"],
    worst: Literal["min", "max"],
    details: dict[str, Any] | None,
    exact: Exact | None = None,
) -> MetricValue:
    groups = _group_values(stats, values, defined)
    excluded = _excluded(stats, defined, undefined_reason)
    ok = np.flatnonzero(defined)
    if ok.size < 2:
        return MetricValue(
            None, groups, excluded, details or {}, reason=too_few_groups(stats, int(ok.size))
        )
    v = values[ok]
    hi, lo = int(ok[np.argmax(v)]), int(ok[np.argmin(v)])
    d = dict(details or {})
    d.update({"max_group": stats.groups[hi], "min_group": stats.groups[lo]})
    worst_group = stats.groups[lo if worst == "min" else hi]
    rates = exact_rates(exact, ok)
    if reduce == "gap":
        e = max(rates) - min(rates) if rates is not None else None
        return MetricValue(
            float(v.max() - v.min()), groups, excluded, d, worst_group=worst_group, exact=e
        )
    if v.max() == 0:
        d["all_zero"] = True  # a component that an odds ratio may leave out (binary.py)
        return MetricValue(
            None, groups, excluded, d, reason="every group's rate is 0, so min/max is 0/0"
        )
    e = min(rates) / max(rates) if rates is not None else None
    return MetricValue(
        float(v.min() / v.max()), groups, excluded, d, worst_group=worst_group, exact=e
    )


def gap(
    stats: GroupStats,
    values: FloatArray,
    defined: BoolArray,
    undefined_reason: str,
    *,
    worst: Literal["min", "max"] = "min",
    details: dict[str, Any] | None = None,
    exact: Exact | None = None,
) -> MetricValue:
    """max − min of a per-group value over the groups where it is defined.

    ``worst`` says which end is the unfavourable one (``min`` for rates one
    wants high such as TPR, ``max`` for error rates), to name the worst group.
    ``exact``: the values' integer numerators and denominators, when they are ratios
    of counts; the result then carries its exact rational (``MetricValue.exact``).
    """
    return _compare(stats, values, defined, undefined_reason, "gap", worst, details, exact)


def ratio(
    stats: GroupStats,
    values: FloatArray,
    defined: BoolArray,
    undefined_reason: str,
    *,
    details: dict[str, Any] | None = None,
    exact: Exact | None = None,
) -> MetricValue:
    """min / max of a per-group value over the groups where it is defined.

    If every defined value is 0 the ratio is 0/0: undefined, reported as such.
    The worst group is the one with the smallest value. ``exact`` as for :func:`gap`.
    """
    return _compare(stats, values, defined, undefined_reason, "ratio", "min", details, exact)


def class_gaps(values: FloatArray, defined: BoolArray) -> tuple[FloatArray, BoolArray]:
    """Per-class max − min across groups of a (G, K) matrix, over defined cells.

    A class is defined when at least two groups have a defined value for it.
    """
    cnt = defined.sum(axis=0)
    hi = np.where(defined, values, -np.inf).max(axis=0)
    lo = np.where(defined, values, np.inf).min(axis=0)
    ok = cnt >= 2
    out = np.zeros(values.shape[1], dtype=np.float64)
    out[ok] = hi[ok] - lo[ok]
    return out, ok


def undefined_cells(stats: GroupStats, defined: BoolArray, reason: str) -> list[dict[str, Any]]:
    """The (group, class) cells left out of a per-class comparison, for details."""
    out = []
    for gi, ci in zip(*np.nonzero(~defined), strict=True):
        out.append({"group": stats.groups[gi], "class": stats.classes[ci], "reason": reason})
    return out


def opt(x: float | np.floating[Any], ok: bool | np.bool_) -> float | None:
    """A float or None, never NaN."""
    return float(x) if ok else None
