"""The speculative read thread (``data/prefetch.py``) first-imports no fairpolicy module.

Under pytest, whose entry point ``fairpolicy.pytest_plugin`` marks every fairpolicy module
for assertion rewriting, a first import parses the module with ``ast.parse``; CPython 3.11
keeps the AST converter's recursion depth per interpreter, so a module first imported in
the read thread while the main thread imported another failed at random with
"SystemError: AST constructor recursion depth mismatch" (28 errors in one pytest-xdist run
of the formatter tests; a user's ``fairpolicy_check`` fixture could hit it too). A fresh
interpreter records, with an audit hook, every import made outside the main thread.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import json, sys, threading
seen = []
def hook(event, args):
    if event == "import" and threading.current_thread() is not threading.main_thread():
        seen.append(args[0])
sys.addaudithook(hook)
import fairpolicy
for data in sys.argv[2:]:
    fairpolicy.check(sys.argv[1], data)
print(json.dumps(sorted({m for m in seen if m.split(".")[0] == "fairpolicy"})))
"""


def test_the_read_thread_imports_no_module_of_ours(tmp_path: Path) -> None:
    import pandas as pd

    credit = ROOT / "examples" / "credit"
    frame = pd.read_csv(credit / "predictions.csv")
    frame.to_parquet(tmp_path / "p.parquet")
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            SCRIPT,
            str(credit / "policy.yaml"),
            str(credit / "predictions.csv"),
            str(tmp_path / "p.parquet"),
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
