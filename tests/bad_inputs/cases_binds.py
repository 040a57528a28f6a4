"""Bad-input rows: a role bound twice on the command line (the last one used to win
silently) and a dimension naming one column twice."""

from __future__ import annotations

from tests.bad_inputs.cases import Case, policy

CASES: list[Case] = [
    Case(
        "binds-role-twice",
        ("binds the role 'target' twice", "'y_pred'", "'y_true'"),
        args=("--bind", "target=y_pred", "--bind", "target=y_true"),
        key="--bind",
        subprocess=True,
    ),
    Case(
        "binds-dimension-column-twice",
        ("names the column 'sex' more than once",),
        policy=policy(input__dimension="'sex, sex'"),
        control="c1",
        column="sex",
        report=True,
    ),
    Case(
        "binds-dimension-column-twice-cli",
        ("names the column 'sex' more than once",),
        args=("--bind", "dimension=sex,sex"),
        control="c1",
        column="sex",
        report=True,
    ),
]

CASES += [
    Case(
        "binds-one-column-disparity-tpr",
        ("both bound to column 'y_true'", "every prediction would be counted as correct"),
        policy=policy(
            metric_key="disparity_ratio",
            rate="tpr",
            operator="between",
            threshold='"0.8,1.25"',
            input__prediction="y_true",
        ),
        control="c1",
        column="y_true",
        report=True,
    ),
]
