"""``fairpolicy power``: rows per group for an interval decision (src/fairpolicy/power.py).

Oracles: the issue's simulation (two groups of 500, true DP gap 0, threshold 0.1: a
Newcombe-based ``ci_upper`` passes 77.7 %), the monotonicity of the search (the answer
decides with the asked probability, half of it does not), and exit 2 with a message for
every bad input, in process and as a subprocess.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest

from fairpolicy.cli import main
from fairpolicy.power import decided_share, required_rows


def test_the_issues_pass_rate_at_500_rows() -> None:
    """Two groups of 500, true gap 0, threshold 0.1: the issue measured 77.7 % for a
    Newcombe rule (ours is Newcombe's upper end: within 3 MC s.e. of 400 samples)."""
    p = decided_share([0.5, 0.5], 500, "gap", "<", 0.1, 0.95, 1000, 1, "ci_upper")
    assert abs(p - 0.777) < 3 * (0.777 * 0.223 / 1000) ** 0.5


def test_the_answer_decides_with_the_probability_and_half_of_it_does_not() -> None:
    got = required_rows("demographic_parity_diff", [0.5, 0.48], 0.1, "<", sims=300)
    assert got.complies and got.decision == "ci_upper" and got.rows is not None
    assert got.probability_at_rows is not None and got.probability_at_rows >= 0.8
    half = decided_share([0.5, 0.48], got.rows // 2, "gap", "<", 0.1, 0.95, 300, 20261127,
                        "ci_upper")  # fmt: skip
    assert half < 0.8


def test_a_violation_needs_ci_lower_and_a_ratio_is_supported() -> None:
    got = required_rows("demographic_parity_ratio", [0.5, 0.3], 0.8, ">=", sims=200)
    assert not got.complies and got.decision == "ci_lower" and got.rows is not None
    assert 100 < got.rows < 2000


def test_a_value_at_the_threshold_is_never_decided() -> None:
    got = required_rows("demographic_parity_diff", [0.5, 0.4], 0.1, "<", sims=100)
    assert got.rows is None and got.reason is not None and "equals the threshold" in got.reason


def test_cli_in_process() -> None:
    out = io.StringIO()
    code = main(
        ["power", "equal_opportunity_diff", "--rates", "0.8,0.8", "--threshold", "0.1",
         "--share", "0.2", "--sims", "200"],
        out,
    )  # fmt: skip
    assert code == 0
    text = out.getvalue()
    assert "decision ci_upper proves compliance" in text and "rows per group" in text
    assert "share of rows in the rate's denominator 0.2" in text


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["auc_gap", "--rates", "0.5,0.4", "--threshold", "0.1"], "not the gap or ratio"),
        (["no_such_metric", "--rates", "0.5,0.4", "--threshold", "0.1"], "no_such_metric"),
        (["demographic_parity_diff", "--rates", "0.5", "--threshold", "0.1"], "at least two"),
        (["demographic_parity_diff", "--rates", "0.5,1.2", "--threshold", "0.1"],
         "not a proportion"),
        (["demographic_parity_diff", "--rates", "0.5,x", "--threshold", "0.1"],
         "comma-separated list"),
        (["demographic_parity_diff", "--rates", "0.5,0.4", "--threshold", "0.1",
          "--probability", "1"], "--probability"),
        (["demographic_parity_diff", "--rates", "0.5,0.4", "--threshold", "0.1",
          "--share", "0"], "--share"),
        (["demographic_parity_diff", "--rates", "0.5,0.4", "--threshold", "0.1",
          "--operator", "=="], "operator"),
        (["demographic_parity_ratio", "--rates", "0,0", "--threshold", "0.8",
          "--operator", ">"], "every rate is 0"),
    ],
)  # fmt: skip
def test_bad_inputs_are_exit_2_with_a_message(
    args: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["power", *args], io.StringIO())
    assert code == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err


def test_subprocess() -> None:
    env = dict(os.environ)
    ok = subprocess.run(
        [sys.executable, "-m", "fairpolicy", "power", "fpr_diff", "--rates", "0.1,0.1",
         "--threshold", "0.05", "--share", "0.9", "--sims", "100"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    assert "rows per group" in ok.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "fairpolicy", "power", "fpr_diff", "--rates", "0.1,0.1",
         "--threshold", "nan"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert bad.returncode == 2 and "threshold" in bad.stderr and "Traceback" not in bad.stderr


def test_an_inconclusive_control_says_how_many_rows_would_decide_it(tmp_path: object) -> None:
    """The hint on an INCONCLUSIVE ci_upper control: the rows `fairpolicy power` gives at the
    rates seen, and that many rows of the same rates do decide it (most of the time)."""
    import numpy as np
    import pandas as pd

    import fairpolicy
    from tests.helpers import control, write_policy

    rng = np.random.default_rng(3)
    n = 200
    df = pd.DataFrame(
        {
            "y_true": rng.integers(0, 2, 2 * n),
            "y_pred": np.r_[rng.random(n) < 0.5, rng.random(n) < 0.47].astype(int),
            "sex": ["F"] * n + ["M"] * n,
        }
    )
    pol = write_policy(tmp_path, control(threshold="0.1", decision="ci_upper"))  # type: ignore[arg-type]
    f = fairpolicy.check(pol, df, bootstrap=100).findings[0]
    assert f.status == "inconclusive" and f.ci is not None and f.ci.method == "score"
    assert f.reason is not None and "rows per group this control could be decided" in f.reason
    need = int(f.reason.split("with about ")[1].split(" rows")[0].replace(",", ""))
    assert n < need < 20 * n


def _power(*argv: str) -> tuple[int, str, str]:
    import contextlib

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["power", *argv], stdout=out)
    return code, out.getvalue(), err.getvalue()


def test_the_threshold_is_decided_and_printed_as_written() -> None:
    """0.5 − 0.4 is exactly 0.1 (the floats differ by 0.09999999999999998): at a threshold
    of 0.1 nothing decides it; 0.09999999999999999999 is below it (a violation), 1e-400 a
    positive threshold printed as written (it printed 0)."""
    code, out, _ = _power("demographic_parity_diff", "--rates", "0.4,0.5", "--threshold", "0.1")
    assert code == 0 and "equals the threshold" in out and "violates" in out
    long = "0.09999999999999999999"
    code, out, _ = _power("demographic_parity_diff", "--rates", "0.4,0.5", "--threshold", long)
    assert code == 0 and f"< {long}:" in out and "equals the threshold" not in out
    code, out, _ = _power("demographic_parity_diff", "--rates", "0.4,0.45", "--threshold", "1e-400")
    assert code == 0 and "< 1e-400:" in out and "violates" in out


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["nope", "--rates", "0.4,0.5", "--threshold", "0.1"], "unknown metric_key 'nope'"),
        (["demographic_parity_diff", "--rates", "0.4,0.5", "--threshold", "1_0"], "--threshold"),
        (
            [
                "demographic_parity_diff",
                "--rates",
                "0.4,0.5",
                "--threshold",
                "0.1",
                "--sims",
                "100000000",
            ],
            "--sims 100000000",
        ),
    ],
)
def test_bad_power_inputs_are_exit_2_naming_them(argv: list[str], says: str) -> None:
    code, _, err = _power(*argv)
    assert code == 2 and says in err and "internal error" not in err, err
