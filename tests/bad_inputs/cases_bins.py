"""Bad-input cases of area *bins*: binning a numeric dimension column (issue 27 item 3).

A ``bins`` value outside the grammar, bins on a control without a dimension, a plain spec
on an intersection, bins naming a column that is not a dimension column: exit 2 from the
policy, nothing written. A binned column holding a non-number, or a value outside explicit
edges: the control is an error (exit 2) naming the column and the fix, never a dropped row.
An unbinned numeric dimension with many small groups is inconclusive with a suggestion of
bins that names concrete edges.
"""

from __future__ import annotations

from tests.bad_inputs.cases import Case, policy

#: 300 rows: ages 18..77 (5 rows each), selection independent of age
AGES = "y_true,y_pred,age,sex\n" + "".join(
    f"{i % 2},{(i // 2) % 2},{18 + i % 60},{'FM'[i % 2]}\n" for i in range(300)
)


def _bins(value: str, **props: str) -> str:
    return policy(input__dimension="age", bins=value, **props)


CASES = [
    Case(
        "bins-bad-grammar",
        ("bins: the edge list '0,x,60' holds a value that is not a number", "0,25,60,inf"),
        policy=_bins("'0,x,60'"),
        data=AGES,
        control="c1",
        key="bins",
    ),
    Case(
        "bins-edges-not-increasing",
        ("not strictly increasing",),
        policy=_bins("'0,60,25'"),
        data=AGES,
        control="c1",
        key="bins",
    ),
    Case(
        "bins-inf-inside",
        ("only the first edge may be -inf",),
        policy=_bins("'0,inf,60'"),
        data=AGES,
        control="c1",
        key="bins",
    ),
    Case(
        "bins-count-out-of-range",
        ("asks for 1 bins; give 2 to 100",),
        policy=_bins("q1"),
        data=AGES,
        control="c1",
        key="bins",
    ),
    Case(
        "bins-without-dimension",
        ("binds no input.dimension",),
        policy=policy(drop=("input.dimension",), metric_key="accuracy", bins="q4"),
        data=AGES,
        control="c1",
        key="bins",
    ),
    Case(
        "bins-plain-spec-on-an-intersection",
        ("must name their column", "age=0,40,inf"),
        policy=policy(input__dimension="'sex,age'", bins="'0,40,inf'"),
        data=AGES,
        control="c1",
        key="bins",
    ),
    Case(
        "bins-names-a-column-that-is-not-a-dimension",
        ("'agee' is not a dimension column",),
        policy=_bins("'agee=q4'"),
        data=AGES,
        control="c1",
        key="bins",
    ),
    Case(
        "bins-on-a-non-numeric-column",
        ("bins q4 apply to 'sex'", "'F', which is not a finite number", "drop its bins"),
        policy=policy(bins="q4"),
        data=AGES,
        report=True,
        control="c1",
        column="sex",
        key="bins",
        subprocess=True,
    ),
    Case(
        "bins-value-outside-the-edges",
        ("row(s) of 'age' lie outside the bins 20,40,60", "from 18 to 77", "-inf,40,inf"),
        policy=_bins("'20,40,60'"),
        data=AGES,
        report=True,
        control="c1",
        column="age",
        key="bins",
    ),
    Case(
        "bins-unbinned-numeric-dimension-suggests-bins",
        ("INCONCLUSIVE", "'age' is numeric with 60 distinct values", "bins: -inf,", "q4"),
        policy=_bins("q4", drop=()).replace("    - {name: bins, value: q4}\n", ""),
        data=AGES,
        code=1,
        report=True,
        note="60 ages of 5 rows each: every group is under min_samples; the message names "
        "the quartile edges to declare",
    ),
]

CASES += [
    Case(
        "bins-names-a-column-the-bound-dimension-lacks",
        ("'income' is not a dimension column of the control (age)",),
        policy=policy(drop=("input.dimension",), bins="'income=q4'"),
        data=AGES,
        args=("--bind", "dimension=age"),
        report=True,
        control="c1",
        key="bins",
        note="a dimension bound on the command line: the bins are checked against it at the run",
    ),
]
