"""Metric keys fairpolicy knows and refuses to compute under that name (issue 16).

Venturalitica's HUDERIA templates name two causal-fairness keys whose computation is not
what the name promises. A control naming one is diagnosed where unknown keys are (so
``validate`` says it too): one paragraph with what Venturalitica computes and the fix,
never a silent value.
"""

from __future__ import annotations

__all__ = ["REFUSED"]

#: key → (what it is, the fix)
REFUSED: dict[str, tuple[str, str]] = {
    "counterfactual_fairness": (
        "metric_key 'counterfactual_fairness' is not computed: Venturalitica's "
        "calc_counterfactual_fairness returns |mean outcome of group a − mean outcome of "
        "group b| for a binary protected attribute, a demographic parity difference, not "
        "counterfactual fairness in the sense of Kusner et al. (2017), which needs a causal "
        "model of the data; fairpolicy does not report a parity gap under a name that "
        "promises a causal guarantee.",
        "use metric_key demographic_parity_diff (the same difference of positive rates, for "
        "any number of groups, bound with input.dimension) with operator '<' (lower is "
        "fairer: '>=', as in Venturalitica's templates, would pass the larger gaps), or "
        "remove the control.",
    ),
    "causal_fairness_diagnostic": (
        "metric_key 'causal_fairness_diagnostic' is not computed: Venturalitica's "
        "calc_causal_fairness_diagnostic returns a report (a path decomposition into direct "
        "and indirect effects, the counterfactual_fairness difference of two groups' mean "
        "outcomes, a fairness-through-awareness check and a verdict text), not one number a "
        "threshold can gate.",
        "gate the number you mean with its own key (demographic_parity_diff for the "
        "difference of the groups' positive rates, bound with input.dimension), or remove "
        "the control.",
    ),
}
