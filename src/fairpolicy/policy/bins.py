"""The one ``bins`` grammar: a control's ``bins`` prop and ``explore --bins``.

A numeric group column (``age`` in years) makes one group per distinct value; binning
cuts it into intervals that become the groups::

    bins     ::= spec | column "=" spec ( ";" column "=" spec )*
    spec     ::= count | "q" count | edge "," edge ( "," edge )*
    count    ::= a whole number from 2 to 100      (equal-frequency bins)
    edge     ::= a plain decimal number (policy/numbers.py), "-inf" or "inf"

``q4`` (or ``4``) cuts at the quartiles of the column's present values: the quantiles
``k/N`` of the rows' values under ``numpy.quantile``'s linear rule, computed exactly from
the distinct values and their row counts (so every engine and input type gets the same
edges); equal edges are merged. ``0,25,60,inf`` gives the bins ``[0, 25)``, ``[25, 60)``
and ``[60, inf)``.

Edge convention: every bin is closed on the left and open on the right, ``[lo, hi)``,
except the last one, which is closed ``[lo, hi]`` when ``hi`` is finite (so the largest
edge, and a quantile bin's maximum, belong to it). ``-inf`` and ``inf`` may only be the
first and the last edge. A value outside the edges is refused (exit 2), never dropped
and never put in a bucket of its own: the edges are the policy's statement of the
column's range, so a value outside them is a data or policy error (write ``-inf``/``inf``
to cover every value). A missing value stays the ``(missing)`` bucket.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from fairpolicy.policy.numbers import parse_float, parse_int

__all__ = [
    "BINS_HINT",
    "MAX_BINS",
    "Bins",
    "BinsRule",
    "edge_text",
    "interval_label",
    "parse_bins",
    "parse_spec",
]

#: the most bins a ``bins`` value may ask for (a run stays bounded)
MAX_BINS = 100

#: what a message about a bad ``bins`` value suggests
BINS_HINT = (
    "write increasing edges such as 0,25,60,inf (bins [0, 25), [25, 60), [60, inf)), "
    "q4 for quartile bins, or COLUMN=SPEC;COLUMN=SPEC for an intersection"
)


@dataclass(frozen=True)
class Bins:
    """One column's binning: explicit ``edges`` or ``quantiles`` equal-frequency bins."""

    text: str
    edges: tuple[float, ...] = ()
    quantiles: int = 0


@dataclass(frozen=True)
class BinsRule:
    """A ``bins`` value: one spec for every numeric column (``default``), or one per column."""

    text: str
    default: Bins | None = None
    columns: tuple[tuple[str, Bins], ...] = ()

    def for_column(self, column: str) -> Bins | None:
        for name, spec in self.columns:
            if name == column:
                return spec
        return self.default


def _edge(text: str) -> float:
    t = text.strip()
    if t.lower() in ("inf", "+inf"):
        return math.inf
    if t.lower() == "-inf":
        return -math.inf
    return parse_float(t)


def parse_spec(text: str) -> Bins:
    """One column's spec; ValueError naming what is wrong."""
    t = text.strip()
    if not t:
        raise ValueError("the bins value is empty")
    if "," not in t:
        count = t[1:] if t[:1] in ("q", "Q") else t
        try:
            n = parse_int(count.strip())
        except ValueError:
            raise ValueError(
                f"'{t}' is neither a number of bins (q4) nor a list of edges (0,25,60,inf)"
            ) from None
        if not 2 <= n <= MAX_BINS:
            raise ValueError(f"'{t}' asks for {n} bins; give 2 to {MAX_BINS}")
        return Bins(t, quantiles=n)
    parts = t.split(",")
    try:
        edges = tuple(_edge(p) for p in parts)
    except ValueError as exc:
        raise ValueError(
            f"the edge list '{t}' holds a value that is not a number ({exc})"
        ) from None
    if len(edges) > MAX_BINS + 1:
        raise ValueError(f"'{t}' gives {len(edges)} edges; at most {MAX_BINS + 1}")
    if any(math.isinf(e) for e in edges[1:-1]) or edges[0] == math.inf or edges[-1] == -math.inf:
        raise ValueError(f"in '{t}' only the first edge may be -inf and only the last inf")
    for a, b in itertools.pairwise(edges):
        if not a < b:
            raise ValueError(f"the edges '{t}' are not strictly increasing ({a:g} then {b:g})")
    return Bins(t, edges=edges)


def parse_bins(text: str, columns: tuple[str, ...] = ()) -> BinsRule:
    """A ``bins`` value; ValueError naming what is wrong. With ``columns`` (the control's
    dimension columns), a per-column spec must name one of them and a plain spec needs
    exactly one."""
    t = str(text).strip()
    if "=" not in t:
        spec = parse_spec(t)
        if len(columns) > 1:
            raise ValueError(
                f"the dimension is the intersection {','.join(columns)}, so the bins must "
                f"name their column (e.g. {columns[-1]}={t})"
            )
        return BinsRule(t, default=spec)
    out: list[tuple[str, Bins]] = []
    for part in t.split(";"):
        if not part.strip():
            continue
        column, sep, spec_text = part.partition("=")
        column = column.strip()
        if not sep or not column:
            raise ValueError(f"'{part.strip()}' is not COLUMN=SPEC")
        if columns and column not in columns:
            raise ValueError(
                f"'{column}' is not a dimension column of the control ({', '.join(columns)})"
            )
        if any(c == column for c, _ in out):
            raise ValueError(f"the column '{column}' is given bins twice")
        out.append((column, parse_spec(spec_text)))
    if not out:
        raise ValueError("the bins value names no column")
    return BinsRule(t, columns=tuple(out))


def edge_text(x: float) -> str:
    """An edge as shown in a group label: the shortest text that reads back as the same
    float (``25``, ``0.1``, ``33.5``, ``inf``)."""
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    return repr(x)


def interval_label(lo: float, hi: float, last: bool) -> str:
    """The group label of the bin [lo, hi) (the last bin [lo, hi] when hi is finite)."""
    left = "(" if math.isinf(lo) else "["
    right = "]" if last and not math.isinf(hi) else ")"
    return f"{left}{edge_text(lo)}, {edge_text(hi)}{right}"
