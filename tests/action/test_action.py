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
import site
import stat
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers import balanced_csv, control, write_policy

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "action" / "run.sh"


@pytest.fixture
def runner(tmp_path: Path) -> Path:
    """RUNNER_TEMP with the Action's venv already in place (no network in tests).

    The venv is made from ``sys.executable`` *without* ``--system-site-packages``: inside a
    venv, that would be the base interpreter's packages, not the running one's (issue 27).
    A ``.pth`` file adds the running interpreter's own site-packages (with their ``.pth``
    files, through ``site.addsitedir``), so the Action's venv sees exactly the packages of
    the interpreter running the tests — the same in a venv and with the system Python."""
    temp = tmp_path / "runner"
    venv = temp / "fairpolicy-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    dirs = [*site.getsitepackages(), sysconfig.get_paths()["purelib"]]
    dirs += [sysconfig.get_paths()["platlib"]]
    if site.ENABLE_USER_SITE and os.path.isdir(site.getusersitepackages()):
        dirs.append(site.getusersitepackages())
    (purelib,) = venv.glob("lib/python3*/site-packages")
    lines = [f"import site; site.addsitedir({d!r})" for d in dict.fromkeys(dirs)]
    (purelib / "_fairpolicy_test_parent.pth").write_text("\n".join(lines) + "\n")
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


def read_outputs(text: str) -> dict[str, str]:
    """GITHUB_OUTPUT as the runner reads it: NAME=VALUE lines and NAME<<DELIMITER blocks;
    any other line is an injected command or a broken output and fails the test."""
    outputs: dict[str, str] = {}
    lines = iter(text.splitlines())
    for line in lines:
        name, sep, value = line.partition("=")
        if sep and "<<" not in name:
            assert re.fullmatch(r"[a-z][a-z-]*", name), line
            assert name not in outputs, f"output {name} set twice"
            outputs[name] = value
            continue
        name, sep, delim = line.partition("<<")
        assert sep and re.fullmatch(r"[a-z][a-z-]*", name) and delim, line
        body = []
        for item in lines:
            if item == delim:
                break
            body.append(item)
        else:
            raise AssertionError(f"output {name}: no closing {delim}")
        outputs[name] = "\n".join(body)
    return outputs


@dataclass
class Step:
    code: int
    outputs: dict[str, str]
    summary: str
    stdout: str
    stderr: str

    @property
    def log(self) -> str:
        return self.stdout + self.stderr


def run_action(work: Path, runner: Path, **inputs: str) -> Step:
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
    outputs = read_outputs(out.read_text())
    return Step(done.returncode, outputs, summary.read_text(), done.stdout, done.stderr)


def commands(log: str) -> list[str]:
    """The workflow commands in a log: the lines the runner reads as ``::name …::``."""
    return [line for line in log.splitlines() if line.startswith("::")]


def test_a_passing_gate(tmp_path: Path, runner: Path) -> None:
    data = balanced_csv(tmp_path)
    policy = write_policy(
        tmp_path,
        control("dp", threshold="0.3"),
        control("eo", "equal_opportunity_diff", threshold="0.3"),
    )
    step = run_action(
        tmp_path,
        runner,
        policy=str(policy),
        data=str(data),
        outputs="sarif=gate.sarif\n\n  junit=gate.xml  ",
        args="--timestamp\n2026-01-01T00:00:00Z\n--meta\nticket=ML-1",
    )
    assert step.code == 0, step.log
    reports = tmp_path / "fairpolicy-reports"
    assert step.outputs == {
        "exit-code": "0",
        "gate": "pass",
        "reports": "fairpolicy-reports",
        "artifact-paths": "fairpolicy-reports\ngate.sarif\ngate.xml",
        "results": "fairpolicy-reports/results.json",
        "controls": "2",
        "passed": "2",
        "failed": "0",
        "warned": "0",
        "inconclusive": "0",
        "errors": "0",
    }
    # the whole summary is this run's Markdown report, once
    report = (reports / "report.md").read_text()
    assert step.summary == report and report.count("ticket") == 1
    assert report.startswith("## ") and "PASS" in report.splitlines()[0]
    for name in ("results.json", "report.html", "report.md"):
        assert (reports / name).is_file()
    assert (tmp_path / "gate.sarif").is_file() and (tmp_path / "gate.xml").is_file()
    assert "::group::" in step.log  # the annotations (-o github) on the job log


def test_a_failing_gate_exits_1(tmp_path: Path, runner: Path) -> None:
    data = balanced_csv(tmp_path)  # DP gap 0.25
    policy = write_policy(tmp_path, control("dp", threshold="0.2"))
    step = run_action(tmp_path, runner, policy=str(policy), data=str(data))
    assert step.code == 1, step.log
    assert step.outputs["gate"] == "fail" and step.outputs["exit-code"] == "1"
    assert step.outputs["failed"] == "1" and step.outputs["passed"] == "0"
    assert step.summary == (tmp_path / "fairpolicy-reports" / "report.md").read_text()
    assert "FAIL" in step.summary.splitlines()[0] and "::error" in step.log


def _error_summary(step: Step) -> str:
    return (
        f"## ⛔ ERROR — fairpolicy could not evaluate the policy (exit {step.code})\n\n"
        f"~~~~text\n{step.stderr}~~~~\n"
    )


def test_could_not_evaluate_exits_2_with_the_error_in_the_summary(
    tmp_path: Path, runner: Path
) -> None:
    policy = write_policy(tmp_path, control("dp", threshold="0.2"))
    step = run_action(tmp_path, runner, policy=str(policy), data=str(tmp_path / "missing.csv"))
    assert step.code == 2, step.log
    assert step.outputs == {
        "exit-code": "2",
        "gate": "error",
        "reports": "fairpolicy-reports",
        "artifact-paths": "fairpolicy-reports",
    }
    assert step.summary == _error_summary(step)  # once: the check itself writes none
    assert "missing.csv" in step.stderr


def test_a_stale_passing_report_never_becomes_this_runs_outcome(
    tmp_path: Path, runner: Path
) -> None:
    """Issue 26 item 9: an earlier run passed and left its reports; this run exits 2. The
    outputs, the summary and the uploaded files are this run's alone."""
    data = balanced_csv(tmp_path)
    policy = write_policy(tmp_path, control("dp", threshold="0.3"))
    first = run_action(
        tmp_path, runner, policy=str(policy), data=str(data), outputs="junit=gate.xml"
    )
    assert first.code == 0 and first.outputs["gate"] == "pass", first.log
    reports = tmp_path / "fairpolicy-reports"
    assert (reports / "results.json").is_file() and (tmp_path / "gate.xml").is_file()
    step = run_action(
        tmp_path,
        runner,
        policy=str(policy),
        data=str(tmp_path / "missing.csv"),
        outputs="junit=gate.xml",
    )
    assert step.code == 2, step.log
    assert step.outputs == {
        "exit-code": "2",
        "gate": "error",
        "reports": "fairpolicy-reports",
        "artifact-paths": "fairpolicy-reports",
    }
    assert step.summary == _error_summary(step)
    assert "PASS" not in step.summary
    assert sorted(p.name for p in reports.iterdir()) == []
    assert not (tmp_path / "gate.xml").exists()


def test_an_output_that_is_an_input_is_refused_and_the_input_kept(
    tmp_path: Path, runner: Path
) -> None:
    data = balanced_csv(tmp_path)
    policy = write_policy(tmp_path, control("dp", threshold="0.3"))
    before = policy.read_bytes()
    step = run_action(
        tmp_path, runner, policy=str(policy), data=str(data), outputs=f"sarif={policy}"
    )
    assert step.code == 2 and step.outputs == {"gate": "error", "exit-code": "2"}
    message = f"the report '{policy}' is the input file '{policy}'"
    assert message in step.summary and policy.read_bytes() == before


def test_an_output_that_is_a_file_named_in_args_is_refused(tmp_path: Path, runner: Path) -> None:
    """``--baseline`` (abbreviated, too) names an input: an output naming it is refused
    before anything is removed."""
    data = balanced_csv(tmp_path)
    policy = write_policy(tmp_path, control("dp", threshold="0.3"))
    base = tmp_path / "base.json"
    base.write_text("{}")
    for args in (f"--baseline\n{base}", f"--base={base}"):
        step = run_action(
            tmp_path, runner, policy=str(policy), data=str(data), outputs=f"sarif={base}", args=args
        )
        assert step.code == 2 and step.outputs == {"gate": "error", "exit-code": "2"}
        assert f"the report '{base}' is the input file" in step.summary
        assert base.read_text() == "{}"


def test_devices_are_kept_and_symlinks_stay_links(tmp_path: Path, runner: Path) -> None:
    data = balanced_csv(tmp_path)
    policy = write_policy(tmp_path, control("dp", threshold="0.3"))
    (tmp_path / "real.xml").write_text("stale")
    (tmp_path / "link.xml").symlink_to(tmp_path / "real.xml")
    step = run_action(
        tmp_path,
        runner,
        policy=str(policy),
        data=str(data),
        outputs="sarif=/dev/null\njunit=link.xml",
    )
    assert step.code == 0, step.log
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert (tmp_path / "link.xml").is_symlink() and "<testsuite" in (
        tmp_path / "real.xml"
    ).read_text()
    assert step.outputs["artifact-paths"] == "fairpolicy-reports\nlink.xml"


@pytest.mark.parametrize(
    ("inputs", "fragment"),
    [
        ({"data": "d.csv"}, "the input 'policy' is required"),
        ({"policy": "p.yaml"}, "the input 'data' is required"),
        ({"policy": "p.yaml", "data": "d.csv", "fail_on": "sometimes"}, "'fail-on' must be"),
        ({"policy": "p.yaml\nx", "data": "d.csv"}, "'policy' must be one line"),
        ({"policy": "p.yaml", "data": "d.csv\r"}, "'data' must be one line"),
        ({"policy": "--help", "data": "d.csv"}, "is a path, not an option"),
        ({"policy": "p.yaml", "data": "d.csv", "reports": "r\nx"}, "'reports' must be one"),
        ({"policy": "p.yaml", "data": "d.csv", "outputs": "sarif"}, "one FORMAT=PATH per line"),
        ({"policy": "p.yaml", "data": "d.csv", "outputs": "x=-"}, "one FORMAT=PATH per line"),
        ({"policy": "p.yaml", "data": "d.csv", "args": "--seed\r\n1"}, "carriage return"),
        ({"policy": "p.yaml", "data": "d.csv", "args": "-o\njson=x.json"}, "names an output"),
        ({"policy": "p.yaml", "data": "d.csv", "args": "-ojson=x.json"}, "names an output"),
        ({"policy": "p.yaml", "data": "d.csv", "args": "--out=json=x"}, "names an output"),
    ],
)
def test_bad_inputs_are_exit_2(
    tmp_path: Path, runner: Path, inputs: dict[str, str], fragment: str
) -> None:
    step = run_action(tmp_path, runner, **inputs)
    assert step.code == 2 and step.outputs == {"gate": "error", "exit-code": "2"}
    (error,) = commands(step.log)
    assert error.startswith("::error title=fairpolicy::")
    assert fragment in step.summary and step.summary.startswith("## ⛔ ERROR")


@pytest.mark.parametrize(
    "value",
    [
        "error\n::warning::injected",
        "error\r\n::set-output name=gate::pass",
        "error%0A::warning::x",
        "never\n",
    ],
)
def test_an_input_cannot_start_a_workflow_command(tmp_path: Path, runner: Path, value: str) -> None:
    """Issue 26 item 9: a line break in ``fail-on`` started a new workflow command."""
    step = run_action(tmp_path, runner, policy="p.yaml", data="d.csv", fail_on=value)
    assert step.code == 2 and step.outputs == {"gate": "error", "exit-code": "2"}
    (error,) = commands(step.log)  # one command, the value escaped inside it
    shown = value.replace("\r", "\\r").replace("\n", "\\n")  # line breaks made visible
    assert error == (
        "::error title=fairpolicy::the input 'fail-on' must be error, warning or never, "
        f"got '{shown.replace('%', '%25')}'."
    )
    assert f"got '{shown}'" in step.summary


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
