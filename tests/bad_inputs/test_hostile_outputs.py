"""Hostile user text, end to end: a CSV whose group names and a policy whose control ids,
titles and descriptions are markup, spreadsheet formulas, CI workflow commands and line
breaks, through ``check`` and every formatter. Each output must stay inert (escaped) and
still validate (SARIF and JUnit schemas, the NIST OSCAL schema, strict JSON).

The formatter unit tests (tests/formatters) feed hostile text into a hand-built Results;
this file proves the same holds for text that arrives through the CSV reader and the
policy loader. fairpolicy writes no CSV; the one spreadsheet-adjacent format, Markdown,
prefixes a cell that starts with = + - @ (tab, CR) with ``'``.
"""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

import fairpolicy
from fairpolicy.cli import main
from fairpolicy.formatters import FORMATS, RenderOptions, get
from fairpolicy.oscal_schema import validate_document
from fairpolicy.results import Results
from tests.formatters.test_ci_formats import parse_command
from tests.formatters.test_html import parse

ROOT = Path(__file__).resolve().parents[2]

GROUPS = [
    "<script>alert(1)</script>",
    '=HYPERLINK("http://evil.example","y")',
    "a|b",
    "::error file=x::pwned",
    "line1\nline2",
    "cr\rreturn",
    "+cmd",
    "@SUM(A1)",
    "-2+3",
    "100% %0A done",
    "\x1b[31mred\x1b[0m",
    "\u202eevil",
    "`tick` *b* [l](http://evil.example)",
]
TITLE = '<img src=x onerror=alert(1)> =cmd|" /C calc"!A0 ::warning::t'
DESCRIPTION = "desc\n::error::injected\n| x | y |"


def csv_field(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    tmp = tmp_path_factory.mktemp("hostile")
    lines = ["y_true,y_pred,sex"]
    for g_i, g in enumerate(GROUPS):
        lines += [f"{i % 2},{1 if i < 10 + g_i else 0},{csv_field(g)}" for i in range(40)]
    data = tmp / "data.csv"
    data.write_text("\n".join(lines) + "\n")

    def control(cid: str, metric: str, threshold: str) -> dict[str, Any]:
        props = {
            "metric_key": metric,
            "threshold": threshold,
            "operator": "<",
            "input.target": "y_true",
            "input.prediction": "y_pred",
            "input.dimension": "sex",
        }
        return {
            "control-id": cid,
            "title": TITLE,
            "description": DESCRIPTION,
            "props": [{"name": k, "value": v} for k, v in props.items()],
        }

    controls = [
        control("dp-gap", "demographic_parity_diff", "0.1"),  # fails
        control("acc-gap", "accuracy_diff", "0.9"),  # passes
        control("ll144", "impact_ratio", "0.99"),  # every group in the LL144 summary
    ]
    token = tmp / "policy.yaml"
    token.write_text(yaml.safe_dump(controls))
    evil = tmp / "evil-ids.yaml"
    controls[0]["control-id"] = "<b>x</b>|::error::id\n=1+1"
    evil.write_text(yaml.safe_dump(controls))
    return token, evil, data


@pytest.fixture(scope="module")
def runs(hostile: tuple[Path, Path, Path]) -> dict[str, Results]:
    token, evil, data = hostile
    return {
        "token-ids": fairpolicy.check(token, data, deterministic=True),
        "hostile-ids": fairpolicy.check(evil, data, deterministic=True),
    }


def render(fmt: str, r: Results, **opts: Any) -> str:
    return get(fmt)(r, RenderOptions(deterministic=True, **opts))


def test_the_hostile_groups_arrive_intact(runs: dict[str, Results]) -> None:
    r = runs["token-ids"]
    assert r.exit_code == 1
    names = {g.group for g in r.findings[0].groups}
    assert names == set(GROUPS)  # nothing trimmed, unescaped or merged on the way in


@pytest.mark.parametrize("fmt", [f for f in FORMATS if not f.startswith("oscal")])
@pytest.mark.parametrize("run", ["token-ids", "hostile-ids"])
@pytest.mark.parametrize("verbose", [False, True])
def test_every_format_renders(fmt: str, run: str, verbose: bool, runs: dict[str, Results]) -> None:
    text = render(fmt, runs[run], verbose=verbose)
    if fmt in ("json", "sarif"):  # data: JSON escapes controls; the text is kept exactly
        assert "\x1b" not in text and "\\u001b" in text
        return
    assert "\x1b" not in text and "\u202e" not in text  # shown as \x1b, \u202e
    # (JUnit: XML 1.0 cannot hold ESC, so U+FFFD; Markdown escapes the backslash too)
    assert re.search(r"(x1b|\ufffd)\\?\[31mred", text) and "u202eevil" in text


def test_text_has_one_line_per_item(runs: dict[str, Results]) -> None:
    for r in runs.values():
        text = render("text", r, verbose=True)
        assert not re.search("[\x00-\x08\x0b-\x1f\x7f\u202e]", text)
        for g in GROUPS:
            shown = g.replace("\n", "\\n").replace("\r", "\\r").replace("\x1b", "\\x1b")
            assert shown.replace("\u202e", "\\u202e") in text
        verdicts = [line for line in text.splitlines() if re.match(r"^(PASS|FAIL|ERROR):", line)]
        assert len(verdicts) == 1  # no group name forged a second verdict line


def test_html_is_inert(runs: dict[str, Results]) -> None:
    for r in runs.values():
        html = render("html", r, verbose=True)
        assert "<script>alert" not in html and "<img" not in html and "<b>x" not in html
        dom = parse(html)
        assert not [a for t, a in dom.elements if t in ("script", "img", "iframe")]
        assert not [a for _, a in dom.elements if any(k.startswith("on") for k in a)]
        assert "<script>alert(1)</script>" in "".join(dom.text)  # shown as text


def _cells(line: str) -> list[str]:
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip()[1:-1])]


def test_markdown_is_inert(runs: dict[str, Results]) -> None:
    for r in runs.values():
        for verbose in (False, True):
            md = render("markdown", r, verbose=verbose)
            assert "<script" not in md and "<img" not in md and "<b>" not in md
            assert "](" not in md.replace("\\](", "")
            tables: dict[int, int] = {}
            for line in md.splitlines():
                assert not line.startswith(("::", "=", "+", "@", "<")), line
                if line.startswith("| "):
                    cells = _cells(line)
                    for cell in cells:
                        assert not cell.startswith(("=", "+", "@", "\t", "\r")), cell
                        assert not re.match(r"-[^\d\s-]", cell) and not cell.startswith("-2+"), cell
                    tables.setdefault(len(cells), 0)
                    tables[len(cells)] += 1
            # every row of a table has the header's number of cells: no pipe broke a row
            header_widths = {
                len(_cells(line)) for line in md.splitlines() if line.startswith("| control")
            }
            assert header_widths <= set(tables)


def test_github_commands_cannot_be_injected(runs: dict[str, Results]) -> None:
    for r in runs.values():
        lines = render("github", r).splitlines()
        for line in lines:
            cmd = parse_command(line)
            if cmd is None:
                assert not line.lstrip().startswith("::")
                continue
            name, props, _ = cmd
            assert name in {"group", "endgroup", "error", "warning", "notice"}, line
            assert set(props) <= {"file", "line", "title"}, line


def test_sarif_validates_and_round_trips(runs: dict[str, Results]) -> None:
    schema = json.loads((ROOT / "schemas/sarif/sarif-schema-2.1.0.json").read_text("utf-8"))
    validator = jsonschema.Draft4Validator(schema)
    for r in runs.values():
        log = json.loads(render("sarif", r), parse_constant=_no_constant)
        errors = list(validator.iter_errors(log))
        assert not errors, errors[0].message
        text = json.dumps(log)
        assert "evil.example" not in text or "HYPERLINK" in text  # data, never a link field


def test_junit_validates_and_round_trips(runs: dict[str, Results]) -> None:
    xmlschema = pytest.importorskip("xmlschema")
    schema = xmlschema.XMLSchema(str(ROOT / "schemas/junit/junit-10.xsd"))
    for r in runs.values():
        text = render("junit", r, verbose=True)
        schema.validate(text)
        root = ET.fromstring(text)
        assert "<script>" not in text
        names = [c.get("name", "") for c in root.iter("testcase")]
        assert any(r.findings[0].control_id in n for n in names)


def _no_constant(name: str) -> None:
    raise AssertionError(f"{name} in JSON")


def test_json_is_strict_and_round_trips(runs: dict[str, Results]) -> None:
    for r in runs.values():
        doc = json.loads(render("json", r), parse_constant=_no_constant)
        assert {g["group"] for g in doc["findings"][0]["groups"]} == set(GROUPS)
        assert doc["findings"][0]["control_id"] == r.findings[0].control_id


def test_oscal_validates_with_hostile_text(runs: dict[str, Results]) -> None:
    r = runs["token-ids"]
    for fmt, model in (("oscal", "assessment-results"), ("oscal-ap", "assessment-plan")):
        doc = json.loads(render(fmt, r), parse_constant=_no_constant)
        assert validate_document(doc, model) == []
        assert TITLE.split()[0] in json.dumps(doc)  # kept as data


def test_oscal_refuses_a_hostile_control_id_and_writes_nothing(
    hostile: tuple[Path, Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, evil, data = hostile
    previous = tmp_path / "report.json"
    previous.write_text("previous\n")
    code = main(
        [
            "check",
            str(evil),
            str(data),
            "-o",
            f"json={previous}",
            "-o",
            f"oscal={tmp_path / 'ar.json'}",
        ],
        io.StringIO(),
    )
    assert code == 2
    assert "control-id" in capsys.readouterr().err
    assert previous.read_text() == "previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]
