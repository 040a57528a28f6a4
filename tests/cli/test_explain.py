"""``fairpolicy check --explain CONTROL`` (issue 15): the control as resolved, each setting
with where it came from — catalog param, profile set-parameters, the list file, the
command line, the registry default — computed by the loader and the planner ``check`` uses,
reading no data."""

from __future__ import annotations

import io
from pathlib import Path

from fairpolicy.cli import main
from tests.helpers import control, write_policy

ROOT = Path(__file__).resolve().parents[2]
LENDING = ROOT / "policies" / "binary-lending" / "profile.json"


def explain(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(["check", *args], out)
    return code, out.getvalue()


def row(text: str, name: str) -> str:
    return next(line for line in text.splitlines() if line.strip().startswith(name + " "))


def test_catalog_and_profile_thresholds_are_told_apart() -> None:
    code, text = explain(str(LENDING), "--explain", "bl-3")
    assert code == 0
    assert "profile set-parameters" in row(text, "threshold") and "profile.json" in row(
        text, "threshold"
    )
    code, text = explain(str(LENDING), "--explain", "bl-2")
    assert "catalog param" in row(text, "threshold") and "catalog.json" in row(text, "threshold")
    assert "catalog.json" in row(text, "input.target")


def test_the_command_line_is_named_and_no_data_is_read(tmp_path: Path) -> None:
    code, text = explain(
        str(LENDING),
        str(tmp_path / "absent.csv"),
        "--explain",
        "bl-1",
        "--bind",
        "dimension=race",
        "--bootstrap",
        "400",
        "--decision",
        "ci_upper",
    )
    assert code == 0, text
    assert row(text, "input.dimension").split()[1] == "race"
    assert "command line (--bind dimension=race)" in row(text, "input.dimension")
    assert "command line (--bootstrap)" in row(text, "ci")
    assert "command line (--decision)" in row(text, "decision")


def test_a_list_policy_and_registry_defaults(tmp_path: Path) -> None:
    policy = write_policy(
        tmp_path, control("w", "weighted_demographic_parity_multiclass", threshold="0.2")
    )
    code, text = explain(str(policy), "--explain", "w")
    assert code == 0
    assert "threshold prop" in row(text, "threshold") and "policy.yaml" in row(text, "threshold")
    assert row(text, "strategy").split()[-1] == "default"
    assert "default (block)" in row(text, "enforcement_mode")


def test_an_unknown_control_is_exit_2_with_did_you_mean(tmp_path: Path) -> None:
    code, _ = explain(str(LENDING), "--explain", "bl-9")
    assert code == 2
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "fairpolicy", "check", str(LENDING), "--explain", "bl1"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "Did you mean 'bl-1'" in done.stderr


def test_the_policy_from_the_configuration_file_needs_no_data_path(
    tmp_path: Path, monkeypatch: object
) -> None:
    """issue 27 item 5: explain reads no data, so the policy of [tool.fairpolicy] is enough."""
    import pytest

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    write_policy(tmp_path, control("dp"), name="p.yaml")
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.fairpolicy]\npolicy = "p.yaml"\n')
    monkeypatch.chdir(tmp_path)
    code, text = explain("--explain", "dp")
    assert code == 0, text
    assert "p.yaml" in text and row(text, "threshold")
    # without a configured policy: exit 2 naming both ways to give one
    code, text = explain("--explain", "dp", "--no-config")
    assert code == 2


def test_check_without_any_path_is_a_usage_error(tmp_path: Path, monkeypatch: object) -> None:
    import pytest

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    monkeypatch.chdir(tmp_path)
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    code, _ = explain()
    assert code == 2 and "check needs the data" in err.getvalue()
