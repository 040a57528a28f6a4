"""OSCAL profile resolution: every construct is resolved as the OSCAL 1.1+ profile
resolution specification says, or refused by name; every ambiguity names both places;
a stricter threshold anywhere in the chain can never turn a FAIL into a PASS; and our
resolution of every shipped pack equals compliance-trestle's resolved catalog."""

from __future__ import annotations

import copy
import json
import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairpolicy.errors import PolicyError
from fairpolicy.policy import load_policy
from fairpolicy.policy.oscal import Ctx
from fairpolicy.policy.profile import load_source
from fairpolicy.policy.schema import NS, EnforcementMode

ROOT = Path(__file__).resolve().parents[2]
PACKS = sorted(p.parent for p in (ROOT / "policies").glob("*/profile.json"))
META = {
    "title": "t",
    "last-modified": "2026-01-01T00:00:00+00:00",
    "version": "1",
    "oscal-version": "1.2.1",
}


def prop(name: str, value: str) -> dict[str, str]:
    return {"name": name, "ns": NS, "value": value}


def ctl(cid: str, param: str = "0.2", children: list[Any] | None = None, **extra: str) -> Any:
    props = {
        "metric_key": "demographic_parity_diff",
        "operator": "<",
        "input.target": "y_true",
        "input.prediction": "y_pred",
        "input.dimension": "sex",
        **extra,
    }
    out: dict[str, Any] = {
        "id": cid,
        "title": f"control {cid}",
        "params": [{"id": f"{cid}_prm_threshold", "values": [param]}],
        "props": [prop(k, v) for k, v in props.items()],
        "parts": [{"id": f"{cid}_smt", "name": "statement", "prose": "text"}],
    }
    if children:
        out["controls"] = children
    return out


def catalog(*controls: Any) -> dict[str, Any]:
    body = {"uuid": str(uuid.uuid4()), "metadata": META, "controls": list(controls)}
    return {"catalog": body}


def profile(imports: list[Any], **rest: Any) -> dict[str, Any]:
    return {"profile": {"uuid": str(uuid.uuid4()), "metadata": META, "imports": imports, **rest}}


def everything(href: str = "catalog.json") -> dict[str, Any]:
    return {"href": href, "include-all": {}}


def write(tmp: Path, name: str, doc: Any) -> Path:
    path = tmp / name
    path.write_text(json.dumps(doc, indent=1))
    return path


def problems(path: Path) -> str:
    with pytest.raises(PolicyError) as info:
        load_policy(path)
    return " | ".join(p.render() for p in info.value.problems)


def ids_of(path: Path) -> list[str]:
    return [c.control_id for c in load_policy(path).controls]


@pytest.fixture
def cat(tmp_path: Path) -> Path:
    children = [ctl("c-1.1"), ctl("c-1.2", children=[ctl("c-1.2.1")])]
    return write(tmp_path, "catalog.json", catalog(ctl("c-1", children=children), ctl("c-10")))


# ---------------------------------------------------------------- selection


def test_include_by_id_takes_no_children_unless_asked(cat: Path) -> None:
    sel = {"href": "catalog.json", "include-controls": [{"with-ids": ["c-1"]}]}
    assert ids_of(write(cat.parent, "p.json", profile([sel]))) == ["c-1"]
    sel["include-controls"][0]["with-child-controls"] = "yes"
    got = ids_of(write(cat.parent, "p.json", profile([sel])))
    assert got == ["c-1", "c-1.1", "c-1.2", "c-1.2.1"]


def test_matching_pattern_and_exclusion(cat: Path) -> None:
    sel = {
        "href": "catalog.json",
        "include-controls": [{"matching": [{"pattern": "c-1*"}]}],
        "exclude-controls": [{"with-ids": ["c-1.2"], "with-child-controls": "yes"}],
    }
    assert ids_of(write(cat.parent, "p.json", profile([sel]))) == ["c-1", "c-1.1", "c-10"]


def test_matching_nothing_is_an_error(cat: Path) -> None:
    sel = {"href": "catalog.json", "include-controls": [{"matching": [{"pattern": "x-*"}]}]}
    text = problems(write(cat.parent, "p.json", profile([sel])))
    assert "matching pattern 'x-*' matches no control" in text and "imports[0]" in text


def test_an_import_without_selection_is_an_error(cat: Path) -> None:
    # the OSCAL schema requires one of them (trestle says so under --strict); the resolver
    # refuses it in every case
    claimed = write(cat.parent, "p.json", profile([{"href": "catalog.json"}]))
    assert "selects no controls" in problems(claimed)
    with pytest.raises(PolicyError, match="include-all"):
        load_policy(claimed, strict=True)
    lenient = {"profile": {"imports": [{"href": "catalog.json"}]}}
    text = problems(write(cat.parent, "p.json", lenient))
    assert "selects no controls (no include-all or include-controls)" in text


def _set_one(cid: str, value: str) -> dict[str, Any]:
    return {"param-id": f"{cid}_prm_threshold", "values": [value]}


def _set(cid: str, value: str) -> dict[str, Any]:
    return {"set-parameters": [_set_one(cid, value)]}


# ---------------------------------------------------------------- ambiguities


def test_duplicate_control_ids_in_a_catalog_name_both_places(tmp_path: Path) -> None:
    path = tmp_path / "catalog.yaml"
    path.write_text(
        json.dumps(catalog(ctl("c-1", "0.2"), ctl("c-1", "0.1")), indent=1).replace("{", "{", 1)
    )
    text = problems(path)
    assert "control id 'c-1' is defined twice" in text
    assert "catalog.controls[0] (line" in text and "catalog.controls[1] (line" in text


def test_importing_a_control_twice_names_both_imports(cat: Path) -> None:
    tight = write(cat.parent, "tight.json", profile([everything()], modify=_set("c-10", "0.05")))
    path = write(cat.parent, "p.json", profile([everything("tight.json"), everything()]))
    text = problems(path)
    assert "control 'c-10' is imported twice" in text
    assert "imports[0] (href 'tight.json')" in text and "imports[1] (href 'catalog.json')" in text
    assert tight.exists()


def test_use_first_keeps_the_first_import(cat: Path) -> None:
    write(cat.parent, "tight.json", profile([everything()], modify=_set("c-10", "0.05")))
    # OSCAL 1.2's combine has no method any more (NIST schema); the lenient form keeps it
    merge = {"combine": {"method": "use-first"}, "as-is": True}
    doc = {"profile": {"imports": [everything("tight.json"), everything()], "merge": merge}}
    path = write(cat.parent, "p.json", doc)
    by_id = {c.control_id: c for c in load_policy(path).controls}
    assert by_id["c-10"].threshold.value == 0.05 and by_id["c-10"].threshold_source == "profile"


def test_a_param_set_twice_names_both_entries(cat: Path) -> None:
    modify = {"set-parameters": [*_set("c-10", "0.1")["set-parameters"], _set_one("c-10", "0.3")]}
    text = problems(write(cat.parent, "p.json", profile([everything()], modify=modify)))
    assert "param 'c-10_prm_threshold' is set twice" in text
    assert "modify.set-parameters[0]" in text and "modify.set-parameters[1]" in text


@pytest.mark.parametrize(
    ("where", "value", "expected"),
    [
        ("merge", {"custom": {"groups": []}}, "merge has 'custom', which fairpolicy does not"),
        ("merge", {"combine": {"method": "merge"}}, "merge.combine.method 'merge' is not"),
        (
            "modify",
            {"set-parameters": [{**_set_one("c-10", "0.1"), "select": {"choice": ["0.1"]}}]},
            "modify.set-parameters[0] has 'select', which fairpolicy does not resolve",
        ),
    ],
)
def test_unsupported_constructs_are_refused_by_name(
    cat: Path, where: str, value: Any, expected: str
) -> None:
    doc = {"profile": {"imports": [everything()], where: value}}  # lenient: trestle
    text = problems(write(cat.parent, "p.json", doc))
    assert expected in text


def test_lenient_profile_unknown_keys_are_refused(cat: Path) -> None:
    doc = {"profile": {"imports": [everything()], "modify": {"alter": []}}}
    text = problems(write(cat.parent, "p.json", doc))
    assert "modify has 'alter', which fairpolicy does not resolve" in text
    assert "Did you mean 'alters'?" in text


# ---------------------------------------------------------------- alters


def test_alters_switch_enforcement_to_block(tmp_path: Path) -> None:
    write(tmp_path, "catalog.json", catalog(ctl("c-1", enforcement_mode="warn")))
    alter = {
        "control-id": "c-1",
        "removes": [{"by-name": "enforcement_mode"}],
        "adds": [{"props": [prop("enforcement_mode", "block")]}],
    }
    path = write(tmp_path, "p.json", profile([everything()], modify={"alters": [alter]}))
    assert load_policy(path).controls[0].enforcement_mode is EnforcementMode.BLOCK


def test_alters_tighten_a_prop_threshold(tmp_path: Path) -> None:
    c = ctl("c-1")
    del c["params"]
    c["props"].append(prop("threshold", "0.2"))
    write(tmp_path, "catalog.json", catalog(c))
    alter = {
        "control-id": "c-1",
        "removes": [{"by-name": "threshold", "by-ns": NS}],
        "adds": [{"position": "starting", "props": [prop("threshold", "0.05")]}],
    }
    path = write(tmp_path, "p.json", profile([everything()], modify={"alters": [alter]}))
    assert load_policy(path).controls[0].threshold.value == 0.05


def test_an_added_prop_the_control_has_names_both_places(tmp_path: Path) -> None:
    write(tmp_path, "catalog.json", catalog(ctl("c-1", enforcement_mode="warn")))
    alter = {"control-id": "c-1", "adds": [{"props": [prop("enforcement_mode", "block")]}]}
    path = write(tmp_path, "p.json", profile([everything()], modify={"alters": [alter]}))
    text = problems(path)
    assert "modify.alters[0].adds[0] adds prop 'enforcement_mode'" in text
    assert "catalog.json, catalog.controls[0] (line" in text
    assert "removes: [{by-name: enforcement_mode}]" in text


def test_a_remove_matching_nothing_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, "catalog.json", catalog(ctl("c-1")))
    alter = {"control-id": "c-1", "removes": [{"by-name": "enforcment_mode"}]}
    path = write(tmp_path, "p.json", profile([everything()], modify={"alters": [alter]}))
    assert "modify.alters[0].removes[0] matches nothing in control 'c-1'" in problems(path)


def test_added_param_and_part_by_id(tmp_path: Path) -> None:
    c = ctl("c-1")
    del c["params"]
    c["props"].append(prop("threshold", "0.3"))
    write(tmp_path, "catalog.json", catalog(c))
    adds = [
        {"params": [{"id": "c-1_prm_threshold", "values": ["0.1"]}]},
        {
            "position": "after",
            "by-id": "c-1_smt",
            "parts": [{"id": "c-1_obj", "name": "assessment-objective"}],
        },
    ]
    alter = {"control-id": "c-1", "removes": [{"by-name": "threshold"}], "adds": adds}
    path = write(tmp_path, "p.json", profile([everything()], modify={"alters": [alter]}))
    control = load_policy(path).controls[0]
    assert (control.threshold.value, control.threshold_source) == (0.1, "profile")
    assert control.objective_id == "c-1_obj"


# ---------------------------------------------------------------- precedence


def test_profile_loosening_the_catalog_is_a_reported_warning(cat: Path) -> None:
    path = write(cat.parent, "p.json", profile([everything()], modify=_set("c-10", "0.3")))
    policy = load_policy(path)
    (warning,) = [w for w in policy.warnings if "c-10" in w]
    assert "'< 0.3'" in warning and "is looser than '< 0.2'" in warning
    assert "modify.set-parameters[0]" in warning and "catalog.json, catalog.controls[1]" in warning


def test_a_component_definition_may_not_loosen_its_profile(cat: Path) -> None:
    write(cat.parent, "p.json", profile([everything()], modify=_set("c-10", "0.1")))
    ir = {
        "uuid": str(uuid.uuid4()),
        "control-id": "c-10",
        "description": "d",
        "set-parameters": [_set_one("c-10", "0.15")],
    }
    impl = {"uuid": str(uuid.uuid4()), "source": "p.json", "description": "d"}
    comp = {"uuid": str(uuid.uuid4()), "type": "software", "title": "m", "description": "d"}
    comp["control-implementations"] = [{**impl, "implemented-requirements": [ir]}]
    cd = {"component-definition": {"uuid": str(uuid.uuid4()), "metadata": META}}
    cd["component-definition"]["components"] = [comp]
    text = problems(write(cat.parent, "cd.json", cd))
    assert "may not loosen its profile's threshold" in text
    assert "p.json, modify.set-parameters[0]" in text and "set-parameters[0]" in text
    ir["set-parameters"] = [_set_one("c-10", "0.05")]  # tightening is fine
    assert load_policy(write(cat.parent, "cd.json", cd)).controls[0].threshold.value == 0.05


def test_a_stricter_prop_losing_to_a_param_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, "catalog.json", catalog(ctl("c-1", "0.2", threshold="0.1")))
    text = problems(tmp_path / "catalog.json")
    assert (
        "the threshold prop '< 0.1'" in text
        and "is stricter than param 'c-1_prm_threshold'" in text
    )


# ---------------------------------------------------------------- property: never FAIL→PASS

DATA = "y_true,y_pred,sex\n" + "".join(
    f"{i % 2},{1 if i < (30 if g == 'F' else 20) else 0},{g}\n" for g in "FM" for i in range(60)
)  # demographic parity difference = 30/60 - 20/60 = 1/6


def _chain(tmp: Path, cat_t: float, prof_t: float | None, cd_t: float | None) -> Path:
    write(tmp, "catalog.json", catalog(ctl("c-1", repr(cat_t))))
    modify = _set("c-1", repr(prof_t)) if prof_t is not None else {}
    write(tmp, "p.json", profile([everything()], **({"modify": modify} if modify else {})))
    ir: dict[str, Any] = {"uuid": str(uuid.uuid4()), "control-id": "c-1", "description": "d"}
    if cd_t is not None:
        ir["set-parameters"] = [_set_one("c-1", repr(cd_t))]
    comp = {"uuid": str(uuid.uuid4()), "type": "software", "title": "m", "description": "d"}
    impl = {"uuid": str(uuid.uuid4()), "source": "p.json", "description": "d"}
    comp["control-implementations"] = [{**impl, "implemented-requirements": [ir]}]
    body = {"uuid": str(uuid.uuid4()), "metadata": META, "components": [comp]}
    return write(tmp, "cd.json", {"component-definition": body})


def _verdict(policy: Path, data: Path) -> str:
    return _run(policy, data)[0]


def _run(policy: Path, data: Path) -> tuple[str, list[str]]:
    from fairpolicy.runner import check

    try:
        results = check(str(policy), str(data))
    except PolicyError:
        return "error", []
    return {0: "pass", 1: "fail"}.get(results.exit_code, "error"), list(results.warnings)


FIXTURE = HealthCheck.function_scoped_fixture
thresholds = st.sampled_from([0.05, 0.1, 0.15, 0.16, 0.17, 0.2, 0.3])


@given(
    cat_t=thresholds,
    prof_t=st.one_of(st.none(), thresholds),
    cd_t=st.one_of(st.none(), thresholds),
    which=st.sampled_from(["catalog", "profile", "cd"]),
    tighter=thresholds,
)
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_a_stricter_threshold_anywhere_never_turns_fail_into_pass(
    tmp_path: Path,
    cat_t: float,
    prof_t: float | None,
    cd_t: float | None,
    which: str,
    tighter: float,
) -> None:
    """Make one element of the chain (catalog param, profile set-parameters,
    component-definition set-parameters) stricter; the verdict may stay, get worse or
    become an error (exit 2), never go from FAIL to PASS."""
    data = tmp_path / "data.csv"
    data.write_text(DATA)
    before = _verdict(_chain(tmp_path, cat_t, prof_t, cd_t), data)
    chain = {"catalog": cat_t, "profile": prof_t, "cd": cd_t}
    old = chain[which]
    if old is None or tighter >= old:
        return
    chain[which] = tighter
    after = _verdict(_chain(tmp_path, chain["catalog"], chain["profile"], chain["cd"]), data)
    assert not (before == "fail" and after == "pass"), (chain, which, old)
    # (error → pass is legitimate: tightening a component-definition that loosened its
    # profile — an error — down to the profile's value makes the chain consistent)


@given(
    cat_t=thresholds,
    prof_t=st.one_of(st.none(), thresholds),
    cd_t=st.one_of(st.none(), thresholds),
)
@settings(max_examples=40, deadline=None, suppress_health_check=[FIXTURE])
def test_a_value_the_data_fails_is_never_loosened_silently(
    tmp_path: Path, cat_t: float, prof_t: float | None, cd_t: float | None
) -> None:
    """Oracle: the demographic parity difference of DATA is 1/6, so each threshold of the
    chain alone passes iff 1/6 < t. If any value of the chain alone fails the data, the
    run does not pass; unless that value is a catalog's (or a profile's loosened by a
    profile), and then a warning names the looser value. A component-definition never
    loosens a profile's value: that run is an error."""
    data = tmp_path / "data.csv"
    data.write_text(DATA)
    verdict, warnings = _run(_chain(tmp_path, cat_t, prof_t, cd_t), data)
    chain = [("catalog", cat_t), ("profile", prof_t), ("component-definition", cd_t)]
    present = [(k, t) for k, t in chain if t is not None]
    winner_kind, winner_t = present[-1]
    assert verdict == ("pass" if winner_t > 1 / 6 else "fail") or verdict == "error"
    for kind, t in present[:-1]:
        if t > 1 / 6 or verdict != "pass":
            continue
        assert not (kind == "profile" and winner_kind == "component-definition"), verdict
        assert any("is looser than" in w and f"{t:g}" in w for w in warnings), warnings
    if prof_t is not None and cd_t is not None and cd_t > prof_t:
        assert verdict == "error"


def test_a_profile_that_tightens_fails_what_the_catalog_passes(tmp_path: Path) -> None:
    data = tmp_path / "data.csv"
    data.write_text(DATA)
    assert _verdict(_chain(tmp_path, 0.2, None, None), data) == "pass"
    assert _verdict(_chain(tmp_path, 0.2, 0.1, None), data) == "fail"
    assert _verdict(_chain(tmp_path, 0.2, 0.1, 0.3), data) == "error"  # cd loosens profile


# ---------------------------------------------------------------- oracle: compliance-trestle


def _ours(profile_path: Path) -> dict[str, dict[str, Any]]:
    ctx = Ctx()
    controls = load_source(profile_path, ctx)
    assert not ctx.problems, [p.render() for p in ctx.problems]
    return {
        cid: {
            "params": {p: list(v.values or []) for p, v in cc.params.items()},
            "props": [(p.get("name"), p.get("value")) for p in cc.node.get("props") or []],
            "parts": sorted(_part_ids(cc.node)),
        }
        for cid, cc in controls.items()
    }


def _part_ids(node: Any) -> list[str]:
    out = []
    for part in node.get("parts") or []:
        out.append(part.get("id"))
        out += _part_ids(part)
    return out


def _trestle(directory: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    from trestle.core.catalog.catalog_interface import CatalogInterface
    from trestle.core.profile_resolver import ProfileResolver

    (directory / ".trestle").mkdir(exist_ok=True)
    monkeypatch.chdir(directory)
    resolved = ProfileResolver.get_resolved_profile_catalog(directory, str(directory / name))
    out = {}
    for c in CatalogInterface(resolved).get_all_controls_from_catalog(True):
        parts = [p for p in c.parts or [] if not p.name.startswith("trestle")]
        out[c.id] = {
            "params": {p.id: list(p.values or []) for p in c.params or []},
            "props": [(p.name, p.value) for p in c.props or []],
            "parts": sorted(_part_ids({"parts": [p.model_dump(by_alias=True) for p in parts]})),
        }
    return out


@pytest.mark.parametrize("pack", PACKS, ids=[p.name for p in PACKS])
def test_every_pack_resolves_as_trestle_resolves_it(
    pack: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for f in pack.glob("*.json"):
        shutil.copy(f, tmp_path / f.name)
    ours = _ours(tmp_path / "profile.json")
    theirs = _trestle(tmp_path, "profile.json", monkeypatch)
    assert ours == theirs


SYNTHETIC = {
    "children": lambda: profile(
        [
            {
                "href": "catalog.json",
                "include-controls": [{"with-ids": ["c-1.2"], "with-child-controls": "yes"}],
            },
        ],
        modify=_set("c-1.2.1", "0.07"),
    ),
    "exclude": lambda: profile(
        [
            {
                "href": "catalog.json",
                "include-all": {},
                "exclude-controls": [{"with-ids": ["c-10", "c-1.1"]}],
            }
        ]
    ),
    "adds": lambda: profile(
        [everything()],
        modify={
            "alters": [
                {
                    "control-id": "c-10",
                    "adds": [
                        {"position": "ending", "props": [prop("min_samples", "50")]},
                        {"position": "starting", "props": [prop("risk_id", "R-1")]},
                    ],
                }
            ]
        },
    ),
}


@pytest.mark.parametrize("name", sorted(SYNTHETIC))
def test_synthetic_profiles_resolve_as_trestle_resolves_them(
    name: str, cat: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(cat.parent, "p.json", SYNTHETIC[name]())
    ours = _ours(cat.parent / "p.json")
    theirs = _trestle(cat.parent, "p.json", monkeypatch)
    assert ours == theirs


def test_resolution_does_not_modify_the_imported_catalog(cat: Path) -> None:
    before = copy.deepcopy(_ours_catalog(cat))
    write(cat.parent, "p.json", profile([everything()], modify=_set("c-10", "0.05")))
    _ours(cat.parent / "p.json")
    assert _ours_catalog(cat) == before


def _ours_catalog(path: Path) -> dict[str, Any]:
    ctx = Ctx()
    return {k: v.params[f"{k}_prm_threshold"].values for k, v in load_source(path, ctx).items()}


def _cd(source: str, cid: str, **ir_extra: Any) -> dict[str, Any]:
    ir = {"uuid": str(uuid.uuid4()), "control-id": cid, "description": "d", **ir_extra}
    comp = {"uuid": str(uuid.uuid4()), "type": "software", "title": "m", "description": "d"}
    impl = {"uuid": str(uuid.uuid4()), "source": source, "description": "d"}
    comp["control-implementations"] = [{**impl, "implemented-requirements": [ir]}]
    body = {"uuid": str(uuid.uuid4()), "metadata": META, "components": [comp]}
    return {"component-definition": body}


def test_a_component_definition_prop_stricter_than_the_param_it_loses_to(cat: Path) -> None:
    """Issue 12, class 7: the cd's threshold prop 0.05 loses to the catalog param 0.2."""
    path = write(
        cat.parent, "cd.json", _cd("catalog.json", "c-10", props=[prop("threshold", "0.05")])
    )
    text = problems(path)
    assert "the threshold prop '< 0.05' (" in text and "cd.json, components[0]" in text
    assert "is stricter than param 'c-10_prm_threshold'" in text and ": '< 0.2' (" in text
    assert "catalog.json, catalog.controls[1].params[0]" in text


def _prop_threshold_catalog(tmp: Path) -> None:
    c = ctl("c-1")
    del c["params"]
    c["props"].append(prop("threshold", "0.2"))
    write(tmp, "catalog.json", catalog(c))


def test_a_component_definition_prop_loosening_a_catalog_prop_warns(tmp_path: Path) -> None:
    _prop_threshold_catalog(tmp_path)
    path = write(tmp_path, "cd.json", _cd("catalog.json", "c-1", props=[prop("threshold", "0.3")]))
    policy = load_policy(path)
    assert policy.controls[0].threshold.value == 0.3
    (warning,) = [w for w in policy.warnings if "looser" in w]
    assert "'< 0.3'" in warning and "'< 0.2'" in warning and "catalog.json" in warning


def test_a_component_definition_prop_loosening_a_profile_alter_is_an_error(tmp_path: Path) -> None:
    _prop_threshold_catalog(tmp_path)
    alter = {
        "control-id": "c-1",
        "removes": [{"by-name": "threshold"}],
        "adds": [{"props": [prop("threshold", "0.1")]}],
    }
    write(tmp_path, "p.json", profile([everything()], modify={"alters": [alter]}))
    path = write(tmp_path, "cd.json", _cd("p.json", "c-1", props=[prop("threshold", "0.15")]))
    text = problems(path)
    assert "may not loosen its profile's threshold" in text
    assert "p.json, modify.alters[0].adds[0]" in text
    path = write(tmp_path, "cd.json", _cd("p.json", "c-1", props=[prop("threshold", "0.05")]))
    assert load_policy(path).controls[0].threshold.value == 0.05


FORMATS = ("text", "json", "junit", "sarif", "github", "markdown", "html", "oscal")


def test_a_loosening_warning_is_in_every_report(
    cat: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """End to end: a profile loosening the catalog's threshold passes, and every output
    format carries the warning that says so (and names both files)."""
    import io

    from fairpolicy.cli import main

    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    path = write(cat.parent, "p.json", profile([everything()], modify=_set("c-10", "0.3")))
    data = tmp_path / "data.csv"
    data.write_text(DATA)
    out = tmp_path / "out"
    out.mkdir()
    argv = ["check", str(path), str(data)]
    for fmt in FORMATS:
        argv += ["-o", f"{fmt}={out / fmt}"]
    assert main(argv, io.StringIO()) == 0
    for fmt in FORMATS:
        text = (out / fmt).read_text()
        assert "is looser than" in text, fmt
        assert "p.json" in text and "catalog.json" in text, fmt


def test_a_param_id_shared_by_two_imported_catalogs_names_both(cat: Path) -> None:
    other = catalog(ctl("d-1"))
    other["catalog"]["controls"][0]["params"][0]["id"] = "c-10_prm_threshold"
    write(cat.parent, "other.json", other)
    text = problems(write(cat.parent, "p.json", profile([everything(), everything("other.json")])))
    assert "param id 'c-10_prm_threshold' is defined twice among the imported controls" in text
    assert "catalog.json, catalog.controls[1].params[0]" in text
    assert "other.json, catalog.controls[0].params[0]" in text


IDS = ["c-1", "c-1.1", "c-1.2", "c-1.2.1", "c-10"]
selection = st.fixed_dictionaries(
    {"with-ids": st.lists(st.sampled_from(IDS), min_size=1, max_size=3, unique=True)},
    optional={"with-child-controls": st.sampled_from(["yes", "no"])},
)


@given(
    include=st.one_of(st.none(), st.lists(selection, min_size=1, max_size=2)),
    exclude=st.one_of(st.none(), st.lists(selection, min_size=1, max_size=2)),
    value=st.sampled_from(["0.05", "0.1"]),
    add_at=st.sampled_from(["starting", "ending"]),
)
@settings(max_examples=30, deadline=None, suppress_health_check=[FIXTURE])
def test_random_profiles_resolve_as_trestle_resolves_them(
    cat: Path,
    monkeypatch: pytest.MonkeyPatch,
    include: list[Any] | None,
    exclude: list[Any] | None,
    value: str,
    add_at: str,
) -> None:
    imp: dict[str, Any] = {"href": "catalog.json"}
    imp |= {"include-all": {}} if include is None else {"include-controls": include}
    if exclude is not None:
        imp["exclude-controls"] = exclude
    path = write(cat.parent, "p.json", profile([imp]))
    ctx = Ctx()
    selected = list(load_source(path, ctx))
    assert not ctx.problems
    if selected:
        first, last = selected[0], selected[-1]
        modify = {
            "set-parameters": [_set_one(first, value)],
            "alters": [
                {
                    "control-id": last,
                    "adds": [{"position": add_at, "props": [prop("risk_id", "R")]}],
                }
            ],
        }
        write(cat.parent, "p.json", profile([imp], modify=modify))
    assert _ours(path) == _trestle(cat.parent, "p.json", monkeypatch)


def test_statements_are_read_with_their_parameters_inserted(tmp_path: Path) -> None:
    """A catalog control's statement reaches the reports with every ``{{ insert: param }}``
    replaced by the value the profile chain left (the profile tightened bl-3 to 0.1)."""
    import io

    from fairpolicy.cli import main

    root = Path(__file__).resolve().parents[2]
    out = tmp_path / "r.json"
    md, html = tmp_path / "r.md", tmp_path / "r.html"
    argv = [
        "check",
        str(root / "policies/binary-lending/profile.json"),
        str(root / "examples/credit/predictions.csv"),
        "--bind",
        "target=approved",
        "--bind",
        "prediction=predicted",
        "-o",
        f"json={out}",
        "-o",
        f"markdown={md}",
        "-o",
        f"html={html}",
        "--inconclusive",
        "fail",
    ]
    main(argv, stdout=io.StringIO())
    import json as _json

    desc = {f["control_id"]: f["description"] for f in _json.loads(out.read_text())["findings"]}
    assert "at least 0.8 times the highest" in desc["bl-1"]
    assert "differ by less than 0.1 between sex groups" in desc["bl-3"]  # tightened value
    assert not any("insert:" in (d or "") for d in desc.values())
    assert "insert:" not in html.read_text() and "at least 0.8 times" in html.read_text()
    assert "insert:" not in md.read_text()
