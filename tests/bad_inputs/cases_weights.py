"""Bad-input rows of the sample-weights area (``input.weight`` / ``--bind weight=COL``):
every weight that cannot be read (not a finite, non-negative number), fractional (survey)
weights (or undeclared ones, read as survey weights) on a metric that cannot take them, a
group whose rows all weigh 0, controls that disagree on the weights, a weight column bound
to another role, and a weight on a ranking metric. Each is exit 2 naming the column (or
control) and value."""

from __future__ import annotations

from tests.bad_inputs.cases import DEFAULT_DATA, Case, policy


def weighted(weight_of: str) -> str:
    """The default data with a column ``w``: ``weight_of`` is an expression in ``i`` (the
    row) and ``g`` (the group: 'F' or 'M') giving the row's weight text."""
    lines = DEFAULT_DATA.splitlines()
    out = [lines[0] + ",w"]
    for i, line in enumerate(lines[1:]):
        out.append(f"{line},{eval(weight_of, {'i': i, 'g': line.rsplit(',', 1)[1]})}")
    return "\n".join(out) + "\n"


WEIGHTED = policy(input__weight="w")
BIND = ("--bind", "weight=w")


def _missing_prediction_at_row_13() -> str:
    """Rows 1-5 weigh 0 (left out of the weighted table), row 13 has no prediction."""
    lines = weighted("'0' if i < 5 else '3'").splitlines()
    t, _, g, w = lines[13].split(",")
    lines[13] = f"{t},,{g},{w}"
    return "\n".join(lines) + "\n"


CASES: list[Case] = [
    Case(
        "weights-constant-fraction-decided-exactly",
        ("violates < 0.1",),
        policy=policy(input__weight="w", threshold='"0.1"', min_samples='"1"'),
        data="y_true,y_pred,sex,w\n"
        + "".join(f"{i % 2},{int(i < 5)},F,0.3\n" for i in range(10))
        + "".join(f"{i % 2},{int(i < 4)},M,0.3\n" for i in range(10)),
        code=1,
        report=True,
        subprocess=True,
        note="issue 26: a parity gap of exactly 1/10 under a constant weight 0.3 (float sums "
        "give 0.10000000000000003 or 0.09999999999999998) is decided on the exact weighted "
        "sums: a constant weight never changes a verdict",
    ),
    Case(
        "weights-negative",
        ("weight column", "negative value", "-1.0"),
        policy=WEIGHTED,
        data=weighted("'-1' if i == 7 else '2'"),
        file="data.csv",
        column="w",
        key="input.weight",
    ),
    Case(
        "weights-infinite",
        ("weight column", "non-finite value", "inf"),
        data=weighted("'inf' if i == 3 else '1'"),
        args=BIND,
        file="data.csv",
        column="w",
        key="input.weight",
    ),
    Case(
        "weights-missing-value",
        ("weight column", "missing value", "give every row a weight"),
        policy=WEIGHTED,
        data=weighted("'' if i == 90 else '1'"),
        file="data.csv",
        column="w",
        key="input.weight",
    ),
    Case(
        "weights-nan-text",
        ("weight column", "missing value"),
        policy=WEIGHTED,
        data=weighted("'NaN' if i == 5 else '1'"),
        file="data.csv",
        column="w",
        key="input.weight",
    ),
    Case(
        "weights-not-numeric",
        ("weight column", "not numbers", "'heavy'"),
        policy=WEIGHTED,
        data=weighted("'heavy' if i == 100 else '1'"),
        file="data.csv",
        column="w",
        key="input.weight",
    ),
    Case(
        "weights-fractional-overflowing",
        ("weight column", "sum overflows a double", "rescale the weights"),
        policy=WEIGHTED,
        data=weighted("'1.5e307' if i % 2 else '0.5'"),
        file="data.csv",
        column="w",
        key="input.weight",
    ),
    Case(
        "weights-fractional-subnormal",
        ("weight column", "too small to sum precisely", "rescale the weights"),
        policy=WEIGHTED,
        data=weighted("'1e-310' if i == 3 else '0.5'"),
        file="data.csv",
        column="w",
        key="input.weight",
    ),
    Case(
        "weights-fractional-on-a-regression-metric",
        ("read as survey / importance weights", "'mae_parity'", "resampled without"),
        policy=policy(input__weight="w", metric_key="mae_parity"),
        data=weighted("'1.5' if i % 2 else '1'"),
        file="data.csv",
        control="c1",
        column="w",
        key="input.weight",
        report=True,  # a per-control error: the other controls still evaluate
    ),
    Case(
        "weights-all-zero-group",
        ("every row of group", "'F'", "weight 0", "silently drop out"),
        policy=WEIGHTED,
        data=weighted("'0' if g == 'F' else '3'"),
        file="data.csv",
        column="w",
        key="input.weight",
    ),
    Case(
        "weights-controls-disagree",
        ("'c1' is weighted by column 'w'", "'c2' binds no weight", "same sample weights"),
        policy=WEIGHTED + policy("c2"),
        data=weighted("'2'"),
        file="policy.yaml",
        control="c2",
        key="input.weight",
    ),
    Case(
        "weights-ranking-metric",
        (
            "metric 'exposure_ratio'",
            "cannot be weighted",
            "count-based metrics and regression sums only",
        ),
        policy=policy(
            metric_key="exposure_ratio",
            threshold='"0.5"',
            operator="'>'",
            input__rank="y_pred",
            input__weight="w",
            drop=("input.target", "input.prediction"),
        ),
        data=weighted("'2'"),
        control="c1",
        key="input.weight",
        report=True,
    ),
    Case(
        "weights-column-absent",
        ("'nope'",),
        data=DEFAULT_DATA,
        args=("--bind", "weight=nope"),
        column="nope",
        report=True,
    ),
    Case(
        # whole numbers are no evidence of frequency weights: undeclared, they are read as
        # survey weights, which a regression metric cannot take — the message names the fix
        "weights-undeclared-whole-numbers-on-a-regression-metric",
        ("read as survey / importance weights", "'mae_parity'", "weight_kind: frequency"),
        policy=policy(input__weight="w", metric_key="mae_parity"),
        data=weighted("'2' if i % 2 else '4'"),
        file="data.csv",
        control="c1",
        column="w",
        key="input.weight",
        report=True,
    ),
    Case(
        "weights-messages-name-data-rows",
        ("column 'y_pred' has 3 missing value(s)", "first at data rows 13"),
        policy=policy(input__weight="w", weight_kind="frequency"),
        data=_missing_prediction_at_row_13(),
        file="data.csv",
        control="c1",
        column="y_pred",
        report=True,
    ),
    Case(
        "weights-column-is-the-target",
        ("'y_true' is bound both as the sample weight and as input.target",),
        policy=policy(input__weight="y_true"),
        data=DEFAULT_DATA,
        control="c1",
        column="y_true",
        key="input.weight",
        report=True,
    ),
]
