"""Start-up cost, measured in one run and printed as ratios (issue 17, "a lean start").

The whole-process cost of a small check is mostly start-up, so it is measured against the
floor a user would otherwise pay: a bare ``python -c "import pyarrow.csv as c;
c.read_csv(...)"`` process reading the same file. Targets:

- ``fairpolicy check`` of a 100,000-row CSV with ten controls in a bare-list policy
  ≤ 1.6 × the bare pyarrow read process;
- the same ten controls as an OSCAL profile importing an OSCAL catalog (both validated
  with compliance-trestle's models, the profile resolved) ≤ 2.2 × the same floor;
- ``fairpolicy --help`` and ``fairpolicy validate`` of a small bare-list policy < 0.3 s.

Method. Every command runs as a fresh child process, timed whole (interpreter start,
imports, read, compute, output) by wall clock; each figure is the best of ``--repeat``
runs, and the commands are interleaved round by round so that drift on a shared machine
hits all of them alike. The data file is read once before timing (warm page cache). The
OSCAL validation cache (``$XDG_CACHE_HOME/fairpolicy``) is pointed at a scratch folder
and warmed by one untimed run, as on a CI runner or laptop that has checked this policy
before; the first (cold) run is printed too. Bytecode is compiled once into a scratch
``PYTHONPYCACHEPREFIX`` (an installed package ships it; ``PYTHONDONTWRITEBYTECODE`` in the
caller's environment would otherwise recompile every module on every run), and
``--no-cache`` times every run with ``FAIRPOLICY_NO_CACHE=1``. The data are the
anchors' (``benchmarks/anchors.py``): binary and 3-class labels, groups ``sex``,
``race``, ``age`` and ``sex,race``.

    python benchmarks/startup.py                # best of 7
    python benchmarks/startup.py --repeat 3     # quicker, noisier
    python benchmarks/startup.py --compare /tmp/old/src   # another tree, interleaved

``--compare SRC`` also times every fairpolicy command with ``SRC`` (the ``src`` folder of
another checkout, e.g. ``git worktree add /tmp/old <rev>``) first on ``PYTHONPATH``, in the
same rounds, and prints its ratios beside this tree's: a before/after measured in one run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from anchors import CONTROLS, write_data

ROWS = 100_000
NS = "https://fairpolicy.example.org/ns/oscal"


def list_policy(path: Path) -> None:
    """The anchors' ten controls as a bare list (no OSCAL validation)."""
    lines = []
    for cid, key, _vl, (target, pred), dim, threshold in CONTROLS:
        lines += [
            f"- control-id: {cid}",
            "  props:",
            f"  - {{name: metric_key, value: {key}}}",
            f"  - {{name: threshold, value: '{threshold}'}}",
            "  - {name: operator, value: '<'}",
            f"  - {{name: input.target, value: {target}}}",
            f"  - {{name: input.prediction, value: {pred}}}",
            f"  - {{name: input.dimension, value: '{dim}'}}",
        ]
    path.write_text("\n".join(lines) + "\n")


def oscal_profile(folder: Path) -> Path:
    """The same ten controls in an OSCAL catalog (thresholds as params) and a profile that
    imports it and overrides one threshold; returns the profile's path."""
    controls = []
    for cid, key, _vl, (target, pred), dim, threshold in CONTROLS:
        props = [
            ("metric_key", key),
            ("operator", "<"),
            ("input.target", target),
            ("input.prediction", pred),
            ("input.dimension", dim),
        ]
        controls.append(
            {
                "id": cid,
                "title": f"{key} across {dim}",
                "params": [{"id": f"{cid}_prm_threshold", "values": [str(threshold)]}],
                "props": [{"name": n, "ns": NS, "value": v} for n, v in props],
            }
        )
    meta = {
        "last-modified": "2026-01-01T00:00:00+00:00",
        "version": "1",
        "oscal-version": "1.2.1",
    }
    catalog = {
        "catalog": {
            "uuid": "472ce0a5-f941-492d-bb00-ae16adf0b37a",
            "metadata": {"title": "startup benchmark catalog", **meta},
            "controls": controls,
        }
    }
    profile = {
        "profile": {
            "uuid": "cc139c4d-025e-4bb0-a9b2-6478b38f3d29",
            "metadata": {"title": "startup benchmark profile", **meta},
            "imports": [{"href": "catalog.json", "include-all": {}}],
            "modify": {
                "set-parameters": [{"param-id": "dp-sex_prm_threshold", "values": ["0.25"]}]
            },
        }
    }
    (folder / "catalog.json").write_text(json.dumps(catalog, indent=1))
    path = folder / "profile.json"
    path.write_text(json.dumps(profile, indent=1))
    return path


def small_policy(path: Path) -> None:
    path.write_text(
        "- control-id: dp\n  props:\n"
        "  - {name: metric_key, value: demographic_parity_diff}\n"
        "  - {name: threshold, value: '0.5'}\n  - {name: operator, value: '<'}\n"
        "  - {name: input.target, value: y_true}\n  - {name: input.prediction, value: y_pred}\n"
        "  - {name: input.dimension, value: sex}\n"
    )


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, int]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, env=env, check=False)
    return time.perf_counter() - t0, proc.returncode


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=7, help="best of N runs (default 7)")
    ap.add_argument("--no-cache", action="store_true", help="time with FAIRPOLICY_NO_CACHE=1")
    ap.add_argument(
        "--compare",
        metavar="SRC",
        help="also time the fairpolicy commands with SRC (another tree's src/) on PYTHONPATH",
    )
    args = ap.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        data = tmp / "data.csv"
        write_data(data, ROWS)
        data.read_bytes()  # warm page cache
        pol = tmp / "list.yaml"
        list_policy(pol)
        profile = oscal_profile(tmp)
        small = tmp / "small.yaml"
        small_policy(small)
        env = dict(os.environ, XDG_CACHE_HOME=str(tmp / "cache"))
        # compiled bytecode, as an installed package has (pip compiles it at install
        # time); kept out of the source tree
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
        if args.no_cache:
            env["FAIRPOLICY_NO_CACHE"] = "1"
        fp = [py, "-m", "fairpolicy"]
        cmds = {
            "python -c pass": [py, "-c", "pass"],
            "pyarrow read (floor)": [
                py,
                "-c",
                f"import pyarrow.csv as c; c.read_csv({str(data)!r})",
            ],
            "check, list policy": [*fp, "check", str(pol), str(data)],
            "check, OSCAL profile": [*fp, "check", str(profile), str(data)],
            "--help": [*fp, "--help"],
            "validate small policy": [*fp, "validate", str(small)],
        }
        # compile every module's bytecode first (trestle's too), so the cold run below
        # measures a cold validation cache only
        timed(cmds["check, OSCAL profile"], dict(env, FAIRPOLICY_NO_CACHE="1"))
        cold, rc = timed(cmds["check, OSCAL profile"], env)  # fills the validation cache
        assert rc in (0, 1), "the OSCAL profile must evaluate"
        for name in ("check, list policy", "validate small policy", "--help"):
            rc = timed(cmds[name], env)[1]
            assert rc in (0, 1), f"{name} must run (exit {rc})"
        envs = {name: env for name in cmds}
        if args.compare:
            other = dict(env, PYTHONPATH=str(Path(args.compare).resolve()))
            for name in [n for n, c in cmds.items() if c[:3] == fp]:
                cmds[f"{name} [compare]"] = cmds[name]
                envs[f"{name} [compare]"] = other
                timed(cmds[name], dict(other, FAIRPOLICY_NO_CACHE="1"))  # compile, warm
                timed(cmds[name], other)
        best = {name: float("inf") for name in cmds}
        for _ in range(args.repeat):
            for name, cmd in cmds.items():
                best[name] = min(best[name], timed(cmd, envs[name])[0])
    floor = best["pyarrow read (floor)"]
    print(
        f"{ROWS:,} rows x {len(CONTROLS)} controls; best of {args.repeat}; "
        f"validation cache {'off' if args.no_cache else 'warm'}"
    )
    for name, value in best.items():
        print(f"  {name:34s} {value:6.3f} s")
    print(f"  {'check, OSCAL profile, cold cache':34s} {cold:6.3f} s (one run)")
    rows = [
        ("check, list policy / pyarrow read", best["check, list policy"] / floor, 1.6),
        ("check, OSCAL profile / pyarrow read", best["check, OSCAL profile"] / floor, 2.2),
    ]
    if args.compare:
        rows += [
            (f"{label} [compare]", best[f"{name} [compare]"] / floor, target)
            for (label, _, target), name in zip(
                list(rows), ("check, list policy", "check, OSCAL profile"), strict=True
            )
        ]
    for label, ratio, target in rows:
        verdict = "ok" if ratio <= target else "OVER"
        print(f"  {label:48s} {ratio:5.2f}x  target <= {target}x  {verdict}")
    for name in ("--help", "validate small policy"):
        verdict = "ok" if best[name] < 0.3 else "OVER"
        print(f"  {name:48s} {best[name]:5.3f} s  target < 0.3 s  {verdict}")


if __name__ == "__main__":
    main()
