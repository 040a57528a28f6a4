"""Direction, δ and wording of a change against a baseline, on every renderer (issue 26
items 3 and 5, issue 27 item 7): results files that predate the recorded direction, an
edited NEW file in ``diff``, and "better/worse by" with a positive amount everywhere."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from tests.test_verdict_paths import ITEM3, data, policy


def run(argv: list[str]) -> tuple[int, str]:
    from fairpolicy.cli import main

    out = io.StringIO()
    return main(argv, out), out.getvalue()


@pytest.fixture
def runs(tmp_path: Path) -> dict[str, Path]:
    """A baseline with an accuracy gap of 0.02 and a release with 0.09 (worse by 0.07)."""
    (tmp_path / "policy.yaml").write_text(policy(ITEM3))
    for name, acc in (("old", ITEM3.old), ("new", ITEM3.new)):
        (tmp_path / f"{name}.csv").write_text(data(acc))
        code, _ = run(
            [
                "check",
                str(tmp_path / "policy.yaml"),
                str(tmp_path / f"{name}.csv"),
                "--no-config",
                "-o",
                f"json={tmp_path / (name + '.json')}",
            ]
        )
        assert code == 0
    return {"tmp": tmp_path, "old": tmp_path / "old.json", "new": tmp_path / "new.json"}


def _edit(path: Path, **fields: object) -> None:
    doc = json.loads(path.read_text())
    for f in doc["findings"]:
        for k, v in fields.items():
            if v is None:
                f.pop(k, None)
            else:
                f[k] = v
    path.write_text(json.dumps(doc))


def test_results_that_predate_the_direction_are_resolved_from_key_and_params(
    runs: dict[str, Path],
) -> None:
    _edit(runs["old"], better=None, ideal=None)
    _edit(runs["new"], better=None, ideal=None)
    code, out = run(["diff", str(runs["old"]), str(runs["new"]), "--max-regression", "0.01"])
    assert code == 1, out
    assert "0.02 → 0.09 (worse by 0.07)" in out and "[REGRESSED]" in out


def test_the_recorded_direction_is_the_values(runs: dict[str, Path]) -> None:
    doc = json.loads(runs["new"].read_text())
    assert [(f["better"], f["ideal"]) for f in doc["findings"]] == [("lower", 0.0)]


def test_diff_refuses_an_edited_new_file_naming_it(runs: dict[str, Path]) -> None:
    _edit(runs["new"], better="higher")
    code, _ = run(["diff", str(runs["old"]), str(runs["new"]), "--max-regression", "0.01"])
    assert code == 2
    doc = json.loads(runs["new"].read_text())
    doc["findings"][0]["better"] = "lower"
    doc["findings"][0]["params"]["value"] = "accuracy_gapp"
    runs["new"].write_text(json.dumps(doc))
    err = io.StringIO()
    import contextlib

    from fairpolicy.cli import main

    with contextlib.redirect_stderr(err):
        code = main(["diff", str(runs["old"]), str(runs["new"])], io.StringIO())
    assert code == 2
    msg = err.getvalue()
    assert "new.json" in msg and "accuracy_gapp" in msg and "acc" in msg


def test_every_renderer_says_better_with_a_positive_amount(runs: dict[str, Path]) -> None:
    """An improvement (the gap shrank 0.09 → 0.02) is "better by 0.07" everywhere; the
    JSON keeps the signed worsened_by (negative) and labels it."""
    tmp = runs["tmp"]
    fmts = ("text", "markdown", "html", "json", "junit", "sarif", "github", "oscal")
    argv = ["check", str(tmp / "policy.yaml"), str(tmp / "old.csv"), "--no-config"]
    argv += ["--baseline", str(runs["new"]), "--max-regression", "0.01"]
    for fmt in fmts:
        argv += ["-o", f"{fmt}={tmp / ('out.' + fmt)}"]
    code, _ = run(argv)
    assert code == 0
    for fmt in fmts:
        text = (tmp / f"out.{fmt}").read_text()
        assert "worse by -" not in text and "worse -" not in text, fmt
        assert "better by -" not in text and "better -" not in text, fmt
    for fmt in ("text", "github"):
        assert "better 0.07 ≤ δ=0.01 (flag)" in (tmp / f"out.{fmt}").read_text(), fmt
    for fmt in ("markdown", "html", "junit"):  # SARIF lists only what did not pass
        assert "better by 0.07" in (tmp / f"out.{fmt}").read_text(), fmt
    change = json.loads((tmp / "out.json").read_text())["findings"][0]["change"]
    assert change["worsened_by"] == pytest.approx(-0.07) and change["better"] == "lower"
    oscal = (tmp / "out.oscal").read_text()
    assert '"change-trend"' in oscal and '"better"' in oscal
    for fmt in ("text", "markdown", "json"):
        code, out = run(
            ["diff", str(runs["new"]), str(runs["old"]), "--max-regression", "0.01", "-o", fmt]
        )
        assert (
            code == 0 and "better" in out and "-0.07" not in out.replace('"worsened_by": -0.07', "")
        )
    doc = json.loads(run(["diff", str(runs["new"]), str(runs["old"]), "-o", "json"])[1])
    row = doc["changes"][0]
    assert row["trend"] == "better" and row["by"] == pytest.approx(0.07)
    assert row["worsened_by"] == pytest.approx(-0.07)
