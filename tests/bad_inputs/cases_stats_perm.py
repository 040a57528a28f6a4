"""Bad-input rows of the stats-perm area: permutation tests and score resampling.

A p-value never gates, so a permutation test that cannot run (a pooled value, too much
work) is a complete report with the reason in the finding, never a silent absence.
"""

from __future__ import annotations

from tests.bad_inputs.cases import DEFAULT_DATA, Case, binary_scores, policy, rows

CASES: list[Case] = [
    Case(
        "stats-perm-p-value-one",
        ("--p-value needs 0 (off) or at least 2 resamples",),
        args=("--p-value", "1"),
    ),
    Case(
        "stats-perm-p-value-not-a-number",
        ("p_value 'many' is not a whole number",),
        policy=policy(p_value="many"),
        file="policy.yaml",
        control="c1",
        key="p_value",
    ),
    Case(
        "stats-perm-endless-permutations",
        ("1,000,000,000 permutations", "--max-resamples", "~39.0 h"),
        policy=policy(p_value='"1000000000"'),
        args=("-v",),
        key="p_value",
        note="refused before any work with the estimated cost and the flag that raises the "
        "cap (issue 13); below the cap, a test whose cost still exceeds the permutation "
        "limit gives no p-value with the reason",
    ),
    Case(
        "stats-perm-a-billion-weighted-rows",
        ("no p-value", "numpy's limit"),
        policy=policy(p_value='"50"', input__weight="w", weight_kind="frequency"),
        data="y_true,y_pred,sex,w\n"
        + "".join(f"{i % 2},{i // 2 % 2},{'FM'[i % 2]},100000000\n" for i in range(40)),
        args=("-v",),
        code=0,
        report=True,
        subprocess=True,
        note="issue 26: 4·10^9 rows as frequency weights exceed numpy's multivariate "
        "hypergeometric draw (10^9); a p-value never gates, so the finding gives the reason "
        "(it was an internal error)",
    ),
    Case(
        "stats-perm-pooled-metric",
        ("no p-value", "is not a comparison of groups"),
        policy=policy(
            metric_key="accuracy_score", threshold='"0.1"', operator="'>='", p_value='"50"'
        ),
        args=("-v",),
        code=0,
        report=True,
        note="accuracy of the pooled rows: permuting group labels cannot change it, so no test",
    ),
    Case(
        "stats-perm-score-decimals-out-of-range",
        ("--score-decimals must be a whole number from 0 to 12",),
        policy=policy(metric_key="auc_gap", input__score="y_score", ci='"50"'),
        data=binary_scores(lambda i: f"{(i * 37 % 100) / 100:.2f}"),
        args=("--score-decimals", "13"),
    ),
    Case(
        "stats-perm-three-groups-bonferroni",
        ("p-value",),
        policy=policy(p_value='"30"', bonferroni="true"),
        data="y_true,y_pred,sex\n" + rows(60, ("F", "M", "X")),
        args=("-v",),
        code=0,
        report=True,
        note="a valid run: per-group p-values (each group vs the rest) with Bonferroni",
    ),
]

_ = DEFAULT_DATA
