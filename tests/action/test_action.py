"""The composite GitHub Action (``action.yml``), run the way GitHub runs it (issue 15).

``action/run.sh`` is executed with the environment GitHub sets — ``GITHUB_OUTPUT``,
``GITHUB_STEP_SUMMARY``, ``RUNNER_TEMP`` and the ``INPUT_*`` variables the composite step
passes. The network part (pip installing fairpolicy into the Action's own venv) is replaced
by a venv prepared in ``RUNNER_TEMP`` that sees this checkout (the wheel install itself is
checked by ``scripts/check_dist.sh``). Checked: pass / fail / could-not-evaluate set
``gate``, ``exit-code`` and the counts, the summary holds the report or the error, the
reports are written, extra outputs and arguments reach the check, bad inputs are exit 2;
and every ``uses:`` in the Action and the example workflow is pinned to a commit SHA.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers import balanced_csv, control, write_policy

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "action" / "run.sh"


@pytest.fixture
def runner(tmp_path: Path) -> Path:
    """RUNNER_TEMP with the Action's venv already in place (no network in tests)."""
    temp = tmp_path / "runner"
    venv = temp / "fairpolicy-venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    launcher = venv / "bin" / "fairpolicy"
    launcher.write_text(
        f"#!{venv / 'bin' / 'python'}\n"
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT / 'src')!r})\n"
        "from fairpolicy.cli import main\n"
        "raise SystemExit(main())\n"
    )
    launcher.chmod(0o755)
    return temp


def run_action(work: Path, runner: Path, **inputs: str) -> tuple[int, dict[str, str], str, str]:
    out, summary = work / "github_output", work / "step_summary"
    out.write_text("")
    summary.write_text("")
    env = {
        **os.environ,
        "RUNNER_TEMP": str(runner),
        "GITHUB_OUTPUT": str(out),
        "GITHUB_STEP_SUMMARY": str(summary),
        "FAIRPOLICY_PYTHON": sys.executable,
        "FAIRPOLICY_SOURCE": str(ROOT),
        **{f"INPUT_{k.upper()}": v for k, v in inputs.items()},
    }
    done = subprocess.run(["bash", str(RUN)], capture_output=True, text=True, cwd=work, env=env)
    outputs = dict(line.split("=", 1) for line in out.read_text().splitlines() if "=" in line)
    return done.returncode, outputs, summary.read_text(), done.stdout + done.stderr


def test_a_passing_gate(tmp_path: Path, runner: Path) -> None:
    data = balanced_csv(tmp_path)
    policy = write_policy(
        tmp_path,
        control("dp", threshold="0.3"),
        control("eo", "equal_opportunity_diff", threshold="0.3"),
    )
    code, out, summary, log = run_action(
        tmp_path,
        runner,
        policy=str(policy),
        data=str(data),
        outputs="sarif=gate.sarif\n\n  junit=gate.xml  ",
        args="--timestamp\n2026-01-01T00:00:00Z\n--meta\nticket=ML-1",
    )
    assert code == 0, log
    assert out["gate"] == "pass" and out["exit-code"] == "0"
    assert out["controls"] == "2" and out["passed"] == "2" and out["failed"] == "0"
    assert "PASS" in summary and "ticket" in summary
    reports = tmp_path / out["reports"]
    for name in ("results.json", "report.html", "report.md"):
        assert (reports / name).is_file()
    assert (tmp_path / "gate.sarif").is_file() and (tmp_path / "gate.xml").is_file()
    assert "::group::" in log  # the annotations (-o github) on the job log


def test_a_failing_gate_exits_1(tmp_path: Path, runner: Path) -> None:
    data = balanced_csv(tmp_path)  # DP gap 0.25
    policy = write_policy(tmp_path, control("dp", threshold="0.2"))
    code, out, summary, log = run_action(tmp_path, runner, policy=str(policy), data=str(data))
    assert code == 1, log
    assert out["gate"] == "fail" and out["failed"] == "1" and out["exit-code"] == "1"
    assert "FAIL" in summary and "::error" in log


def test_could_not_evaluate_exits_2_with_the_error_in_the_summary(
    tmp_path: Path, runner: Path
) -> None:
    policy = write_policy(tmp_path, control("dp", threshold="0.2"))
    code, out, summary, log = run_action(
        tmp_path, runner, policy=str(policy), data=str(tmp_path / "missing.csv")
    )
    assert code == 2, log
    assert out["gate"] == "error" and out["exit-code"] == "2"
    assert "could not evaluate" in summary and "missing.csv" in summary


@pytest.mark.parametrize(
    ("inputs", "fragment"),
    [
        ({"data": "d.csv"}, "the input 'policy' is required"),
        ({"policy": "p.yaml"}, "the input 'data' is required"),
        ({"policy": "p.yaml", "data": "d.csv", "fail_on": "sometimes"}, "fail-on must be"),
    ],
)
def test_bad_inputs_are_exit_2(
    tmp_path: Path, runner: Path, inputs: dict[str, str], fragment: str
) -> None:
    code, out, summary, log = run_action(tmp_path, runner, **inputs)
    assert code == 2 and out["gate"] == "error" and fragment in summary and fragment in log


def _uses(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [str(node["uses"])] if "uses" in node else []
        return found + [u for v in node.values() for u in _uses(v)]
    if isinstance(node, list):
        return [u for v in node for u in _uses(v)]
    return []


def test_every_third_party_action_is_pinned_to_a_commit_sha() -> None:
    files = [ROOT / "action.yml", *sorted((ROOT / "examples" / "ci").glob("*.yml"))]
    found = 0
    for path in files:
        text = path.read_text()
        for ref in _uses(yaml.safe_load(text)):
            if ref.startswith("./"):
                continue
            found += 1
            assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", ref), (path.name, ref)
            line = next(x for x in text.splitlines() if ref in x)
            assert re.search(r"# v\d+\.\d+\.\d+", line), (path.name, line)  # the version
    assert found >= 4


def test_the_example_workflow_bounds_the_job_and_uses_the_action() -> None:
    doc = yaml.safe_load((ROOT / "examples" / "ci" / "github-actions.yml").read_text())
    assert "concurrency" in doc
    (job,) = doc["jobs"].values()
    assert job["timeout-minutes"] <= 60
    assert any(step.get("uses") == "./.fairpolicy" for step in job["steps"])
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    assert {"policy", "data", "outputs", "fail-on", "python-version", "version"} <= set(
        action["inputs"]
    )
    assert {"gate", "exit-code", "controls", "failed"} <= set(action["outputs"])
