"""Configuration discovery for ``fairpolicy check`` (issue 15).

``[tool.fairpolicy]`` in ``pyproject.toml`` or a ``fairpolicy.toml`` found from the working
directory upward (stopping at the repository root), ``--config FILE``, ``--no-config``; the
command line wins; paths are relative to the file; ``fairpolicy check DATA`` takes the
policy from it; unknown keys and bad values are exit 2 naming file and key; what was
applied is recorded in the results. Run as a subprocess from the configured folders.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import balanced_csv, control, write_policy

SRC = str(Path(__file__).resolve().parents[2] / "src")


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SRC}
    return subprocess.run(
        [sys.executable, "-m", "fairpolicy", "check", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A repository with a policy whose DP control fails at 0.2 (gap 0.25)."""
    (tmp_path / ".git").mkdir()
    balanced_csv(tmp_path)
    write_policy(tmp_path, control("dp", threshold="0.2", enforcement_mode="warn"))
    (tmp_path / "sub").mkdir()
    return tmp_path


def test_pyproject_gives_policy_outputs_and_gate_options(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        '[project]\nname = "model"\n\n[tool.fairpolicy]\n'
        'policy = "policy.yaml"\nfail-on = "warning"\noutput = ["json=out.json"]\n'
        'meta = {team = "risk"}\n'
    )
    done = run(project / "sub", "../data.csv")
    assert done.returncode == 1, done.stderr  # the warn control fails under fail-on warning
    doc = json.loads((project / "out.json").read_text())  # relative to the file's folder
    cfg = doc["run"]["options"]["config"]
    assert cfg["file"] == str(project / "pyproject.toml")
    assert cfg["settings"]["fail-on"] == "warning" and doc["meta"] == {"team": "risk"}
    # the command line wins
    done = run(project / "sub", "../data.csv", "--fail-on", "error", "--meta", "team=ml")
    assert done.returncode == 0, done.stderr
    doc = json.loads((project / "out.json").read_text())
    assert "fail-on" not in doc["run"]["options"]["config"]["settings"]
    assert doc["meta"] == {"team": "ml"}


def test_fairpolicy_toml_wins_over_pyproject_and_no_config_ignores_both(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.fairpolicy]\nfail-on = "warning"\n')
    (project / "fairpolicy.toml").write_text('policy = "policy.yaml"\nfail_on = "never"\n')
    assert run(project, "data.csv").returncode == 0
    done = run(project, "policy.yaml", "data.csv", "--no-config", "--fail-on", "warning")
    assert done.returncode == 1
    done = run(project, "data.csv", "--no-config")
    assert done.returncode == 2 and "no policy" in done.stderr


def test_explicit_config_file(project: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    other = tmp_path_factory.mktemp("cfg") / "ci.toml"
    other.write_text(f'[tool.fairpolicy]\npolicy = "{project / "policy.yaml"}"\n')
    done = run(project, "data.csv", "--config", str(other))
    assert done.returncode == 0, done.stderr


def test_discovery_stops_at_the_repository_root(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    repo = outer / "repo"
    (repo / ".git").mkdir(parents=True)
    balanced_csv(repo)
    (outer / "fairpolicy.toml").write_text('policy = "nowhere.yaml"\n')  # above the repo
    done = run(repo, "data.csv")
    assert done.returncode == 2 and "no configuration file sets it" in done.stderr


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('fail_onn = "x"', "Did you mean 'fail-on'"),
        ('fail-on = "sometimes"', "must be one of error, warning, never"),
        ("bootstrap = true", "must be a single value"),
        ("strict = 1", "must be true or false"),
        ('config = "x.toml"', "is not an option"),
        ("[tool", "cannot read the configuration file"),
    ],
)
def test_bad_configuration_is_exit_2_naming_file_and_key(
    project: Path, text: str, fragment: str
) -> None:
    (project / "fairpolicy.toml").write_text(text + "\n")
    done = run(project, "policy.yaml", "data.csv")
    assert done.returncode == 2 and fragment in done.stderr, done.stderr
    assert "fairpolicy.toml" in done.stderr and "Traceback" not in done.stderr
