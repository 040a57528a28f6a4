"""``--rename`` and ``--bind`` move only the controls they mean, and say so everywhere
(issue 26 items 10 and 13).

The case: the credit example with its column ``sex`` renamed ``gender``. Following the old
suggestion (``--bind dimension=gender``) moved the age and race controls onto ``gender``
too, and a WARN became a PASS with nothing saying so.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import fairpolicy
from fairpolicy.cli import main
from fairpolicy.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]
POLICY = ROOT / "examples" / "credit" / "policy.yaml"
SEX = ("four-fifths-sex", "equal-opportunity-sex", "demographic-parity-sex-race")


@pytest.fixture(scope="module")
def renamed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    df = pd.read_csv(ROOT / "examples" / "credit" / "predictions.csv")
    out = tmp_path_factory.mktemp("credit") / "gender.csv"
    df.rename(columns={"sex": "gender"}).to_csv(out, index=False)
    return out


def test_the_missing_column_error_suggests_the_rename(
    renamed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", str(POLICY), str(renamed)]) == 2
    out = capsys.readouterr()
    text = out.out + out.err
    assert "--rename sex=COLUMN" in text and "--bind dimension=COLUMN" not in text
    assert "--bind four-fifths-sex:dimension=COLUMN" in text


def test_rename_equals_the_original_data(renamed: Path) -> None:
    """``--rename sex=gender`` on the renamed data gives exactly the original run's
    findings (values, statuses: the WARN stays a WARN); only the sex controls changed, and
    each is named."""
    original = fairpolicy.check(str(POLICY), str(ROOT / "examples" / "credit" / "predictions.csv"))
    moved = fairpolicy.check(str(POLICY), str(renamed), rename={"sex": "gender"})
    for a, b in zip(original.findings, moved.findings, strict=True):
        assert (a.control_id, a.value, a.status) == (b.control_id, b.value, b.status)
    changed = {f.control_id: f.bind_changes for f in moved.findings if f.bind_changes}
    assert set(changed) == set(SEX)
    assert changed["demographic-parity-sex-race"][0].written == "sex,race"
    assert changed["demographic-parity-sex-race"][0].read == "gender,race"
    assert all(c[0].by == "--rename sex=gender" for c in changed.values())
    named = [w for w in moved.warnings if w.startswith("--rename sex=gender changed control")]
    assert len(named) == 3
    assert moved.run.options["rename"] == {"sex": "gender"}


def test_a_bind_for_every_control_may_not_move_controls_off_columns_the_data_has(
    renamed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", str(POLICY), str(renamed), "--bind", "dimension=gender"]) == 2
    err = capsys.readouterr().err
    for cid in ("equalized-odds-age", "predictive-parity-race", "accuracy-age",
                "demographic-parity-sex-race"):  # fmt: skip
        assert f"'{cid}'" in err, err
    assert "--rename OLD=NEW" in err and "--bind equalized-odds-age:dimension=gender" in err
    assert "Traceback" not in err
    with pytest.raises(UsageError):
        fairpolicy.check(str(POLICY), str(renamed), bind={"dimension": "gender"})


def test_a_per_control_bind_moves_that_control_only(renamed: Path) -> None:
    res = fairpolicy.check(
        str(POLICY),
        str(renamed),
        bind={"four-fifths-sex:dimension": "gender", "equalized-odds-age:dimension": "race"},
    )
    changed = {f.control_id: f.bind_changes for f in res.findings if f.bind_changes}
    assert set(changed) == {"four-fifths-sex", "equalized-odds-age"}
    assert changed["equalized-odds-age"][0].written == "age_band"
    assert changed["equalized-odds-age"][0].by == "--bind equalized-odds-age:dimension=race"
    by_id = {f.control_id: f for f in res.findings}
    assert by_id["equal-opportunity-sex"].status == "error"  # still on the missing 'sex'


FORMATS = ("text", "json", "junit", "sarif", "markdown", "html", "oscal", "github")


def test_every_output_names_each_changed_control(renamed: Path, tmp_path: Path) -> None:
    args = ["check", str(POLICY), str(renamed), "--rename", "sex=gender"]
    for fmt in FORMATS:
        args += ["-o", f"{fmt}={tmp_path / fmt}"]
    assert main(args) == 0
    for fmt in FORMATS:
        text = (tmp_path / fmt).read_text()
        for cid in SEX:
            assert "--rename sex=gender" in text and cid in text, (fmt, cid)
    oscal = (tmp_path / "oscal").read_text()
    assert oscal.count('"bind-changed"') == 3
    doc = json.loads((tmp_path / "json").read_text())
    assert sum(1 for f in doc["findings"] if f.get("bind_changes")) == 3


def test_the_terminal_summary_as_a_subprocess(renamed: Path) -> None:
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "fairpolicy",
            "check",
            str(POLICY),
            str(renamed),
            "--rename",
            "sex=gender",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    for cid in SEX:
        assert f"--rename sex=gender changed control '{cid}'" in run.stdout
    moved = subprocess.run(
        [
            sys.executable,
            "-m",
            "fairpolicy",
            "check",
            str(POLICY),
            str(renamed),
            "--bind",
            "dimension=gender",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert moved.returncode == 2 and "would move" in moved.stderr
    assert "Traceback" not in moved.stderr


def test_a_bind_that_supplies_an_open_role_is_named(tmp_path: Path) -> None:
    """A role the policy leaves open (a template's) is supplied, and the controls that read
    it are named: nothing is moved silently."""
    pol = [
        {
            "control-id": "c",
            "props": [
                {"name": "metric_key", "value": "demographic_parity_diff"},
                {"name": "operator", "value": "<"},
                {"name": "threshold", "value": "0.5"},
                {"name": "input.target", "value": "approved"},
                {"name": "input.prediction", "value": "predicted"},
            ],
        }
    ]
    res = fairpolicy.check(
        pol, str(ROOT / "examples" / "credit" / "predictions.csv"), bind={"dimension": "race"}
    )
    (change,) = res.findings[0].bind_changes
    assert change.written is None and change.read == "race"
    assert any("input.dimension (not written) now reads 'race'" in w for w in res.warnings)


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"bind": ["dimension=gender"]}, "bind= takes a mapping, not a list"),
        ({"bind": {"dimension": None}}, "the value must be a column name"),
        ({"bind": {"dimension": ""}}, "the value must be a column name"),
        ({"bind": {"dimension": 3}}, "the value must be a column name"),
        ({"bind": {1: "x"}}, "keys are non-empty text"),
        ({"rename": "sex=gender"}, "rename= takes a mapping, not a str"),
        ({"rename": {"sex": None}}, "the value must be a column name"),
        ({"rename": {"nope": "gender"}}, "no control reads a column 'nope'"),
        ({"bind": {"sex": "gender"}}, "pass --rename sex=gender"),
        ({"bind": {"colour": "gender"}}, "unknown role 'colour'"),
        ({"bind": {"nope:dimension": "gender"}}, "the policy has no control 'nope'"),
        ({"bind": {"four-fifths-sex:colour": "gender"}}, "unknown role 'colour'"),
    ],
)
def test_the_api_refuses_bad_binds_with_a_usage_error(
    renamed: Path, kwargs: dict[str, object], fragment: str
) -> None:
    with pytest.raises(UsageError) as err:
        fairpolicy.check(str(POLICY), str(renamed), **kwargs)  # type: ignore[arg-type]
    assert fragment in str(err.value)


def test_the_configuration_file_takes_rename_and_per_control_binds(
    renamed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "fairpolicy.toml").write_text(
        'rename = {sex = "gender"}\nbind = {"accuracy-age:dimension" = "race"}\n'
    )
    out = tmp_path / "r.json"
    code = main(["check", "--config", str(tmp_path / "fairpolicy.toml"), str(POLICY),
                 str(renamed), "-o", f"json={out}"])  # fmt: skip
    assert code == 0, capsys.readouterr()
    doc = json.loads(out.read_text())
    changed = {f["control_id"] for f in doc["findings"] if f.get("bind_changes")}
    assert changed == {*SEX, "accuracy-age"}
    assert doc["run"]["options"]["rename"] == {"sex": "gender"}


def test_explain_names_the_option_that_changed_a_column(
    renamed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["check", str(POLICY), str(renamed), "--rename", "sex=gender",
                 "--explain", "four-fifths-sex"])  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if "input.dimension" in x)
    assert "gender" in line and "--rename sex=gender" in line


def test_a_per_control_bind_supplies_a_role_the_control_leaves_open() -> None:
    """A template control without input.prediction loads when that control's role is bound
    on the command line (as a role bound for every control does), and only then."""
    from fairpolicy.errors import PolicyError

    pol = [
        {
            "control-id": "open",
            "props": [
                {"name": "metric_key", "value": "equal_opportunity_diff"},
                {"name": "operator", "value": "<"},
                {"name": "threshold", "value": "0.5"},
                {"name": "input.target", "value": "approved"},
                {"name": "input.dimension", "value": "sex"},
            ],
        }
    ]
    data = str(ROOT / "examples" / "credit" / "predictions.csv")
    with pytest.raises(PolicyError):
        fairpolicy.check(pol, data)
    res = fairpolicy.check(pol, data, bind={"open:prediction": "predicted"})
    assert res.findings[0].status == "pass"
    assert res.findings[0].bind_changes[0].by == "--bind open:prediction=predicted"


def test_a_results_json_read_back_keeps_the_changes(renamed: Path, tmp_path: Path) -> None:
    """``export`` and ``diff`` read the results JSON: the changes survive the round trip."""
    from fairpolicy.results import load_results

    out = tmp_path / "r.json"
    assert main(["check", str(POLICY), str(renamed), "--rename", "sex=gender",
                 "-o", f"json={out}"]) == 0  # fmt: skip
    back = load_results(str(out))
    assert [len(f.bind_changes) for f in back.findings] == [1, 1, 0, 0, 1, 0]
    oscal = tmp_path / "ar.json"
    assert main(["export", "oscal", str(out), "-o", str(oscal)]) == 0
    assert oscal.read_text().count('"bind-changed"') == 3
