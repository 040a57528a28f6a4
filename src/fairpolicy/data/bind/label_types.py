"""What determines a label encoding (:class:`LabelKey`), the encoding itself
(:class:`Labels`) and the kind of a label column (:class:`LabelType`)."""

from __future__ import annotations

import math
import re
from dataclasses import field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from fairpolicy.errors import Problem
from fairpolicy.records import lean

if TYPE_CHECKING:
    pass


#: placeholder for the unseen class of a one-class binary problem with text labels
OTHER_CLASS = "(other)"


@lean
class LabelKey:
    """Everything that determines a label encoding; controls sharing it share counts."""

    target: str
    prediction: str
    score: str | None
    positive_label: str | None
    num_classes: int | None
    missing: str
    binary: bool
    #: the ``classes`` prop as written: the label vocabulary, in score-column order
    classes: str | None = None
    #: ``positive_label.target`` / ``positive_label.prediction``: each column's own
    #: positive label (columns with different vocabularies, binary metrics only)
    positive_target: str | None = None
    positive_prediction: str | None = None


@lean(frozen=False)
class Labels:
    classes: tuple[str, ...]
    #: each row's class index (narrowest integer type; see :func:`label_codes`)
    true_codes: NDArray[np.signedinteger[Any]]
    pred_codes: NDArray[np.signedinteger[Any]]
    #: rows kept (None = all); rows are dropped only under ``missing: drop``
    keep: NDArray[np.bool_] | None
    positive: int | None
    score_columns: tuple[str, ...] = ()
    warnings: list[str] = field(default_factory=list)
    #: rows per kept entry (engines' weighted tuples); None = one row each
    weights: NDArray[np.int64] | None = None
    #: fractional sample weights of the kept entries (Table.sample_weights), or None
    sample_weights: NDArray[np.float64] | None = None
    #: why the score columns cannot be paired with the classes (text labels, positional
    #: columns, no declared order); raised only by the metrics that read scores
    score_problem: Problem | None = None


#: the largest whole number a float label may hold: beyond it doubles skip integers
MAX_FLOAT_LABEL = 2**53


@lean
class LabelType:
    """How text in a policy (positive_label, classes, input.score pairs) names a label."""

    integer: bool
    #: both label columns are booleans (read as 0/1): ``true``/``false`` name 1/0 too
    boolean: bool = False

    def value(self, text: str) -> Any:
        """The label ``text`` names, or None when it cannot name one of these labels:
        text labels are the text itself; integer labels need a whole number exactly
        (``1``, ``1.0``; never ``0.5``, ``inf`` or ``1e20``)."""
        if not self.integer:
            return text
        t = text.strip()
        if self.boolean and t.lower() in ("true", "false"):
            return int(t.lower() == "true")
        if re.fullmatch(r"[+-]?[0-9]+", t):
            return int(t)
        try:
            v = float(t)
        except ValueError:
            return None
        if math.isfinite(v) and v.is_integer() and abs(v) <= MAX_FLOAT_LABEL:
            return int(v)
        return None
