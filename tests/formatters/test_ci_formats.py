"""The CI formats — ``junit``, ``sarif``, ``github``, ``markdown`` — beyond their golden files:
validity against the vendored schemas, the status → element/level mappings, hostile user
text, GitHub command round trips, and the example workflow in ``examples/ci/``."""

from __future__ import annotations

import hashlib
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

import fairpolicy
from fairpolicy.formatters import RenderOptions, _ci, get
from fairpolicy.formatters import github as gh
from fairpolicy.formatters import markdown as md
from fairpolicy.formatters import sarif as sarif_mod
from fairpolicy.results import Finding, GroupResult, Results, summarize

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "schemas"
CREDIT = (ROOT / "examples/credit/policy.yaml", ROOT / "examples/credit/predictions.csv")
DERM = (ROOT / "examples/dermatology/policy.yaml", ROOT / "examples/dermatology/predictions.csv")

#: group names, ids and texts a hostile (or careless) policy or data file could contain
HOSTILE = [
    "<script>alert(1)</script>",
    "a|b",
    '=HYPERLINK("http://evil.example","click")',
    "line1\nline2\r\nline3",
    "::error file=x.py,line=1::pwned",
    "100% %0A %25",
    "+cmd",
    "-1",
    "@SUM(A1)",
    "`tick` ```fence```",
    "x, y: z",
    "[link](http://evil.example) *bold* _em_ ~del~ \\",
]


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # paths in the outputs are relative to the working directory
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")


def _check(paths: tuple[Path, Path], **kw: Any) -> Results:
    return fairpolicy.check(str(paths[0]), str(paths[1]), deterministic=True, **kw)


@pytest.fixture(scope="module")
def credit() -> Results:
    return _check(CREDIT)


@pytest.fixture(scope="module")
def derm() -> Results:
    return _check(DERM)


@pytest.fixture(scope="module")
def variants(credit: Results, derm: Results) -> dict[str, Results]:
    """Runs that exercise every status × gate combination."""
    return {
        "credit": credit,
        "derm": derm,
        "credit-fail-on-warning": _check(CREDIT, fail_on="warning"),
        "derm-fail-on-never": _check(DERM, fail_on="never"),
        "credit-ci-upper": _check(CREDIT, bootstrap=100, decision="ci_upper"),
        "credit-ci-upper-warn": _check(
            CREDIT, bootstrap=100, decision="ci_upper", inconclusive="warn"
        ),
        "credit-ci-lower": _check(CREDIT, bootstrap=100, decision="ci_lower"),
        "hostile": hostile(credit),
    }


def hostile(base: Results) -> Results:
    """The credit run with hostile text everywhere a user can put text, and one finding of
    each status."""
    groups = [GroupResult(group=name, n=100 + i, value=0.5) for i, name in enumerate(HOSTILE)]
    text = " ".join(HOSTILE)
    statuses = ["fail", "warn", "error", "inconclusive", "pass"]
    findings: list[Finding] = []
    for i, status in enumerate(statuses):
        f = base.findings[i]
        findings.append(
            f.model_copy(
                update={
                    "control_id": f"{HOSTILE[i]}-{i}",
                    "title": text,
                    "description": text,
                    "message": f"{status}: {text}",
                    "reason": text if status in ("error", "inconclusive") else None,
                    "value": None if status in ("error", "inconclusive") else f.value,
                    "status": status,
                    "groups": groups,
                    "worst_group": HOSTILE[0],
                    "excluded_groups": [
                        e.model_copy(update={"group": HOSTILE[2], "reason": HOSTILE[3]})
                        for e in base.findings[4].excluded_groups
                    ],
                    "inputs": {**f.inputs, "dimension": "sex,race|<b>"},
                    "severity": None,
                }
            )
        )
    summary = summarize(findings, base.run.inconclusive, base.run.fail_on)
    policy = base.policy.model_copy(update={"title": text})
    return base.model_copy(
        update={
            "findings": findings,
            "summary": summary,
            "policy": policy,
            "warnings": [text, HOSTILE[4]],
        }
    )


def render(fmt: str, results: Results, **opts: Any) -> str:
    return get(fmt)(results, RenderOptions(**opts))


# ---------------------------------------------------------------- the gate rule


def test_fails_gate_agrees_with_the_exit_code(variants: dict[str, Results]) -> None:
    for name, r in variants.items():
        assert any(_ci.fails_gate(r, f) for f in r.findings) == (r.exit_code != 0), name


# ---------------------------------------------------------------- SARIF


@pytest.fixture(scope="module")
def sarif_validator() -> jsonschema.Draft4Validator:
    schema = json.loads((SCHEMAS / "sarif" / "sarif-schema-2.1.0.json").read_text("utf-8"))
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(
        schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER
    )


def _uri_ok(uri: str) -> bool:
    return not re.search(r"[\s\\<>\"{}|^`]", uri)


def test_sarif_is_valid_against_the_oasis_schema(
    variants: dict[str, Results], sarif_validator: jsonschema.Draft4Validator
) -> None:
    for name, r in variants.items():
        log = json.loads(render("sarif", r))
        errors = sorted(sarif_validator.iter_errors(log), key=str)
        assert not errors, f"{name}: {errors[0].message} at {list(errors[0].absolute_path)}"
        for result in log["runs"][0]["results"]:
            loc = result["locations"][0]["physicalLocation"]["artifactLocation"]
            assert _uri_ok(loc["uri"]), loc


def test_sarif_rules_results_and_locations(derm: Results) -> None:
    log = json.loads(render("sarif", derm))
    run = log["runs"][0]
    assert log["version"] == "2.1.0"
    driver = run["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("fairpolicy", derm.tool.version)
    assert driver["informationUri"].startswith("https://")
    rules = driver["rules"]
    assert [r["id"] for r in rules] == [f.control_id for f in derm.findings]  # one per control
    f1 = rules[0]
    assert "support-weighted F1" in f1["shortDescription"]["text"]
    assert "weighted_F1(g)" in f1["fullDescription"]["text"]  # the formula
    assert f1["help"]["text"] and f1["help"]["markdown"]

    failing = [f for f in derm.findings if f.status != "pass"]
    results = run["results"]
    assert [res["ruleId"] for res in results] == [f.control_id for f in failing]
    for res, f in zip(results, failing, strict=True):
        assert rules[res["ruleIndex"]]["id"] == f.control_id
        assert res["level"] == "error"  # fail, no severity
        assert res["kind"] == "fail"
        phys = res["locations"][0]["physicalLocation"]
        assert phys["artifactLocation"] == {
            "uri": "examples/dermatology/policy.yaml",
            "uriBaseId": "%SRCROOT%",
        }
        assert f.source is not None
        assert phys["region"]["startLine"] == f.source.line
        props = res["properties"]
        assert props["value"] == f.value
        assert props["threshold"] == f.threshold
        assert props["operator"] == f.operator
        assert props["fails_gate"] is True
        assert f.control_id in res["message"]["text"] and "violates" in res["message"]["text"]
        assert len(res["partialFingerprints"]["fairpolicyControl/v1"]) == 64
    inv = run["invocations"][0]
    assert inv["exitCode"] == 1 and inv["executionSuccessful"] is True
    assert inv["toolExecutionNotifications"][0]["message"]["text"] == derm.warnings[0]
    hashes = {a["roles"][0]: a["hashes"]["sha-256"] for a in run["artifacts"]}
    assert hashes == {"policy": derm.policy.sha256, "analysisTarget": derm.data.sha256}
    assert run["automationDetails"]["id"] == "fairpolicy/examples/dermatology/policy.yaml/"


def test_sarif_the_line_is_the_controls_line(derm: Results) -> None:
    lines = (ROOT / "examples/dermatology/policy.yaml").read_text("utf-8").splitlines()
    for res in json.loads(render("sarif", derm))["runs"][0]["results"]:
        line = res["locations"][0]["physicalLocation"]["region"]["startLine"]
        assert res["ruleId"] in lines[line - 1], (line, lines[line - 1])


def test_sarif_passes_give_no_result_but_a_rule(credit: Results) -> None:
    run = json.loads(render("sarif", credit))["runs"][0]
    assert len(run["tool"]["driver"]["rules"]) == 6
    assert [r["ruleId"] for r in run["results"]] == ["demographic-parity-sex-race"]
    warn = run["results"][0]
    assert warn["level"] == "warning"  # severity medium
    assert warn["properties"]["fails_gate"] is False
    assert run["invocations"][0]["exitCode"] == 0


@pytest.mark.parametrize(
    ("severity", "status", "level"),
    [
        ("critical", "warn", "error"),
        ("High", "fail", "error"),
        ("medium", "fail", "warning"),
        ("low", "fail", "note"),
        ("info", "warn", "note"),
        (None, "fail", "error"),
        (None, "warn", "warning"),
        ("something-else", "warn", "warning"),
        (None, "inconclusive", "error"),  # --inconclusive fail: it fails the gate
        ("low", "error", "error"),  # could not evaluate: always an error
    ],
)
def test_sarif_level_mapping(
    credit: Results, severity: str | None, status: str, level: str
) -> None:
    f = credit.findings[0].model_copy(update={"severity": severity, "status": status})
    assert sarif_mod.level(credit, f) == level


def test_sarif_inconclusive_that_does_not_gate_is_a_warning(variants: dict[str, Results]) -> None:
    r = variants["credit-ci-upper-warn"]  # --inconclusive warn
    f = r.findings[0].model_copy(update={"status": "inconclusive", "severity": None})
    assert sarif_mod.level(r, f) == "warning"


def test_sarif_paths_outside_the_working_directory(
    credit: Results, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the policy is now outside the working directory
    res = json.loads(render("sarif", credit))["runs"][0]["results"][0]
    loc = res["locations"][0]["physicalLocation"]["artifactLocation"]
    assert loc["uri"] == (ROOT / "examples/credit/policy.yaml").as_uri()
    assert "uriBaseId" not in loc


def test_sarif_policy_without_a_file(sarif_validator: jsonschema.Draft4Validator) -> None:
    policy = yaml.safe_load((ROOT / "examples/credit/policy.yaml").read_text("utf-8"))
    r = fairpolicy.check(policy, str(CREDIT[1]), deterministic=True)
    log = json.loads(render("sarif", r))
    assert not list(sarif_validator.iter_errors(log))
    for res in log["runs"][0]["results"]:
        assert res["locations"][0]["logicalLocations"][0]["name"] == res["ruleId"]


def test_sarif_error_run_is_not_successful(variants: dict[str, Results]) -> None:
    r = variants["hostile"]
    assert r.exit_code == 2
    inv = json.loads(render("sarif", r))["runs"][0]["invocations"][0]
    assert inv["exitCode"] == 2 and inv["executionSuccessful"] is False


# ---------------------------------------------------------------- JUnit


@pytest.fixture(scope="module")
def junit_schema() -> Any:
    xmlschema = pytest.importorskip("xmlschema")
    return xmlschema.XMLSchema(str(SCHEMAS / "junit" / "junit-10.xsd"))


def test_junit_is_valid_against_the_jenkins_xsd(
    variants: dict[str, Results], junit_schema: Any
) -> None:
    for name, r in variants.items():
        text = render("junit", r)
        junit_schema.validate(text)
        assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n'), name


def _cases(text: str) -> dict[str, ET.Element]:
    root = ET.fromstring(text)
    return {c.get("name", ""): c for c in root.iter("testcase")}


def _outcome(case: ET.Element) -> tuple[str, str] | None:
    for tag in ("failure", "error", "skipped"):
        node = case.find(tag)
        if node is not None:
            return tag, node.get("type", "")
    return None


def test_junit_red_exactly_when_the_gate_fails(variants: dict[str, Results]) -> None:
    for name, r in variants.items():
        root = ET.fromstring(render("junit", r))
        suite = root.find("testsuite")
        assert suite is not None
        red = int(suite.get("failures", "0")) + int(suite.get("errors", "0"))
        assert (red > 0) == (r.exit_code != 0), name
        assert root.get("tests") == suite.get("tests") == str(len(r.findings))
        cases = list(suite.iter("testcase"))
        assert len(cases) == len(r.findings)
        counted = [_outcome(c) for c in cases]
        for tag in ("failure", "error", "skipped"):
            attr = {"failure": "failures", "error": "errors", "skipped": "skipped"}[tag]
            assert suite.get(attr) == str(sum(1 for o in counted if o and o[0] == tag)), name


@pytest.mark.parametrize(
    ("variant", "expected"),
    [
        ("derm", {"fail": ("failure", "fail"), "pass": None}),
        ("derm-fail-on-never", {"fail": ("skipped", "fail"), "pass": None}),
        ("credit", {"warn": ("skipped", "warn"), "pass": None}),
        ("credit-fail-on-warning", {"warn": ("failure", "warn"), "pass": None}),
        ("credit-ci-upper", {"inconclusive": ("failure", "inconclusive")}),
        ("credit-ci-upper-warn", {"inconclusive": ("skipped", "inconclusive")}),
        ("hostile", {"error": ("error", "error")}),
    ],
)
def test_junit_status_mapping(
    variants: dict[str, Results], variant: str, expected: dict[str, Any]
) -> None:
    r = variants[variant]
    cases = list(ET.fromstring(render("junit", r)).iter("testcase"))
    seen = set()
    for case, f in zip(cases, r.findings, strict=True):
        if f.status == "inconclusive" and f.enforcement_mode == "warn":  # does not gate
            assert _outcome(case) == ("skipped", "inconclusive"), (variant, f.control_id)
        elif f.status in expected and f.enforcement_mode != "monitor":
            assert _outcome(case) == expected[f.status], (variant, f.control_id)
            seen.add(f.status)
        if f.enforcement_mode == "monitor" and f.status != "pass":  # never red
            outcome = _outcome(case)
            assert outcome is not None and outcome[0] == "skipped"
    assert seen == set(expected), variant


def test_junit_names_properties_and_times(derm: Results) -> None:
    root = ET.fromstring(render("junit", derm))
    suite = root.find("testsuite")
    assert suite is not None
    assert suite.get("name") == derm.policy.title
    assert suite.get("timestamp") == derm.run.started[:19]  # UTC, without the zone
    assert suite.get("time") == "0.000"
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["fairpolicy.version"] == derm.tool.version
    assert props["policy.sha256"] == derm.policy.sha256
    assert props["data.sha256"] == derm.data.sha256
    assert props["seed"] == str(derm.run.seed)
    assert props["exit_code"] == "1"
    case = suite.find("testcase")
    assert case is not None
    assert case.get("classname") == derm.policy.title
    assert case.get("name") == "weighted-f1-gap-site: weighted_f1_gap by site"
    assert case.get("time") == "0.000"
    failure = case.find("failure")
    assert failure is not None
    assert failure.get("message") == derm.findings[0].message
    out = case.findtext("system-out") or ""
    assert "value: 0.188954" in out and "HUSC: n=713" in out
    assert "defined at: examples/dermatology/policy.yaml:" in out
    assert (suite.findtext("system-err") or "").startswith("warning: ")


def test_junit_intersection_name_and_quiet(credit: Results) -> None:
    cases = _cases(render("junit", credit, quiet=True))
    name = "demographic-parity-sex-race: demographic_parity_diff by sex × race"
    assert name in cases
    assert cases[name].find("system-out") is not None
    passed = cases["four-fifths-sex: demographic_parity_ratio by sex"]
    assert passed.find("system-out") is None  # -q: no details for passes


def test_junit_hostile_text_round_trips(variants: dict[str, Results]) -> None:
    r = variants["hostile"]
    text = render("junit", r)
    assert "<script>" not in text
    root = ET.fromstring(text)  # well-formed
    cases = list(root.iter("testcase"))
    for case, f in zip(cases, r.findings, strict=True):
        assert case.get("name") == _ci.case_name(f)  # exact, newlines and all
        outcome = case.find("failure") if f.status == "fail" else None
        if outcome is not None:
            assert outcome.get("message") == f.message
    suite = root.find("testsuite")
    assert suite is not None and suite.get("name") == r.policy.title


def test_junit_strips_characters_xml_cannot_hold(credit: Results) -> None:
    f = credit.findings[0].model_copy(update={"control_id": "bad\x00\x07\x1bid"})
    r = credit.model_copy(update={"findings": [f]})
    case = ET.fromstring(render("junit", r)).find("testsuite/testcase")
    assert case is not None
    assert case.get("name", "").startswith("bad\ufffd\ufffd\ufffdid")


# ---------------------------------------------------------------- GitHub workflow commands


def parse_command(line: str) -> tuple[str, dict[str, str], str] | None:
    """What the Actions runner reads from a log line (``ActionCommand.TryParseV2``):
    ``::name k=v,k=v::data`` after leading whitespace, with ``%25 %0D %0A`` (and in
    properties ``%3A %2C``) decoded; None for a plain line."""
    text = line.lstrip()
    if not text.startswith("::"):
        return None
    end = text.find("::", 2)
    assert end >= 0, f"a line that starts with :: has no second :: — {line!r}"
    head, data = text[2:end], text[end + 2 :]
    name, _, rest = head.partition(" ")
    props: dict[str, str] = {}
    for pair in filter(None, rest.split(",")):
        key, sep, value = pair.partition("=")
        assert sep, pair
        props[key] = _unescape(value, prop=True)
    return name, props, _unescape(data)


def _unescape(text: str, prop: bool = False) -> str:
    if prop:
        text = text.replace("%3A", ":").replace("%2C", ",")
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def test_github_escaping_rules() -> None:
    assert gh.escape_data("100%\r\n::x") == "100%25%0D%0A::x"
    assert gh.escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    assert parse_command(gh.command("error", "m%0A\n", file="a,b:c.yaml", line=3)) == (
        "error",
        {"file": "a,b:c.yaml", "line": "3"},
        "m%0A\n",
    )


def test_github_annotations_parse_back(derm: Results) -> None:
    lines = render("github", derm).splitlines()
    commands = [c for c in map(parse_command, lines) if c is not None]
    assert commands[0][0] == "group" and commands[0][2].startswith("fairpolicy: ")
    assert ("endgroup", {}, "") in commands
    errors = [c for c in commands if c[0] == "error"]
    failing = [f for f in derm.findings if f.status == "fail"]
    assert len(errors) == len(failing)
    for (_, props, message), f in zip(errors, failing, strict=True):
        assert f.source is not None
        assert props["file"] == "examples/dermatology/policy.yaml"
        assert props["line"] == str(f.source.line)
        assert props["title"] == f"fairpolicy: {f.control_id} FAIL"
        assert message.splitlines()[0] == f.message
    warnings = [c for c in commands if c[0] == "warning"]
    assert [w[2] for w in warnings] == derm.warnings
    assert lines[-1].startswith("fairpolicy: FAIL: 6 control(s)")


def test_github_levels_follow_the_gate(variants: dict[str, Results]) -> None:
    for name, r in variants.items():
        commands = [c for c in map(parse_command, render("github", r).splitlines()) if c]
        annotations = [c for c in commands if c[0] in ("error", "warning") and "line" in c[1]]
        shown = [f for f in r.findings if f.status != "pass"]
        assert len(annotations) == len(shown), name
        for (level, _, _), f in zip(annotations, shown, strict=True):
            assert level == ("error" if _ci.fails_gate(r, f) else "warning"), (name, f.status)


def test_github_hostile_text_cannot_inject_commands(variants: dict[str, Results]) -> None:
    r = variants["hostile"]
    lines = render("github", r).splitlines()
    known = {"group", "endgroup", "error", "warning"}
    parsed = [parse_command(line) for line in lines]
    assert all(c is None or c[0] in known for c in parsed)
    annotations = [c for c in parsed if c is not None and c[0] in ("error", "warning")]
    by_title = {c[1].get("title"): c for c in annotations}
    for f in r.findings:
        if f.status == "pass":
            continue
        title = f"fairpolicy: {f.control_id} {_ci.STATUS_WORD[f.status]}"
        _, props, message = by_title[title]  # the control id survives the round trip
        assert set(props) == {"file", "line", "title"}
        assert props["file"] == "examples/credit/policy.yaml"
        assert message.splitlines()[0] == f.message.splitlines()[0]
        assert all(h in message for h in HOSTILE if "\n" not in h and "\r" not in h)
    group = parsed[0]
    assert group is not None and group[2].startswith("fairpolicy: <script>")
    # plain lines: one line each, never a command
    plain = [line for line, c in zip(lines, parsed, strict=True) if c is None]
    assert all(not line.lstrip().startswith("::") for line in plain)
    assert len(plain) == len(r.findings) + 1


def test_github_quiet_keeps_only_non_passing_lines(credit: Results) -> None:
    text = render("github", credit, quiet=True)
    assert "PASS four-fifths-sex" not in text
    assert "WARN demographic-parity-sex-race" in text


# ---------------------------------------------------------------- Markdown


@pytest.mark.parametrize(
    ("text", "escaped"),
    [
        ("a|b", "a\\|b"),
        ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
        ('=HYPERLINK("http://e","x")', '\'=HYPERLINK("http://e","x")'),
        ("+1", "'+1"),
        ("-1", "'-1"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("  =x", "'=x"),
        ("a-1", "a-1"),
        ("`code`", "\\`code\\`"),
        ("line1\nline2\r\nline3", "line1 line2 line3"),
        ("[x](http://e) *b*", "\\[x\\](http://e) \\*b\\*"),
        ("weighted_f1_gap", "weighted_f1_gap"),
        ("_em_", "\\_em\\_"),
        ("AT&T", "AT&amp;T"),
        ("back\\slash ~x~", "back\\\\slash \\~x\\~"),
    ],
)
def test_markdown_escape(text: str, escaped: str) -> None:
    assert md.escape(text) == escaped


def _split_row(line: str) -> list[str]:
    """Cells of a table row, splitting on unescaped pipes (as GFM does)."""
    inner = line.strip()[1:-1]
    return [c.strip() for c in re.split(r"(?<!\\)\|", inner)]


def test_markdown_report(derm: Results, credit: Results) -> None:
    text = render("markdown", derm)
    lines = text.splitlines()
    assert lines[0].startswith("## ❌ FAIL — fairpolicy: Dermatopathology classifier")
    assert "3 pass, 3 fail, 0 warn, 0 inconclusive, 0 error (exit 1)" in text
    header = next(line for line in lines if line.startswith("| control"))
    assert _split_row(header) == [
        "control",
        "metric",
        "value",
        "op",
        "threshold",
        "status",
        "worst group",
    ]
    assert "| weighted-f1-gap-site | weighted_f1_gap | 0.1890 | &lt; | 0.1 | ❌ FAIL |" in text
    assert "### Warnings" in text
    credit_md = render("markdown", credit)
    assert credit_md.startswith("## ✅ PASS")
    assert "⚠️ WARN" in credit_md and "✅ PASS (monitor)" in credit_md
    assert "### Excluded groups" in credit_md and "F &amp; Asian (n=52)" in credit_md


def test_markdown_ci_column_quiet_and_verbose(variants: dict[str, Results]) -> None:
    r = variants["credit-ci-upper"]
    text = render("markdown", r)
    header = next(line for line in text.splitlines() if line.startswith("| control"))
    assert "CI" in _split_row(header)
    quiet = render("markdown", r, quiet=True)
    rows = [line for line in quiet.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) - 1 == sum(1 for f in r.findings if f.status != "pass")
    verbose = render("markdown", r, verbose=True)
    assert "### Per-group values" in verbose
    assert "#### four-fifths-sex — per group of sex" in verbose
    assert "| F | 1423 | 0.5538 | [" in verbose
    assert "excluded: fewer rows than min\\_samples=100" in verbose or (
        "excluded: fewer rows than min_samples=100" in verbose
    )


def test_markdown_hostile_text_stays_inert(variants: dict[str, Results]) -> None:
    r = variants["hostile"]
    for opts in ({}, {"verbose": True}):
        text = render("markdown", r, **opts)
        assert "<" not in text and ">" not in text.replace("&gt;", "")
        assert "](" not in text.replace("\\](", "")  # no link
        lines = text.splitlines()
        tables = [line for line in lines if line.startswith("| ")]
        widths = {len(_split_row(line)) for line in tables if line.startswith("| control")}
        for line in tables:
            cells = _split_row(line)
            if line.startswith("| control") or "| ---" in line:
                continue
            if len(cells) in widths or len(cells) in (3, 4):  # control or per-group tables
                for cell in cells:
                    assert not cell.startswith(("=", "+", "@")), cell
                    assert not (cell.startswith("-") and cell[1:2].isalpha()), cell
            else:  # pragma: no cover - a broken row
                raise AssertionError(f"row with {len(cells)} cells: {line}")
        for line in lines:  # no line starts a block (list, quote, heading) from user text
            assert not line.startswith(("=", "+", "@", ">", "<", "`"))


# ---------------------------------------------------------------- example workflow


def test_example_workflow_runs_the_gate_and_uploads_everything() -> None:
    path = ROOT / "examples" / "ci" / "github-actions.yml"
    wf = yaml.safe_load(path.read_text("utf-8"))
    on = wf.get("on", wf.get(True))  # YAML 1.1 reads a bare `on` key as true
    assert "pull_request" in on
    assert wf["permissions"]["security-events"] == "write"
    (job,) = wf["jobs"].values()
    steps = job["steps"]
    # the gate is the composite Action (action.yml), from fairpolicy checked out at a SHA
    gate = next(s for s in steps if s.get("uses") == "./.fairpolicy")
    outputs = gate["with"]["outputs"].split()
    assert outputs == ["sarif=fairpolicy.sarif", "junit=fairpolicy-junit.xml"]
    for fmt in outputs:
        get(fmt.partition("=")[0])  # every format exists
    action = yaml.safe_load((ROOT / "action.yml").read_text("utf-8"))
    run_sh = (ROOT / "action" / "run.sh").read_text("utf-8")
    for always in ("json=", "html=", "markdown=", "-o github"):
        assert always in run_sh  # the reports the Action always writes
    assert any("upload-artifact@" in str(s.get("uses")) for s in action["runs"]["steps"])
    sarif = next(s for s in steps if str(s.get("uses", "")).startswith("github/codeql-action/"))
    assert sarif["uses"].startswith("github/codeql-action/upload-sarif@")
    assert "always()" in sarif["if"]
    assert sarif["with"]["sarif_file"] == "fairpolicy.sarif"
    readme = (ROOT / "examples" / "ci" / "README.md").read_text("utf-8")
    assert "github-actions.yml" in readme and "upload-sarif" in readme


# ---------------------------------------------------------------- vendored schemas


@pytest.mark.parametrize(
    "relpath", ["sarif/sarif-schema-2.1.0.json", "junit/junit-10.xsd"], ids=["sarif", "junit"]
)
def test_vendored_schemas_match_the_readme(relpath: str) -> None:
    data = (SCHEMAS / relpath).read_bytes()
    readme = (SCHEMAS / "README.md").read_text("utf-8")
    section = readme.split(f"## `{relpath}`", 1)[1].split("\n## ", 1)[0]
    assert f"| {len(data)} | `{hashlib.sha256(data).hexdigest()}` |" in section


def test_github_output_appends_the_markdown_step_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    from fairpolicy.cli import main

    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    out = io.StringIO()
    argv = ["check", "examples/dermatology/policy.yaml", "examples/dermatology/predictions.csv"]
    assert main([*argv, "-o", "github"], stdout=out) == 1
    assert out.getvalue().startswith("::group::fairpolicy: ")
    text = summary.read_text("utf-8")
    assert text.startswith("earlier step\n## ❌ FAIL — fairpolicy: ")
    assert "| weighted-f1-gap-site |" in text
