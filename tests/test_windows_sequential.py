"""The ``sequential`` window gate confirms a score interval's alarm with the exact box.

At the gate's per-window levels 1 − α_t (z ≈ 3.3–4.5) a score interval's tails are not
what the level says at small counts and at rates near 0 or 1 (docs/statistics.md), so a
window of a binary-rate control alarms only when its score interval AND the exact
Clopper–Pearson box at the same level lie beyond the threshold. The oracle for the box is
written out here with scipy's Beta quantiles (Clopper & Pearson 1934), independently of
:func:`fairpolicy.stats.sequential.exact_box`.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import beta

from fairpolicy.cli import main
from fairpolicy.decide import alarm_interval
from fairpolicy.results import ConfidenceInterval, Finding
from fairpolicy.runner import check
from fairpolicy.stats.sequential import sequential_alarm, window_level
from tests.helpers import control, write_policy

WEEK1, WEEK2 = "2024-01-01", "2024-01-08"  # Mondays


def rows(week: str, groups: dict[str, tuple[int, int]], seed: int = 0) -> pd.DataFrame:
    """``groups``: name → (selected, rows) within the week starting ``week``."""
    rng = np.random.default_rng(seed)
    t0 = pd.Timestamp(week, tz="UTC")
    parts = []
    for g, (x, m) in groups.items():
        parts.append(
            pd.DataFrame(
                {
                    "ts": t0 + pd.to_timedelta(rng.integers(0, 7 * 86400, m), unit="s"),
                    "sex": g,
                    "y_true": rng.integers(0, 2, m),
                    "y_pred": np.r_[np.ones(x, np.int64), np.zeros(m - x, np.int64)],
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def cp_gap_box(x: tuple[int, int], m: tuple[int, int], level: float) -> tuple[float, float]:
    """The exact box of |p_F − p_M| from two Clopper–Pearson intervals at the Šidák level."""
    a = 1.0 - level**0.5
    ivs = [
        (
            0.0 if xi == 0 else float(beta.ppf(a / 2, xi, mi - xi + 1)),
            1.0 if xi == mi else float(beta.ppf(1 - a / 2, xi + 1, mi - xi)),
        )
        for xi, mi in zip(x, m, strict=True)
    ]
    (l0, h0), (l1, h1) = ivs
    return max(0.0, l0 - h1, l1 - h0), max(h0 - l1, h1 - l0)


# window 1: 13 of 13 F selected, 0 of 13 M. The score (Newcombe) interval of the gap at
# 1 − α_1 starts at 0.315 > 0.3, but the exact box starts at 0.052: the score interval alone
# would alarm; confirmed it does not. Window 2: no gap.
SMALL = pd.concat(
    [
        rows(WEEK1, {"F": (13, 13), "M": (0, 13)}, 1),
        rows(WEEK2, {"F": (10, 20), "M": (10, 20)}, 2),
    ],
    ignore_index=True,
)


def test_a_score_alarm_the_exact_box_does_not_confirm_is_no_alarm(tmp_path: Path) -> None:
    pol = write_policy(tmp_path, control("dp", threshold="0.3", min_samples="10"))
    res = check(str(pol), SMALL, window="ts=1w")
    assert res.windows is not None and res.windows.gate == "sequential"
    first = res.windows.windows[0].findings[0]
    assert first.ci is not None and first.ci.method == "score"
    level = window_level(1, 0.05)
    assert first.ci.level == pytest.approx(level)
    # the score interval alone lies beyond the threshold: the old gate alarmed here
    assert first.ci.low is not None and first.ci.low > 0.3
    assert sequential_alarm([(first.ci.low, first.ci.high)], 0.3, "<") == 0
    # the exact box does not, and the alarm reads their hull
    want = cp_gap_box((13, 0), (13, 13), level)
    assert first.ci.exact_box == pytest.approx(list(want), abs=1e-12)
    assert want[0] < 0.3
    alarm = first.details["alarm_interval"]
    assert alarm["used"] == "score+exact"
    assert alarm["low"] == pytest.approx(min(first.ci.low, want[0]), abs=1e-12)
    assert alarm["high"] == pytest.approx(max(first.ci.high or 0.0, want[1]), abs=1e-12)
    f = res.findings[0]
    assert f.status == "pass", f.message
    assert "no sequential alarm" in f.message
    assert res.exit_code == 0
    # the same rows under `any` fail: window 1's own finding is a (score) fail
    assert check(str(pol), SMALL, window="ts=1w", window_gate="any").findings[0].status == "fail"


def test_a_strong_drift_still_alarms_on_the_cli_and_the_json_names_the_interval(
    tmp_path: Path,
) -> None:
    df = pd.concat(
        [
            rows(WEEK1, {"F": (30, 60), "M": (29, 60)}, 3),
            rows(WEEK2, {"F": (60, 60), "M": (0, 60)}, 4),
        ],
        ignore_index=True,
    )
    data = tmp_path / "d.parquet"
    df.to_parquet(data)
    pol = write_policy(tmp_path, control("dp", threshold="0.3", min_samples="10"))
    js = tmp_path / "r.json"
    out = io.StringIO()
    code = main(["check", str(pol), str(data), "--window", "ts=1w", "-o", f"json={js}"], out)
    doc = json.loads(js.read_text())
    assert code == 1
    f = doc["findings"][0]
    assert f["status"] == "fail"
    assert f["details"]["window_gate"]["window"] == WEEK2
    assert "exact Clopper–Pearson box" in f["message"]
    w1, w2 = (w["findings"][0] for w in doc["windows"]["windows"])
    for t, w in enumerate((w1, w2), start=1):
        assert w["ci"]["level"] == pytest.approx(window_level(t, 0.05))
        assert w["details"]["alarm_interval"]["used"] == "score+exact"
        assert w["details"]["alarm_interval"]["reason"] is None
    box = cp_gap_box((60, 0), (60, 60), window_level(2, 0.05))
    assert w2["ci"]["exact_box"] == pytest.approx(list(box), abs=1e-12)
    assert w2["details"]["alarm_interval"]["low"] == pytest.approx(
        min(box[0], w2["ci"]["low"]), abs=1e-12
    )
    assert w2["details"]["alarm_interval"]["low"] > 0.3  # the confirmed alarm
    assert w1["details"]["alarm_interval"]["low"] < 0.3


def test_other_gates_and_plain_checks_carry_no_box(tmp_path: Path) -> None:
    pol = write_policy(tmp_path, control("dp", threshold="0.3", ci="200", min_samples="10"))
    plain = check(str(pol), SMALL).findings[0]
    assert plain.ci is not None and plain.ci.method == "score" and plain.ci.exact_box is None
    assert "exact_box" not in json.dumps(check(str(pol), SMALL).to_dict())
    last = check(str(pol), SMALL, window="ts=1w", window_gate="last")
    assert last.windows is not None
    for w in last.windows.windows:
        assert w.findings[0].ci is not None and w.findings[0].ci.exact_box is None
        assert "alarm_interval" not in w.findings[0].details


def _window_finding(method: str, resamples: int, box: list[float] | None = None) -> Finding:
    ci = ConfidenceInterval(
        low=0.35,
        high=0.5,
        level=window_level(1, 0.05),
        method=method,  # type: ignore[arg-type]
        resamples=resamples,
        seed=0,
        valid=resamples,
        exact_box=box,
    )
    return Finding(
        control_id="c",
        title=None,
        metric_key="demographic_parity_diff",
        inputs={},
        params={},
        value=0.4,
        operator="<",
        threshold=0.3,
        status="fail",
        message="m",
        ci=ci,
    )


def test_alarm_interval_by_method() -> None:
    """A bootstrap interval is read as it is when its resamples resolve the level (else it
    cannot alarm, naming the resamples); a score interval only with its exact box."""
    band = alarm_interval(_window_finding("band", 100_000))
    assert (band.low, band.high, band.used) == (0.35, 0.5, "interval")
    few = alarm_interval(_window_finding("band", 1000))
    assert few.used is None and few.low is None and few.reason and "resamples" in few.reason
    score = alarm_interval(_window_finding("score", 0, [0.2, 0.6]))
    assert (score.low, score.high, score.used) == (0.2, 0.6, "score+exact")
    assert score.as_details() == {"low": 0.2, "high": 0.6, "used": "score+exact", "reason": None}
    bare = alarm_interval(_window_finding("score", 0))
    assert bare.used is None and bare.reason and "Hoeffding box" in bare.reason


def test_survey_weights_alarm_on_their_hoeffding_box(tmp_path: Path) -> None:
    """Kish's effective counts are not binomial: no Clopper–Pearson box, but Hoeffding's
    (valid at every level, conditionally on the weights): a gap of 1 on 60 rows per group
    alarms, reading the hull of the score interval and that box."""
    df = rows(WEEK1, {"F": (60, 60), "M": (0, 60)}, 3).assign(w=1.5)
    pol = write_policy(
        tmp_path,
        control("dp", threshold="0.3", min_samples="10", input__weight="w", weight_kind="survey"),
    )
    res = check(str(pol), df, window="ts=1w")
    assert res.windows is not None
    f = res.windows.windows[0].findings[0]
    assert f.ci is not None and f.ci.method == "score" and f.ci.exact_box_kind == "hoeffding"
    # equal weights: Kish's rows are the 60 rows; Bonferroni over the two rates
    h = float(np.sqrt(np.log(2 * 2 / (1 - window_level(1, 0.05))) / (2 * 60)))
    assert f.ci.exact_box == pytest.approx([1 - 2 * h, 1.0], abs=1e-12)
    alarm = f.details["alarm_interval"]
    assert alarm["used"] == "score+hoeffding" and alarm["low"] == pytest.approx(1 - 2 * h)
    gated = res.findings[0]
    assert gated.status == "fail" and "Hoeffding box" in gated.message
