"""``fairpolicy verify AR`` (issue 29): an untouched chain verifies; each input and each
document tampered with in turn is named (exit 1); the verdict is re-derived from the
hashed policy and data, never from fairpolicy's results JSON.

The chains are built once from the shipped credit example (relative links, so a copy of
the folder is a copy of the chain) and copied for each tamper.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from fairpolicy.cli import main
from fairpolicy.policy.schema import NS

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "credit"


@contextlib.contextmanager
def inside(folder: Path) -> Iterator[None]:
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(cwd)


def run(folder: Path, *argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with inside(folder):
        code = main(list(argv), out)
    return code, out.getvalue()


def ok(folder: Path, *argv: str) -> None:
    code, out = run(folder, *argv)
    assert code in (0, 1), out


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("chains")
    shutil.copytree(EXAMPLE, root / "credit")
    data = ("credit/policy.yaml", "credit/predictions.csv")
    det = "--deterministic"
    # plain: intervals (ci-low/ci-high), the results JSON beside the AR
    ok(root, "check", *data, "--bootstrap", "200", "--seed", "7", det,
       "-o", "oscal=plain/ar.json", "-o", "json=plain/results.json")  # fmt: skip
    # an approved plan with the SSP, profile and catalog written beside it
    ok(root, "plan", data[0], "-o", "plan/ap.json", "--write-ssp", "plan/ssp.json",
       "--approver", "Ann Auditor <ann@example.org>", det)  # fmt: skip
    ok(root, "check", *data, "--plan", "plan/ap.json", det, "-o", "oscal=plan/ar.json")
    # the policy as a profile importing a catalog (both hashed documents of the run)
    ok(root, "convert", data[0], "-o", "conv/catalog.json", "--profile", "conv/profile.json")
    ok(root, "check", "conv/profile.json", data[1], det, "-o", "oscal=conv/ar.json")
    # a loosened gate, a control-scoped bind and a rename (rerun.bind / rerun.rename)
    ok(root, "check", *data, "--fail-on", "never", "--bind", "four-fifths-sex:dimension=race",
       "--rename", "age_band=race", det, "-o", "oscal=loose/ar.json")  # fmt: skip
    # a baseline comparison (the baseline results linked with their hash)
    ok(root, *data_check(data), "-o", "json=base/base.json")
    ok(root, *data_check(data), "--baseline", "base/base.json", "--max-regression", "0.01",
       "-o", "oscal=base/ar.json")  # fmt: skip
    # a plan and SSP written by the run itself (not approved), and a team's SSP (--ssp)
    ok(root, *data_check(data), "-o", "oscal=self/ar.json", "-o", "oscal-ap=self/ap.json",
       "-o", "oscal-ssp=self/ssp.json")  # fmt: skip
    ok(root, *data_check(data), "--ssp", "plan/ssp.json", "--subject",
       "the model under assessment", "-o", "oscal=team/ar.json", "-o",
       "oscal-ap=team/ap.json")  # fmt: skip
    # monitoring (issue 30): weekly windows gated by `any`; an approved plan pinning monthly
    # windows under the sequential gate; a --state run over half the rows, then the rest
    weekly(root / "credit")
    win = ("credit/policy.yaml", "credit/weekly.csv", "--window", "decided_at=1w")
    ok(root, "check", *win, "--window-gate", "any", "--min-window-rows", "400", det,
       "-o", "oscal=win/ar.json")  # fmt: skip
    month = ["--window", "decided_at=1mo"]
    ok(root, "plan", data[0], "-o", "winplan/ap.json", *month, det)
    ok(root, "check", data[0], "credit/weekly.csv", *month, "--plan", "winplan/ap.json", det,
       "-o", "oscal=winplan/ar.json")  # fmt: skip
    (root / "state").mkdir()
    for i in (1, 2):
        ok(root, "check", data[0], f"credit/half{i}.csv", *win[2:], "--window-gate", "last",
           "--state", "state/weekly.state", det, "-o", f"oscal=state/ar{i}.json")  # fmt: skip
    return root


def weekly(folder: Path) -> None:
    """The credit predictions with a decision time ``decided_at`` (six weeks from Monday
    2026-01-05, every 37 hours mod six weeks), whole and in two halves."""
    lines = (folder / "predictions.csv").read_text().splitlines()
    rows = [
        f"{r},2026-01-{5 + (i * 37 % 1008) // 24:02d}T{(i * 37 % 1008) % 24:02d}:00:00Z"
        if 5 + (i * 37 % 1008) // 24 <= 31
        else f"{r},2026-02-{5 + (i * 37 % 1008) // 24 - 31:02d}T{(i * 37 % 1008) % 24:02d}:00:00Z"
        for i, r in enumerate(lines[1:])
    ]
    head = lines[0] + ",decided_at"
    (folder / "weekly.csv").write_text("\n".join([head, *rows]) + "\n")
    half = len(rows) // 2
    (folder / "half1.csv").write_text("\n".join([head, *rows[:half]]) + "\n")
    (folder / "half2.csv").write_text("\n".join([head, *rows[half:]]) + "\n")


def data_check(data: tuple[str, str]) -> tuple[str, ...]:
    return ("check", *data, "--deterministic")


@pytest.fixture
def chain(base: Path, tmp_path: Path) -> Path:
    """A fresh copy of every chain."""
    shutil.copytree(base, tmp_path / "c")
    return tmp_path / "c"


def verify(folder: Path, ar: str) -> tuple[int, str]:
    return run(folder, "verify", ar)


def edit_json(path: Path, change: Callable[[Any], None]) -> None:
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False))


def props(node: Any, name: str) -> list[dict[str, Any]]:
    return [p for p in node.get("props", []) if p["name"] == name and p.get("ns") == NS]


def result(doc: Any) -> Any:
    return doc["assessment-results"]["results"][0]


def observation(doc: Any, control: str) -> Any:
    return next(
        o for o in result(doc)["observations"] if props(o, "control-id")[0]["value"] == control
    )


def set_prop(node: Any, name: str, value: str, nth: int = 0) -> None:
    props(node, name)[nth]["value"] = value


def mismatch(folder: Path, ar: str, *fragments: str) -> str:
    code, out = verify(folder, ar)
    assert code == 1, out
    lines = [line for line in out.splitlines() if line.startswith("MISMATCH")]
    assert lines, out
    for fragment in fragments:
        assert any(fragment in line for line in lines), f"{fragment!r} not in:\n{out}"
    assert "VERIFIED " not in out.replace("NOT VERIFIED", "")
    return out


# ---------------------------------------------------------------- untouched chains


CHAINS = ["plain", "plan", "conv", "loose", "base", "self", "team", "win", "winplan"]


@pytest.mark.parametrize("ar", [f"{c}/ar.json" for c in CHAINS])
def test_an_untouched_chain_verifies(chain: Path, ar: str) -> None:
    code, out = verify(chain, ar)
    assert code == 0, out
    assert out.splitlines()[-1].startswith(f"VERIFIED {ar}")
    assert "MISMATCH" not in out


def test_the_plan_chain_walks_plan_ssp_profile_and_catalog(chain: Path) -> None:
    code, out = verify(chain, "plan/ar.json")
    assert code == 0, out
    for name in ("plan/ap.json", "plan/ssp.json", "credit/predictions.csv", "credit/policy.yaml"):
        assert f"hash OK    {name}  (linked from" in out, out
    # the generated profile and catalog are hashed by the document that links them and
    # regenerated from the hashed policy: both checks are named on the file's one line
    for name, via in (("plan/ssp.profile.json", "SSP"), ("plan/ssp.catalog.json", "profile")):
        line = next(x for x in out.splitlines() if x.startswith(f"hash OK    {name}  ("))
        assert f"linked from the {via} " in line and "regenerated from the hashed policy" in line


def test_the_chain_verifies_with_the_results_json_deleted(chain: Path) -> None:
    (chain / "plain" / "results.json").unlink()
    code, out = verify(chain, "plain/ar.json")
    assert code == 0, out
    assert "not needed" in out


def test_the_verdict_is_re_derived_not_read_from_the_embedded_results(chain: Path) -> None:
    """The plan chain embeds the results JSON (base64) in the AR: an edited status there
    and in the AR agree with each other, and verify still finds the change."""
    import base64

    ar = chain / "plan" / "ar.json"

    def change(doc: Any) -> None:
        set_prop(observation(doc, "four-fifths-sex"), "status", "fail")
        for res in doc["assessment-results"]["back-matter"]["resources"]:
            if "base64" in res:
                raw = json.loads(base64.b64decode(res["base64"]["value"]))
                for f in raw["findings"]:
                    if f["control_id"] == "four-fifths-sex":
                        f["status"] = "fail"
                res["base64"]["value"] = base64.b64encode(json.dumps(raw).encode()).decode()

    edit_json(ar, change)
    mismatch(chain, "plan/ar.json", "control 'four-fifths-sex', observation: status is 'fail'")


def test_a_loosened_gate_is_printed_beside_verified(chain: Path) -> None:
    code, out = verify(chain, "loose/ar.json")
    assert code == 0, out
    assert "LOOSENED   --fail-on never" in out
    assert "the gate was LOOSENED (1)" in out.splitlines()[-1]


def test_the_ar_records_binds_and_renames_as_data(base: Path) -> None:
    doc = json.loads((base / "loose" / "ar.json").read_text())
    r = result(doc)
    assert [json.loads(p["value"]) for p in props(r, "rerun.bind")] == [
        ["four-fifths-sex:dimension", "race"]
    ]
    assert [json.loads(p["value"]) for p in props(r, "rerun.rename")] == [["age_band", "race"]]
    assert len(props(r, "load-warning")) == 3  # each bind/rename's change, as data


def test_removing_the_loosening_from_the_ar_is_named(chain: Path) -> None:
    edit_json(
        chain / "loose" / "ar.json",
        lambda d: result(d).update(
            props=[p for p in result(d)["props"] if p["name"] != "gate-loosened-by"]
        ),
    )
    mismatch(chain, "loose/ar.json", "the result: gate-loosened-by is absent")


def test_an_edited_bind_is_named(chain: Path) -> None:
    edit_json(
        chain / "loose" / "ar.json",
        lambda d: set_prop(result(d), "rerun.bind", '["four-fifths-sex:dimension", "sex"]'),
    )
    mismatch(chain, "loose/ar.json", "control 'four-fifths-sex'")


# ---------------------------------------------------------------- the AR edited


OBS_EDITS = [
    ("status", "four-fifths-sex", "status", "fail", "observation: status is 'fail'"),
    ("value", "four-fifths-sex", "measured-value", "0.95", "measured-value is '0.95'"),
    ("threshold", "four-fifths-sex", "threshold", "0.7", "threshold is '0.7'"),
    ("ci-high", "equal-opportunity-sex", "ci-high", "0.01", "ci-high is '0.01'"),
    ("group-n", "four-fifths-sex", "group-n", "F=1400", "group-n is ['F=1400'"),
]


@pytest.mark.parametrize(("what", "control", "name", "value", "says"), OBS_EDITS,
                         ids=[e[0] for e in OBS_EDITS])  # fmt: skip
def test_an_edited_observation_is_named(
    chain: Path, what: str, control: str, name: str, value: str, says: str
) -> None:
    edit_json(chain / "plain" / "ar.json", lambda d: set_prop(observation(d, control), name, value))
    mismatch(chain, "plain/ar.json", f"control '{control}'", says)


def test_an_edited_finding_state_is_named(chain: Path) -> None:
    def change(doc: Any) -> None:
        f = result(doc)["findings"][0]
        f["target"]["status"]["state"] = "not-satisfied"

    edit_json(chain / "plain" / "ar.json", change)
    mismatch(chain, "plain/ar.json", "finding: the target's status state is 'not-satisfied'")


def test_an_edited_risk_is_named(chain: Path) -> None:
    edit_json(chain / "plain" / "ar.json", lambda d: result(d).pop("risks"))
    mismatch(chain, "plain/ar.json", "0 risk(s) in the assessment results and 1 re-derived")


@pytest.mark.parametrize("ar", ["plain/ar.json", "plan/ar.json"])
def test_an_edited_gate_is_named(chain: Path, ar: str) -> None:
    def change(doc: Any) -> None:
        set_prop(result(doc), "gate", "fail")
        set_prop(result(doc), "exit-code", "1")

    edit_json(chain / ar, change)
    mismatch(chain, ar, "the result: gate is 'fail'", "the result: exit-code is '1'")


def test_an_edited_setting_is_named(chain: Path) -> None:
    edit_json(chain / "plain" / "ar.json", lambda d: set_prop(result(d), "setting.seed", "8"))
    # the re-run takes the edited seed: each interval's recorded draw seed then differs
    mismatch(chain, "plain/ar.json", "control 'four-fifths-sex', observation: ci-seed is")


# ---------------------------------------------------------------- the plan


def _plan_settings(doc: Any) -> list[Any]:
    """The props holding a plan's pinned settings (those of its task)."""
    return next(
        task["props"]
        for task in doc["assessment-plan"]["tasks"]
        if any(str(p["name"]).startswith("setting.") for p in task.get("props", []))
    )


def test_an_edited_plan_is_named(chain: Path) -> None:
    def change(doc: Any) -> None:
        for p in _plan_settings(doc):
            if p["name"] == "setting.fail-on":
                p["value"] = "never"

    edit_json(chain / "plan" / "ap.json", change)
    mismatch(chain, "plan/ar.json", "ap.json", "the file changed", "edited after it was approved")


def _swap_plan(chain: Path) -> None:
    """Another approved plan (of --fail-on warning) in the approved plan's place."""
    ok(chain, "plan", "credit/policy.yaml", "-o", "other/ap.json", "--write-ssp",
       "other/ssp.json", "--fail-on", "warning", "--approver", "Eve <eve@example.org>",
       "--deterministic")  # fmt: skip
    shutil.copy(chain / "other" / "ap.json", chain / "plan" / "ap.json")


def test_a_swapped_plan_is_named(chain: Path) -> None:
    _swap_plan(chain)
    mismatch(chain, "plan/ar.json", "ap.json", "the file changed")


def test_a_swapped_plan_with_the_ar_hashes_rewritten_is_named(chain: Path) -> None:
    """The AR's plan hash, plan UUID and approved-content hash rewritten to the new plan's:
    every hash matches, and what the plan pins still differs from the re-derived run."""
    from fairpolicy import gate_settings
    from fairpolicy.data.sources.csv_guard import file_sha256

    _swap_plan(chain)
    ap = chain / "plan" / "ap.json"
    body = json.loads(ap.read_text())["assessment-plan"]
    sha, digest = file_sha256(ap), gate_settings.content_digest(body)

    def change(doc: Any) -> None:
        for res in doc["assessment-results"]["back-matter"]["resources"]:
            if props(res, "plan-sha256"):
                res["rlinks"][0]["hashes"][0]["value"] = sha
                set_prop(res, "plan-sha256", sha)
                set_prop(res, "plan-uuid", body["uuid"])
                set_prop(res, "approved-content-sha256", digest)

    edit_json(chain / "plan" / "ar.json", change)
    out = mismatch(
        chain, "plan/ar.json", "the setting --fail-on is 'error' in this run and 'warning'"
    )
    assert "MISMATCH   the assessment results, resource" not in out  # the AR's hashes match


# ---------------------------------------------------------------- inputs and documents


def _flip_a_label(chain: Path) -> None:
    """One woman's decision flipped from approve to decline (four-fifths-sex moves)."""
    csv = chain / "credit" / "predictions.csv"
    lines = csv.read_text().splitlines(keepends=True)
    i = next(i for i, line in enumerate(lines) if ",1,0.6" in line and ",F," in line)
    lines[i] = lines[i].replace(",1,0.6", ",0,0.6", 1)
    csv.write_text("".join(lines))


def test_flipped_data_is_named(chain: Path) -> None:
    _flip_a_label(chain)
    mismatch(chain, "plain/ar.json", "predictions.csv", "the file changed")


def test_flipped_data_with_its_hash_rewritten_is_caught_through_the_values(chain: Path) -> None:
    from fairpolicy.data.sources.csv_guard import file_sha256

    _flip_a_label(chain)
    sha = file_sha256(chain / "credit" / "predictions.csv")

    def change(doc: Any) -> None:
        for node in [result(doc), *doc["assessment-results"]["back-matter"]["resources"]]:
            for p in props(node, "data-sha256"):
                p["value"] = sha
            for link in node.get("rlinks", []):
                if link["href"].endswith("predictions.csv"):
                    link["hashes"][0]["value"] = sha

    edit_json(chain / "plain" / "ar.json", change)
    out = mismatch(chain, "plain/ar.json", "control 'four-fifths-sex', observation: measured-value")
    assert "the file changed" not in out


def test_an_edited_policy_is_named(chain: Path) -> None:
    pol = chain / "credit" / "policy.yaml"
    pol.write_text(pol.read_text().replace('value: "0.8"', 'value: "0.7"', 1))
    mismatch(chain, "plain/ar.json", "policy.yaml", "the file changed")


def test_an_edited_catalog_is_named(chain: Path) -> None:
    cat = chain / "conv" / "catalog.json"
    cat.write_text(cat.read_text().replace("0.8", "0.7", 1))
    mismatch(chain, "conv/ar.json", "catalog.json", "the file changed")


def test_an_edited_profile_is_named(chain: Path) -> None:
    edit_json(chain / "conv" / "profile.json", lambda d: d["profile"]["metadata"].update(title="x"))
    mismatch(chain, "conv/ar.json", "profile.json", "the file changed")


def test_an_edited_ssp_is_named(chain: Path) -> None:
    edit_json(
        chain / "plan" / "ssp.json",
        lambda d: d["system-security-plan"]["metadata"].update(title="another system"),
    )
    mismatch(chain, "plan/ar.json", "ssp.json", "the file changed")


@pytest.mark.parametrize(("name", "root"), [("profile", "profile"), ("catalog", "catalog")])
def test_an_edited_generated_document_is_named(chain: Path, name: str, root: str) -> None:
    edit_json(
        chain / "plan" / f"ssp.{name}.json",
        lambda d: d[root]["metadata"].update(title="edited"),
    )
    mismatch(chain, "plan/ar.json", f"the generated {name}", "it was edited")


def test_verify_is_fast_on_the_shipped_examples(chain: Path) -> None:
    """Seconds, not minutes: each chain verified in process (measured, printed)."""
    for ar in ("plain/ar.json", "plan/ar.json", "conv/ar.json"):
        start = time.perf_counter()
        code, out = verify(chain, ar)
        took = time.perf_counter() - start
        print(f"verify {ar}: {took:.2f} s")
        assert code == 0, out
        assert took < 20, f"verify {ar} took {took:.1f} s"


def test_an_edited_baseline_is_named(chain: Path) -> None:
    base = chain / "base" / "base.json"
    base.write_text(base.read_text().replace('"schema_version"', '"schema_version" ', 1))
    mismatch(chain, "base/ar.json", "base.json", "the file changed")


def test_a_generated_ssp_profile_written_by_the_run_is_regenerated(chain: Path) -> None:
    edit_json(
        chain / "self" / "ssp.profile.json", lambda d: d["profile"]["metadata"].update(title="x")
    )
    mismatch(chain, "self/ar.json", "the generated profile", "it was edited")


def test_every_pinned_setting_is_re_run() -> None:
    """A setting added to gate_settings must be passed on by verify's re-run (else verify
    refuses, exit 2, rather than pass a verdict it did not re-derive)."""
    from fairpolicy import gate_settings
    from fairpolicy.verify import _RERUN

    assert set(gate_settings.SETTINGS) == _RERUN


# ---------------------------------------------------------------- property: any settings


def _settings_strategy() -> Any:
    from hypothesis import strategies as st

    return st.fixed_dictionaries(
        {
            "--fail-on": st.sampled_from(["error", "warning", "never"]),
            "--inconclusive": st.sampled_from(["pass", "warn", "fail"]),
            "--seed": st.integers(0, 2**31 - 1).map(str),
            "--bootstrap": st.sampled_from([None, "50"]),
            "--ci-level": st.sampled_from([None, "0.9"]),
            "--decision": st.sampled_from([None, "point", "ci_upper"]),
            "--score-decimals": st.sampled_from([None, "3"]),
        }
    )


def _small_chain(folder: Path, settings: dict[str, str | None]) -> int:
    from tests.bad_inputs.cases import DEFAULT_DATA, policy

    (folder / "policy.yaml").write_text(
        policy("c1") + policy("c2", metric_key="equal_opportunity_diff", threshold='"0.1"')
    )
    (folder / "data.csv").write_text(DEFAULT_DATA)
    args = [a for k, v in settings.items() if v is not None for a in (k, v)]
    code, _ = run(folder, "check", "policy.yaml", "data.csv", *args, "-o", "oscal=out/ar.json")
    return code


def test_any_settings_verify_and_any_edited_statement_is_named() -> None:
    """Property: whatever settings a run used, its AR verifies (the settings are re-run
    from the AR); and one observation prop changed to another value is named."""
    import tempfile

    from hypothesis import HealthCheck, assume, given, settings
    from hypothesis import strategies as st

    edits = st.tuples(
        st.sampled_from(["c1", "c2"]),
        st.sampled_from(["measured-value", "status", "group-n", "threshold", "gate-effect"]),
    )

    @settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
    @given(_settings_strategy(), edits)
    def prop(options: dict[str, str | None], edit: tuple[str, str]) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            assume(_small_chain(folder, options) in (0, 1))
            code, out = verify(folder, "out/ar.json")
            assert code == 0, out
            assert ("LOOSENED   --fail-on never" in out) == (options["--fail-on"] == "never")
            control, name = edit
            ar = folder / "out" / "ar.json"
            doc = json.loads(ar.read_text())
            found = props(observation(doc, control), name)
            assume(found)
            found[0]["value"] = {"status": "error", "gate-effect": "error"}.get(
                name, found[0]["value"] + "1" if name != "group-n" else "F=1"
            )
            ar.write_text(json.dumps(doc))
            mismatch(folder, "out/ar.json", f"control '{control}', observation: {name} is")

    prop()


def test_an_edited_risk_facet_and_finding_target_are_named(chain: Path) -> None:
    def change(doc: Any) -> None:
        risk = result(doc)["risks"][0]
        risk["characterizations"][0]["facets"][0]["value"] = "possible"
        result(doc)["findings"][1]["target"]["target-id"] = "another_smt"

    edit_json(chain / "plain" / "ar.json", change)
    mismatch(chain, "plain/ar.json", "risk: the risk's characterization", "finding: the target is")


def test_an_edited_reviewed_control_list_is_named(chain: Path) -> None:
    def change(doc: Any) -> None:
        sel = result(doc)["reviewed-controls"]["control-selections"][0]
        sel["include-controls"] = sel["include-controls"][1:]

    edit_json(chain / "plain" / "ar.json", change)
    mismatch(chain, "plain/ar.json", "the reviewed controls are")


def test_verify_opens_no_network_connection(chain: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every socket refused: an untouched chain still verifies, and a link to https is
    named as not checkable (exit 2), never fetched."""
    import socket

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("verify opened a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    assert verify(chain, "plan/ar.json")[0] == 0

    def remote(doc: Any) -> None:
        for res in doc["assessment-results"]["back-matter"]["resources"]:
            for link in res.get("rlinks", []):
                if link["href"].endswith("ap.json"):
                    link["href"] = "https://example.org/ap.json"

    edit_json(chain / "plan" / "ar.json", remote)
    code, _ = verify(chain, "plan/ar.json")
    assert code == 2


# ---------------------------------------------------------------- monitoring (issue 30)


def test_the_window_settings_are_recorded_with_their_source(base: Path) -> None:
    doc = json.loads((base / "win" / "ar.json").read_text())
    got = {p["name"]: (p["value"], p.get("class")) for p in result(doc)["props"]}
    assert got["setting.window"] == ("decided_at=1w", "option")
    assert got["setting.window-tz"] == ("UTC", "option")
    assert got["setting.window-gate"] == ("any", "option")
    assert got["setting.min-window-rows"] == ("400", "option")
    assert got["setting.pool-windows"] == ("not given", "default")
    plan = json.loads((base / "winplan" / "ar.json").read_text())
    got = {p["name"]: (p["value"], p.get("class")) for p in result(plan)["props"]}
    assert got["setting.window"] == ("decided_at=1mo", "option")
    assert got["setting.window-gate"] == ("sequential", "default")


def test_an_edited_window_setting_is_named(chain: Path) -> None:
    edit_json(
        chain / "win" / "ar.json", lambda d: set_prop(result(d), "setting.window", "decided_at=1mo")
    )
    # re-run over monthly windows: the gated findings' window statements differ
    mismatch(chain, "win/ar.json", "control '")


def test_an_edited_windowed_value_is_named(chain: Path) -> None:
    edit_json(
        chain / "winplan" / "ar.json",
        lambda d: set_prop(observation(d, "four-fifths-sex"), "measured-value", "0.99"),
    )
    mismatch(chain, "winplan/ar.json", "control 'four-fifths-sex'", "measured-value is '0.99'")


def test_a_state_run_of_one_batch_verifies_and_a_later_one_says_why_not(chain: Path) -> None:
    """The first --state run's windows come from its hashed data alone: re-run with a new
    state, whose SHA-256 must equal the recorded one. The second run's data is only the
    new rows and the state it started from was overwritten: exit 2, with the reason."""
    code, out = verify(chain, "state/ar1.json")
    assert code == 0, out
    doc = json.loads((chain / "state" / "ar1.json").read_text())
    assert props(result(doc), "state-batches")[0]["value"] == "1"
    assert not props(result(doc), "state-sha256-before")
    edit_json(chain / "state" / "ar1.json",
              lambda d: set_prop(result(d), "state-sha256", "0" * 64))  # fmt: skip
    mismatch(chain, "state/ar1.json", "state-sha256 is '" + "0" * 64)
    second = json.loads((chain / "state" / "ar2.json").read_text())
    before = props(result(second), "state-sha256-before")[0]["value"]
    assert before == props(result(doc), "state-sha256")[0]["value"]  # the chain of states
    code, out = run_err(chain, "verify", "state/ar2.json")
    assert code == 2
    assert "held earlier rows" in out and before in out and "new state" in out


def run_err(folder: Path, *argv: str) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code, out = run(folder, *argv)
    return code, out + err.getvalue()


def window_result(doc: Any, label: str) -> Any:
    return next(
        r
        for r in doc["assessment-results"]["results"][1:]
        if props(r, "window-label")[0]["value"] == label
    )


def test_the_ar_holds_one_result_per_window_and_each_is_re_derived(chain: Path) -> None:
    doc = json.loads((chain / "win" / "ar.json").read_text())
    gated, *windows = doc["assessment-results"]["results"]
    assert props(gated, "result-kind")[0]["value"] == "window-gate"
    assert len(windows) == 6 and all(props(w, "result-kind")[0]["value"] == "window"
                                     for w in windows)  # fmt: skip

    def change(d: Any) -> None:
        obs = window_result(d, "2026-01-12")["observations"]
        o = next(o for o in obs if props(o, "control-id")[0]["value"] == "four-fifths-sex")
        set_prop(o, "status", "fail")
        set_prop(o, "measured-value", "0.5")

    edit_json(chain / "win" / "ar.json", change)
    mismatch(chain, "win/ar.json",
             "window 2026-01-12, control 'four-fifths-sex', observation: status is 'fail'",
             "window 2026-01-12, control 'four-fifths-sex', observation: measured-value is "
             "'0.5'")  # fmt: skip


def test_an_edited_window_finding_bound_or_label_is_named(chain: Path) -> None:
    def change(d: Any) -> None:
        w = window_result(d, "2026-01-19")
        w["findings"][0]["target"]["status"]["state"] = "not-satisfied"
        window_result(d, "2026-01-26")["end"] = "2026-02-03T00:00:00+00:00"
        set_prop(window_result(d, "2026-02-09"), "window-rows", "1")

    edit_json(chain / "win" / "ar.json", change)
    mismatch(chain, "win/ar.json",
             "window 2026-01-19, control",
             "window 2026-01-26: the result's end is '2026-02-03",
             "window 2026-02-09's result: window-rows is '1'")  # fmt: skip


def test_a_removed_or_added_window_result_is_named(chain: Path) -> None:
    def drop(d: Any) -> None:
        d["assessment-results"]["results"].pop(3)

    edit_json(chain / "win" / "ar.json", drop)
    mismatch(chain, "win/ar.json", "the result of window 2026-01-19 is missing")
    doc = json.loads((chain / "winplan" / "ar.json").read_text())
    extra = json.loads(json.dumps(doc["assessment-results"]["results"][-1]))
    set_prop(extra, "window-label", "2026-03-01")
    doc["assessment-results"]["results"].append(extra)
    (chain / "winplan" / "ar.json").write_text(json.dumps(doc))
    mismatch(chain, "winplan/ar.json", "a result of window 2026-03-01")


# ---------------------------------------------------------------- weights, as data


def test_the_weights_reading_is_in_the_ar_and_an_edit_of_it_is_named(tmp_path: Path) -> None:
    """Issue 29 item 2: how a run read its sample weights (column, survey/frequency, declared
    or the survey default) is data in the AR, and verify re-derives it."""
    import numpy as np

    rng = np.random.default_rng(3)
    n = 400
    sex = rng.choice(["F", "M"], n)
    rows = ["y_true,y_pred,sex,w"] + [
        f"{rng.integers(0, 2)},{int(rng.random() < (0.4 if s == 'F' else 0.5))},{s},"
        f"{rng.integers(1, 4)}"
        for s in sex
    ]
    (tmp_path / "data.csv").write_text("\n".join(rows) + "\n")
    from tests.helpers import control, write_policy

    write_policy(tmp_path, control("dp", threshold="0.3", **{"input.weight": "w"}))
    ok(tmp_path, "check", "policy.yaml", "data.csv", "--deterministic", "-o", "oscal=ar.json")
    doc = json.loads((tmp_path / "ar.json").read_text())
    got = {p["name"]: p["value"] for p in result(doc)["props"] if p["name"].startswith("weight")}
    assert got == {"weight-column": "w", "weight-kind": "survey", "weight-kind-declared": "false"}
    code, out = verify(tmp_path, "ar.json")
    assert code == 0, out
    edit_json(tmp_path / "ar.json", lambda d: set_prop(result(d), "weight-kind", "frequency"))
    mismatch(tmp_path, "ar.json", "weight-kind")
