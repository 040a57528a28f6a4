"""The unknown-key check reads a derived copy of the vendored NIST schema
(``schemas_nist/oscal_keys.json``: its definitions with only the keywords the check reads;
issue 17, so that a bare-list policy loads no NIST schema). The copy must be the vendored
schema's, and every key table built from it the table the full schema gives."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fairpolicy.oscal_schema import load_schema
from fairpolicy.policy import keys

FORMS = ("list-control", "catalog", "component-definition", "assessment-plan")


def test_the_shipped_structure_is_the_vendored_schemas() -> None:
    shipped = json.loads(keys.KEYS_FILE.read_text(encoding="utf-8"))
    assert shipped == keys.structure(load_schema()["definitions"], names=True), (
        "run python scripts/derive_oscal_keys.py"
    )


def _tables() -> dict[tuple[str, str], tuple[dict[str, Any], bool]]:
    keys._allowed.cache_clear()
    names = [n for n, d in keys._definitions().items() if "properties" in d or "$ref" in d]
    return {(n, f): keys._allowed(n, f) for n in names for f in FORMS}


def test_every_key_table_is_the_full_schemas(monkeypatch: pytest.MonkeyPatch) -> None:
    derived = _tables()
    with monkeypatch.context() as m:
        m.setattr(keys, "_definitions", lambda: load_schema()["definitions"])
        full = _tables()
    keys._allowed.cache_clear()
    assert len(full) > 200
    assert derived.keys() == full.keys()
    for key, (want_props, want_closed) in full.items():
        props, closed = derived[key]
        assert closed == want_closed, key
        assert list(props) == list(want_props), key
        assert {k: keys.structure(v) for k, v in props.items()} == {
            k: keys.structure(v) for k, v in want_props.items()
        }, key
