"""Regression against a baseline (issue 18): ``check --baseline``, ``max_regression``,
``fairpolicy diff``.

What the tests prove:

- the pairing oracle: a property test over random values, directions, δ and decision rules
  checks ``worsened_by`` against an exact-decimal oracle of the registry's direction, that
  a regression beyond δ is never a pass (status, gate, exit code agree), and that the
  change's interval contains the change;
- every engine and input type gives the same change and verdict (CSV, Parquet, a pandas
  DataFrame; embedded, DuckDB, Spark);
- every output format shows the change;
- ``diff`` exits 0/1/2 as documented and inherits the δ of a checked results file;
- every registry key has a direction.
"""

from __future__ import annotations

import importlib.util
import io
import json
import shutil
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairpolicy.baseline import compare, mover
from fairpolicy.cli import main
from fairpolicy.metrics.direction import resolve
from fairpolicy.metrics.registry import REGISTRY
from fairpolicy.results import ConfidenceInterval, Results

POLICY = """\
- control-id: dp
  props:
    - {name: metric_key, value: demographic_parity_diff}
    - {name: threshold, value: "0.2"}
    - {name: operator, value: "<"}
    - {name: input.target, value: y_true}
    - {name: input.prediction, value: y_pred}
    - {name: input.dimension, value: sex}
- control-id: ratio
  props:
    - {name: metric_key, value: demographic_parity_ratio}
    - {name: threshold, value: "0.5"}
    - {name: operator, value: ">="}
    - {name: input.target, value: y_true}
    - {name: input.prediction, value: y_pred}
    - {name: input.dimension, value: sex}
"""


def rows(f_selected: int, m_selected: int, n: int = 60) -> str:
    out = ["y_true,y_pred,sex"]
    for g, k in (("F", f_selected), ("M", m_selected)):
        out += [f"{i % 2},{1 if i < k else 0},{g}" for i in range(n)]
    return "\n".join(out) + "\n"


OLD = rows(30, 20)  # dp = 1/6, ratio = 2/3
NEW = rows(33, 20)  # dp = 13/60 ≥ 0.2? no: 0.55 − 0.333 = 0.2167 → fails its threshold
WORSE_BUT_PASSING = rows(31, 20)  # dp 0.1833 < 0.2; ratio 0.645 ≥ 0.5


def run(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    return main(argv, out), out.getvalue()


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "policy.yaml").write_text(POLICY)
    (tmp_path / "old.csv").write_text(OLD)
    (tmp_path / "new.csv").write_text(WORSE_BUT_PASSING)
    code, _ = run(
        [
            "check",
            str(tmp_path / "policy.yaml"),
            str(tmp_path / "old.csv"),
            "-o",
            f"json={tmp_path / 'old.json'}",
        ]
    )
    assert code == 0
    return {
        k: tmp_path / n
        for k, n in (
            ("policy", "policy.yaml"),
            ("old", "old.json"),
            ("new", "new.csv"),
            ("tmp", ""),
        )
    }


def test_regression_beyond_delta_fails_a_passing_control(files: dict[str, Path]) -> None:
    p, old, new, tmp = files["policy"], files["old"], files["new"], files["tmp"]
    code, _ = run(["check", str(p), str(new), "-o", f"json={tmp / 'plain.json'}"])
    assert code == 0  # both controls meet their thresholds
    code, out = run(
        [
            "check",
            str(p),
            str(new),
            "--baseline",
            str(old),
            "--max-regression",
            "0.01",
            "-o",
            "text",
            "-o",
            f"json={tmp / 'new.json'}",
        ]
    )
    assert code == 1, out
    doc = json.loads((tmp / "new.json").read_text())
    by_id = {f["control_id"]: f for f in doc["findings"]}
    dp, ratio = by_id["dp"], by_id["ratio"]
    assert dp["status"] == "fail" and dp["gate_effect"] == "fail"
    assert dp["change"]["verdict"] == "regressed"
    assert dp["change"]["worsened_by"] == pytest.approx(11 / 60 - 10 / 60)
    # the ratio fell 2/3 → 20/31: higher is better, so it worsened by the drop
    assert ratio["change"]["better"] == "higher"
    assert ratio["change"]["worsened_by"] == pytest.approx(2 / 3 - 20 / 31)
    assert doc["baseline"]["sha256"] and doc["baseline"]["uuid"]
    assert "change" in out.splitlines()[0]
    # within δ: passes, and the change is still reported
    code, out = run(["check", str(p), str(new), "--baseline", str(old), "--max-regression", "0.05"])
    assert code == 0 and "worse 0.01667 ≤ δ" in out


def test_the_stricter_delta_applies_and_is_recorded(files: dict[str, Path]) -> None:
    """Issue 26 item 5: a policy's looser max_regression (0.5) does not override a stricter
    --max-regression 0.01; a policy's stricter one (0.001) does override a looser flag."""
    p, old, new = files["policy"], files["old"], files["new"]
    own = 'value: sex}\n    - {name: max_regression, value: "0.5"}\n'
    p.write_text(POLICY.replace("value: sex}\n", own, 1))
    argv = ["check", str(p), str(new), "--baseline", str(old), "--allow-policy-change"]
    code, out = run([*argv, "--max-regression", "0.01", "-o", "json"])
    doc = json.loads(out)
    applied = {
        f["control_id"]: (f["change"]["max_regression"], f["change"]["max_regression_source"])
        for f in doc["findings"]
    }
    assert applied == {"dp": (0.01, "flag"), "ratio": (0.01, "flag")}
    assert doc["baseline"]["max_regression_source"] == "flag"
    assert code == 1  # both regressed beyond the flag's δ (dp by 0.0167 > 0.01)
    # a looser flag cannot loosen a stricter policy
    own = 'value: sex}\n    - {name: max_regression, value: "0.001"}\n'
    p.write_text(POLICY.replace("value: sex}\n", own, 1))
    code, out = run([*argv, "--max-regression", "0.5", "-o", "json"])
    doc = json.loads(out)
    applied = {
        f["control_id"]: (f["change"]["max_regression"], f["change"]["max_regression_source"])
        for f in doc["findings"]
    }
    assert applied == {"dp": (0.001, "policy"), "ratio": (0.5, "flag")}
    assert code == 1
    # every message names the δ applied and its source
    messages = {f["control_id"]: f["message"] for f in doc["findings"]}
    assert "max_regression 0.001 (policy): regressed" in messages["dp"]
    assert "max_regression 0.5 (flag): ok" in messages["ratio"]


def test_every_format_shows_the_change(files: dict[str, Path]) -> None:
    p, old, new, tmp = files["policy"], files["old"], files["new"], files["tmp"]
    marks = {
        "text": "worse 0.01667 > δ",
        "markdown": "max_regression 0.01 (flag): regressed",
        "html": "Change vs baseline",
        "json": '"worsened_by"',
        "junit": "max_regression 0.01 (flag): regressed",
        "sarif": "max_regression 0.01 (flag): regressed",
        "github": "max_regression 0.01 (flag): regressed",
        "oscal": "baseline-results-uuid",
    }
    argv = ["check", str(p), str(new), "--baseline", str(old), "--max-regression", "0.01"]
    for fmt in marks:
        argv += ["-o", f"{fmt}={tmp / ('out.' + fmt)}"]
    code, _ = run(argv)
    assert code == 1
    for fmt, mark in marks.items():
        text = (tmp / f"out.{fmt}").read_text()
        assert mark in text, (fmt, text[:2000])
    ref = json.loads((tmp / "out.json").read_text())["baseline"]
    assert ref["sha256"] in (tmp / "out.oscal").read_text()
    from fairpolicy.oscal_schema import validate_document

    # the GitHub log line of a passing control carries its change too
    assert "change worse 0.01667 > δ" in (tmp / "out.github").read_text()
    oscal = json.loads((tmp / "out.oscal").read_text())
    assert validate_document(oscal, "assessment-results") == []


def test_diff_exit_codes(files: dict[str, Path]) -> None:
    p, old, new, tmp = files["policy"], files["old"], files["new"], files["tmp"]
    code, _ = run(["check", str(p), str(new), "-o", f"json={tmp / 'new.json'}"])
    assert code == 0
    newj = str(tmp / "new.json")
    assert run(["diff", str(old), newj])[0] == 0  # no δ: reported only
    code, out = run(["diff", str(old), newj, "--max-regression", "0.01", "-o", "markdown"])
    assert code == 1 and "**REGRESSED**" in out
    code, out = run(["diff", str(old), newj, "--max-regression", "0.05", "-o", "json"])
    assert code == 0 and json.loads(out)["regressed"] == 0
    assert run(["diff", str(old), str(old), "--max-regression", "0"])[0] == 0
    # a checked results file carries its δ into diff
    run(
        [
            "check",
            str(p),
            str(new),
            "--baseline",
            str(old),
            "--max-regression",
            "0.01",
            "-o",
            f"json={tmp / 'checked.json'}",
        ]
    )
    # diff decides by its own options: the δ NEW was checked with is not inherited
    code, out = run(["diff", str(old), str(tmp / "checked.json")])
    assert code == 0 and "no max_regression given" in out
    assert run(["diff", str(old), str(tmp / "checked.json"), "--max-regression", "0.01"])[0] == 1
    # another policy: 2, unless allowed
    (tmp / "p2.yaml").write_text(POLICY.replace('"0.2"', '"0.3"'))
    run(["check", str(tmp / "p2.yaml"), str(new), "-o", f"json={tmp / 'other.json'}"])
    assert run(["diff", str(old), str(tmp / "other.json")])[0] == 2
    code, out = run(["diff", str(old), str(tmp / "other.json"), "--allow-policy-change"])
    assert code == 0 and "not compared: the threshold changed" in out
    # not a results file: 2
    assert run(["diff", str(p), newj])[0] == 2


HAVE_DUCKDB = importlib.util.find_spec("duckdb") is not None
HAVE_SPARK = importlib.util.find_spec("pyspark") is not None and shutil.which("java") is not None


@pytest.mark.parametrize(
    "kind",
    [
        "csv",
        "parquet",
        "pandas",
        pytest.param("duckdb", marks=pytest.mark.skipif(not HAVE_DUCKDB, reason="no duckdb")),
        pytest.param("spark", marks=pytest.mark.skipif(not HAVE_SPARK, reason="no spark")),
    ],
)
def test_same_change_on_every_engine_and_input(files: dict[str, Path], kind: str) -> None:
    import pandas as pd

    import fairpolicy

    p, old, tmp = files["policy"], files["old"], files["tmp"]
    frame = pd.read_csv(io.StringIO(WORSE_BUT_PASSING))
    data: Any = files["new"]
    engine = "auto"
    if kind == "parquet":
        data = tmp / "new.parquet"
        frame.to_parquet(data)
    elif kind == "pandas":
        data = frame
    elif kind in ("duckdb", "spark"):
        engine = kind
    res = fairpolicy.check(
        str(p),
        data if not isinstance(data, Path) else str(data),
        engine=engine,
        baseline=str(old),
        max_regression=0.01,
    )
    if kind == "pandas":  # a DataFrame has no policy… the same policy file: same hash
        assert res.policy.sha256 is not None
    changes = {
        f.control_id: (f.change.verdict, round(f.change.worsened_by or 0, 12))
        for f in res.findings
        if f.change
    }
    assert changes == {
        "dp": ("regressed", round(1 / 60, 12)),
        "ratio": ("regressed", round(2 / 3 - 20 / 31, 12)),
    }
    assert res.exit_code == 1


def test_every_registry_key_has_a_direction() -> None:
    from fairpolicy.metrics.direction import SELECTS, regression_direction

    selecting = {k for k, _ in SELECTS}
    for key, spec in REGISTRY.items():
        params = spec.resolve_params({})
        if key in selecting:
            continue  # tests/metrics/test_direction.py: every value of the parameter
        assert resolve(spec, params) == regression_direction(spec), key
        lo, hi = spec.value_range
        better, ideal = regression_direction(spec)
        if lo < spec.ideal < hi:
            assert better == "ideal" and ideal == spec.ideal, key
        else:
            assert better == spec.better, key
    from fairpolicy.metrics.docs import show_metric

    for key in REGISTRY:  # metrics show states the direction of every key
        assert "change against a baseline (--baseline): worse when" in show_metric(key), key


# ---------------------------------------------------------------- the property test


@pytest.fixture(scope="module")
def base_results(tmp_path_factory: pytest.TempPathFactory) -> Results:
    import fairpolicy

    tmp = tmp_path_factory.mktemp("prop")
    (tmp / "policy.yaml").write_text(POLICY)
    (tmp / "d.csv").write_text(OLD)
    return fairpolicy.check(str(tmp / "policy.yaml"), str(tmp / "d.csv"))


def _badness(v: float, better: str, ideal: float | None) -> Decimal:
    d = Decimal(repr(v))
    if better == "lower":
        return d
    if better == "higher":
        return -d
    assert ideal is not None
    return abs(d - Decimal(repr(ideal)))


values = st.floats(0, 1, allow_nan=False) | st.sampled_from([0.0, 0.1, 0.2, 0.3, 0.5, 1.0])


@settings(max_examples=300, deadline=None)
@given(
    old_v=values,
    new_v=values,
    delta=st.sampled_from([0.0, 0.01, 0.1, 0.2]) | st.floats(0, 1),
    key=st.sampled_from(
        [
            ("demographic_parity_diff", ()),
            ("demographic_parity_ratio", ()),
            ("disparity_ratio", ()),
            ("multiclass_confusion_metrics", (("value", "accuracy_gap"),)),
            ("multiclass_confusion_metrics", (("value", "worst_group_accuracy"),)),
            ("multiclass_confusion_metrics", (("value", "min_class_recall"),)),
        ]
    ),
    decision=st.sampled_from(["point", "ci_upper", "ci_lower"]),
    widths=st.tuples(*(st.floats(0, 0.2) for _ in range(4))) | st.none(),
    mode=st.sampled_from(["block", "warn"]),
)
def test_a_regression_beyond_delta_never_passes(
    base_results: Results,
    old_v: float,
    new_v: float,
    delta: float,
    key: tuple[str, tuple[tuple[str, str], ...]],
    decision: str,
    widths: tuple[float, float, float, float] | None,
    mode: str,
) -> None:
    f0 = base_results.findings[0]

    def finding(v: float, w: tuple[float, float] | None) -> Any:
        ci = None
        if w is not None:
            ci = ConfidenceInterval(
                low=v - w[0],
                high=v + w[1],
                level=0.95,
                method="band",
                resamples=100,
                seed=1,
                valid=100,
            )
        return f0.model_copy(
            update={
                "metric_key": key[0],
                "value": v,
                "ci": ci,
                "status": "pass",
                "decision": decision,
                "enforcement_mode": mode,
                "params": {**f0.params, "decision": decision, **dict(key[1])},
                "better": None,  # derived from the key and the value-selecting parameter
                "ideal": None,
            }
        )

    old = base_results.model_copy(update={"findings": [finding(old_v, widths and widths[:2])]})
    new = base_results.model_copy(update={"findings": [finding(new_v, widths and widths[2:])]})
    out = compare(new, old, path="old.json", sha256="0" * 64, max_regression=delta)
    f = out.findings[0]
    c = f.change
    assert c is not None and c.state == "paired"
    better, ideal = resolve(REGISTRY[key[0]], dict(key[1]))
    if key[1] == (("value", "accuracy_gap"),):  # issue 26 item 3: a gap, whatever its key
        assert better == "lower"
    oracle = _badness(new_v, better, ideal) - _badness(old_v, better, ideal)
    assert c.worsened_by == pytest.approx(float(oracle), abs=1e-12)
    worse = Decimal(repr(c.worsened_by)) > Decimal(repr(delta))
    if decision == "point":
        assert (c.verdict == "regressed") == worse
    elif widths is None:
        assert c.verdict == "inconclusive"
    else:
        assert c.low is not None and c.high is not None
        assert c.low <= c.worsened_by + 1e-12 and c.worsened_by <= c.high + 1e-12
        if c.verdict == "ok" and decision == "ci_upper":
            # the whole change within δ, or (the "no change" rule) the run itself proven
            # compliant and no regression beyond δ shown
            assert Decimal(repr(c.high)) <= Decimal(repr(delta)) or (
                f.status == "pass"
                and c.reason is not None
                and "proven compliant" in c.reason
                and Decimal(repr(c.low)) <= Decimal(repr(delta))
            )
        if c.verdict == "regressed":
            assert Decimal(repr(c.low)) > Decimal(repr(delta))
    # the one gate table: a regression or an undecided change is never a pass
    if c.verdict in ("regressed", "inconclusive"):
        assert f.status != "pass"
        assert out.effect(f) != "pass"
        if mode == "block" and c.verdict == "regressed":
            assert out.exit_code == 1 and out.summary.gate == "fail"
    # JSON round trip: read back, the same decision
    again = Results.model_validate_json(out.to_json())
    assert again.exit_code == out.exit_code
    assert again.findings[0].change == c


def test_mover_reduces_to_the_normal_combination() -> None:
    low, high = mover(0.3, 0.2, 0.4, 0.1, 0.0, 0.2)
    half = (0.1**2 + 0.1**2) ** 0.5
    assert low == pytest.approx(0.2 - half) and high == pytest.approx(0.2 + half)


def test_api_takes_a_results_object_as_baseline(files: dict[str, Path]) -> None:
    import fairpolicy

    p, new, tmp = files["policy"], files["new"], files["tmp"]
    (tmp / "o.csv").write_text(OLD)
    before = fairpolicy.check(str(p), str(tmp / "o.csv"))
    res = fairpolicy.check(str(p), str(new), baseline=before, max_regression=0.01)
    assert res.exit_code == 1
    assert res.baseline is not None and res.baseline.path == "(Results)"
    assert {f.change.verdict for f in res.findings if f.change} == {"regressed"}


def test_a_changed_catalog_is_another_policy(tmp_path: Path) -> None:
    """The profile file is unchanged but the catalog it imports was edited: not comparable."""
    root = Path(__file__).resolve().parents[1] / "policies" / "binary-lending"
    for name in ("catalog.json", "profile.json"):
        shutil.copy(root / name, tmp_path / name)
    (tmp_path / "d.csv").write_text(OLD)
    prof = str(tmp_path / "profile.json")
    code, _ = run(
        [
            "check",
            prof,
            str(tmp_path / "d.csv"),
            "--bind",
            "target=y_true",
            "--bind",
            "prediction=y_pred",
            "-o",
            f"json={tmp_path / 'old.json'}",
        ]
    )
    assert code in (0, 1)
    cat = json.loads((tmp_path / "catalog.json").read_text())
    cat["catalog"]["metadata"]["title"] += " (edited)"
    (tmp_path / "catalog.json").write_text(json.dumps(cat))
    argv = [
        "check",
        prof,
        str(tmp_path / "d.csv"),
        "--bind",
        "target=y_true",
        "--bind",
        "prediction=y_pred",
        "--baseline",
        str(tmp_path / "old.json"),
    ]
    assert run(argv)[0] == 2
    assert run([*argv, "--allow-policy-change"])[0] in (0, 1)


def test_ci_upper_decides_on_the_interval_of_the_change(tmp_path: Path) -> None:
    pol = tmp_path / "p.yaml"
    pol.write_text(
        POLICY.replace('"0.2"', '"0.5"').replace(
            '"0.5"\n    - {name: operator, value: ">="}',
            '"0.1"\n    - {name: operator, value: ">="}',
        )
    )
    (tmp_path / "old.csv").write_text(rows(500, 333, n=1000))
    (tmp_path / "new.csv").write_text(rows(520, 333, n=1000))
    common = ["--bootstrap", "200", "--decision", "ci_upper", "--seed", "3"]
    code, _ = run(
        [
            "check",
            str(pol),
            str(tmp_path / "old.csv"),
            *common,
            "-o",
            f"json={tmp_path / 'old.json'}",
        ]
    )
    assert code == 0
    base = [
        "check",
        str(pol),
        str(tmp_path / "new.csv"),
        *common,
        "--baseline",
        str(tmp_path / "old.json"),
        "-o",
        "json",
    ]
    # a point worsening of 0.02 whose interval reaches well past 0.03: not proven within δ,
    # and no regression beyond δ shown either; the run itself is proven compliant (its
    # interval lies below 0.5), so the "no change" rule makes it ok (docs/baseline.md)
    code, out = run([*base, "--max-regression", "0.03"])
    c = {f["control_id"]: f["change"] for f in json.loads(out)["findings"]}["dp"]
    assert c["worsened_by"] == pytest.approx(0.02)
    assert c["low"] < 0.02 < c["high"] and c["level"] == 0.95
    assert c["low"] <= 0.03 < c["high"]
    assert c["verdict"] == "ok" and "proven compliant" in c["reason"] and code == 0
    # δ beyond the whole interval: ok
    code, out = run([*base, "--max-regression", "0.5"])
    assert code == 0, out
    # the same run decided by the point rule passes at δ = 0.03
    point = [a if a != "ci_upper" else "point" for a in base]
    (tmp_path / "old.json").unlink()
    run(
        [
            "check",
            str(pol),
            str(tmp_path / "old.csv"),
            *[a if a != "ci_upper" else "point" for a in common],
            "-o",
            f"json={tmp_path / 'old.json'}",
        ]
    )
    assert run([*point, "--max-regression", "0.03"])[0] == 0


def test_policy_wide_max_regression(tmp_path: Path) -> None:
    """``max_regression`` in ``metadata.props`` applies to every control; a control's own wins."""
    import yaml

    import fairpolicy
    from fairpolicy.policy.schema import NS

    def ctl(cid: str, metric: str, op: str, t: str, **extra: str) -> dict[str, Any]:
        props = {
            "metric_key": metric,
            "threshold": t,
            "operator": op,
            "input.target": "y_true",
            "input.prediction": "y_pred",
            "input.dimension": "sex",
            **extra,
        }
        return {"control-id": cid, "props": [{"name": k, "value": v} for k, v in props.items()]}

    doc = {
        "assessment-plan": {
            "metadata": {
                "title": "t",
                "props": [{"name": "max_regression", "value": "0.01", "ns": NS}],
            },
            "control-implementations": [
                {
                    "implemented-requirements": [
                        ctl("dp", "demographic_parity_diff", "<", "0.2"),
                        ctl("ratio", "demographic_parity_ratio", ">=", "0.5", max_regression="0.5"),
                    ]
                }
            ],
        }
    }
    pol = tmp_path / "plan.yaml"
    pol.write_text(yaml.safe_dump(doc, sort_keys=False))
    (tmp_path / "o.csv").write_text(OLD)
    (tmp_path / "n.csv").write_text(WORSE_BUT_PASSING)
    before = fairpolicy.check(str(pol), str(tmp_path / "o.csv"))
    res = fairpolicy.check(str(pol), str(tmp_path / "n.csv"), baseline=before)
    got = {
        f.control_id: (f.change.max_regression, f.change.verdict, f.status)
        for f in res.findings
        if f.change
    }
    assert got == {"dp": (0.01, "regressed", "fail"), "ratio": (0.5, "ok", "pass")}
    assert res.exit_code == 1
