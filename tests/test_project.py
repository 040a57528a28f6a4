"""Project-level contracts: schema in sync, README in sync, exports, lazy imports."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

import fairpolicy
from fairpolicy.metrics.docs import markdown_table
from fairpolicy.metrics.registry import REGISTRY
from fairpolicy.results import json_schema
from tests.helpers import balanced_csv, control, write_policy

ROOT = Path(__file__).resolve().parents[1]


def test_results_schema_file_is_generated_from_model() -> None:
    on_disk = json.loads((ROOT / "schemas" / "results.schema.json").read_text())
    assert on_disk == json_schema(), (
        "schemas/results.schema.json is stale: "
        "python -m fairpolicy.results > schemas/results.schema.json"
    )


def test_results_json_validates_against_schema(tmp_path: Path) -> None:
    res = fairpolicy.check(write_policy(tmp_path, control()), balanced_csv(tmp_path))
    doc = json.loads(res.to_json())
    jsonschema.validate(doc, json.loads((ROOT / "schemas" / "results.schema.json").read_text()))
    assert "NaN" not in res.to_json()


def test_readme_metric_table_matches_registry() -> None:
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"<!-- metrics:start -->\n(.*?)\n<!-- metrics:end -->", readme, re.S)
    assert block, "README lacks the metrics block"
    assert block.group(1).strip() == markdown_table().strip(), (
        "README metric table is stale; regenerate from fairpolicy.metrics.docs.markdown_table()"
    )
    for key in REGISTRY:
        assert f"`{key}`" in readme


def test_readme_quickstart_has_exactly_two_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", section, re.S)
    assert len(blocks) == 2 and all(len(b.strip().splitlines()) == 1 for b in blocks)
    assert "fairpolicy check" in blocks[0] and "pytest" in blocks[1]


def test_ci_runs_the_readme_quickstart_as_written_in_a_venv() -> None:
    """.ci/run reads the two commands from the README and runs them in fresh venvs (27)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from quickstart_commands import quickstart_commands
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    written = [b.strip() for b in re.findall(r"```bash\n(.*?)```", section, re.S)]
    assert quickstart_commands(readme) == written
    ci = (ROOT / ".ci" / "run").read_text()
    assert "scripts/quickstart_commands.py README.md" in ci
    assert 'bash -euo pipefail -c "${quickstart[0]}"' in ci
    assert 'bash -euo pipefail -c "${quickstart[1]}"' in ci  # as written, nothing appended
    assert ci.count('-m venv "$work/venv') == 2 and "--system-site-packages" not in ci
    with pytest.raises(SystemExit, match="one command on one line"):
        quickstart_commands("## Quickstart\n\n```bash\na\nb\n```\n")


def test_public_api_exports() -> None:
    for name in fairpolicy.__all__:
        assert getattr(fairpolicy, name) is not None
    with pytest.raises(AttributeError):
        fairpolicy.nope  # noqa: B018


def test_cli_import_is_light() -> None:
    """`fairpolicy --help` must not import the heavy stack (it must stay < 0.3 s)."""
    code = (
        "import sys, fairpolicy.cli; "
        "heavy = [m for m in ('pandas', 'pyarrow', 'trestle', 'sklearn', 'numpy', 'pydantic') "
        "if m in sys.modules]; print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_readme_sample_output_is_the_real_output() -> None:
    readme = (ROOT / "README.md").read_text()
    golden = (ROOT / "tests" / "formatters" / "golden" / "dermatology.text.txt").read_text()
    assert golden in readme, "README's sample run is stale: paste tests/formatters/golden/..."
