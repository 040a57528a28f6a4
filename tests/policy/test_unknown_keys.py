"""A key fairpolicy does not read is an error, in every policy form and at every level.

The class this closes: ``threshold: "0.0001"`` written beside a control's props (or
``enforcement_mode`` at the control-implementation level, or ``set-parameters`` in a form
that does not resolve them) was silently dropped, and the looser prop passed the release.
The property test inserts a key at a random mapping of each form and requires exit 2
naming it; the same documents without the key must pass, so the test can fail both ways.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fairpolicy
from fairpolicy.errors import PolicyError
from fairpolicy.policy import keys
from fairpolicy.policy.load import load_policy
from tests.helpers import balanced_csv

NS = "https://fairpolicy.example.org/ns/oscal"
PROPS = [
    {"name": "metric_key", "value": "demographic_parity_diff"},
    {"name": "threshold", "value": "0.9"},
    {"name": "operator", "value": "<"},
    {"name": "input.target", "value": "y_true"},
    {"name": "input.prediction", "value": "y_pred"},
    {"name": "input.dimension", "value": "sex"},
]


def forms() -> dict[str, Any]:
    ir = {"control-id": "c1", "description": "dp", "props": copy.deepcopy(PROPS)}
    ci = {"description": "gate", "implemented-requirements": [ir]}
    catalog_props = [{**p, "ns": NS} for p in PROPS if p["name"] != "threshold"]
    return {
        "list": [copy.deepcopy(ir)],
        "assessment-plan": {"assessment-plan": {"control-implementations": [copy.deepcopy(ci)]}},
        "component-definition": {
            "component-definition": {
                "metadata": {"title": "t"},
                "components": [{"title": "m", "control-implementations": [copy.deepcopy(ci)]}],
            }
        },
        "catalog": {
            "catalog": {
                "groups": [
                    {
                        "title": "g",
                        "controls": [
                            {
                                "id": "c1",
                                "title": "dp",
                                "params": [{"id": "c1_prm_threshold", "values": ["0.9"]}],
                                "props": catalog_props,
                            }
                        ],
                    }
                ]
            }
        },
    }


def mappings(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], dict]]:
    if isinstance(node, dict):
        yield path, node
        for k, v in node.items():
            yield from mappings(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from mappings(v, (*path, i))


def at(doc: Any, path: tuple[Any, ...]) -> dict:
    for p in path:
        doc = doc[p]
    return doc


def test_every_form_passes_without_an_unknown_key(tmp_path: Path) -> None:
    data = balanced_csv(tmp_path)
    for name, doc in forms().items():
        results = fairpolicy.check(doc, str(data))
        assert results.exit_code == 0, name


KEY = st.sampled_from(
    ["threshold", "operator", "enforcement_mode", "metric_key", "severity", "Props", "x-y"]
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(form=st.sampled_from(sorted(forms())), pick=st.integers(0, 10_000), key=KEY)
def test_an_unknown_key_anywhere_is_refused_by_name(form: str, pick: int, key: str) -> None:
    doc = forms()[form]
    spots = [p for p, m in mappings(doc) if key not in m]
    path = spots[pick % len(spots)]
    at(doc, path)[key] = "0.0001"
    if path and path[-1] == "metadata" and key not in keys.SETTING_NAMES:
        load_policy(doc)  # metadata takes prose (Venturalitica's `description`): allowed
        return
    with pytest.raises(PolicyError) as err:
        load_policy(doc)
    text = str(err.value)
    assert f"'{key}'" in text and "refused rather than ignored" in text, (form, path, text)


@pytest.mark.parametrize("form", ["list", "assessment-plan"])
@pytest.mark.parametrize("where", ["ir", "ci"])
def test_set_parameters_where_nothing_resolves_them_is_refused(form: str, where: str) -> None:
    doc = forms()[form]
    ir = doc[0] if form == "list" else doc["assessment-plan"]["control-implementations"][0]
    target = ir
    if form == "assessment-plan" and where == "ir":
        target = ir["implemented-requirements"][0]
    target["set-parameters"] = [{"param-id": "c1_prm_threshold", "values": ["0.0001"]}]
    with pytest.raises(PolicyError, match="set-parameters takes effect only"):
        load_policy(doc)


def test_the_allowed_keys_are_nists(tmp_path: Path) -> None:
    """The tables come from the vendored NIST schema: a catalog control allows exactly the
    OSCAL control fields plus ``description`` (Venturalitica's catalogs, read as the
    control's description), and a component-definition's implemented requirement exactly
    OSCAL's plus the two keys the bare-list form reads (title, id), less set-parameters,
    which only a component-definition resolves."""
    found = keys.unknown_keys("catalog", {"controls": [{"id": "a", "title": "t", "zz": 1}]})
    assert found[0][2] == sorted(
        ["id", "class", "title", "params", "props", "links", "parts", "controls", "description"]
    )
    found = keys.unknown_keys("list-control", {"control-id": "a", "zz": 1})
    assert found[0][2] == sorted(
        [
            *("uuid", "control-id", "description", "props", "links"),
            *("responsible-roles", "statements", "remarks", "title", "id"),
        ]
    )


def test_cli_names_the_key_file_and_control(tmp_path: Path) -> None:
    data = balanced_csv(tmp_path)
    doc = forms()["assessment-plan"]
    doc["assessment-plan"]["control-implementations"][0]["implemented-requirements"][0][
        "threshold"
    ] = "0.0001"
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps(doc))
    done = subprocess.run(
        [sys.executable, "-m", "fairpolicy", "check", str(policy), str(data)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2, done.stdout
    assert "policy.json" in done.stderr and "control 'c1'" in done.stderr
    assert "'threshold'" in done.stderr and "Traceback" not in done.stderr


def test_a_shipped_pack_still_loads(tmp_path: Path) -> None:
    for path in sorted(Path("policies").rglob("*.yaml")) + sorted(Path("policies").rglob("*.json")):
        text = path.read_text()
        doc = yaml.safe_load(text)
        if isinstance(doc, dict) and ("profile" in doc or "component-definition" in doc):
            load_policy(str(path))
