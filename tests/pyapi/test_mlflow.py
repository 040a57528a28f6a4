"""fairpolicy.integrations.mlflow against a real local MLflow tracking store (sqlite in a
temp folder), reading back what was logged. Skipped when mlflow is not installed (the
``fairpolicy[mlflow]`` extra); the missing-package message is tested either way."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

import fairpolicy
from fairpolicy.errors import UsageError
from fairpolicy.integrations.mlflow import log_results, metric_names
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


def test_metric_names_are_safe_and_unique(tmp_path: Path) -> None:
    results = _results(tmp_path)
    names = metric_names(results)
    assert names["dp ok/1"] == "dp ok/1" and len(set(names.values())) == len(names)
    clash = results.model_copy(
        update={
            "findings": [
                results.findings[0].model_copy(update={"control_id": "a#b"}),
                results.findings[1].model_copy(update={"control_id": "a$b"}),
            ]
        }
    )
    assert metric_names(clash) == {"a#b": "a_b", "a$b": "a_b-2"}


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
    by_id = {f.control_id: f for f in results.findings}
    for cid, name in metric_names(results).items():
        f = by_id[cid]
        assert got.tags[f"fairpolicy.{name}.status"] == f.status
        assert got.metrics[f"fairpolicy.{name}"] == pytest.approx(f.value)
        if f.has_interval:
            assert f.ci is not None
            assert got.metrics[f"fairpolicy.{name}.ci_low"] == pytest.approx(f.ci.low)
            assert got.metrics[f"fairpolicy.{name}.ci_high"] == pytest.approx(f.ci.high)
    assert got.tags["fairpolicy.gate"] == results.summary.gate == "fail"
    assert got.tags["fairpolicy.exit_code"] == "1"
    assert got.metrics["fairpolicy.gate_passed"] == 0.0
    arts = {a.path for a in MlflowClient().list_artifacts(run.info.run_id, "fairpolicy")}
    # 'dp ok/1' is not an OSCAL token: the OSCAL artifact is left out, and the run says why
    assert arts == {"fairpolicy/results.json", "fairpolicy/report.html"}
    assert "'dp ok/1' is not an OSCAL token" in got.tags["fairpolicy.oscal"]
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
    assert "fairpolicy.oscal" not in MlflowClient().get_run(run_id).data.tags
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
    assert MlflowClient().get_run(run.info.run_id).data.tags["fairpolicy.gate"] == "fail"
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
    assert "fairpolicy.c1" not in got.metrics
    assert got.tags["fairpolicy.c1.status"] == results.findings[0].status


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
    assert got.tags["fairpolicy.gate"] == "fail" and got.tags["fairpolicy.dp.status"] == "fail"
    assert got.metrics["fairpolicy.dp"] == pytest.approx(0.25)
