"""Write ``src/fairpolicy/schemas_nist/oscal_keys.json``: the vendored NIST OSCAL schema's
definitions with only the keywords the unknown-key check reads
(:func:`fairpolicy.policy.keys.structure`). Run after updating the vendored schema;
``tests/policy/test_key_tables.py`` fails until it is.

    python scripts/derive_oscal_keys.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from fairpolicy.oscal_schema import load_schema
from fairpolicy.policy.keys import KEYS_FILE, structure


def derived() -> str:
    """The file's text: compact JSON, keys in the schema's order, one trailing newline."""
    definitions = structure(load_schema()["definitions"], names=True)  # every definition
    return json.dumps(definitions, separators=(",", ":")) + "\n"


if __name__ == "__main__":
    KEYS_FILE.write_text(derived(), encoding="utf-8")
    print(f"wrote {KEYS_FILE} ({KEYS_FILE.stat().st_size:,} bytes)")
