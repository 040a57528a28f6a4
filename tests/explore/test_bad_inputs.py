"""Bad input to ``fairpolicy explore``: exit 2, one paragraph naming the file/column/key
and the fix, no traceback, and nothing written (a previous report stays untouched)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from fairpolicy.cli import main

GOOD = "y_true,y_pred,sex,race,age\n" + "".join(
    f"{i % 2},{(i // 3) % 2},{'FM'[i % 2]},{'ABC'[i % 3]},{20 + i % 50}\n" for i in range(300)
)

#: (id, data text, extra args, fragments the message must hold)
CASES: list[tuple[str, str, list[str], list[str]]] = [
    (
        "explore-one-valued-attribute",
        GOOD.replace(",F,", ",M,"),
        ["--attributes", "sex,race"],
        ["column 'sex'", "one value", "drop it from --attributes"],
    ),
    (
        "explore-all-missing-attribute",
        "y_true,y_pred,sex,race\n"
        + "".join(f"{i % 2},{i % 3 % 2},,{'AB'[i % 2]}\n" for i in range(50)),
        ["--attributes", "sex,race"],
        ["column 'sex'", "(missing)", "one value"],
    ),
    (
        "explore-max-slices",
        GOOD,
        [
            "--attributes",
            "sex,race,age",
            "--bins",
            "50",
            "--min-support",
            "0.001",
            "--max-slices",
            "20",
        ],
        ["preds.csv", "key '--max-slices'", "more than 20 slices", "raise --min-support"],
    ),
    (
        "explore-missing-column",
        GOOD,
        ["--attributes", "sex,rcae"],
        ["column 'rcae'", "Did you mean 'race'"],
    ),
    (
        "explore-missing-target",
        GOOD.replace("y_true", "label"),
        ["--attributes", "sex"],
        ["column 'y_true'"],
    ),
    (
        "explore-multiclass",
        GOOD.replace("\n1,", "\n2,"),
        ["--attributes", "sex"],
        ["3 distinct labels", "two classes"],
    ),
    (
        "explore-label-null",
        GOOD.replace("\n1,0,", "\n,0,", 1),
        ["--attributes", "sex"],
        ["column 'y_true'", "missing value", "data row"],
    ),
    (
        "explore-unclear-positive",
        GOOD.replace("\n1,", "\nyes,")
        .replace("\n0,", "\nno,")
        .replace(",1,", ",yes,")
        .replace(",0,", ",no,"),
        ["--attributes", "sex"],
        ["--positive-label"],
    ),
    (
        "explore-bad-positive",
        GOOD,
        ["--attributes", "sex", "--positive-label", "2"],
        ["'2' is not a label"],
    ),
    (
        "explore-unknown-metric",
        GOOD,
        ["--attributes", "sex", "--metric", "tpr_diff"],
        ["key '--metric'", "not a per-group rate"],
    ),
    ("explore-depth-zero", GOOD, ["--attributes", "sex", "--depth", "0"], ["key '--depth'"]),
    (
        "explore-support-over-one",
        GOOD,
        ["--attributes", "sex", "--min-support", "1.5"],
        ["key '--min-support'"],
    ),
    ("explore-bins-one", GOOD, ["--attributes", "sex", "--bins", "1"], ["key '--bins'"]),
    ("explore-fdr-one", GOOD, ["--attributes", "sex", "--fdr", "1"], ["key '--fdr'"]),
    ("explore-dup-attribute", GOOD, ["--attributes", "sex,sex"], ["listed twice"]),
    (
        "explore-attribute-is-label",
        GOOD,
        ["--attributes", "sex,y_pred"],
        ["column 'y_pred'", "also the target or the prediction"],
    ),
    ("explore-empty-attributes", GOOD, ["--attributes", ","], ["no attribute"]),
    (
        "explore-unknown-format",
        GOOD,
        ["--attributes", "sex", "-o", "sarif"],
        ["unknown format 'sarif'"],
    ),
    (
        "explore-two-stdout",
        GOOD,
        ["--attributes", "sex", "-o", "text", "-o", "json"],
        ["standard output"],
    ),
    ("explore-no-rows", "y_true,y_pred,sex\n", ["--attributes", "sex"], ["no data rows"]),
    ("explore-max-rows", GOOD, ["--attributes", "sex", "--max-rows", "10"], ["10"]),
    ("explore-nested-ragged", GOOD + "1,0,F,A,3,extra\n", ["--attributes", "sex"], ["line"]),
]


@pytest.mark.parametrize(("data", "args", "fragments"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])  # fmt: skip
def test_bad_input_exits_2_naming_the_fix(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    data: str,
    args: list[str],
    fragments: list[str],
) -> None:
    path = tmp_path / "preds.csv"
    path.write_text(data)
    previous = tmp_path / "report.json"
    previous.write_text("previous")
    argv = ["explore", str(path), "--target", "y_true", "--prediction", "y_pred", *args]
    if not any(a.startswith("-o") for a in args):
        argv += ["-o", f"json={previous}"]
    code = main(argv, stdout=io.StringIO())
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("error: ") and "Traceback" not in err and "internal error" not in err
    for f in fragments:
        assert f in err, (f, err)
    assert previous.read_text() == "previous"


def test_output_over_data_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "preds.csv"
    path.write_text(GOOD)
    argv = ["explore", str(path), "--target", "y_true", "--prediction", "y_pred"]
    argv += ["--attributes", "sex", "--emit-policy", str(path)]
    code = main(argv, stdout=io.StringIO())
    assert code == 2 and "data file" in capsys.readouterr().err
    assert path.read_text() == GOOD


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["explore", str(tmp_path / "nope.csv"), "--target", "y", "--prediction", "p",
                 "--attributes", "a"], stdout=io.StringIO())  # fmt: skip
    assert code == 2 and "does not exist" in capsys.readouterr().err
