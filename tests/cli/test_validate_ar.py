"""``fairpolicy validate ar.json`` (issue 29): assessment results checked on their own — the
NIST schema, every hash they state, the plan they were verified against, and their
statements against the verdict re-derived from the results JSON they name. An untouched
chain is valid; each tampering is exit 2 naming what changed."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fairpolicy.cli import main
from tests.bad_inputs.cases import DEFAULT_DATA
from tests.cli.test_plan_settings import FOUR

ROOT = Path(__file__).resolve().parents[2]


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(list(argv), stdout=out)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def chain(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    Path("policy.yaml").write_text(FOUR)
    Path("data.csv").write_text(DEFAULT_DATA)
    assert run("plan", "policy.yaml", "-o", "ap.json", "--approver", "Ada")[0] == 0
    argv = ["check", "policy.yaml", "data.csv", "--plan", "ap.json"]
    assert run(*argv, "-o", "json=r.json", "-o", "oscal=ar.json")[0] == 1
    return tmp_path


def _edit_ar(change: Callable[[dict[str, Any]], None]) -> None:
    doc = json.loads(Path("ar.json").read_text())
    change(doc["assessment-results"])
    Path("ar.json").write_text(json.dumps(doc, indent=2))


def _obs_prop(name: str, value: str) -> Callable[[dict[str, Any]], None]:
    def change(body: dict[str, Any]) -> None:
        obs = body["results"][0]["observations"][0]
        for p in obs["props"]:
            if p["name"] == name:
                p["value"] = value
                return
        raise AssertionError(name)

    return change


def _result_prop(name: str, value: str) -> Callable[[dict[str, Any]], None]:
    def change(body: dict[str, Any]) -> None:
        for p in body["results"][0]["props"]:
            if p["name"] == name:
                p["value"] = value
                return
        raise AssertionError(name)

    return change


def _finding_state(body: dict[str, Any]) -> None:
    f = body["results"][0]["findings"][0]
    f["target"]["status"]["state"] = "satisfied"


def _append(name: str) -> Callable[[], None]:
    def change() -> None:
        with open(name, "a", encoding="utf-8") as fh:
            fh.write("\n")

    return change


def test_an_untouched_chain_is_valid(chain: Path) -> None:
    code, out, _ = run("validate", "ar.json")
    assert code == 0 and out.startswith("OK  ar.json  (assessment results: 4 observation(s)")
    assert "gate fail" in out and "every hash recomputed" in out
    # beside a policy, each file gets its own verdict
    code, out, _ = run("validate", "policy.yaml", "ar.json")
    assert code == 0 and out.count("OK  ") == 2


@pytest.mark.parametrize(
    ("tamper", "named"),
    [
        (lambda: _edit_ar(_obs_prop("status", "pass")), "the status is 'pass'"),
        (lambda: _edit_ar(_obs_prop("measured-value", "0.01")), "the measured value is '0.01'"),
        (lambda: _edit_ar(_obs_prop("threshold", "0.9")), "the threshold is '0.9'"),
        (lambda: _edit_ar(_result_prop("gate", "pass")), "the gate is 'pass'"),
        (lambda: _edit_ar(_result_prop("setting.fail-on", "never")), "the setting fail-on"),
        (lambda: _edit_ar(_finding_state), "the finding's state is 'satisfied'"),
        (_append("data.csv"), "changed after the run"),
        (_append("policy.yaml"), "changed after the run"),
        (_append("r.json"), "changed after the run"),
        (_append("ap.json"), "changed after the run"),
    ],
    ids=[
        "observation-status",
        "measured-value",
        "threshold",
        "gate",
        "setting",
        "finding-state",
        "data",
        "policy",
        "results-json",
        "plan",
    ],
)
def test_each_tampering_is_named(chain: Path, tamper: Callable[[], None], named: str) -> None:
    tamper()
    code, out, _ = run("validate", "ar.json")
    assert code == 2 and named in out, out
    assert "Traceback" not in out


def test_a_swapped_plan_is_named(chain: Path) -> None:
    """Another plan put in the approved plan's place: its hash and its content differ."""
    Path("other.yaml").write_text(FOUR.replace('"0.5"', '"0.9"'))
    assert run("plan", "other.yaml", "-o", "ap.json")[0] == 0
    code, out, _ = run("validate", "ar.json")
    assert code == 2 and "changed after the run" in out and "approved content" in out


def test_validate_reads_an_ar_as_a_subprocess(chain: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.run(
        [sys.executable, "-m", "fairpolicy", "validate", "ar.json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0 and "OK  ar.json" in proc.stdout, proc.stderr
    _edit_ar(_obs_prop("status", "pass"))
    proc = subprocess.run(
        [sys.executable, "-m", "fairpolicy", "validate", "ar.json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2 and "the status is 'pass'" in proc.stdout


def test_embedded_results_json_is_read_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without ``-o json`` the results JSON is embedded (base64): the verdict is
    re-derived from it."""
    monkeypatch.chdir(tmp_path)
    Path("policy.yaml").write_text(FOUR)
    Path("data.csv").write_text(DEFAULT_DATA)
    assert (
        run("check", "policy.yaml", "data.csv", "--fail-on", "never", "-o", "oscal=ar.json")[0] == 0
    )
    code, out, _ = run("validate", "ar.json")
    assert code == 0, out
    _edit_ar(_result_prop("setting.fail-on", "error"))
    code, out, _ = run("validate", "ar.json")
    assert code == 2 and "the setting fail-on is 'error'" in out and "'never'" in out
