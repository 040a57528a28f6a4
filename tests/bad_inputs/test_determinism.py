"""Same inputs and seed → byte-identical outputs, with ``--deterministic`` and the
resampling options on: two separate processes with different hash seeds (set and dict
order of strings differ between them) write every format, and every byte agrees. A
different ``--seed`` changes the intervals, so the comparison can fail."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import fairpolicy

ROOT = Path(__file__).resolve().parents[2]
POLICY = "examples/credit/policy.yaml"
DATA = "examples/credit/predictions.csv"
FILES = {
    "json": "r.json",
    "oscal": "ar.json",
    "oscal-ap": "ap.json",
    "sarif": "r.sarif",
    "junit": "r.xml",
    "html": "r.html",
    "markdown": "r.md",
    "github": "gh.txt",
}
STATS = ["--bootstrap", "100", "--ci-method", "bca", "--p-value", "50", "--seed", "7"]


def start(out: Path, hash_seed: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SOURCE_DATE_EPOCH", "NO_COLOR")}
    env["PYTHONHASHSEED"] = hash_seed
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("GITHUB_STEP_SUMMARY", None)
    outputs = [a for fmt, name in FILES.items() for a in ("-o", f"{fmt}={out / name}")]
    out.mkdir()
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "fairpolicy",
            "check",
            POLICY,
            DATA,
            "--deterministic",
            *STATS,
            *outputs,
            "--embed-evidence",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_two_processes_write_identical_bytes(tmp_path: Path) -> None:
    procs = [start(tmp_path / d, seed) for d, seed in (("a", "1"), ("b", "2"))]
    (out_a, err_a), (out_b, err_b) = (p.communicate(timeout=120) for p in procs)
    assert [p.returncode for p in procs] == [0, 0], err_a + err_b
    assert out_a == out_b
    for name in FILES.values():
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    text = (tmp_path / "a" / "r.json").read_text()
    assert '"resamples": 100' in text and '"seed": 7' in text and '"p_value"' in text


def test_the_seed_reaches_the_output() -> None:
    kw = {"deterministic": True, "bootstrap": 100, "ci_method": "bca", "p_value": 50}
    same = [fairpolicy.check(ROOT / POLICY, ROOT / DATA, seed=7, **kw) for _ in range(2)]
    other = fairpolicy.check(ROOT / POLICY, ROOT / DATA, seed=8, **kw)
    assert same[0].to_json() == same[1].to_json()
    assert other.to_json() != same[0].to_json()
