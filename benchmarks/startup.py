"""Start-up cost: `fairpolicy --help` (target ≤ 0.3 s) and a 1,000-row `check` (target ≤ 1 s),
with a bare-list policy and with the same control as an OSCAL component-definition.

Prints the best of N whole-process wall times and their ratio to the target, plus the
bare-interpreter start for reference (measured in the same run; machines here are noisy).

    python benchmarks/startup.py
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def best_of(cmd: list[str], n: int = 7) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=False)
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    py = sys.executable
    with tempfile.TemporaryDirectory() as d:
        rng = np.random.default_rng(0)
        n = 1000
        data = Path(d) / "d.csv"
        y = rng.integers(0, 2, n)
        p = rng.integers(0, 2, n)
        g = rng.choice(["F", "M"], n)
        data.write_text(
            "y_true,y_pred,sex\n"
            + "".join(f"{a},{b},{c}\n" for a, b, c in zip(y, p, g, strict=True))
        )
        pol = Path(d) / "p.yaml"
        pol.write_text(
            "- control-id: dp\n  props:\n"
            "  - {name: metric_key, value: demographic_parity_diff}\n"
            "  - {name: threshold, value: '0.5'}\n  - {name: operator, value: '<'}\n"
            "  - {name: input.target, value: y_true}\n  - {name: input.prediction, value: y_pred}\n"
            "  - {name: input.dimension, value: sex}\n"
        )
        # the same control in an OSCAL component-definition: loading it validates it with
        # compliance-trestle's models, the largest fixed cost of a check
        oscal = Path(d) / "p-oscal.yaml"
        oscal.write_text(
            "component-definition:\n"
            "  uuid: 9a6f2b1e-0c4d-4e8f-a1b2-c3d4e5f60718\n"
            "  metadata: {title: t, last-modified: '2026-01-01T00:00:00+00:00', version: '1',"
            " oscal-version: 1.2.1}\n"
            "  components:\n"
            "    - uuid: 1b2c3d4e-5f60-4718-8a9b-0c1d2e3f4a5b\n"
            "      type: software\n      title: model\n      description: model\n"
            "      control-implementations:\n"
            "        - uuid: 2c3d4e5f-6071-4829-9bac-1d2e3f4a5b6c\n"
            "          source: '#catalog'\n          description: gate\n"
            "          implemented-requirements:\n"
            "            - uuid: 3d4e5f60-7182-4a3b-8c4d-5e6f7a8b9c0d\n"
            "              control-id: dp\n              description: DP gap\n"
            "              props:\n"
            "                - {name: metric_key, value: demographic_parity_diff}\n"
            "                - {name: threshold, value: '0.5'}\n"
            "                - {name: operator, value: '<'}\n"
            "                - {name: input.target, value: y_true}\n"
            "                - {name: input.prediction, value: y_pred}\n"
            "                - {name: input.dimension, value: sex}\n"
        )
        bare = best_of([py, "-c", "pass"])
        helptime = best_of([py, "-m", "fairpolicy", "--help"])
        script = shutil.which("fairpolicy")
        script_time = best_of([script, "--help"]) if script else float("nan")
        check = best_of([py, "-m", "fairpolicy", "check", str(pol), str(data)], n=5)
        cmd = [py, "-m", "fairpolicy", "check", str(oscal), str(data)]
        rc = subprocess.run(cmd, capture_output=True).returncode
        assert rc in (0, 1), "the OSCAL policy must evaluate"
        check_oscal = best_of([py, "-m", "fairpolicy", "check", str(oscal), str(data)], n=5)
    print(f"python -c pass:            {bare:.3f} s")
    print(
        f"fairpolicy --help:         {helptime:.3f} s  ratio to 0.3 s target: {helptime / 0.3:.2f}"
    )
    print(
        f"fairpolicy --help (script): {script_time:.3f} s  "
        f"ratio to 0.3 s target: {script_time / 0.3:.2f}"
    )
    print(f"check, 1,000 rows:         {check:.3f} s  ratio to 1.0 s target: {check / 1.0:.2f}")
    print(
        f"check, 1,000 rows, OSCAL:  {check_oscal:.3f} s  ratio to 1.0 s target: "
        f"{check_oscal / 1.0:.2f}"
    )


if __name__ == "__main__":
    main()
