"""Shared fixtures: the reference fixtures directory and a one-call metric evaluator.

The reference data (CSV fixtures + ``reference.json`` computed by fairlearn,
scikit-learn, holisticai, aif360 and Venturalitica) is vendored in
``tests/reference/`` (a copy of the shared ``reference/fixtures``), so these tests
run on every clean clone.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

import fairpolicy.records
from fairpolicy.policy.schema import Control, Operator, Policy, Threshold
from fairpolicy.results import Finding, Results
from fairpolicy.runner import check

# Every policy and results record the suite builds checks itself against its pydantic
# validation (fairpolicy.records): in this process and in every CLI subprocess
os.environ["FAIRPOLICY_CHECK_RECORDS"] = "1"
fairpolicy.records.CHECK = True

# The OSCAL validation cache (fairpolicy.cache) of this test session lives in a fresh
# folder: every run starts cold, in-process and CLI subprocesses share it, and the user's
# own cache is never written.
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="fairpolicy-test-cache-")
atexit.register(shutil.rmtree, os.environ["XDG_CACHE_HOME"], ignore_errors=True)

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES_DIR = REPO_ROOT / "tests" / "reference"
REFERENCE_JSON = FIXTURES_DIR / "reference.json"


def _require_fixtures() -> Path:
    assert REFERENCE_JSON.is_file(), f"vendored reference fixtures missing: {REFERENCE_JSON}"
    return FIXTURES_DIR


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """Directory holding binary_2g.csv, multiclass_3.csv, multiclass_6_2site.csv."""
    return _require_fixtures()


@pytest.fixture(scope="session")
def reference() -> dict[str, Any]:
    """The parsed reference.json (values computed by the anchor libraries)."""
    return json.loads(_require_fixtures().joinpath("reference.json").read_text("utf-8"))


def make_control(
    metric_key: str,
    dimension: str,
    params: Mapping[str, Any] | None = None,
    *,
    control_id: str | None = None,
    min_samples: int = 30,
    target: str = "y_true",
    prediction: str = "y_pred",
    threshold: float = 0.1,
    operator: Operator = Operator.LT,
) -> Control:
    """A control built in code (no policy loader involved)."""
    return Control(
        control_id=control_id or f"{metric_key}@{dimension}",
        metric_key=metric_key,
        metric_key_as_written=metric_key,
        threshold=Threshold(value=threshold),
        operator=operator,
        inputs={"target": target, "prediction": prediction, "dimension": dimension},
        params=dict(params or {}),
        min_samples=min_samples,
    )


def run_controls(controls: Sequence[Control], data: Any) -> Results:
    """Evaluate several controls on one data source in one ``check`` call."""
    return check(Policy(form="list", controls=tuple(controls)), data)


def run_metric(
    metric_key: str, data: Any, dimension: str, params: Mapping[str, Any] | None = None, **kw: Any
) -> Finding:
    """The single finding of a one-control policy."""
    return run_controls([make_control(metric_key, dimension, params, **kw)], data).findings[0]


@pytest.fixture(scope="session")
def evaluate() -> Callable[..., Finding]:
    """``evaluate(key, data, dimension, params=None, min_samples=30, ...) -> Finding``."""
    return run_metric


@pytest.fixture(scope="session")
def evaluate_many() -> Callable[..., Results]:
    """``evaluate_many([Control, ...], data) -> Results``."""
    return run_controls


@pytest.fixture(scope="session")
def control() -> Callable[..., Control]:
    """``control(key, dimension, params=None, **kw) -> Control``."""
    return make_control


@pytest.fixture(scope="module")
def run() -> Callable[..., Finding]:
    """run(key, df, dimension="g", params=None, inputs=None, min_samples=1) -> Finding.

    One control on a DataFrame; ``inputs`` replaces the default role bindings.
    """

    def go(
        key: str,
        df: Any,
        dimension: str = "g",
        params: Mapping[str, Any] | None = None,
        inputs: Mapping[str, str] | None = None,
        min_samples: int = 1,
    ) -> Finding:
        c = make_control(key, dimension, params, min_samples=min_samples)
        if inputs is not None:
            c = c.model_copy(update={"inputs": {**inputs, "dimension": dimension}})
        return run_controls([c], df).findings[0]

    return go


@pytest.fixture(scope="session", autouse=True)
def _modules_come_from_this_interpreter() -> Iterator[None]:
    """At the end of every test process (each pytest-xdist worker too, where no file is
    sure to run last), every module imported comes from this interpreter's own paths: the
    guard of ``tests/test_zz_interpreter.py`` over everything the process's tests imported.
    A failure is reported as an error at the teardown of the process's last test."""
    yield
    from tests.test_zz_interpreter import modules_from_outside

    outside = modules_from_outside()
    assert not outside, (
        f"modules imported from outside {sys.executable}'s own paths:\n" + "\n".join(outside)
    )
