"""OSCAL-shaped but incomplete documents are evaluated with one warning; ``--strict``
makes that an error (issue 16).

A component-definition (or catalog, or profile) with ``uuid`` and ``metadata`` claims to be
OSCAL. When NIST's schema would reject it — a missing ``last-modified`` or
``oscal-version``, as hand-written and Venturalitica-style documents usually are — the
policy is still evaluated, with one warning listing every problem and naming
``fairpolicy convert``; ``--strict`` (``check``, ``validate``, the API's ``strict=``) turns
it into exit 2 naming the field. Keys fairpolicy does not read stay errors either way
(``test_unknown_keys.py``), and the results written are valid OSCAL whatever the input.
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

import fairpolicy
from fairpolicy.cli import main
from fairpolicy.errors import PolicyError
from fairpolicy.oscal_schema import check_document
from fairpolicy.policy.load import load_policy
from tests.helpers import balanced_csv
from tests.test_policy_packs import PACKS

FIELDS = ("last-modified", "oscal-version", "version", "title")


def _without(pack: Path, tmp: Path, doc: str, field: str) -> Path:
    """A copy of ``pack`` whose ``doc`` (catalog or profile) lacks ``metadata[field]``."""
    dest = tmp / pack.name
    shutil.copytree(pack, dest)
    path = dest / f"{doc}.json"
    data = json.loads(path.read_text())
    root = next(iter(k for k in data if k != "$schema"))
    del data[root]["metadata"][field]
    path.write_text(json.dumps(data))
    return dest / "profile.json"


def _summary(path: Path) -> list[tuple[str, str, str, object]]:
    pol = load_policy(str(path))
    return [(c.control_id, c.metric_key, c.operator.value, c.threshold) for c in pol.controls]


@pytest.mark.parametrize("pack", PACKS, ids=[p.name for p in PACKS])
@pytest.mark.parametrize("doc", ["catalog", "profile"])
@pytest.mark.parametrize("field", FIELDS)
def test_a_missing_metadata_field_is_one_warning_and_the_same_controls(
    pack: Path, doc: str, field: str, tmp_path: Path
) -> None:
    profile = _without(pack, tmp_path, doc, field)
    pol = load_policy(str(profile))
    oscal = [w for w in pol.warnings if "not valid OSCAL" in w]
    assert len(oscal) == 1, pol.warnings
    assert field in oscal[0] and "fairpolicy convert" in oscal[0] and "--strict" in oscal[0]
    assert _summary(profile) == _summary(pack / "profile.json")
    with pytest.raises(PolicyError) as err:
        load_policy(str(profile), strict=True)
    assert field in err.value.render()


def test_check_evaluates_warns_and_writes_valid_oscal(tmp_path: Path) -> None:
    pack = next(p for p in PACKS if p.name == "binary-lending")
    profile = _without(pack, tmp_path, "profile", "last-modified")
    rng = __import__("numpy").random.default_rng(0)
    import pandas as pd

    n = 400
    df = pd.DataFrame(
        {
            "y_true": rng.integers(0, 2, n),
            "y_pred": rng.integers(0, 2, n),
            "y_score": rng.random(n).round(3),
            "sex": rng.choice(["F", "M"], n),
        }
    )
    data = tmp_path / "d.csv"
    df.to_csv(data, index=False)
    ar = tmp_path / "ar.json"
    out = io.StringIO()
    code = main(["check", str(profile), str(data), "-o", f"oscal={ar}", "-o", "text"], out)
    assert code in (0, 1), out.getvalue()
    assert "not valid OSCAL" in out.getvalue() or "not valid OSCAL" in ar.read_text()
    doc = json.loads(ar.read_text())
    check_document(doc, "assessment-results", str(ar))  # valid OSCAL whatever the input
    strict = main(["check", str(profile), str(data), "--strict"], io.StringIO())
    assert strict == 2
    with pytest.raises(PolicyError, match="last-modified"):
        fairpolicy.check(str(profile), str(data), strict=True)


def test_validate_warns_and_strict_fails(tmp_path: Path) -> None:
    pack = next(p for p in PACKS if p.name == "hiring-ll144")
    profile = _without(pack, tmp_path, "catalog", "oscal-version")
    out = io.StringIO()
    assert main(["validate", str(profile)], out) == 0
    text = out.getvalue()
    assert text.startswith("OK") and text.count("warning:") == 1, text
    out = io.StringIO()
    assert main(["validate", "--strict", str(profile)], out) == 2
    assert "oscal-version" in out.getvalue()


@pytest.mark.parametrize(
    "doc",
    [
        [{"control-id": "c1", "props": [{"name": "metric_key", "value": "dp_diff"}]}],
        {"assessment-plan": {"control-implementations": []}},
    ],
)
def test_strict_refuses_the_non_oscal_forms(doc: object, tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="--strict requires valid OSCAL input"):
        load_policy(doc, strict=True)  # type: ignore[arg-type]


def test_unknown_keys_stay_errors_without_strict(tmp_path: Path) -> None:
    pack = next(p for p in PACKS if p.name == "binary-lending")
    profile = _without(pack, tmp_path, "catalog", "last-modified")
    cat = profile.parent / "catalog.json"
    data = json.loads(cat.read_text())
    data["catalog"]["metadata"]["threshold"] = "0.0001"
    cat.write_text(json.dumps(data))
    with pytest.raises(PolicyError, match="'threshold'"):
        load_policy(str(profile))
    balanced_csv(tmp_path)
