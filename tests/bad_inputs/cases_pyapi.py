"""Bad-input rows of the pyapi area (issue 15: ``-o mlflow`` / ``--mlflow-run-id``).

Each stops before any work: nothing is written and a previous report stays as it was. The
Python API's bad inputs (unknown format or option in ``Results.render``/``write``, a folder
as ``write``'s path, an unknown MLflow run) are in ``tests/pyapi/``.
"""

from __future__ import annotations

import importlib.util

from tests.bad_inputs.cases import Case, policy

CASES: list[Case] = [
    Case(
        "pyapi-mlflow-with-a-path",
        ("-o mlflow=", "mlflow logs into a tracking store, not a file", "MLFLOW_TRACKING_URI"),
        args=("-o", "mlflow={tmp}/runs"),
    ),
]

if importlib.util.find_spec("mlflow") is None:  # the message for a missing extra
    CASES += [
        Case(
            "pyapi-mlflow-not-installed",
            ("mlflow package, which is not installed", "pip install 'fairpolicy[mlflow]'"),
            args=("-o", "mlflow"),
            subprocess=True,
        ),
        Case(
            "pyapi-mlflow-run-id-not-installed",
            ("mlflow package, which is not installed", "fairpolicy[mlflow]"),
            args=("--mlflow-run-id", "0123abcd"),
        ),
    ]
else:  # mlflow installed (the MLflow venv of .ci/run): keys checked before any report
    CASES += [
        Case(
            "pyapi-mlflow-key-over-the-limit",
            ("over MLflow's 250", "cannot be logged without cutting it", "shorter id"),
            policy=policy(cid="c" * 240),
            args=("-o", "mlflow"),
            control="c" * 240,
            note="issue 26 item 12: a cut key could collide with another",
        ),
    ]
