"""fairpolicy.integrations.mlflow against a real local MLflow tracking store (sqlite in a
temp folder), reading back what was logged. Skipped when mlflow is not installed (the
``fairpolicy[mlflow]`` extra); the missing-package message is tested either way."""

from __future__ import annotations

import importlib.util
import json
import os
import posixpath
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairpolicy
from fairpolicy.errors import UsageError
from fairpolicy.integrations.mlflow import (
    GATE_EXIT_CODE,
    GATE_PASSED,
    GATE_VERDICT,
    OSCAL_TAG,
    control_key,
    keys,
    log_results,
    params,
    segment,
    unsegment,
)
from fairpolicy.results import Results
from tests.helpers import balanced_csv, control, write_policy

HAVE_MLFLOW = importlib.util.find_spec("mlflow") is not None

# MLflow's own stack (SQLAlchemy, its tracking store) emits deprecation warnings that are
# not ours; the suite turns warnings into errors, so let only those through here.
pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::FutureWarning"),
    pytest.mark.filterwarnings("ignore::UserWarning:mlflow"),
]


def _results(tmp: Path, **options: Any) -> Results:
    data = balanced_csv(tmp)  # demographic-parity gap exactly 0.25
    policy = write_policy(
        tmp,
        control("dp ok/1", threshold="0.3"),
        control("dp-tight", threshold="0.2"),
        control("eo", "equal_opportunity_diff", threshold="0.5"),
    )
    return fairpolicy.check(str(policy), str(data), deterministic=True, **options)


def _with_ids(results: Results, *ids: str) -> Results:
    base = results.findings[0]
    return results.model_copy(
        update={"findings": [base.model_copy(update={"control_id": i}) for i in ids]}
    )


def test_keys_are_namespaced_and_escaped(tmp_path: Path) -> None:
    results = _results(tmp_path)
    names = keys(results)
    assert names == {"dp ok/1": "dp ok:2F1", "dp-tight": "dp-tight", "eo": "eo"}
    assert control_key("dp", "ci_low") == "fairpolicy/control/dp/ci_low"
    assert control_key("dp.ci_low", "value") == "fairpolicy/control/dp.ci_low/value"
    assert control_key("gate_passed", "value") == "fairpolicy/control/gate_passed/value"
    assert GATE_PASSED == "fairpolicy/gate/passed"
    assert segment("a/b") == "a:2Fb" and segment("a:2Fb") == "a:3A2Fb"
    assert segment(".") == ":2E" and segment("..") == ":2E:2E" and segment("...") == "..."
    assert segment("é") == ":C3:A9"


def test_issue_26_collisions_are_gone(tmp_path: Path) -> None:
    """A control named ``dp.ci_low`` beside ``dp``, and one named ``gate_passed``: every key
    distinct (the old scheme wrote both into one key)."""
    results = _with_ids(_results(tmp_path), "dp", "dp.ci_low", "gate_passed", "a#b", "a$b")
    names = keys(results)
    metric_keys = [control_key(c, leaf) for c in names for leaf in ("value", "ci_low", "ci_high")]
    metric_keys.append(GATE_PASSED)
    assert len(set(metric_keys)) == len(metric_keys)
    assert names["a#b"] != names["a$b"]


def test_an_unavoidable_collision_is_an_error(tmp_path: Path) -> None:
    results = _results(tmp_path)
    with pytest.raises(UsageError, match="over MLflow's 250"):
        keys(_with_ids(results, "x" * 230))
    with pytest.raises(UsageError, match="two findings have the control id 'a'"):
        keys(_with_ids(results, "a", "a"))
    with pytest.raises(UsageError, match="empty id"):
        segment("")


#: MLflow's own rules for a key (mlflow.utils.validation), restated so that the property
#: test runs without mlflow installed
_MLFLOW_KEY = re.compile(r"[/\w.\- :]*", re.ASCII)


def _mlflow_accepts(key: str) -> bool:
    norm = posixpath.normpath(key)
    unique = not (norm != key or norm == "." or norm.startswith("..") or norm.startswith("/"))
    return bool(_MLFLOW_KEY.fullmatch(key)) and unique and len(key) <= 250


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=20), min_size=1, max_size=8, unique=True))
def test_keys_are_collision_free_by_construction(ids: list[str]) -> None:
    """Property (issue 26 item 12): for any distinct control ids, every metric, tag and
    param key is distinct, MLflow accepts it, stays in its control's namespace, and the
    id is recovered from it."""
    every = [GATE_PASSED, GATE_VERDICT, GATE_EXIT_CODE, OSCAL_TAG]
    for cid in ids:
        seg = segment(cid)
        assert unsegment(seg) == cid and "/" not in seg
        for leaf in ("value", "ci_low", "ci_high", "status", "threshold", "operator"):
            key = control_key(cid, leaf)
            assert _mlflow_accepts(key), key
            prefix, got, tail = key.rsplit("/", 2)
            assert prefix == "fairpolicy/control" and unsegment(got) == cid and tail == leaf
            every.append(key)
    assert len(set(every)) == len(every)


def test_params_hold_hashes_thresholds_operators_and_gate_options(tmp_path: Path) -> None:
    results = _results(tmp_path, fail_on="never")
    got = params(results)
    assert got["fairpolicy/policy/sha256"] == results.policy.sha256
    assert got["fairpolicy/data/sha256"] == results.data.sha256
    assert got["fairpolicy/control/dp ok:2F1/threshold"] == "0.3"
    assert got["fairpolicy/control/dp ok:2F1/operator"] == "<"
    assert got["fairpolicy/control/eo/threshold"] == "0.5"
    assert got["fairpolicy/option/fail-on"] == "never"
    assert got["fairpolicy/option/fail-on/source"] == "flag"
    assert got["fairpolicy/option/inconclusive"] == "fail"
    assert got["fairpolicy/option/inconclusive/source"] == "default"
    assert all(len(k) <= 250 and len(v) <= 6000 for k, v in got.items())


def test_params_name_the_configuration_file_and_each_source(tmp_path: Path) -> None:
    results = _results(tmp_path)
    cfg = {
        "file": "/repo/pyproject.toml",
        "sha256": "ab" * 32,
        "settings": {"fail-on": "never"},
        "loosens": ["fail-on"],
        "sources": {
            "fail-on": {"value": "never", "source": "config"},
            "seed": {"value": 3, "source": "flag"},
            "decision": {"value": None, "source": "default"},
        },
    }
    run = results.run.model_copy(update={"options": {"config": cfg}})
    got = params(results.model_copy(update={"run": run}))
    assert got["fairpolicy/config/file"] == "/repo/pyproject.toml"
    assert got["fairpolicy/config/sha256"] == "ab" * 32
    assert got["fairpolicy/option/fail-on"] == "never"
    assert got["fairpolicy/option/fail-on/source"] == "config"
    assert got["fairpolicy/option/seed"] == "3"
    assert got["fairpolicy/option/seed/source"] == "flag"
    assert got["fairpolicy/option/decision/source"] == "default"


def test_a_long_param_value_is_cut_and_says_so(tmp_path: Path) -> None:
    results = _results(tmp_path)
    run = results.run.model_copy(update={"options": {"note": "x" * 7000}})
    value = params(results.model_copy(update={"run": run}))["fairpolicy/option/note"]
    assert len(value) == 6000 and value.endswith("the full value is in fairpolicy/results.json)")


@pytest.mark.skipif(HAVE_MLFLOW, reason="mlflow is installed: the message is for when it is not")
def test_without_mlflow_the_error_names_the_extra(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"fairpolicy\[mlflow\]"):
        log_results(_results(tmp_path))


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    mlflow = pytest.importorskip("mlflow")
    # the sqlite store keeps artifacts under ./mlruns: run in the test's own folder
    monkeypatch.chdir(tmp_path)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    mlflow.set_tracking_uri(uri)
    mlflow.set_experiment("fairpolicy-test")
    yield mlflow
    while mlflow.active_run() is not None:
        mlflow.end_run()


def test_log_results_into_the_active_run(store: Any, tmp_path: Path) -> None:
    from mlflow.tracking import MlflowClient

    results = _results(tmp_path, bootstrap=200, seed=1)
    with store.start_run() as run, pytest.warns(UserWarning, match="OSCAL artifact was not"):
        assert log_results(results) == run.info.run_id
    got = MlflowClient().get_run(run.info.run_id).data
    for f in results.findings:
        assert got.tags[control_key(f.control_id, "status")] == f.status
        assert got.metrics[control_key(f.control_id, "value")] == pytest.approx(f.value)
        if f.has_interval:
            assert f.ci is not None
            assert got.metrics[control_key(f.control_id, "ci_low")] == pytest.approx(f.ci.low)
            assert got.metrics[control_key(f.control_id, "ci_high")] == pytest.approx(f.ci.high)
    assert got.tags[GATE_VERDICT] == results.summary.gate == "fail"
    assert got.tags[GATE_EXIT_CODE] == "1"
    assert got.metrics[GATE_PASSED] == 0.0
    assert got.params == params(results)  # every param, exactly
    arts = {a.path for a in MlflowClient().list_artifacts(run.info.run_id, "fairpolicy")}
    # 'dp ok/1' is not an OSCAL token: the OSCAL artifact is left out, and the run says why
    assert arts == {"fairpolicy/results.json", "fairpolicy/report.html"}
    assert "'dp ok/1' is not an OSCAL token" in got.tags[OSCAL_TAG]
    local = MlflowClient().download_artifacts(run.info.run_id, "fairpolicy", str(tmp_path / "dl"))
    back = json.loads((Path(local) / "results.json").read_text())
    assert back["summary"]["gate"] == "fail"


def test_the_oscal_artifact_is_logged_when_ids_are_tokens(store: Any, tmp_path: Path) -> None:
    from mlflow.tracking import MlflowClient

    data = balanced_csv(tmp_path)
    policy = write_policy(tmp_path, control("dp-ok", threshold="0.3"))
    results = fairpolicy.check(str(policy), str(data), deterministic=True)
    run_id = log_results(results)
    arts = {a.path for a in MlflowClient().list_artifacts(run_id, "fairpolicy")}
    assert arts == {
        "fairpolicy/results.json",
        "fairpolicy/report.html",
        "fairpolicy/assessment-results.json",
    }
    assert OSCAL_TAG not in MlflowClient().get_run(run_id).data.tags
    local = MlflowClient().download_artifacts(run_id, "fairpolicy", str(tmp_path / "dl"))
    ar = json.loads((Path(local) / "assessment-results.json").read_text())
    assert "assessment-results" in ar


def test_log_results_to_a_named_run_and_refuses_an_unknown_one(store: Any, tmp_path: Path) -> None:
    from mlflow.tracking import MlflowClient

    results = _results(tmp_path)
    with store.start_run() as run:
        pass
    with pytest.warns(UserWarning, match="OSCAL artifact was not"):
        assert log_results(results, run_id=run.info.run_id) == run.info.run_id
    assert MlflowClient().get_run(run.info.run_id).data.tags[GATE_VERDICT] == "fail"
    with pytest.raises(UsageError, match="no MLflow run with id 'nope'"):
        log_results(results, run_id="nope")


def test_undefined_values_are_not_logged_as_numbers(store: Any, tmp_path: Path) -> None:
    from mlflow.tracking import MlflowClient

    csv = tmp_path / "d.csv"
    csv.write_text("y_true,y_pred,sex\n0,1,A\n0,0,A\n1,1,B\n0,0,B\n")
    pol = write_policy(tmp_path, control("c1", "equal_opportunity_diff", threshold="0.1"))
    results = fairpolicy.check(str(pol), str(csv))
    assert results.findings[0].value is None
    run_id = log_results(results)  # no active run: a new one
    got = MlflowClient().get_run(run_id).data
    assert control_key("c1", "value") not in got.metrics
    assert got.tags[control_key("c1", "status")] == results.findings[0].status


def _cli(tmp: Path, *extra: str) -> Any:
    import os
    import subprocess
    import sys

    data = balanced_csv(tmp)
    policy = write_policy(tmp, control("dp", threshold="0.2"))
    src = str(Path(fairpolicy.__file__).parents[1])
    return subprocess.run(
        [sys.executable, "-m", "fairpolicy", "check", str(policy), str(data), *extra],
        capture_output=True,
        text=True,
        cwd=tmp,
        env={**os.environ, "PYTHONPATH": src},
    )


def test_cli_mlflow_with_a_path_is_refused(tmp_path: Path) -> None:
    done = _cli(tmp_path, "-o", f"mlflow={tmp_path / 'x'}")
    assert done.returncode == 2 and "mlflow logs into a tracking store" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.skipif(HAVE_MLFLOW, reason="mlflow is installed: the message is for when it is not")
def test_cli_without_mlflow_is_exit_2_before_any_report(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    done = _cli(tmp_path, "-o", "mlflow", "-o", f"json={report}")
    assert done.returncode == 2 and "fairpolicy[mlflow]" in done.stderr
    assert not report.exists() and "Traceback" not in done.stderr
    done = _cli(tmp_path, "--mlflow-run-id", "abc")
    assert done.returncode == 2 and "fairpolicy[mlflow]" in done.stderr


def test_cli_logs_into_the_named_run(store: Any, tmp_path: Path) -> None:
    from mlflow.tracking import MlflowClient

    with store.start_run() as run:
        pass
    done = _cli(tmp_path, "-o", "mlflow", "--mlflow-run-id", run.info.run_id)
    assert done.returncode == 1, done.stderr  # the gap is 0.25, the rule < 0.2
    got = MlflowClient().get_run(run.info.run_id).data
    assert got.tags[GATE_VERDICT] == "fail" and got.tags[control_key("dp", "status")] == "fail"
    assert got.metrics[control_key("dp", "value")] == pytest.approx(0.25)
    assert got.params["fairpolicy/control/dp/threshold"] == "0.2"
    assert got.params["fairpolicy/option/fail-on/source"] == "default"


def test_colliding_ids_log_apart_and_params_cannot_change(store: Any, tmp_path: Path) -> None:
    """Issue 26 item 12 against a real store: ``dp``, ``dp.ci_low`` and ``gate_passed``
    keep their own values; a second check with other params into the same run is an
    error naming the conflict, not a silent mix."""
    from mlflow.tracking import MlflowClient

    data = balanced_csv(tmp_path)  # DP gap 0.25
    policy = write_policy(
        tmp_path,
        control("dp", threshold="0.3"),
        control("dp.ci_low", "equal_opportunity_diff", threshold="0.5"),
        control("gate_passed", "equal_opportunity_diff", threshold="0.5"),
    )
    results = fairpolicy.check(str(policy), str(data), bootstrap=100, seed=1)
    run_id = log_results(results)
    got = MlflowClient().get_run(run_id).data
    by_id = {f.control_id: f for f in results.findings}
    for cid, f in by_id.items():
        assert got.metrics[control_key(cid, "value")] == pytest.approx(f.value)
        assert f.ci is not None
        assert got.metrics[control_key(cid, "ci_low")] == pytest.approx(f.ci.low)
    assert got.metrics[GATE_PASSED] == 1.0
    other = fairpolicy.check(str(policy), str(data), fail_on="never")
    with pytest.raises(UsageError, match="already holds one of this check's params"):
        log_results(other, run_id=run_id)


def test_cli_an_unloggable_control_id_is_exit_2_before_any_report(
    store: Any, tmp_path: Path
) -> None:
    """A key over MLflow's 250 characters cannot be logged without cutting it (which could
    collide): exit 2 naming the control, before any report is written."""
    data = balanced_csv(tmp_path)
    policy = write_policy(tmp_path, control("c" * 240, threshold="0.3"))
    report = tmp_path / "r.json"
    argv = ["-m", "fairpolicy", "check", str(policy), str(data), "-o", "mlflow"]
    done = subprocess.run(
        [sys.executable, *argv, f"-ojson={report}"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(Path(fairpolicy.__file__).parents[1])},
    )
    assert done.returncode == 2, done.stderr
    assert "over MLflow's 250" in done.stderr and "Traceback" not in done.stderr
    assert not report.exists()
