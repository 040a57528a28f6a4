"""Bad data and bad bindings: exit 2 (or status error) with a message naming file/control/column."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest

import fairpolicy
from fairpolicy.cli import main
from fairpolicy.errors import DataError
from tests.helpers import balanced_csv, control, write_csv, write_policy


def run(*argv: str) -> int:
    return main(list(argv), stdout=io.StringIO())


def only_finding(policy: Path, data: object) -> fairpolicy.results.Finding:  # type: ignore[name-defined]
    res = fairpolicy.check(policy, data)
    assert len(res.findings) == 1
    return res.findings[0]


def assert_error(tmp: Path, data: Path, *fragments: str, **ctl: str) -> str:
    pol = write_policy(tmp, control(**ctl))
    f = only_finding(pol, data)
    assert f.status == "error", f
    for frag in fragments:
        assert frag in f.message, (frag, f.message)
    assert run("check", str(pol), str(data)) == 2
    return f.message


def test_missing_column_names_file_control_column_and_close_match(tmp_path: Path) -> None:
    data = write_csv(tmp_path, "y_true,y_pred,gender\n" + "1,0,F\n0,1,M\n" * 40)
    msg = assert_error(tmp_path, data, "data.csv", "control 'c1'", "column 'sex'", "--bind")
    assert "gender" in msg


def test_nan_labels(tmp_path: Path) -> None:
    data = write_csv(tmp_path, "y_true,y_pred,sex\n" + "1,0,F\n,1,M\n" * 40)
    assert_error(
        tmp_path, data, "column 'y_true'", "40 missing value(s)", "data rows 2, 4", "missing: drop"
    )


def test_missing_drop_counts_rows(tmp_path: Path) -> None:
    data = write_csv(tmp_path, "y_true,y_pred,sex\n" + "1,0,F\n,1,M\n1,1,M\n0,0,F\n" * 40)
    pol = write_policy(tmp_path, control(missing="drop", threshold="0.5", operator=">="))
    res = fairpolicy.check(pol, data)
    assert res.findings[0].status == "pass"
    assert sum(g.n for g in res.findings[0].groups) == 120
    assert any("dropped 40 row(s)" in w for w in res.warnings)


def test_string_labels_need_positive_label(tmp_path: Path) -> None:
    data = write_csv(
        tmp_path, "y_true,y_pred,sex\n" + "yes,no,F\nno,yes,M\nyes,yes,F\nno,no,M\n" * 20
    )
    assert_error(tmp_path, data, "positive_label", "column 'y_true'")
    pol = write_policy(tmp_path, control(positive_label="yes", threshold="0.9"), name="ok.yaml")
    f = only_finding(pol, data)
    assert f.status == "pass" and f.classes == ["no", "yes"]


def test_probabilities_in_prediction_column(tmp_path: Path) -> None:
    data = write_csv(tmp_path, "y_true,y_pred,sex\n" + "1,0.73,F\n0,0.2,M\n" * 40)
    assert_error(tmp_path, data, "column 'y_pred'", "probabilities", "input.score")


def test_integral_floats_are_labels(tmp_path: Path) -> None:
    data = write_csv(
        tmp_path, "y_true,y_pred,sex\n" + "1.0,0.0,F\n0.0,1.0,M\n1.0,1.0,F\n0.0,0.0,M\n" * 40
    )
    pol = write_policy(tmp_path, control(threshold="0.9"))
    assert only_finding(pol, data).status == "pass"


def test_text_vs_number_labels(tmp_path: Path) -> None:
    data = write_csv(tmp_path, "y_true,y_pred,sex\n" + "1,yes,F\n0,no,M\n" * 40)
    assert_error(tmp_path, data, "holds numbers but 'y_pred' holds text")


def test_binary_metric_on_multiclass_names_replacement(tmp_path: Path) -> None:
    data = write_csv(tmp_path, "y_true,y_pred,sex\n" + "0,1,F\n1,2,M\n2,2,F\n" * 20)
    msg = assert_error(tmp_path, data, "K=3", "multiclass_demographic_parity", "weighted_f1_gap")
    assert "demographic_parity_diff" in msg


def test_one_group_in_the_data_is_an_error(tmp_path: Path) -> None:
    """A dimension column with a single value is a binding mistake: exit 2."""
    data = write_csv(tmp_path, "y_true,y_pred,sex\n" + "1,0,F\n0,1,F\n" * 40)
    assert_error(tmp_path, data, "data.csv", "column 'sex'", "only one group", "'F'")


def test_one_group_left_after_exclusions_is_inconclusive(tmp_path: Path) -> None:
    data = write_csv(tmp_path, "y_true,y_pred,sex\n" + "1,0,F\n0,1,F\n" * 40 + "1,1,M\n" * 3)
    pol = write_policy(tmp_path, control())
    f = only_finding(pol, data)
    assert f.status == "inconclusive" and f.value is None
    assert "at least 2" in (f.reason or "")
    assert run("check", str(pol), str(data)) == 1


def test_small_groups_excluded(tmp_path: Path) -> None:
    rows = "1,1,F\n0,0,F\n" * 20 + "1,0,M\n0,0,M\n" * 20 + "1,1,X\n" * 5
    data = write_csv(tmp_path, "y_true,y_pred,sex\n" + rows)
    pol = write_policy(tmp_path, control(threshold="0.9"))
    f = only_finding(pol, data)
    assert f.status == "pass"
    assert [(e.group, e.n) for e in f.excluded_groups] == [("X", 5)]
    assert "min_samples=30" in f.excluded_groups[0].reason


def test_missing_dimension_is_unknown_group(tmp_path: Path) -> None:
    rows = "1,1,F\n0,0,F\n" * 20 + "1,0,M\n0,0,M\n" * 20 + "1,1,\n" * 7
    data = write_csv(tmp_path, "y_true,y_pred,sex\n" + rows)
    f = only_finding(write_policy(tmp_path, control(threshold="0.9")), data)
    assert ("unknown", 7) in [(e.group, e.n) for e in f.excluded_groups]


def test_intersection_groups(tmp_path: Path) -> None:
    rows = "".join(
        f"{i % 2},{(i // 2) % 2},{'FM'[i % 3 == 0]},{'ab'[i % 5 == 0]}\n" for i in range(600)
    )
    data = write_csv(tmp_path, "y_true,y_pred,sex,race\n" + rows)
    pol = write_policy(tmp_path, control(dimension="sex,race", threshold="0.9"))
    f = only_finding(pol, data)
    df = pd.read_csv(data)
    expected = df.groupby(["sex", "race"]).size()
    assert {g.group: g.n for g in f.groups} == {
        f"{s} & {r}": int(n) for (s, r), n in expected.items()
    }


@pytest.mark.parametrize(
    ("content", "fragment"),
    [("", "empty"), ("y_true,y_pred,sex\n", "no data rows")],
)
def test_empty_and_header_only(tmp_path: Path, content: str, fragment: str) -> None:
    data = write_csv(tmp_path, content)
    pol = write_policy(tmp_path, control())
    with pytest.raises(DataError, match=fragment):
        fairpolicy.check(pol, data)
    assert run("check", str(pol), str(data)) == 2


def test_missing_data_file(tmp_path: Path) -> None:
    pol = write_policy(tmp_path, control())
    with pytest.raises(DataError, match="does not exist"):
        fairpolicy.check(pol, tmp_path / "nope.csv")


def test_dataframe_input(tmp_path: Path) -> None:
    df = pd.read_csv(balanced_csv(tmp_path))
    pol = write_policy(tmp_path, control(threshold="0.3"))
    res = fairpolicy.check(pol, df)
    assert res.findings[0].value == 0.25 and res.exit_code == 0
    assert res.data.path is None and res.data.rows == 80


def test_parquet_input(tmp_path: Path) -> None:
    df = pd.read_csv(balanced_csv(tmp_path))
    path = tmp_path / "d.parquet"
    df.to_parquet(path)
    res = fairpolicy.check(write_policy(tmp_path, control(threshold="0.3")), path)
    assert res.findings[0].value == 0.25


def test_score_columns_set_k_and_are_cross_checked(tmp_path: Path) -> None:
    head = "y_true,y_pred,sex,s_0,s_1,s_2,s_3\n"
    rows = "".join(f"{i % 3},{(i + 1) % 3},{'FM'[i % 2]},0.25,0.25,0.25,0.25\n" for i in range(120))
    data = write_csv(tmp_path, head + rows)
    pol = write_policy(
        tmp_path,
        control(metric="multiclass_demographic_parity", threshold="0.9", **{"input__score": "s"}),
    )
    res = fairpolicy.check(pol, data)
    assert res.findings[0].classes == ["0", "1", "2", "3"]
    assert any("class(es) [3]" in w for w in res.warnings)
    # labels beyond the score columns: error
    data2 = write_csv(
        tmp_path,
        head + rows.replace("0.25,0.25,0.25,0.25", "0.5,0.5,0,0").replace(",2,", ",5,"),
        "d2.csv",
    )
    f = fairpolicy.check(pol, data2).findings[0]
    assert f.status == "error" and "outside 0..3" in f.message


def test_num_classes_override_warns(tmp_path: Path) -> None:
    head = "y_true,y_pred,sex,s_0,s_1,s_2\n"
    rows = "".join(f"{i % 3},{(i + 1) % 3},{'FM'[i % 2]},0.2,0.3,0.5\n" for i in range(120))
    data = write_csv(tmp_path, head + rows)
    pol = write_policy(
        tmp_path,
        control(metric="multiclass_demographic_parity", threshold="0.9", **{"input__score": "s"}),
    )
    res = fairpolicy.check(pol, data, num_classes=4)
    assert any("overrides" in w for w in res.warnings)
    assert res.findings[0].classes == ["0", "1", "2", "3"]


def test_scores_outside_unit_interval_warn(tmp_path: Path) -> None:
    rows = "".join(
        f"{i % 2},{i % 2},{'FM'[i % 3 == 0]},{1.5 if i == 0 else 0.5}\n" for i in range(100)
    )
    data = write_csv(tmp_path, "y_true,y_pred,sex,y_score\n" + rows)
    pol = write_policy(tmp_path, control(threshold="0.9", **{"input__score": "y_score"}))
    res = fairpolicy.check(pol, data)
    assert any("outside [0, 1]" in w for w in res.warnings)


def test_policy_object_is_reusable_across_data(tmp_path: Path) -> None:
    pol = fairpolicy.load_policy(write_policy(tmp_path, control(threshold="0.3")))
    assert fairpolicy.check(pol, balanced_csv(tmp_path)).exit_code == 0


def test_infinite_regression_values_are_an_error(tmp_path: Path) -> None:
    rows = "".join(f"{i * 1.5},{'inf' if i == 7 else i},{'FM'[i % 2]}\n" for i in range(80))
    data = write_csv(tmp_path, "y,yhat,sex\n" + rows)
    pol = write_policy(tmp_path, control(metric="mae_parity", target="y", prediction="yhat"))
    f = only_finding(pol, data)
    assert f.status == "error" and "infinite" in f.message and "column 'yhat'" in f.message


def test_ranking_ties_warn(tmp_path: Path) -> None:
    rows = "".join(f"{i // 2},{'FM'[i % 3 == 0]}\n" for i in range(90))
    data = write_csv(tmp_path, "score,sex\n" + rows)
    pol = write_policy(
        tmp_path,
        {
            "control-id": "exp",
            "props": [
                {"name": "metric_key", "value": "exposure_ratio"},
                {"name": "threshold", "value": "0.5"},
                {"name": "operator", "value": ">="},
                {"name": "input.score", "value": "score"},
                {"name": "input.dimension", "value": "sex"},
            ],
        },
    )
    res = fairpolicy.check(pol, data)
    assert res.findings[0].status in ("pass", "fail")
    assert any("tie(s) in 'score'" in w for w in res.warnings)
