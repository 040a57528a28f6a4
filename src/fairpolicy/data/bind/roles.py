"""Which roles a metric reads, and the bindings that name one column for two roles."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fairpolicy.data.bind.scores import parse_score_spec
from fairpolicy.errors import Problem

if TYPE_CHECKING:
    from fairpolicy.policy.schema import Control


#: score metrics that never read which class a score column is about (a ranking score,
#: as LL144's scoring rate): an unpaired text-label binding does not stop them
CLASS_FREE_SCORES = frozenset({"scoring_impact_ratio"})


#: metrics of the predictions alone (selection rates): their value does not depend on the
#: true labels, so binding target and prediction to one column is meaningful (an audit of
#: selections, as NYC LL144's impact ratios). A test checks this set against the registry.
PREDICTION_ONLY = frozenset(
    {
        "demographic_parity_diff",
        "demographic_parity_ratio",
        "disparity_ratio",
        "mean_prediction_parity",
        "multiclass_demographic_parity",
        "multiclass_statistical_parity",
        "weighted_demographic_parity_multiclass",
    }
)

#: ``disparity_ratio`` rates that read one column only (the predictions' selection rate and
#: share of positives, or the labels' prevalence); its other rates (tpr, ppv, accuracy …)
#: compare predictions with the truth, so one column for both makes every ratio 1
ONE_COLUMN_RATES = frozenset({"selection_rate", "pprev", "ppr", "prev"})


def prediction_only(control: Control) -> bool:
    """Whether the control's metric, with its parameters, ignores the truth (so target and
    prediction may be one column): ``disparity_ratio`` only for :data:`ONE_COLUMN_RATES`."""
    if control.metric_key == "disparity_ratio":
        return str(control.params.get("rate", "selection_rate")) in ONE_COLUMN_RATES
    return control.metric_key in PREDICTION_ONLY


def same_column_problems(
    control: Control, reads: tuple[str, ...], file: str | None
) -> list[Problem]:
    """A metric reading target and prediction (or scores) from one column compares the
    truth with itself: every prediction right, every AUC 1. An error, never a pass.

    ``reads``: the roles the metric reads (its declared inputs, plus ``score`` for
    metrics that read scores).
    """
    i = control.inputs
    target = i.get("target")
    out: list[Problem] = []
    dims = control.dimension_columns
    twice = sorted({c for c in dims if dims.count(c) > 1})
    if twice:
        out.append(
            Problem(
                f"input.dimension names the column '{twice[0]}' more than once "
                f"({i.get('dimension')!r}); an intersection of a column with itself is the "
                "column, so this is almost surely a typo for another column.",
                file=file,
                control=control.control_id,
                column=twice[0],
                hint="name each column once, e.g. input.dimension: sex,race",
            )
        )
    if target is None:
        return out
    if "prediction" in reads and i.get("prediction") == target and not prediction_only(control):
        out.append(
            Problem(
                f"target and prediction are both bound to column '{target}', so every "
                "prediction would be counted as correct.",
                file=file,
                control=control.control_id,
                column=target,
                hint="bind input.prediction (or --bind prediction=COLUMN) to the model's "
                "predictions, not to the true labels.",
            )
        )
    if "score" in reads and "score" in i:
        try:
            columns = parse_score_spec(i["score"])[0]
        except ValueError:
            columns = []
        if target in columns:
            out.append(
                Problem(
                    f"input.score binds the target column '{target}' as a score, so the "
                    "scores would rank every row by its true label.",
                    file=file,
                    control=control.control_id,
                    column=target,
                    hint="bind input.score to the model's probability column(s).",
                )
            )
    return out
