"""Bad-input rows of count tables (``input.count`` with ``input.selected`` or
``input.rate``, data/bind/count_table.py): a negative count, more selected than
applicants, a non-numeric count, a rate above 1, a missing count column and a metric that
needs true labels; and comparator: highest beside a min_share it would ignore. Each is exit 2
naming the file, control, column (or key) and the fix."""

from __future__ import annotations

from tests.bad_inputs.cases import Case, policy

COUNTED = policy(
    drop=("input.target", "input.prediction"),
    metric_key="impact_ratio",
    threshold='"0.8"',
    operator="'>='",
    input__count="applicants",
    input__selected="selected",
)
RATED = policy(
    drop=("input.target", "input.prediction"),
    metric_key="impact_ratio",
    threshold='"0.8"',
    operator="'>='",
    input__count="applicants",
    input__rate="rate",
)


def table(*rows: str, head: str = "sex,applicants,selected") -> str:
    return head + "\n" + "\n".join(rows) + "\n"


CASES: list[Case] = [
    Case(
        "counts-negative",
        ("count table", "'applicants'", "negative value", "0 or more"),
        policy=COUNTED,
        data=table("F,-3,1", "M,40,20"),
        file="data.csv",
        control="c1",
        column="applicants",
        report=False,
    ),
    Case(
        "counts-selected-above-applicants",
        ("more selected (30) than applicants (20)", "swapped"),
        policy=COUNTED,
        data=table("F,20,30", "M,40,20"),
        file="data.csv",
        control="c1",
        column="selected",
        report=False,
    ),
    Case(
        "counts-not-numeric",
        ("'applicants'", "not numbers", "without % signs"),
        policy=COUNTED,
        data=table("F,twenty,3", "M,40,20"),
        file="data.csv",
        control="c1",
        column="applicants",
        report=False,
    ),
    Case(
        "counts-rate-above-one",
        ("rate above 1", "as a fraction"),
        policy=RATED,
        data=table("F,20,25", "M,40,0.5", head="sex,applicants,rate"),
        file="data.csv",
        control="c1",
        column="rate",
        report=False,
    ),
    Case(
        "counts-missing-column",
        ("role 'count' is bound to column 'applicants'",),
        policy=COUNTED,
        data=table("F,20,3", "M,40,20", head="sex,n,selected"),
        file="data.csv",
        control="c1",
        column="applicants",
        report=True,
    ),
    Case(
        "counts-true-label-metric",
        ("no true labels", "input.weight"),
        policy=policy(
            drop=("input.target", "input.prediction"),
            metric_key="equal_opportunity_diff",
            input__count="applicants",
            input__selected="selected",
        ),
        data=table("F,20,3", "M,40,20"),
        file="policy.yaml",
        control="c1",
    ),
]

CASES.append(
    Case(
        "ll144-comparator-highest-with-min-share",
        ("comparator highest", "min_share would be ignored", "highest_above_min_share"),
        policy=policy(
            metric_key="impact_ratio",
            threshold='"0.8"',
            operator="'>='",
            comparator="highest",
            min_share='"0.05"',
        ),
        file="policy.yaml",
        control="c1",
        key="comparator",
    )
)
