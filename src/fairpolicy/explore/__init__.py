"""``fairpolicy explore``: slice discovery with statistical control (issue 18).

Searches conjunctions of attribute values (up to ``depth``) whose rate diverges most from
the rest of the data, from one count table (:mod:`.table`), with support pruning, a
two-sided exact or z test per slice, Benjamini–Hochberg adjustment over every slice
tested and Wilson intervals (:mod:`.search`); reports in text/JSON/Markdown/HTML and
writes the significant slices as candidate controls (:mod:`.render`).

Exploration is not a gate: it finds where to look. Its candidate controls carry no
threshold (``SET-ME``), so they cannot pass until a person sets one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fairpolicy.errors import UsageError
from fairpolicy.explore.search import RATES, Rate, Search, Slice, find_slices, rate
from fairpolicy.explore.table import CountTable, bins_rule, build

__all__ = ["RATES", "Exploration", "Slice", "explore"]

#: limits of the options (a run stays bounded whatever is asked)
MAX_DEPTH = 4


@dataclass
class Exploration:
    table: CountTable
    metric: Rate
    search: Search
    depth: int
    min_support: float
    alpha: float
    top_n: int

    @property
    def rows(self) -> int:
        return self.table.rows

    @property
    def overall(self) -> float | None:
        import numpy as np

        w = self.table.weights
        den = int(w[np.isin(self.table.cells, self.metric.denominator)].sum())
        num = int(w[np.isin(self.table.cells, self.metric.numerator)].sum())
        return num / den if den else None

    @property
    def top(self) -> list[Slice]:
        return self.search.slices[: self.top_n]

    @property
    def significant(self) -> list[Slice]:
        return [s for s in self.search.slices if s.significant]


def check_options(
    *, depth: int, min_support: float, max_slices: int, alpha: float, top: int
) -> None:
    """UsageError naming the first option out of its range (``--bins``:
    :func:`.table.bins_rule`)."""
    checks = [
        ("--depth", 1 <= depth <= MAX_DEPTH, f"a whole number from 1 to {MAX_DEPTH}", depth),
        ("--min-support", 0 < min_support <= 1, "a fraction in (0, 1]", min_support),
        ("--max-slices", max_slices >= 1, "a whole number ≥ 1", max_slices),
        ("--fdr", 0 < alpha < 1, "a fraction in (0, 1)", alpha),
        ("--top", top >= 1, "a whole number ≥ 1", top),
    ]
    for key, ok, allowed, value in checks:
        if not ok:
            raise UsageError(f"{key} {value} is out of range.", key=key, hint=f"give {allowed}.")


def explore(
    data: Any,
    *,
    target: str,
    prediction: str,
    attributes: list[str],
    metric: str = "selection_rate",
    depth: int = 2,
    min_support: float = 0.02,
    bins: int | str = 5,
    max_slices: int = 100_000,
    alpha: float = 0.05,
    top: int = 20,
    positive_label: str | None = None,
    max_rows: int | None = None,
) -> Exploration:
    """Explore ``data`` (a CSV/Parquet path, a pandas DataFrame or a pyarrow Table)."""
    check_options(depth=depth, min_support=min_support, max_slices=max_slices, alpha=alpha, top=top)
    attributes = [a.strip() for a in attributes if a.strip()]
    if not attributes:
        raise UsageError(
            "no attribute to slice by.",
            key="--attributes",
            hint="name columns, e.g. --attributes sex,age.",
        )
    dup = sorted({a for a in attributes if attributes.count(a) > 1})
    if dup:
        raise UsageError(
            f"the attribute '{dup[0]}' is listed twice.",
            key="--attributes",
            hint="list each column once.",
        )
    bins_rule(bins, attributes)  # a bad --bins fails before the data is read
    chosen = rate(metric)
    table = build(
        data,
        target=target,
        prediction=prediction,
        attributes=attributes,
        bins=bins,
        positive_label=positive_label,
        max_rows=max_rows,
    )
    result = find_slices(
        table,
        metric=chosen,
        depth=min(depth, len(attributes)),
        min_support=min_support,
        max_slices=max_slices,
        alpha=alpha,
    )
    return Exploration(table, chosen, result, depth, min_support, alpha, top)


def run(args: Any, stdout: Any) -> int:
    """The ``explore`` subcommand (the CLI parses, this does the rest). Exit 0 once the
    report is written: exploring is not a gate."""
    from fairpolicy.explore.render import FORMATS, candidate_policy, render
    from fairpolicy.outputs import refuse_clashes, target, write_all

    outputs: list[tuple[str, str | None]] = []
    for item in args.output or ["text"]:
        fmt, _, path = item.partition("=")
        if fmt not in FORMATS:
            raise UsageError(
                f"-o {item}: unknown format '{fmt}'.",
                key="-o",
                hint=f"use one of {', '.join(FORMATS)}, as FORMAT or FORMAT=PATH.",
            )
        outputs.append((fmt, None if path in ("", "-") else path))
    if sum(p is None for _, p in outputs) > 1:
        raise UsageError(
            "more than one format asks for standard output.",
            key="-o",
            hint="give all but one of them a file: -o json=report.json.",
        )
    files = [(f"-o {f}={p}", p) for f, p in outputs if p is not None]
    if args.emit_policy:
        files.append((f"--emit-policy {args.emit_policy}", args.emit_policy))
    # checked before the data is read: a bad path fails fast
    refuse_clashes([(label, target(p)) for label, p in files], [("data", args.data)], noun="output")
    result = explore(
        args.data,
        target=args.target,
        prediction=args.prediction,
        attributes=args.attributes.split(","),
        metric=args.metric,
        depth=args.depth,
        min_support=args.min_support,
        bins=args.bins,
        max_slices=args.max_slices,
        alpha=args.fdr,
        top=args.top,
        positive_label=args.positive_label,
        max_rows=args.max_rows,
    )
    staged = [(p, render(result, f)) for f, p in outputs if p is not None]
    if args.emit_policy:
        form = "oscal" if args.emit_policy.lower().endswith(".json") else "list"
        staged.append((args.emit_policy, candidate_policy(result, form)))
    write_all(staged)
    for fmt, path in outputs:
        if path is None:
            stdout.write(render(result, fmt))
    return 0
