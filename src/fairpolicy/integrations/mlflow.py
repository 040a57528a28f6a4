"""Log a check's results to MLflow (extra ``fairpolicy[mlflow]``).

    import fairpolicy
    from fairpolicy.integrations.mlflow import log_results

    with mlflow.start_run():
        results = fairpolicy.check("policy.yaml", predictions)
        log_results(results)          # or log_results(results, run_id="…")

What is logged into the run (the active one, the one named by ``run_id``, or a new one),
every key in a namespace of its own, so that no control id can write into another
control's keys or the gate's:

- metrics ``fairpolicy/control/<id>/value`` per control whose value is defined (an
  undefined value is not logged as a number, never NaN — its status tag says why), and
  ``fairpolicy/control/<id>/ci_low`` / ``ci_high`` when it has an interval;
  ``fairpolicy/gate/passed`` (1 or 0);
- tags ``fairpolicy/gate/verdict`` (pass/fail/error), ``fairpolicy/gate/exit_code``,
  ``fairpolicy/control/<id>/status``;
- params (issue 27): ``fairpolicy/policy/sha256``, ``fairpolicy/data/sha256``,
  ``fairpolicy/control/<id>/threshold`` (as the report prints it) and ``…/operator``, and
  each gate option as ``fairpolicy/option/<name>`` with ``fairpolicy/option/<name>/source``
  (``flag`` — the command line or the API's argument —, ``config`` — the configuration
  file, also named in ``fairpolicy/config/file`` and ``…/sha256`` — or ``default``);
- artifacts ``fairpolicy/results.json``, ``fairpolicy/report.html`` and
  ``fairpolicy/assessment-results.json`` (OSCAL). OSCAL cannot name a control whose id is
  not an OSCAL token (``dp ok/1``): then the OSCAL artifact is not logged, the tag
  ``fairpolicy/artifacts/oscal`` says why and a ``UserWarning`` is raised — never a silent
  gap, and never the metrics lost for want of an optional artifact.

``<id>`` is the control id escaped (:func:`segment`): letters, digits, ``_ - .`` and space
stay; every other character — the separator ``/``, the escape character ``:``, anything
MLflow does not allow in a key — becomes ``:XX`` per UTF-8 byte (``dp/1`` → ``dp:2F1``), and
an id that is exactly ``.`` or ``..`` has its dots escaped. The escaping is reversible
(:func:`unsegment`), so two ids never share a key and a key never leaves its namespace.
The collision that cannot be avoided — a key over MLflow's 250 characters — is an error
(:class:`~fairpolicy.errors.UsageError` naming the control) before anything is logged, as
are two findings with one control id. A param value over MLflow's limit (6000 characters)
is cut and says so (the full value is in ``results.json``); logging a check into a run that
already holds one of its params with another value is an error naming the param (params
cannot change; log each check into its own run).
"""

from __future__ import annotations

import tempfile
import time
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


#: MLflow's limits (``mlflow.utils.validation``)
MAX_KEY = 250
MAX_PARAM_VALUE = 6000
MAX_TAG_VALUE = 8000
#: what stays as written in a segment; everything else is escaped as ``:XX``
_PLAIN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-. ")


def segment(control_id: str) -> str:
    """``control_id`` as one key segment: reversible, never ``/``, never ``.`` or ``..``."""
    if not control_id:
        raise UsageError("a control with an empty id cannot be logged to MLflow.")
    if control_id in (".", ".."):
        return ":2E" * len(control_id)
    out = []
    for ch in control_id:
        if ch in _PLAIN:
            out.append(ch)
        else:
            out.extend(f":{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
    return "".join(out)


def unsegment(text: str) -> str:
    """The control id a :func:`segment` came from."""
    raw = bytearray()
    i = 0
    while i < len(text):
        if text[i] == ":":
            raw.append(int(text[i + 1 : i + 3], 16))
            i += 3
        else:
            raw += text[i].encode()
            i += 1
    return raw.decode("utf-8", "surrogatepass")


def control_key(control_id: str, leaf: str) -> str:
    """``fairpolicy/control/<segment>/<leaf>``."""
    return f"{PREFIX}/control/{segment(control_id)}/{leaf}"


GATE_PASSED = f"{PREFIX}/gate/passed"
GATE_VERDICT = f"{PREFIX}/gate/verdict"
GATE_EXIT_CODE = f"{PREFIX}/gate/exit_code"
OSCAL_TAG = f"{PREFIX}/artifacts/oscal"


def _checked(keys: list[tuple[str, str]]) -> None:
    """Every key unique and within MLflow's limits, or a UsageError naming the control."""
    seen: dict[str, str] = {}
    for key, owner in keys:
        if len(key) > MAX_KEY:
            raise UsageError(
                f"{owner}: its MLflow key '{key[:60]}…' has {len(key)} characters, over "
                f"MLflow's {MAX_KEY}; it cannot be logged without cutting it, and a cut key "
                "could collide with another.",
                hint="give the control a shorter id.",
            )
        if key in seen:
            raise UsageError(
                f"{owner} and {seen[key]} would write the same MLflow key '{key}'.",
                hint="give every control its own id.",
            )
        seen[key] = owner


def keys(results: Results) -> dict[str, str]:
    """``{control_id: its key segment}``; raises :class:`UsageError` when two findings
    share an id or a key would exceed MLflow's limit (checked for every key logged)."""
    out: dict[str, str] = {}
    for f in results.findings:
        if f.control_id in out:
            raise UsageError(
                f"two findings have the control id '{f.control_id}'; their MLflow keys "
                "would collide.",
                hint="give every control its own id.",
            )
        out[f.control_id] = segment(f.control_id)
    every = [(k, "the gate") for k in (GATE_PASSED, GATE_VERDICT, GATE_EXIT_CODE, OSCAL_TAG)]
    for cid in out:
        owner = f"control '{cid}'"
        every += [
            (control_key(cid, leaf), owner) for leaf in ("value", "ci_low", "ci_high", "status")
        ]
    every += [(k, f"param {k}") for k in params(results, check=False)]
    _checked(every)
    return out


def _text(value: object) -> str:
    if isinstance(value, str):
        return value
    import json

    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _threshold(value: object) -> str:
    from fairpolicy.exact import threshold_text

    if isinstance(value, list):
        return "[" + ", ".join(threshold_text(float(v)) for v in value) + "]"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return threshold_text(float(value))
    return _text(value)


def gate_options(results: Results) -> dict[str, tuple[object, str]]:
    """Each option that shaped the gate: ``{name: (value, source)}``. With a configuration
    file the CLI recorded every verdict-shaping option and its source; otherwise the run's
    own fields (``default`` when at the default, else ``flag``) and its recorded options."""
    r = results.run
    cfg = r.options.get("config")
    out: dict[str, tuple[object, str]] = {}
    if isinstance(cfg, dict):
        out["config/file"] = (cfg.get("file"), "config")
        out["config/sha256"] = (cfg.get("sha256"), "config")
        sources = cfg.get("sources")
        if isinstance(sources, dict):
            for name, entry in sources.items():
                if isinstance(entry, dict):
                    out[name] = (entry.get("value"), str(entry.get("source")))
    for name, value, default in (
        ("fail-on", r.fail_on, "error"),
        ("inconclusive", r.inconclusive, "fail"),
        ("engine", r.engine, "embedded"),
        ("seed", r.seed, None),
    ):
        if name not in out or out[name][0] is None:
            out[name] = (value, "default" if value == default or value is None else "flag")
    for name, value in r.options.items():
        if name != "config" and name.replace("_", "-") not in out:
            out[name.replace("_", "-")] = (value, "flag")
    return out


def params(results: Results, check: bool = True) -> dict[str, str]:
    """The params logged with a check: hashes, each control's threshold and operator, the
    gate options and their sources; values cut to MLflow's limit (saying so)."""
    out: dict[str, str] = {
        f"{PREFIX}/policy/sha256": results.policy.sha256 or "",
        f"{PREFIX}/data/sha256": results.data.sha256 or "",
    }
    for f in results.findings:
        out[control_key(f.control_id, "threshold")] = _threshold(f.threshold)
        out[control_key(f.control_id, "operator")] = f.operator
    for name, (value, source) in gate_options(results).items():
        is_config = name.startswith("config/")
        key = f"{PREFIX}/{name}" if is_config else f"{PREFIX}/option/{segment(name)}"
        out[key] = _text(value)
        if not is_config:
            out[f"{key}/source"] = source
    if check:
        _checked([(k, f"param {k}") for k in out])
    cut = " … (cut to MLflow's limit; the full value is in fairpolicy/results.json)"
    return {
        k: v if len(v) <= MAX_PARAM_VALUE else v[: MAX_PARAM_VALUE - len(cut)] + cut
        for k, v in out.items()
    }


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
    names = keys(results)  # every key checked before anything is logged
    from mlflow.entities import Metric, Param, RunTag

    now = int(time.time() * 1000)
    metrics: list[Any] = []
    tags: list[Any] = []
    for f in results.findings:
        if f.value is not None:
            metrics.append(Metric(control_key(f.control_id, "value"), float(f.value), now, 0))
        if f.ci is not None and f.ci.low is not None and f.ci.high is not None:
            metrics.append(Metric(control_key(f.control_id, "ci_low"), float(f.ci.low), now, 0))
            metrics.append(Metric(control_key(f.control_id, "ci_high"), float(f.ci.high), now, 0))
        tags.append(RunTag(control_key(f.control_id, "status"), f.status))
    assert len(names) == len(results.findings)
    metrics.append(Metric(GATE_PASSED, 1.0 if results.passed else 0.0, now, 0))
    tags += [
        RunTag(GATE_VERDICT, results.summary.gate),
        RunTag(GATE_EXIT_CODE, str(results.exit_code)),
    ]
    logged = [Param(k, v) for k, v in params(results).items()]
    try:
        for i in range(0, len(logged), 100):
            client.log_batch(run_id, params=logged[i : i + 100])
    except Exception as exc:  # MlflowException: a param the run holds with another value
        raise UsageError(
            f"MLflow run {run_id} already holds one of this check's params with another "
            f"value ({type(exc).__name__}: {str(exc)[:300]}); params cannot change.",
            hint="log each check into its own run (mlflow.start_run()).",
        ) from None
    for i in range(0, len(metrics), 1000):
        client.log_batch(run_id, metrics=metrics[i : i + 1000])
    for i in range(0, len(tags), 100):
        client.log_batch(run_id, tags=tags[i : i + 100])
    with tempfile.TemporaryDirectory(prefix="fairpolicy-mlflow-") as tmp:
        for fmt, name in ARTIFACTS.items():
            try:
                write(results, fmt, Path(tmp) / name)
            except OutputError as exc:
                if fmt != "oscal":
                    raise
                reason = str(exc)
                client.set_tag(run_id, OSCAL_TAG, f"not logged: {reason}"[:MAX_TAG_VALUE])
                warnings.warn(
                    f"MLflow run {run_id}: the OSCAL artifact was not logged: {reason}",
                    UserWarning,
                    stacklevel=2,
                )
        client.log_artifacts(run_id, tmp, artifact_path=PREFIX)
    return run_id
