"""Bad-input cases of area *positive_label* (issue 27 item 4): the run-wide default.

An empty ``--positive-label`` is a usage error naming the flag; a default that names no
label of the data is the control's error naming the labels, as a control's own
``positive_label`` is.
"""

from __future__ import annotations

from tests.bad_inputs.cases import Case

TEXT = "y_true,y_pred,sex\n" + "yes,no,F\nno,yes,M\nyes,yes,F\nno,no,M\n" * 20

CASES = [
    Case(
        "positive-label-flag-empty",
        ("positive_label must be a label", "--positive-label approved"),
        data=TEXT,
        args=("--positive-label", " "),
        key="--positive-label",
    ),
    Case(
        "positive-label-flag-names-no-label",
        ("positive_label 'approved' does not occur among the labels",),
        data=TEXT,
        args=("--positive-label", "approved"),
        report=True,
        control="c1",
    ),
]
