"""Issue 26 item 13 (part): no output — asked for, or written beside one (the profile and
catalog beside ``-o oscal-ssp=NAME.json`` or ``plan --write-ssp``) — may be an input of the
run (the policy and every document it imports, the data, the baseline, the plan, the
configuration file) or another output. Compared on resolved real paths and on the file's
identity (hard links). Refused with exit 2 naming both, before anything is written, in
process and as a subprocess."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fairpolicy.cli import main
from tests.helpers import balanced_csv, control, write_policy

ROOT = Path(__file__).resolve().parents[2]


def run(cwd: Path, *argv: str) -> tuple[int, str]:
    err = io.StringIO()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        from contextlib import redirect_stderr

        with redirect_stderr(err):
            code = main(["check", *argv], stdout=io.StringIO())
    finally:
        os.chdir(old)
    return code, err.getvalue()


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    balanced_csv(tmp_path)
    write_policy(tmp_path, control("dp", threshold="0.3"))
    return tmp_path


def test_a_sibling_of_the_ssp_cannot_overwrite_the_baseline(work: Path) -> None:
    assert run(work, "policy.yaml", "data.csv", "-o", "json=x.profile.json")[0] == 0
    before = snapshot(work)
    code, err = run(
        work, "policy.yaml", "data.csv", "--baseline", "x.profile.json", "-o", "oscal-ssp=x.json"
    )
    assert code == 2, err
    assert "x.profile.json (written beside -o oscal-ssp=x.json)" in err
    assert "this is the baseline file" in err and "Traceback" not in err
    assert snapshot(work) == before  # nothing written


def test_a_sibling_cannot_overwrite_another_output(work: Path) -> None:
    code, err = run(
        work, "policy.yaml", "data.csv", "-o", "oscal-ssp=x.json", "-o", "json=x.catalog.json"
    )
    assert code == 2 and "name the same file" in err
    assert "x.catalog.json (written beside -o oscal-ssp=x.json)" in err
    assert "-o json=x.catalog.json" in err
    assert not (work / "x.json").exists() and not (work / "x.catalog.json").exists()


def test_a_hard_link_to_the_policy_as_a_sibling_is_refused(work: Path) -> None:
    os.link(work / "policy.yaml", work / "x.catalog.json")
    before = (work / "policy.yaml").read_bytes()
    code, err = run(work, "policy.yaml", "data.csv", "-o", "oscal-ssp=x.json")
    assert code == 2 and "this is the policy file (policy.yaml)" in err, err
    assert "x.catalog.json (written beside -o oscal-ssp=x.json)" in err
    assert (work / "policy.yaml").read_bytes() == before and not (work / "x.json").exists()


def test_the_catalog_a_profile_imports_is_an_input(tmp_path: Path) -> None:
    """The policy chain: an output naming the catalog the profile imports is refused."""
    (tmp_path / ".git").mkdir()
    pol = tmp_path / "pol"
    shutil.copytree(ROOT / "policies" / "binary-lending", pol)
    csv = tmp_path / "d.csv"
    csv.write_text(
        "approved,predicted,sex,age,race\n"
        + "".join(
            f"{i % 2},{(i // 2) % 2},{'FM'[i % 3 == 0]},{'ab'[i % 2]},{'xy'[i % 5 == 0]}\n"
            for i in range(200)
        )
    )
    before = snapshot(pol)
    code, err = run(
        tmp_path,
        "pol/profile.json",
        "d.csv",
        "--bind",
        "target=approved",
        "--bind",
        "prediction=predicted",
        "-o",
        "json=pol/catalog.json",
    )
    assert code == 2, err
    assert "-o json=pol/catalog.json: this is the policy's catalog file" in err
    assert snapshot(pol) == before


def test_the_configuration_file_is_an_input(work: Path) -> None:
    (work / "fairpolicy.toml").write_text('policy = "policy.yaml"\n')
    before = (work / "fairpolicy.toml").read_bytes()
    code, err = run(work, "data.csv", "-o", "json=fairpolicy.toml")
    assert code == 2 and "this is the configuration file" in err, err
    assert (work / "fairpolicy.toml").read_bytes() == before


def test_through_a_symlinked_folder(work: Path) -> None:
    (work / "real").mkdir()
    (work / "link").symlink_to(work / "real")
    code, err = run(
        work, "policy.yaml", "data.csv", "-o", "json=real/r.json", "-o", "sarif=link/r.json"
    )
    assert code == 2 and "name the same file" in err


EXTRA = ("-o", "oscal-ssp=x.json", "-o", "html=x.profile.json")


def test_as_a_subprocess(work: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "fairpolicy", "check", "policy.yaml", "data.csv", *EXTRA],
        capture_output=True,
        text=True,
        cwd=work,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    assert done.returncode == 2 and "name the same file" in done.stderr
    assert "x.profile.json (written beside -o oscal-ssp=x.json)" in done.stderr
    assert "Traceback" not in done.stderr


def test_plan_write_ssp_siblings_cannot_overwrite_the_plan(work: Path) -> None:
    err = io.StringIO()
    from contextlib import redirect_stderr

    old = os.getcwd()
    os.chdir(work)
    try:
        with redirect_stderr(err):
            code = main(
                ["plan", "policy.yaml", "-o", "s.profile.json", "--write-ssp", "s.json"],
                stdout=io.StringIO(),
            )
    finally:
        os.chdir(old)
    assert code == 2 and "name the same file" in err.getvalue(), err.getvalue()
    assert "written beside --write-ssp s.json" in err.getvalue()
    assert not (work / "s.json").exists()
