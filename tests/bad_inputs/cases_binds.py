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
