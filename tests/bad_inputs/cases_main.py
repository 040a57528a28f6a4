"""Bad-input rows added while merging the trust work (see CHANGELOG, Unreleased)."""

from __future__ import annotations

from tests.bad_inputs.cases import Case

CASES = [
    Case(
        "main-selection-rate-on-the-target-column-warns",
        ("both bound to column 'y_true'", "not the model's predictions"),
        args=("--bind", "c1:prediction=y_true"),
        code=0,
        report=True,
        note="demographic parity reads only predictions: binding the target there is how an "
        "LL144 selection column is checked, so it runs, with a warning in every report",
    ),
    Case(
        "main-more-than-two-paths-is-a-usage-error",
        ("extra.csv", "more.csv"),
        args=("extra.csv", "more.csv"),
        subprocess=True,
        note="an unquoted glob the shell expanded: a usage error naming every path (it was an "
        "internal error while noting earlier reports, before the paths were read)",
    ),
]
