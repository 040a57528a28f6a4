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


# ------------------------------------------------ issue 26 item 8: a config cannot loosen unseen


def _failing(folder: Path) -> Path:
    """A policy whose blocking DP control fails (gap 0.25 against < 0.2), and its data."""
    balanced_csv(folder)
    return write_policy(folder, control("dp", threshold="0.2"))


def test_outside_a_repository_only_the_working_directory_is_searched(tmp_path: Path) -> None:
    """A pyproject.toml in a parent folder (/tmp, a home folder) is not applied when there
    is no repository: the gate stays closed."""
    assert not any((p / ".git").exists() for p in (tmp_path, *tmp_path.parents))
    _failing(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.fairpolicy]\nfail-on = "never"\n')
    (tmp_path / "sub").mkdir()
    done = run(tmp_path / "sub", "../policy.yaml", "../data.csv")
    assert done.returncode == 1, done.stderr  # not loosened by the parent's file
    assert "configuration file" not in done.stdout + done.stderr
    done = run(tmp_path, "policy.yaml", "data.csv")  # the working directory's own file
    assert done.returncode == 0 and "configuration file" in done.stdout


@pytest.mark.parametrize("as_file", [False, True])
def test_discovery_stops_at_a_git_folder_or_a_git_file(tmp_path: Path, as_file: bool) -> None:
    """``.git`` is a folder in a clone and a file in a worktree or submodule."""
    repo = tmp_path / "outer" / "repo"
    repo.mkdir(parents=True)
    if as_file:
        (repo / ".git").write_text("gitdir: /elsewhere/.git/worktrees/repo\n")
    else:
        (repo / ".git").mkdir()
    _failing(repo)
    (tmp_path / "outer" / "pyproject.toml").write_text('[tool.fairpolicy]\nfail-on = "never"\n')
    (repo / "src" / "deep").mkdir(parents=True)
    assert run(repo / "src" / "deep", "../../policy.yaml", "../../data.csv").returncode == 1
    (repo / "pyproject.toml").write_text('[tool.fairpolicy]\ninconclusive = "pass"\n')
    done = run(repo / "src" / "deep", "../../policy.yaml", "../../data.csv")
    assert done.returncode == 1 and str(repo / "pyproject.toml") in done.stdout


def test_a_loosening_configuration_is_named_in_every_output(tmp_path: Path) -> None:
    """Issue 26 item 8: fail-on = never from a pyproject.toml, and every report names the
    file and the setting; the Markdown no longer blames a flag nobody passed."""
    import hashlib

    (tmp_path / ".git").mkdir()
    _failing(tmp_path)
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        '[tool.fairpolicy]\nfail-on = "never"\ninconclusive = "fail"\nbootstrap = 200\n'
    )
    outs = {
        "json": "r.json",
        "junit": "r.xml",
        "sarif": "r.sarif",
        "markdown": "r.md",
        "html": "r.html",
        "oscal": "r-oscal.json",
    }
    args = [f"-o{k}={v}" for k, v in outs.items()]
    done = run(tmp_path, "policy.yaml", "data.csv", *args, "-o", "text", "--seed", "3")
    assert done.returncode == 0, done.stderr  # loosened: the failing control does not gate
    path = str(pyproject)
    note = f'configuration file {path} loosens the gate: fail-on = "never"'
    assert f"note: {note}\n" in done.stdout  # the terminal summary
    doc = json.loads((tmp_path / "r.json").read_text())
    cfg = doc["run"]["options"]["config"]
    assert cfg["file"] == path
    assert cfg["sha256"] == hashlib.sha256(pyproject.read_bytes()).hexdigest()
    assert cfg["settings"] == {"fail-on": "never", "inconclusive": "fail", "bootstrap": 200}
    assert cfg["loosens"] == ["fail-on"]
    src = cfg["sources"]
    assert src["fail-on"] == {"value": "never", "source": "config"}
    assert src["bootstrap"] == {"value": 200, "source": "config"}
    assert src["seed"] == {"value": 3, "source": "flag"}
    assert src["decision"] == {"value": None, "source": "default"}
    md = (tmp_path / "r.md").read_text()
    assert f"**Configuration**: {note}" in md
    assert "--fail-on never" not in md
    assert f'fail-on = "never" in the configuration file {path}' in md
    html = (tmp_path / "r.html").read_text()
    assert "Configuration</td>" in html and "fail-on = &quot;never&quot;" in html
    assert path in html
    xml = (tmp_path / "r.xml").read_text()
    assert f'name="config.file" value="{path}"' in xml
    assert 'name="config.loosens.fail-on" value="&quot;never&quot;"' in xml
    assert "--fail-on never" not in xml
    sarif = json.loads((tmp_path / "r.sarif").read_text())
    props = sarif["runs"][0]["properties"]["config"]
    assert props["file"] == path and props["loosens"] == ["fail-on"] and props["note"] == note
    oscal = json.loads((tmp_path / "r-oscal.json").read_text())
    (result,) = oscal["assessment-results"]["results"]
    got = {(p["name"], p["value"]) for p in result["props"]}
    assert {("config-file", path), ("config-loosens", 'fail-on = "never"')} <= got
    assert ("config-sha256", cfg["sha256"]) in got


def test_a_configuration_that_loosens_nothing_is_still_named(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    _failing(tmp_path)
    (tmp_path / "fairpolicy.toml").write_text('fail-on = "warning"\n')
    done = run(tmp_path, "policy.yaml", "data.csv", "-o", "markdown")
    assert done.returncode == 1
    note = (
        f"configuration file {tmp_path / 'fairpolicy.toml'} applied; "
        "no setting from it loosens the gate"
    )
    assert f"**Configuration**: {note}" in done.stdout


def test_in_process_the_flag_wins_and_is_recorded_as_a_flag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fairpolicy.cli import main

    (tmp_path / ".git").mkdir()
    _failing(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.fairpolicy]\nfail-on = "never"\n')
    monkeypatch.chdir(tmp_path)
    code = main(["check", "policy.yaml", "data.csv", "--fail-on", "error", "-o", "json=r.json"])
    assert code == 1
    cfg = json.loads((tmp_path / "r.json").read_text())["run"]["options"]["config"]
    assert cfg["settings"] == {} and cfg["loosens"] == []
    assert cfg["sources"]["fail-on"] == {"value": "error", "source": "flag"}
