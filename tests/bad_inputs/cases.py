"""The bad-input matrix: one row per case.

Every row names a policy (YAML text, default: one demographic-parity control ``c1``), a
data file (text, bytes or a generator; default: two groups of 60 rows), extra command-line
arguments, and what must come out: the exit code, message fragments, and which file,
control, column or key the message must name. ``report`` says whether a complete report is
the right outcome (the control's error is *in* the report, as a finding with status
``error``: SARIF/JUnit/GitHub annotations point at it); otherwise the run stops before any
output and a previous report must stay untouched.

A case whose right answer is not exit 2 says why in ``note`` (documented outcomes: quoted
newlines and a BOM just work; scores outside [0, 1] warn and are not renormalised; a group
without positives or all groups under ``min_samples`` is ``inconclusive``, exit 1).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

#: placeholders in ``args``: {tmp} (the case's directory), {policy}, {data}
Data = str | bytes | Callable[[Path], Path] | None

DEFAULT_PROPS: dict[str, str] = {
    "metric_key": "demographic_parity_diff",
    "threshold": '"0.2"',
    "operator": "'<'",
    "input.target": "y_true",
    "input.prediction": "y_pred",
    "input.dimension": "sex",
}


def policy(cid: str = "c1", drop: tuple[str, ...] = (), **props: str) -> str:
    """A one-control bare-list policy; prop values are raw YAML (quote them yourself).
    ``input__target=...`` sets ``input.target``."""
    merged = dict(DEFAULT_PROPS)
    merged.update({k.replace("__", "."): v for k, v in props.items()})
    lines = [f"- control-id: {cid}", "  title: a control", "  props:"]
    lines += [
        f"    - {{name: {name}, value: {value}}}"
        for name, value in merged.items()
        if name not in drop
    ]
    return "\n".join(lines) + "\n"


def rows(n: int = 60, groups: tuple[str, ...] = ("F", "M")) -> str:
    """``n`` rows per group: y_true alternates, y_pred is 1 for the first half (group F)
    or the first third (others)."""
    out = []
    for g_i, g in enumerate(groups):
        k = n // 2 if g_i == 0 else n // 3
        out += [f"{i % 2},{1 if i < k else 0},{g}" for i in range(n)]
    return "\n".join(out) + "\n"


DEFAULT_DATA = "y_true,y_pred,sex\n" + rows()


def binary_scores(values: Callable[[int], str], n: int = 120) -> str:
    lines = ["y_true,y_pred,sex,y_score"]
    lines += [f"{i % 2},{(i // 2) % 2},{'FM'[i % 3 == 0]},{values(i)}" for i in range(n)]
    return "\n".join(lines) + "\n"


def k_scores(k: int, labels: Callable[[int], int], row: Callable[[int], str]) -> str:
    head = "y_true,y_pred,sex," + ",".join(f"s_{j}" for j in range(k))
    body = [f"{labels(i)},{labels(i + 1)},{'FM'[i % 2]},{row(i)}" for i in range(120)]
    return head + "\n" + "\n".join(body) + "\n"


def two_gb_line(tmp: Path) -> Path:
    """A header, then one 2 GiB line: a sparse file (nothing is written but the ends), so it
    costs no disk and no time; the reader must refuse it after its first block."""
    path = tmp / "data.csv"
    with path.open("wb") as fh:
        fh.write(b"y_true,y_pred,sex\n1,0,")
        fh.seek(2 << 30)
        fh.write(b"F\n0,1,M\n")
    return path


def over_64mb_of_cells(tmp: Path) -> Path:
    """Rows whose bound cells alone need more than 64 MiB on the embedded engine (56 bytes a
    cell, 3 columns): over the budget whatever the process already holds, so the outcome
    does not depend on how lean the interpreter is (it did: 120 rows fitted once pydantic
    was no longer imported)."""
    path = tmp / "data.csv"
    path.write_text(DEFAULT_DATA + "0,1,M\n1,0,F\n" * 225_000)
    return path


def utf8_error_late(tmp: Path) -> Path:
    """A Latin-1 byte far beyond the header, in a bound column."""
    body = DEFAULT_DATA + "0,1,M\n" * 200_000 + "1,0,F\xe9\n"  # past the first block
    path = tmp / "data.csv"
    path.write_bytes(body.encode("latin-1"))
    return path


def parquet_garbage(tmp: Path) -> Path:
    path = tmp / "data.parquet"
    path.write_text(DEFAULT_DATA)
    return path


def directory(tmp: Path) -> Path:
    path = tmp / "data.csv"
    path.mkdir()
    return path


@dataclass(frozen=True)
class Case:
    id: str
    fragments: tuple[str, ...]
    policy: str | None = None
    data: Data = None
    args: tuple[str, ...] = ()
    code: int = 2
    #: the message names this file (a base name), control, column and/or key
    file: str | None = None
    control: str | None = None
    column: str | None = None
    key: str | None = None
    #: True: a complete report is written (the error is a finding, or the run passes/fails);
    #: False: nothing is written and a previous report stays as it was
    report: bool = False
    #: add ``-o json=…`` with a previous report in place (False when the case is about -o)
    output: bool = True
    policy_name: str = "policy.yaml"
    data_name: str = "data.csv"
    #: also run this case as a subprocess
    subprocess: bool = False
    note: str = ""


# Billion laughs: nine levels of nine aliases each expand to 9**9 ≈ 387 million nodes.
BILLION_LAUGHS = (
    "bomb:\n  a: &a [x, x, x, x, x, x, x, x, x]\n"
    + "".join(
        f"  {chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]\n"
        for i in range(8)
    )
    + "component-definition:\n  uuid: 0b3a0c52-2d8b-4a5c-9a0e-1f6a2b3c4d5e\n"
    + "  metadata: {title: t, remarks: *i}\n"
)

DATA_CASES = [
    # ------------------------------------------------------------ columns
    Case(
        "missing-dimension-column",
        ("role 'dimension' is bound to column 'sex'", "Did you mean 'Sex'?", "--bind"),
        data=DEFAULT_DATA.replace("sex", "Sex", 1),
        file="data.csv",
        control="c1",
        column="sex",
        report=True,
        subprocess=True,
    ),
    Case(
        "renamed-target-column",
        ("role 'target' is bound to column 'y_true'", "Columns present: label, y_pred, sex"),
        data=DEFAULT_DATA.replace("y_true", "label", 1),
        file="data.csv",
        control="c1",
        column="y_true",
        report=True,
    ),
    Case(
        "padded-header-names",
        (),
        data=DEFAULT_DATA.replace("y_true,y_pred,sex", " y_true , y_pred,sex "),
        code=0,
        report=True,
        note="header names are trimmed, as the policy's column names are",
    ),
    Case(
        "semicolon-delimited",
        ("column 'y_true'", "';'-separated", "comma"),
        data=DEFAULT_DATA.replace(",", ";"),
        file="data.csv",
        control="c1",
        column="y_true",
        report=True,
    ),
    # ------------------------------------------------------------ missing values
    Case(
        "nan-in-target",
        ("column 'y_true' has 1 missing value(s)", "data rows 1", "missing: drop"),
        data=DEFAULT_DATA.replace("\n0,1,F\n", "\nNaN,1,F\n", 1),
        file="data.csv",
        control="c1",
        column="y_true",
        report=True,
    ),
    Case(
        "nan-in-prediction",
        ("column 'y_pred' has 2 missing value(s)", "missing: drop"),
        data=DEFAULT_DATA.replace("\n1,1,F\n", "\n1,,F\n", 2),
        file="data.csv",
        control="c1",
        column="y_pred",
        report=True,
    ),
    Case(
        "nan-in-score",
        ("score column 'y_score' has 1 missing value(s)", "data rows 4"),
        policy=policy(metric_key="auc_gap", input__score="y_score"),
        data=binary_scores(lambda i: "nan" if i == 3 else f"{(i % 7) / 7:.3f}"),
        file="data.csv",
        control="c1",
        column="y_score",
        report=True,
    ),
    Case(
        "empty-dimension-is-the-excluded-missing-group-nan-text-is-a-group",
        (
            "(missing) (n=2): dimension value missing in 'sex'",
            "excluded NaN (n=1): fewer rows than min_samples",
        ),
        data=DEFAULT_DATA + "1,1,\n0,1,NaN\n1,0,\n",
        code=0,
        report=True,
        note="documented: rows without a group value (an empty cell) form the excluded group "
        "'(missing)'; the text 'NaN' is a group name (area groups, issue 12)",
    ),
    Case(
        "dimension-entirely-missing",
        ("column 'sex'", "no group values", "at least two groups"),
        data="y_true,y_pred,sex\n" + "1,0,\n0,1,\n" * 40,
        file="data.csv",
        control="c1",
        column="sex",
        report=True,
    ),
    # ------------------------------------------------------------ label kinds
    Case(
        "string-labels-without-positive-label",
        (
            "labels are text ('no', 'yes')",
            "favourable or selected outcome",
            "positive_label: <no or yes>",
            "--positive-label",
        ),
        data="y_true,y_pred,sex\n" + "yes,no,F\nno,yes,M\nyes,yes,F\nno,no,M\n" * 20,
        file="data.csv",
        control="c1",
        column="y_true",
        report=True,
        subprocess=True,
    ),
    Case(
        "positive-label-not-among-labels",
        ("positive_label 'Yes' does not occur among the labels ['no', 'yes']",),
        policy=policy(positive_label="'Yes'"),
        data="y_true,y_pred,sex\n" + "yes,no,F\nno,yes,M\nyes,yes,F\nno,no,M\n" * 20,
        file="data.csv",
        control="c1",
        column="y_true",
        report=True,
    ),
    Case(
        "probabilities-in-prediction",
        ("column 'y_pred' (prediction)", "probabilities", "input.score"),
        data="y_true,y_pred,sex\n" + "1,0.73,F\n0,0.2,M\n" * 40,
        file="data.csv",
        control="c1",
        column="y_pred",
        report=True,
        subprocess=True,
    ),
    Case(
        "text-prediction-numeric-target",
        ("'y_true' holds numbers but 'y_pred' holds text",),
        data="y_true,y_pred,sex\n" + "1,yes,F\n0,no,M\n" * 40,
        file="data.csv",
        control="c1",
        column="y_pred",
        report=True,
    ),
    # ------------------------------------------------------------ scores
    Case(
        "scores-outside-unit-interval-warn",
        ("1 value(s) of score column 'y_score' fall outside [0, 1]",),
        policy=policy(metric_key="auc_gap", input__score="y_score", threshold='"0.9"'),
        data=binary_scores(lambda i: "1.5" if i == 0 else f"{(i % 5) / 5:.2f}"),
        code=0,
        report=True,
        note="fmm-fairness-eval: warn, never renormalise; the value uses the scores given",
    ),
    Case(
        "score-rows-not-summing-to-one-warn",
        ("do not sum to 1", "not renormalised"),
        policy=policy(
            metric_key="multiclass_demographic_parity", input__score="s", threshold='"0.9"'
        ),
        data=k_scores(3, lambda i: i % 3, lambda i: "0.5,0.5,0.5"),
        code=0,
        report=True,
        note="fmm-fairness-eval: warn, never renormalise",
    ),
    Case(
        "labels-beyond-score-columns",
        ("labels [5] fall outside 0..3", "K=4", "score columns"),
        policy=policy(metric_key="multiclass_demographic_parity", input__score="s"),
        data=k_scores(4, lambda i: 5 if i % 7 == 0 else i % 3, lambda i: "0.25,0.25,0.25,0.25"),
        file="data.csv",
        control="c1",
        column="y_true",
        report=True,
    ),
    Case(
        "text-score-column",
        ("score column 'y_score' holds non-numeric values",),
        policy=policy(metric_key="auc_gap", input__score="y_score"),
        data=binary_scores(lambda i: "high" if i % 2 else "low"),
        file="data.csv",
        control="c1",
        column="y_score",
        report=True,
    ),
    # ------------------------------------------------------------ groups
    Case(
        "single-group",
        ("dimension column 'sex' has only one group ('F')", "at least two groups"),
        data="y_true,y_pred,sex\n" + rows(groups=("F",)),
        file="data.csv",
        control="c1",
        column="sex",
        report=True,
        subprocess=True,
    ),
    Case(
        "all-groups-under-min-samples",
        ("INCONCLUSIVE", "0 group(s) with at least min_samples=30 rows in 'sex'"),
        data="y_true,y_pred,sex\n" + rows(10, ("F", "M", "X")),
        code=1,
        report=True,
        note="documented: no comparable group is inconclusive; it fails the gate by default "
        "(--inconclusive fail)",
    ),
    Case(
        "group-without-positives",
        ("INCONCLUSIVE", "excluded F (n=60): group has no actual positives"),
        policy=policy(metric_key="equal_opportunity_diff"),
        data="y_true,y_pred,sex\n" + "0,1,F\n0,0,F\n" * 30 + "1,1,M\n0,0,M\n1,0,M\n" * 20,
        code=1,
        report=True,
        note="documented: TPR is undefined for a group without positives; the group is "
        "excluded with its reason and one group left is inconclusive",
    ),
    # ------------------------------------------------------------ file shapes
    Case("empty-file", ("the file is empty",), data="", file="data.csv", subprocess=True),
    Case("whitespace-only-file", ("the file is empty",), data="\n \n\n", file="data.csv"),
    Case(
        "header-only",
        ("the file has a header but no data rows",),
        data="y_true,y_pred,sex\n",
        file="data.csv",
    ),
    Case(
        "ragged-rows",
        ("Expected 3 columns, got 4", "line 4", "ragged"),
        data="y_true,y_pred,sex\n1,0,F\n0,1,M\n0,1,M,extra\n" + rows(),
        file="data.csv",
    ),
    Case(
        "unclosed-quote",
        ("the quote opened on line 2 is never closed",),
        data='y_true,y_pred,sex\n1,0,"F\n' + rows(),
        file="data.csv",
        note="the quote swallows the rest of the file: a row with too few fields at the end",
    ),
    Case(
        "bom-just-works",
        (),
        data=b"\xef\xbb\xbf" + DEFAULT_DATA.encode(),
        code=0,
        report=True,
        note="a UTF-8 byte order mark is not part of the first column name",
    ),
    Case(
        "non-utf8-header-region",
        ("the file is not valid UTF-8", "line 2", "re-export the CSV as UTF-8"),
        data=("y_true,y_pred,sex\n1,0,F\xe9\n" + rows()).encode("latin-1"),
        file="data.csv",
    ),
    Case(
        "non-utf8-in-a-bound-column-far-down",
        ("not valid UTF-8", "column 'sex'", "re-export the CSV as UTF-8"),
        data=utf8_error_late,
        file="data.csv",
        column="sex",
    ),
    Case(
        "utf16-file",
        ("not valid UTF-8",),
        data=DEFAULT_DATA.encode("utf-16"),
        file="data.csv",
    ),
    Case(
        "quoted-newlines-just-work",
        ("F\\nx",),
        data="y_true,y_pred,sex\n" + '1,0,"F\nx"\n0,1,M\n1,1,"F\nx"\n0,0,M\n' * 20,
        code=0,
        report=True,
        note="a quoted newline is part of the group name; the text report shows it as \\n",
    ),
    Case(
        "duplicate-bound-column",
        ("the header names column(s) ['sex'] more than once",),
        data="y_true,y_pred,sex,sex\n" + "1,0,F,F\n0,1,M,M\n" * 40,
        file="data.csv",
        column="sex",
    ),
    Case(
        "duplicate-column-after-trimming",
        ("the header names column(s) ['sex'] more than once",),
        data="y_true,y_pred,sex, sex\n" + "1,0,F,F\n0,1,M,M\n" * 40,
        file="data.csv",
        column="sex",
    ),
    Case(
        "duplicate-unbound-column-is-ignored",
        (),
        data="y_true,y_pred,sex,x,x\n" + "1,1,F,1,2\n0,0,F,1,2\n1,0,M,1,2\n0,0,M,1,2\n" * 20,
        code=1,
        report=True,
        note="only the bound columns must be unambiguous",
    ),
    Case(
        "two-gigabyte-line",
        ("longer than", "unclosed quote"),
        data=two_gb_line,
        file="data.csv",
        subprocess=True,
        note="a sparse file: the reader stops at its first block",
    ),
    Case(
        "data-file-missing",
        ("the data file does not exist",),
        data=lambda tmp: tmp / "nope.csv",
        file="nope.csv",
    ),
    Case("data-is-a-directory", ("a directory",), data=directory, file="data.csv"),
    Case(
        "parquet-that-is-not-parquet",
        ("the Parquet file could not be read",),
        data=parquet_garbage,
        file="data.parquet",
    ),
    # ------------------------------------------------------------ task kinds
    Case(
        "binary-metric-on-three-classes",
        ("K=3", "multiclass_demographic_parity", "does not binarise silently"),
        data="y_true,y_pred,sex\n" + "0,1,F\n1,2,M\n2,2,F\n0,0,M\n" * 20,
        file="data.csv",
        control="c1",
        column="y_true",
        report=True,
    ),
    Case(
        "regression-target-on-a-classification-metric",
        ("column 'y_true' (target) holds non-integer values", "class labels"),
        data="y_true,y_pred,sex\n" + "1.5,1,F\n0.25,0,M\n" * 40,
        file="data.csv",
        control="c1",
        column="y_true",
        report=True,
    ),
    Case(
        "regression-metric-on-text",
        ("column 'y_true' (target) holds string values", "needs numbers"),
        policy=policy(metric_key="mae_parity"),
        data="y_true,y_pred,sex\n" + "a,1,F\nb,0,M\n" * 40,
        file="data.csv",
        control="c1",
        column="y_true",
        report=True,
    ),
    Case(
        "infinite-regression-value",
        ("column 'y_pred' (prediction) has 1 infinite value(s)",),
        policy=policy(metric_key="mae_parity"),
        data="y_true,y_pred,sex\n" + "1.5,1,F\n0.25,0,M\n" * 39 + "1,inf,F\n0,1,M\n",
        file="data.csv",
        control="c1",
        column="y_pred",
        report=True,
    ),
]

POLICY_CASES = [
    Case(
        "yaml-duplicate-keys",
        ("duplicate key 'metric_key' on line 3",),
        policy="- control-id: c1\n  props: {metric_key: demographic_parity_diff,\n"
        "    metric_key: accuracy_diff}\n",
        file="policy.yaml",
        key="metric_key",
        subprocess=True,
    ),
    Case(
        "yaml-tabs",
        ("cannot parse YAML", "line 2", "tab"),
        policy="- control-id: c1\n\tprops: []\n",
        file="policy.yaml",
    ),
    Case(
        "yaml-billion-laughs",
        ("alias",),
        policy=BILLION_LAUGHS,
        file="policy.yaml",
        subprocess=True,
    ),
    Case(
        "yaml-deep-nesting",
        ("nested deeper than",),
        policy="[" * 50_000 + "]" * 50_000,
        file="policy.yaml",
    ),
    Case(
        "yaml-python-object-tag",
        ("python/object/apply:os.system", "remove the '!' tag"),
        policy="- control-id: !!python/object/apply:os.system ['touch pwned']\n",
        file="policy.yaml",
        subprocess=True,
    ),
    Case(
        "yaml-huge-integer",
        ("cannot parse YAML: found a number with 5000 digits", "line 5"),
        policy=policy(threshold="9" * 5000),
        file="policy.yaml",
    ),
    Case(
        "wrong-root",
        ("unknown root 'assessment_plan'", "Did you mean 'assessment-plan'?"),
        policy="assessment_plan:\n  uuid: x\n",
        file="policy.yaml",
    ),
    Case(
        "results-instead-of-policy",
        ("assessment-results is an output of fairpolicy check",),
        policy="assessment-results: {}\n",
        file="policy.yaml",
    ),
    Case(
        "scalar-root",
        ("the document is a str",),
        policy="demographic_parity_diff < 0.2\n",
        file="policy.yaml",
    ),
    Case("empty-policy", ("the document is empty",), policy="", file="policy.yaml"),
    Case(
        "colon-prop-names-warn",
        ("OSCAL prop names cannot contain ':'", "input.target"),
        policy=policy().replace("input.", "input:"),
        code=0,
        report=True,
        note="Venturalitica writes input:target; accepted with one warning per file (DESIGN §3)",
    ),
    Case(
        "threshold-ten-percent",
        ("threshold 'ten percent' is not a number", "0.1"),
        policy=policy(threshold="ten percent"),
        file="policy.yaml",
        control="c1",
        key="threshold",
        subprocess=True,
    ),
    Case(
        "threshold-null",
        ("threshold is empty",),
        policy=policy(threshold="null"),
        file="policy.yaml",
        control="c1",
        key="threshold",
    ),
    Case(
        "threshold-nan",
        ("threshold 'nan' is not a finite number",),
        policy=policy(threshold=".nan"),
        file="policy.yaml",
        control="c1",
        key="threshold",
    ),
    Case(
        "threshold-inf",
        ("threshold 'inf' is not a finite number",),
        policy=policy(threshold=".inf"),
        file="policy.yaml",
        control="c1",
        key="threshold",
    ),
    Case(
        "threshold-percent-sign",
        ("threshold '10%' is not a number",),
        policy=policy(threshold="10%"),
        file="policy.yaml",
        control="c1",
        key="threshold",
    ),
    Case(
        "operator-reversed-le",
        ("operator '=<' is not allowed", "Did you mean '<='?"),
        policy=policy(operator="'=<'"),
        file="policy.yaml",
        control="c1",
        key="operator",
    ),
    Case(
        "operator-less-than-word",
        ("operator 'less_than' is not allowed", "Did you mean 'lt'?"),
        policy=policy(operator="less_than"),
        file="policy.yaml",
        control="c1",
        key="operator",
    ),
    Case(
        "unknown-metric-key",
        ("unknown metric_key 'demographic_parity_dif'", "Did you mean 'demographic_parity_diff'"),
        policy=policy(metric_key="demographic_parity_dif"),
        file="policy.yaml",
        control="c1",
        key="metric_key",
    ),
    Case(
        "misspelt-prop",
        ("unknown prop 'min_sample'", "Did you mean 'min_samples'?"),
        policy=policy(min_sample="10"),
        file="policy.yaml",
        control="c1",
        key="min_sample",
    ),
    Case(
        "metric-missing-its-score-binding",
        ("no column is bound to role 'score'",),
        policy=policy(metric_key="auc_gap"),
        file="policy.yaml",
        control="c1",
        key="input.score",
    ),
    Case(
        "policy-file-missing",
        ("policy file not found",),
        policy=None,
        args=("check", "{tmp}/missing.yaml", "{data}"),
        file="missing.yaml",
        subprocess=True,
    ),
    Case(
        "policy-not-utf8",
        ("not UTF-8",),
        policy="- control-id: c\xe9\n",
        policy_name="latin1.yaml",
        file="latin1.yaml",
    ),
    Case(
        "policy-too-large",
        ("larger than", "MiB"),
        policy="# " + "x" * (11 << 20) + "\n" + policy(),
        file="policy.yaml",
    ),
]

OUTPUT_CASES = [
    Case(
        "output-directory-missing",
        (),
        args=("-o", "json={tmp}/no/such/dir/report.json"),
        code=0,
        output=False,
        subprocess=True,
        note="missing parent folders are created, as pytest --junitxml does "
        "(tests/cli/test_outputs.py checks the report)",
    ),
    Case(
        "output-under-a-regular-file",
        ("is not a directory",),
        args=("-o", "json={tmp}/data.csv/report.json"),
        file="report.json",
        output=False,
        note="a read-only directory cannot stop root, so a path under a regular file stands in",
    ),
    Case(
        "output-in-a-read-only-filesystem",
        ("cannot write", "report.json"),
        args=("-o", "json=/proc/report.json"),
        file="report.json",
        output=False,
        note="/proc refuses new files even for root",
    ),
    Case(
        "output-is-a-directory",
        ("is a directory",),
        args=("-o", "json={tmp}"),
        output=False,
    ),
    Case(
        "output-overwrites-the-data",
        ("this is the data file; the report would overwrite it",),
        args=("-o", "json={data}"),
        output=False,
    ),
    Case(
        "unknown-output-format",
        ("unknown output format 'jsno'", "Did you mean 'json'?"),
        args=("-o", "jsno={tmp}/out/x.json"),
    ),
    Case(
        "oscal-output-rejects-a-non-token-control-id",
        ("control-id", "OSCAL"),
        policy=policy(cid="'c 1'"),
        args=("-o", "oscal={tmp}/out/ar.json"),
        control="c 1",
        note="every output is rendered before any is written: the json report stays too",
    ),
]

USAGE_CASES = [
    Case(
        "max-rows-exceeded",
        ("more than 100 rows", "--max-rows"),
        args=("--max-rows", "100"),
        file="data.csv",
        subprocess=True,
    ),
    Case(
        "memory-budget-exceeded",
        ("what is left of --memory-budget 64.0 MiB", "--engine duckdb"),
        data=over_64mb_of_cells,
        args=("--engine", "embedded", "--memory-budget", "64MB"),
        file="data.csv",
    ),
    Case(
        "memory-budget-malformed",
        ("--memory-budget", "'lots'"),
        args=("--memory-budget", "lots"),
    ),
    Case(
        "max-rows-on-an-engine",
        ("more than 100 rows", "--max-rows"),
        args=("--engine", "duckdb", "--max-rows", "100"),
        file="data.csv",
        note="DuckDB counts while aggregating: the limit holds, after the scan",
    ),
    Case(
        "bind-unknown-role",
        ("unknown role 'targt'", "Did you mean 'target'?"),
        args=("--bind", "targt=y_true"),
    ),
    Case(
        "bootstrap-one-resample",
        ("--bootstrap needs 0 (off) or at least 2 resamples",),
        args=("--bootstrap", "1"),
    ),
    Case(
        "num-classes-too-few",
        ("--num-classes", "at least 2"),
        args=("--num-classes", "1"),
    ),
]

CASES = DATA_CASES + POLICY_CASES + OUTPUT_CASES + USAGE_CASES


def _area_cases() -> list[Case]:
    """Cases kept in ``cases_<area>.py`` beside this file (each defines ``CASES``), so
    that work on separate areas adds rows without editing one shared list."""
    import importlib
    import pkgutil

    found: list[Case] = []
    pkg = Path(__file__).parent
    for info in sorted(pkgutil.iter_modules([str(pkg)]), key=lambda m: m.name):
        if info.name.startswith("cases_"):
            module = importlib.import_module(f"tests.bad_inputs.{info.name}")
            found += list(module.CASES)
    return found


CASES += _area_cases()
_ids = [c.id for c in CASES]
assert len(_ids) == len(set(_ids)), "duplicate bad-input case ids"
