"""Bad-input rows of the numeric area: overflow of regression sums, decisions at the
threshold (run by ``test_matrix.py`` on the embedded engine and DuckDB)."""

from __future__ import annotations

from tests.bad_inputs.cases import Case, policy


def _regression(y_of: str, p_of: str, n: int = 60) -> str:
    """``n`` rows per group F/M; ``y_of``/``p_of`` are expressions in ``i`` and ``g``
    (0 for F, 1 for M)."""
    lines = ["y,p,sex"]
    for g, name in enumerate("FM"):
        for i in range(n):
            y = eval(y_of, {"i": i, "g": g})
            p = eval(p_of, {"i": i, "g": g})
            lines.append(f"{y!r},{p!r},{name}")
    return "\n".join(lines) + "\n"


REGRESSION = {"input__target": "y", "input__prediction": "p"}

#: targets around 1e160: their squares overflow, the residuals (~1e150) do not
HUGE_TARGETS = _regression("1e160 * (1 + i / 60)", "1e160 * (1 + i / 60) + (1 + 2 * g) * 1e150")
#: residuals around 1e160: their squares overflow
HUGE_RESIDUALS = _regression("1e160 * (1 + g)", "-1e160 * (1 + i / 60)")

#: selection rates 30/60 and 24/60: a gap of exactly 1/10 (0.5 − 0.4 = 0.09999999999999998)
EXACT_TENTH = "y_true,y_pred,sex\n" + "".join(
    f"{i % 2},{int(i < (30 if g == 'F' else 24))},{g}\n" for g in "FM" for i in range(60)
)

CASES: list[Case] = [
    Case(
        "numeric-rmse-squares-overflow",
        ("Σ(y − ŷ)² (the squared residuals)", "overflows a 64-bit float", "rescale"),
        policy=policy(metric_key="rmse_parity", threshold='"1e150"', **REGRESSION),
        data=HUGE_RESIDUALS,
        file="data.csv",
        control="c1",
        column="y, p",
        report=True,
        note="",
    ),
    Case(
        "numeric-mae-needs-no-squares",
        ("mae_parity = 2e+150 violates < 1e+150",),
        policy=policy(metric_key="mae_parity", threshold='"1e150"', **REGRESSION),
        data=HUGE_TARGETS,
        args=("--inconclusive", "pass"),
        code=1,
        report=True,
        note="Σy² overflows but MAE reads only Σ|r|: a fail, never inconclusive (which "
        "--inconclusive pass would have passed)",
    ),
    Case(
        "numeric-mean-prediction-needs-no-squares",
        ("mean_prediction_parity = ", "violates < 1e+150"),
        policy=policy(metric_key="mean_prediction_parity", threshold='"1e150"', **REGRESSION),
        data=HUGE_TARGETS,
        args=("--inconclusive", "pass"),
        code=1,
        report=True,
        note="Σŷ² overflows but the mean prediction reads only Σŷ",
    ),
    Case(
        "numeric-gap-exactly-at-threshold",
        ("demographic_parity_diff = 0.1 violates < 0.1",),
        policy=policy(threshold='"0.1"'),
        data=EXACT_TENTH,
        code=1,
        report=True,
        note="0.5 − 0.4 is exactly 1/10 and 1/10 < 0.1 is false, whatever the float gives",
    ),
    Case(
        "numeric-between-a-single-point",
        ("0.1000  between  [0.1, 0.1]  PASS",),
        policy=policy(threshold='"0.1,0.1"', operator="between"),
        data=EXACT_TENTH,
        code=0,
        report=True,
        note="between is inclusive and decided exactly",
    ),
]
