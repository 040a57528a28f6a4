"""Log a check's results to MLflow (extra ``fairpolicy[mlflow]``).

    import fairpolicy
    from fairpolicy.integrations.mlflow import log_results

    with mlflow.start_run():
        results = fairpolicy.check("policy.yaml", predictions)
        log_results(results)          # or log_results(results, run_id="…")

What is logged into the run (the active one, the one named by ``run_id``, or a new one):

- metric ``fairpolicy.<control>`` per control whose value is defined, and
  ``fairpolicy.<control>.ci_low`` / ``.ci_high`` when it has an interval; an undefined value
  is not logged as a number (never NaN) — its status tag says why;
- metric ``fairpolicy.gate_passed`` (1 or 0);
- tags ``fairpolicy.gate`` (pass/fail/error), ``fairpolicy.exit_code``, and
  ``fairpolicy.<control>.status`` per control;
- artifacts ``fairpolicy/results.json``, ``fairpolicy/report.html`` and
  ``fairpolicy/assessment-results.json`` (OSCAL). OSCAL cannot name a control whose id is
  not an OSCAL token (``dp ok/1``): then the OSCAL artifact is not logged, the tag
  ``fairpolicy.oscal`` says why and a ``UserWarning`` is raised — never a silent gap, and
  never the metrics lost for want of an optional artifact.

Control ids are made MLflow-safe (characters other than letters, digits, ``_ - . / :`` and
space become ``_``); two controls that would share a name are numbered, never merged.
"""

from __future__ import annotations

import re
import tempfile
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fairpolicy.errors import OutputError, UsageError
from fairpolicy.present import write

if TYPE_CHECKING:
    from fairpolicy.results import Results

PREFIX = "fairpolicy"
ARTIFACTS = {"json": "results.json", "html": "report.html", "oscal": "assessment-results.json"}


def _mlflow() -> Any:
    try:
        import mlflow
    except ImportError:
        raise UsageError(
            "logging to MLflow needs the mlflow package, which is not installed.",
            hint="pip install 'fairpolicy[mlflow]'",
        ) from None
    return mlflow


def split_mlflow(items: list[str], run_id: str | None) -> tuple[list[str], bool]:
    """The CLI's ``-o`` items without ``mlflow``, and whether to log to MLflow (``-o mlflow``
    or ``--mlflow-run-id``). The mlflow package is checked now, before any work: a missing
    one is exit 2 naming the extra, never reports written and the logging silently skipped."""
    rest, wanted = [], run_id is not None
    for item in items:
        name, sep, _ = item.partition("=")
        if name.strip() != "mlflow":
            rest.append(item)
            continue
        if sep:
            raise UsageError(
                f"-o {item}: mlflow logs into a tracking store, not a file.",
                hint="write -o mlflow (the active run, or MLFLOW_RUN_ID) or --mlflow-run-id ID; "
                "set MLFLOW_TRACKING_URI to choose the store.",
            )
        wanted = True
    if wanted:
        _mlflow()
    return rest, wanted


def metric_names(results: Results) -> dict[str, str]:
    """``{control_id: MLflow-safe name}``, unique (a clash gets ``-2``, ``-3`` …)."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    for f in results.findings:
        base = re.sub(r"[^A-Za-z0-9_\-./: ]", "_", f.control_id)[:200] or "_"
        name, k = base, 1
        while name in taken:
            k += 1
            name = f"{base}-{k}"
        taken.add(name)
        names[f.control_id] = name
    return names


def log_results(results: Results, run_id: str | None = None) -> str:
    """Log ``results`` into an MLflow run and return its id: ``run_id`` when given, else the
    active run, else the run ``mlflow.start_run()`` opens (``MLFLOW_RUN_ID`` when set, else a
    new run; ended here)."""
    mlflow = _mlflow()
    from mlflow.tracking import MlflowClient

    if run_id is None and mlflow.active_run() is None:
        with mlflow.start_run() as run:
            return log_results(results, run.info.run_id)
    if run_id is None:
        run_id = mlflow.active_run().info.run_id
    client = MlflowClient()
    try:
        client.get_run(run_id)
    except Exception as exc:  # mlflow raises MlflowException for an unknown id
        raise UsageError(
            f"no MLflow run with id '{run_id}' in the tracking store "
            f"{mlflow.get_tracking_uri()} ({type(exc).__name__}).",
            hint="pass the id of an existing run (mlflow.active_run().info.run_id), or set "
            "MLFLOW_TRACKING_URI to the store that holds it.",
        ) from None
    names = metric_names(results)
    for f in results.findings:
        key = f"{PREFIX}.{names[f.control_id]}"
        if f.value is not None:
            client.log_metric(run_id, key, float(f.value))
        if f.ci is not None and f.ci.low is not None and f.ci.high is not None:
            client.log_metric(run_id, f"{key}.ci_low", float(f.ci.low))
            client.log_metric(run_id, f"{key}.ci_high", float(f.ci.high))
        client.set_tag(run_id, f"{key}.status", f.status)
    client.log_metric(run_id, f"{PREFIX}.gate_passed", 1.0 if results.passed else 0.0)
    client.set_tag(run_id, f"{PREFIX}.gate", results.summary.gate)
    client.set_tag(run_id, f"{PREFIX}.exit_code", str(results.exit_code))
    with tempfile.TemporaryDirectory(prefix="fairpolicy-mlflow-") as tmp:
        for fmt, name in ARTIFACTS.items():
            try:
                write(results, fmt, Path(tmp) / name)
            except OutputError as exc:
                if fmt != "oscal":
                    raise
                reason = str(exc)
                client.set_tag(run_id, f"{PREFIX}.oscal", f"not logged: {reason}"[:5000])
                warnings.warn(
                    f"MLflow run {run_id}: the OSCAL artifact was not logged: {reason}",
                    UserWarning,
                    stacklevel=2,
                )
        client.log_artifacts(run_id, tmp, artifact_path=PREFIX)
    return run_id
