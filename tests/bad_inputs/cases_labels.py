"""Bad-input rows of the labels area: label vocabularies, score column ↔ class pairing,
label values that would silently become something else, columns bound twice.

Collected into ``CASES`` by ``cases.py``; run in process, on DuckDB and (``subprocess``)
as real processes by ``test_matrix.py``.
"""

from __future__ import annotations

from pathlib import Path

from tests.bad_inputs.cases import DEFAULT_DATA, Case, policy, rows

NAMES = ("nevus", "melanoma", "bcc")


def text_scores(n: int = 120) -> str:
    """Three text classes, score columns p_0..p_2 (the model's order: nevus, melanoma, bcc)."""
    lines = ["y_true,y_pred,sex,p_0,p_1,p_2"]
    for i in range(n):
        t, p = NAMES[i % 3], NAMES[(i // 3) % 3]
        s = [0.2, 0.2, 0.2]
        s[NAMES.index(t) if i % 4 else NAMES.index(p)] = 0.6
        lines.append(f"{t},{p},{'FM'[i % 2]},{s[0]},{s[1]},{s[2]}")
    return "\n".join(lines) + "\n"


def int_scores(n: int = 120) -> str:
    return text_scores(n).replace("nevus", "0").replace("melanoma", "1").replace("bcc", "2")


AUC = {
    "metric_key": "multi_class_auc_gap",
    "threshold": '"0.5"',
    "operator": "'<'",
}


def parquet_glob(tmp: Path) -> Path:
    """Two Parquet files of one pattern: 'sex' is text in one and a number in the other."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = 60
    y = [i % 2 for i in range(n)]
    pred = [1 if i < 30 else 0 for i in range(n)]
    pq.write_table(
        pa.table({"y_true": y, "y_pred": pred, "sex": ["1"] * 30 + ["2"] * 30}), tmp / "a.parquet"
    )
    pq.write_table(
        pa.table({"y_true": y, "y_pred": pred, "sex": [1] * 30 + [2] * 30}), tmp / "b.parquet"
    )
    return tmp / "*.parquet"


def dropped_group() -> str:
    """Groups F and M with labels; group X has every target missing."""
    out = DEFAULT_DATA + "".join(f",{i % 2},X\n" for i in range(60))
    return out


CASES = [
    # ------------------------------------------------------------ score column ↔ class
    Case(
        "labels-text-labels-positional-scores",
        (
            "binds the score columns ['p_0', 'p_1', 'p_2'] by position only",
            "input.score: bcc=p_0, melanoma=p_1, nevus=p_2",
            "classes: bcc,melanoma,nevus",
        ),
        policy=policy(**AUC, input__score="p"),
        data=text_scores(),
        file="data.csv",
        control="c1",
        column="p_0",
        key="input.score",
        report=True,
        subprocess=True,
    ),
    Case(
        "labels-text-labels-listed-scores",
        ("by position only", "input.score: bcc=p_0"),
        policy=policy(**AUC, input__score='"p_0,p_1,p_2"'),
        data=text_scores(),
        control="c1",
        key="input.score",
        report=True,
    ),
    Case(
        "labels-text-labels-paired-scores",
        (),
        policy=policy(**AUC, input__score='"nevus=p_0, melanoma=p_1, bcc=p_2"'),
        data=text_scores(),
        code=0,
        report=True,
        note="the pairing is declared: the score metric is computed",
    ),
    Case(
        "labels-text-labels-classes-prop",
        (),
        policy=policy(**AUC, input__score="p", classes='"nevus,melanoma,bcc"'),
        data=text_scores(),
        code=0,
        report=True,
        note="the classes prop gives the column order: the score metric is computed",
    ),
    Case(
        "labels-label-outside-the-pairing",
        ("label(s) ['bcc']", "are not among the classes ['nevus', 'melanoma']", "bcc=?"),
        policy=policy(**AUC, input__score='"nevus=p_0, melanoma=p_1"'),
        data=text_scores(),
        control="c1",
        column="y_true",
        report=True,
    ),
    Case(
        "labels-classes-prop-disagrees-with-pairs",
        ("the two orders disagree",),
        policy=policy(
            **AUC,
            input__score='"nevus=p_0, melanoma=p_1, bcc=p_2"',
            classes='"melanoma,nevus,bcc"',
        ),
        data=text_scores(),
        control="c1",
        report=True,
    ),
    Case(
        "labels-classes-prop-count",
        ("lists 2 classes", "binds 3 score columns"),
        policy=policy(**AUC, input__score="p", classes='"nevus,melanoma"'),
        data=text_scores(),
        control="c1",
        column="p_0",
        report=True,
    ),
    Case(
        "labels-half-written-pairing",
        ("pairs some columns with a class (label=column) but not 'p_2'",),
        policy=policy(**AUC, input__score='"nevus=p_0, melanoma=p_1, p_2"'),
        data=text_scores(),
        control="c1",
        key="input.score",
        report=True,
    ),
    Case(
        "labels-class-paired-twice",
        ("pairs the class 'nevus' more than once",),
        policy=policy(**AUC, input__score='"nevus=p_0, nevus=p_1, bcc=p_2"'),
        data=text_scores(),
        control="c1",
        key="input.score",
        report=True,
    ),
    Case(
        "labels-score-column-listed-twice",
        ("lists the score column 's_0' more than once",),
        policy=policy(**AUC, input__score='"s_0,s_0,s_2"'),
        data=int_scores().replace("p_", "s_"),
        control="c1",
        column="s_0",
        key="input.score",
        report=True,
        subprocess=True,
    ),
    Case(
        "labels-score-columns-against-their-names",
        ("so column 's_2' is read as P(class 0)", "input.score: s_0, s_1, s_2"),
        policy=policy(**AUC, input__score='"s_2,s_0,s_1"'),
        data=int_scores().replace("p_", "s_"),
        control="c1",
        column="s_2",
        report=True,
    ),
    Case(
        "labels-integer-class-not-whole",
        ("class '0.5'", "is not a whole number"),
        policy=policy(**AUC, input__score="p", classes='"0,0.5,2"'),
        data=int_scores(),
        control="c1",
        column="y_true",
        report=True,
    ),
    Case(
        "labels-single-score-text-labels-no-positive",
        ("holds P(positive class)", "input.score: <no or yes>=y_score"),
        policy=policy(**AUC, input__score="y_score"),
        data="y_true,y_pred,sex,y_score\n"
        + "".join(
            f"{'yes' if i % 2 else 'no'},{'yes' if i % 3 else 'no'},"
            f"{'FM'[i % 2 == 0 and i % 5 > 0]},{(i % 7) / 7:.3f}\n"
            for i in range(120)
        ),
        control="c1",
        column="y_score",
        key="input.score",
        report=True,
    ),
    # ------------------------------------------------------------ label values
    Case(
        "labels-positive-label-fraction",
        ("positive_label '0.5' is not a whole number",),
        policy=policy(metric_key="equal_opportunity_diff", positive_label='"0.5"'),
        control="c1",
        column="y_true",
        report=True,
        subprocess=True,
    ),
    Case(
        "labels-positive-label-absent-k-aware",
        ("positive_label '2' does not occur among the labels ['0', '1']",),
        policy=policy(metric_key="multiclass_demographic_parity", positive_label="'2'"),
        control="c1",
        column="y_true",
        report=True,
    ),
    Case(
        "labels-inf-in-target",
        ("column 'y_true' (target) holds the value inf (data row 3)", "not a class label"),
        data="y_true,y_pred,sex\n0,1,F\n1,1,F\ninf,1,F\n" + rows(),
        file="data.csv",
        control="c1",
        column="y_true",
        report=True,
        subprocess=True,
    ),
    Case(
        "labels-1e20-in-prediction",
        ("column 'y_pred' (prediction) holds the value 1e+20", "2**53"),
        data="y_true,y_pred,sex\n0,1e20,F\n" + rows(),
        file="data.csv",
        control="c1",
        column="y_pred",
        report=True,
    ),
    Case(
        "labels-padded-twin-labels",
        ("labels 'yes' and 'yes ' of 'y_true'/'y_pred' differ only by surrounding whitespace",),
        policy=policy(metric_key="multiclass_demographic_parity"),
        data="y_true,y_pred,sex\n"
        + "".join(
            f"{'yes' if i % 2 else 'no'},{'yes ' if i % 5 == 0 else 'no'},{'FM'[i % 2]}\n"
            for i in range(120)
        ),
        control="c1",
        column="y_true",
        report=True,
    ),
    # ------------------------------------------------------------ columns bound twice
    Case(
        "labels-prediction-bound-to-target",
        ("target and prediction are both bound to column 'y_true'",),
        policy=policy(metric_key="equal_opportunity_diff"),
        args=("--bind", "c1:prediction=y_true"),
        control="c1",
        column="y_true",
        report=True,
        subprocess=True,
    ),
    Case(
        "labels-prediction-bound-to-target-selection-rate",
        (),
        policy=policy(input__prediction="y_true"),
        code=0,
        report=True,
        note="demographic parity reads the predictions alone: one column for both roles is "
        "an audit of selections (as NYC LL144's impact ratios)",
    ),
    Case(
        "labels-score-bound-to-target",
        ("input.score binds the target column 'y_true' as a score",),
        policy=policy(metric_key="auc_gap", input__score="y_true"),
        control="c1",
        column="y_true",
        report=True,
    ),
    Case(
        "labels-ranking-score-is-one-column",
        ("role 'score' is bound to column 'p'", "Columns present"),
        policy=policy(
            drop=("input.target", "input.prediction"),
            metric_key="exposure_ratio",
            operator="'>'",
            input__score="p",
        ),
        data=int_scores(),
        control="c1",
        column="p",
        report=True,
        note="",
    ),
    # ------------------------------------------------------------ missing: drop, globs
    Case(
        "labels-drop-empties-a-group",
        ("missing: drop removed every row of group(s) X (60 rows) of 'sex'", "excluded X"),
        policy=policy(missing="drop"),
        data=dropped_group(),
        code=0,
        report=True,
        note="the user may mean it (labels of that group not in yet): the group is listed as "
        "excluded with the reason and a warning, in every report",
    ),
    Case(
        "labels-drop-leaves-one-group",
        ("1 group(s) left in 'sex' after missing: drop removed every row of X", "excluded X"),
        policy=policy(missing="drop"),
        data="y_true,y_pred,sex\n"
        + rows(groups=("F",))
        + "".join(f",{i % 2},X\n" for i in range(60)),
        code=1,
        report=True,
        note="like every comparison left with fewer than two groups: inconclusive (fails the "
        "gate by default), the emptied group listed as excluded",
    ),
    Case(
        "labels-parquet-glob-types-disagree",
        ("disagree on column 'sex'", "a.parquet has it as string", "b.parquet as integer"),
        data=parquet_glob,
        column="sex",
        report=False,
    ),
]
