"""Changes against a baseline are decided exactly, on the δ as written (issue 26 item 2's
"exact on every path", DESIGN §9): the change of two exact values is their exact
difference, δ is the decimal the flag, the configuration or the policy wrote, and every
output prints δ as written. Before, the change was a float difference (0.8 − 0.7 =
0.10000000000000009 "regressed" at δ 0.1) and δ a double (``0.09999999999999999999`` read
as 0.1 let a change of exactly 1/10 through)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import fairpolicy
from fairpolicy.cli import main
from tests.helpers import control, write_csv, write_policy


def _data(tmp: Path, name: str, f_selected: int, m_selected: int, n: int = 40) -> Path:
    rows = ["y_true,y_pred,sex"]
    for g, k in (("F", f_selected), ("M", m_selected)):
        rows += [f"{i % 2},{1 if i < k else 0},{g}" for i in range(n)]
    return write_csv(tmp, "\n".join(rows) + "\n", name)


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A baseline with a parity gap of exactly 1/10 and data whose gap is exactly 2/10."""
    old = _data(tmp_path, "old.csv", 12, 8)  # 0.3 − 0.2
    new = _data(tmp_path, "new.csv", 16, 8)  # 0.4 − 0.2
    pol = write_policy(tmp_path, control("dp", threshold="0.5"))
    assert main(["check", str(pol), str(old), "-o", f"json={tmp_path / 'old.json'}"]) == 0
    return pol, new, tmp_path / "old.json"


@pytest.mark.parametrize(
    ("delta", "regressed"),
    [
        ("0.1", False),  # a change of exactly 1/10 is not more than 0.1
        ("0.10", False),
        ("0.09999999999999999999", True),  # its double is 0.1: decided on the decimal
        ("0.1000000000000000000001", False),
        ("1e-1", False),
    ],
)
def test_flag_delta_is_decided_as_written(
    runs: tuple[Path, Path, Path], delta: str, regressed: bool, tmp_path: Path
) -> None:
    pol, new, old = runs
    out = tmp_path / "r.json"
    argv = ["check", str(pol), str(new), "--baseline", str(old), "--max-regression", delta]
    code = main([*argv, "-o", f"json={out}"])
    assert code == (1 if regressed else 0)
    change = json.loads(out.read_text())["findings"][0]["change"]
    assert change["verdict"] == ("regressed" if regressed else "ok")
    long = len(delta) > 15
    assert change["max_regression_written"] == (delta if long else None)
    # diff decides the same way, by its own δ
    res = tmp_path / "new.json"
    main(["check", str(pol), str(new), "--fail-on", "never", "-o", f"json={res}"])
    assert main(["diff", str(old), str(res), "--max-regression", delta]) == (1 if regressed else 0)


def test_policy_delta_is_decided_as_written(tmp_path: Path) -> None:
    old = _data(tmp_path, "old.csv", 12, 8)
    new = _data(tmp_path, "new.csv", 16, 8)
    pol = write_policy(
        tmp_path, control("dp", threshold="0.5", max_regression="0.09999999999999999999")
    )
    base = fairpolicy.check(str(pol), str(old))
    res = fairpolicy.check(str(pol), str(new), baseline=base)
    change = res.findings[0].change
    assert change is not None and change.verdict == "regressed"
    assert change.max_regression_source == "policy"
    assert change.max_regression_written == "0.09999999999999999999"
    assert "0.09999999999999999999" in res.render("text") and res.exit_code == 1
    # a looser flag never loosens it; the same δ written shorter lets it through
    res = fairpolicy.check(str(pol), str(new), baseline=base, max_regression="0.5")
    assert res.findings[0].change is not None and res.exit_code == 1
    pol = write_policy(tmp_path, control("dp", threshold="0.5", max_regression="0.1"))
    base = fairpolicy.check(str(pol), str(old))
    assert fairpolicy.check(str(pol), str(new), baseline=base).exit_code == 0


def test_change_of_exact_values_is_their_exact_difference(tmp_path: Path) -> None:
    """0.8 − 0.7 in floats is 0.10000000000000009: the exact values differ by 1/10."""
    old = _data(tmp_path, "old.csv", 28, 0)  # 0.7 − 0
    new = _data(tmp_path, "new.csv", 32, 0)  # 0.8 − 0
    pol = write_policy(tmp_path, control("dp", threshold="0.9"))
    base = fairpolicy.check(str(pol), str(old))
    assert 0.8 - 0.7 > 0.1  # the float difference would regress
    res = fairpolicy.check(str(pol), str(new), baseline=base, max_regression=0.1)
    change = res.findings[0].change
    assert change is not None and change.verdict == "ok", change
    assert res.exit_code == 0


def test_config_delta_is_decided_as_written(
    runs: tuple[Path, Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A TOML float keeps its decimal too: max-regression = 0.09999999999999999999 in
    [tool.fairpolicy] fails a change of exactly 1/10 (tomllib read it as 0.1)."""
    pol, new, old = runs
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.fairpolicy]\nmax-regression = 0.09999999999999999999\nbaseline = "{old}"\n'
    )
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "r.json"
    assert main(["check", str(pol), str(new), "-o", f"json={out}"]) == 1
    change = json.loads(out.read_text())["findings"][0]["change"]
    assert change["max_regression_source"] == "config"
    assert change["max_regression_written"] == "0.09999999999999999999"
