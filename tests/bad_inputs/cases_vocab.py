"""Bad-input rows: target and prediction with different label vocabularies (issue 16).
Without ``positive_label.target``/``.prediction`` the run stops naming both columns' labels
and both props; a per-role label that is not in its column stops naming the column."""

from __future__ import annotations

from tests.bad_inputs.cases import Case, policy

CREDIT = "y_true,y_pred,sex\n" + "".join(
    f"{'repaid' if i % 3 else 'default'},{'approve' if i % 2 else 'deny'},{'FM'[i % 2]}\n"
    for i in range(120)
)

CASES: list[Case] = [
    Case(
        "vocab-different-labels",
        ("use different labels", "positive_label.target", "positive_label.prediction"),
        data=CREDIT,
        control="c1",
        column="y_true",
        report=True,
        subprocess=True,
    ),
    Case(
        "vocab-role-label-not-in-column",
        ("'repayed' is not one of the labels", "Did you mean 'repaid'"),
        policy=policy(
            **{"positive_label.target": "repayed", "positive_label.prediction": "approve"}
        ),
        data=CREDIT,
        control="c1",
        column="y_true",
        report=True,
    ),
    Case(
        "vocab-role-label-on-one-side-only",
        ("has no positive label",),
        policy=policy(**{"positive_label.target": "repaid"}),
        data=CREDIT,
        control="c1",
        column="y_pred",
        report=True,
    ),
]
