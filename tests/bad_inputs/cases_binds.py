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

# issue 26 item 10: a rename of a column no control reads, a column given where a role goes,
# a per-control bind naming no control, and a bind for every control that would move a
# control off a column the data has (it used to move them all silently)
MOVED_DATA = "y_true,y_pred,sex,grp\n" + "".join(
    f"{i % 2},{(i // 2) % 2},{'FM'[i % 3 == 0]},{'ab'[i % 2]}\n" for i in range(120)
)

CASES += [
    Case(
        "binds-rename-unknown-column",
        ("--rename nope=sex: no control reads a column 'nope'", "Columns the policy reads"),
        args=("--rename", "nope=sex"),
        key="--rename",
        subprocess=True,
    ),
    Case(
        "binds-rename-malformed",
        ("--rename expects OLD=NEW, got 'sex'",),
        args=("--rename", "sex"),
        key="--rename",
    ),
    Case(
        "binds-column-where-a-role-goes",
        ("'sex' is not a role but a column the policy reads", "pass --rename sex=gender"),
        args=("--bind", "sex=gender"),
        key="--bind",
    ),
    Case(
        "binds-unknown-control",
        ("--bind nope:dimension=...: the policy has no control 'nope'", "Controls: c1"),
        args=("--bind", "nope:dimension=sex"),
        key="--bind",
    ),
    Case(
        "binds-role-wide-moves-a-control",
        (
            "--bind would move 1 control(s)",
            "'c1' (input.dimension 'sex' → 'grp')",
            "--bind c1:dimension=grp",
        ),
        data=MOVED_DATA,
        args=("--bind", "dimension=grp"),
        key="--bind",
        subprocess=True,
    ),
]

# issue 26 item 11: a key whose meaning depends on the tool the policy was written for
CASES += [
    Case(
        "dialect-unknown",
        ("dialect 'aif360' is not one of fairpolicy, venturalitica",),
        policy=policy(dialect="aif360"),
        control="c1",
        key="dialect",
    ),
    Case(
        "dialect-ratio-upper-bound-unmarked",
        (
            "'equalized_odds_ratio' means fairlearn's ratio",
            "Venturalitica's",
            "only makes sense of Venturalitica's meaning",
            "dialect: venturalitica",
        ),
        policy=policy(metric_key="equalized_odds_ratio"),
        control="c1",
        key="metric_key",
        subprocess=True,
    ),
]
