"""Results in Python and notebooks (issue 15): repr, passed, _repr_html_, to_frame,
groups_frame, render and write agree with the one decision the results hold, for any data.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fairpolicy
from fairpolicy.errors import FairpolicyError, UsageError
from fairpolicy.formatters import FORMATS
from fairpolicy.present import load_results
from fairpolicy.results import Results
from tests.helpers import control, write_policy

CREDIT = Path(__file__).resolve().parents[2] / "examples" / "credit"


@pytest.fixture(scope="module")
def credit() -> Results:
    return fairpolicy.check(
        str(CREDIT / "policy.yaml"), str(CREDIT / "predictions.csv"), deterministic=True
    )


@st.composite
def runs(draw: st.DrawFn) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """Two to four groups of 1-30 rows with random labels, and 1-4 controls whose thresholds
    and modes make every status and gate reachable."""
    groups = draw(st.lists(st.sampled_from("ABCD"), min_size=2, max_size=4, unique=True))
    rows = []
    for g in groups:
        n = draw(st.integers(1, 30))
        for _ in range(n):
            rows.append(
                {"y_true": draw(st.integers(0, 1)), "y_pred": draw(st.integers(0, 1)), "sex": g}
            )
    controls = []
    for i in range(draw(st.integers(1, 4))):
        metric = draw(
            st.sampled_from(["demographic_parity_diff", "equal_opportunity_diff", "accuracy_diff"])
        )
        controls.append(
            control(
                f"c{i}",
                metric,
                threshold=str(draw(st.sampled_from([0.01, 0.05, 0.2, 0.5, 0.99]))),
                operator=draw(st.sampled_from(["<", "<="])),
                enforcement_mode=draw(st.sampled_from(["block", "warn", None])),
                min_samples=draw(st.sampled_from([None, 5])),
            )
        )
    return pd.DataFrame(rows), controls


def _statuses_in_html(html: str) -> list[str]:
    return re.findall(r'class="badge s-(\w+)"', html)


class _Wellformed(HTMLParser):
    VOID: ClassVar[set[str]] = {
        "meta",
        "br",
        "hr",
        "img",
        "input",
        "link",
        "use",
        "path",
        "circle",
        "rect",
    }

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: Any) -> None:
        pass

    def handle_endtag(self, tag: str) -> None:
        if tag in self.VOID:
            return
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes {self.stack[-1:]}"
        self.stack.pop()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(runs())
def test_every_view_agrees_with_the_decision(tmp_path_factory: Any, run: Any) -> None:
    """Whatever the data and controls: ``passed``, the repr, the notebook HTML, the frames and
    every rendered format say what the results decided, and the per-group counts in
    ``groups_frame`` recompute the per-group rates."""
    frame, controls = run
    tmp = tmp_path_factory.mktemp("p")
    results = fairpolicy.check(str(write_policy(tmp, *controls)), frame, deterministic=True)
    gate = results.summary.gate
    assert results.passed is (gate == "pass") is (results.exit_code == 0)

    # repr: short, the gate, every control that did not pass and no passing one
    text = repr(results)
    assert len(text) < 3000 and f"{gate.upper()} (exit {results.exit_code})" in text
    for f in results.findings:
        listed = re.search(rf"^\s+\S+\s+{re.escape(f.control_id)}: ", text, re.M) is not None
        assert listed is (f.status != "pass"), (f.control_id, f.status, text)

    # notebook view: the report's banner for this gate, one badge per control, in order
    html = results._repr_html_()
    assert f'class="verdict gate-{gate}"' in html
    assert _statuses_in_html(html) == [f.status for f in results.findings]
    checker = _Wellformed()
    checker.feed(html)
    assert checker.stack == []

    table = results.to_frame()
    assert list(table["control_id"]) == [f.control_id for f in results.findings]
    assert list(table["status"]) == [f.status for f in results.findings]
    assert list(table["gate_effect"]) == [f.gate_effect for f in results.findings]
    for value, f in zip(table["value"], results.findings, strict=True):
        assert (f.value is None and pd.isna(value)) or value == f.value

    groups = results.groups_frame()
    compared = groups[groups["excluded"].isna()]
    for f in results.findings:
        mine = compared[compared["control_id"] == f.control_id]
        assert sorted(mine["group"]) == sorted(g.group for g in f.groups)
        assert int(table.loc[table["control_id"] == f.control_id, "n"].iloc[0]) == mine["n"].sum()
        for _, row in mine.iterrows():
            cells = [row[f"count[{t}→{p}]"] for t in ("0", "1") for p in ("0", "1")]
            assert sum(cells) == row["n"]  # the counts are the group's rows
            if f.metric_key == "demographic_parity_diff" and row["value"] is not None:
                assert row["value"] == pytest.approx((cells[1] + cells[3]) / row["n"])

    # every format renders, and the machine formats carry the same verdict
    doc = json.loads(results.render("json"))
    assert doc["summary"]["gate"] == gate
    assert [f["status"] for f in doc["findings"]] == [f.status for f in results.findings]
    junit = ET.fromstring(results.render("junit"))
    failures = len(junit.findall(".//failure")) + len(junit.findall(".//error"))
    assert (failures == 0) is (results.summary.fail + results.summary.error == 0) or gate != "pass"


def test_repr_is_short_and_the_pydantic_dump_is_gone(credit: Results) -> None:
    text = repr(credit)
    assert text.startswith("<fairpolicy Results: PASS (exit 0) · 6 control(s): 5 pass, 1 warn")
    assert "demographic-parity-sex-race" in text and "four-fifths-sex" not in text
    assert len(text) < 500 and str(credit) == text


def test_render_and_write_every_cli_format(
    credit: Results, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every -o format the CLI has renders from Python to the bytes the CLI writes for the
    same results, and ``write`` writes what ``render`` returns (oscal-ssp with its profile
    beside it, as the CLI does)."""
    import os
    import subprocess
    import sys

    def name_of(fmt: str, who: str) -> Path:
        return tmp_path / f"{who}-{fmt}.{'json' if fmt.startswith(('json', 'oscal')) else 'out'}"

    outs = [a for fmt in FORMATS for a in ("-o", f"{fmt}={name_of(fmt, 'cli')}")]
    src = str(Path(fairpolicy.__file__).parents[1])
    proc = subprocess.run(
        [sys.executable, "-m", "fairpolicy", "check", str(CREDIT / "policy.yaml"),
         str(CREDIT / "predictions.csv"), "--deterministic", *outs],
        capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": src},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    monkeypatch.chdir(tmp_path)  # paths in the reports are written relative to the run's folder
    same = load_results(str(name_of("json", "cli")))
    for fmt in FORMATS:
        cli = name_of(fmt, "cli").read_text()
        py = name_of(fmt, "py")
        assert same.write(fmt, py) == str(py)
        # the CLI's file names its sibling outputs (ap_href, results_href): strip hrefs
        strip = re.compile(r"(cli|py)-[\w-]+\.(out|json)")
        assert strip.sub("X", py.read_text()) == strip.sub("X", cli) or fmt.startswith("oscal"), fmt
        if fmt not in ("oscal-ssp",):
            assert same.render(fmt, path=str(py)) == py.read_text(), fmt
    assert sorted(p.name for p in tmp_path.glob("py-oscal-ssp*")) == [
        "py-oscal-ssp.catalog.json", "py-oscal-ssp.json", "py-oscal-ssp.profile.json"
    ]  # fmt: skip
    assert load_results(str(name_of("json", "py"))).summary == credit.summary


def test_render_refuses_unknown_formats_and_options(credit: Results, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"unknown output format 'htm'.*Did you mean 'html'"):
        credit.render("htm")
    with pytest.raises(UsageError, match=r"unknown option 'verbos'.*Did you mean 'verbose'"):
        credit.render("text", verbos=True)
    with pytest.raises(FairpolicyError, match=r"folder|directory"):
        credit.write("json", tmp_path)  # a folder is not a file
    assert list(tmp_path.iterdir()) == []


def test_frames_columns(credit: Results) -> None:
    table = credit.to_frame()
    assert list(table.columns[:10]) == [
        "control_id", "metric", "value", "operator", "threshold", "status",
        "gate_effect", "worst_group", "n", "ci_low",
    ]  # fmt: skip
    assert len(table) == 6 and table["n"].dtype == "int64"
    groups = credit.groups_frame()
    assert set(groups["control_id"]) == set(table["control_id"])
    assert str(groups["count[1→1]"].dtype) == "Int64"


def test_undefined_values_are_none_not_numbers(tmp_path: Path) -> None:
    """A control whose value is undefined (a group with no positives for equal opportunity)
    is None in the frame and null in the JSON, never NaN."""
    csv = tmp_path / "d.csv"
    csv.write_text("y_true,y_pred,sex\n0,1,A\n0,0,A\n1,1,B\n0,0,B\n")
    pol = write_policy(tmp_path, control("c1", "equal_opportunity_diff", threshold="0.1"))
    results = fairpolicy.check(str(pol), str(csv))
    f = results.findings[0]
    assert f.value is None and f.status != "pass" and not results.passed
    assert results.to_frame()["value"].iloc[0] is None
    assert "NaN" not in results.render("json")
    assert f.control_id in repr(results)


def test_dir_lists_the_public_names() -> None:
    names = dir(fairpolicy)
    for name in fairpolicy.__all__:
        assert name in names
        assert getattr(fairpolicy, name) is not None
    assert "TYPE_CHECKING" not in names and "Any" not in names


def test_a_check_against_a_baseline_returns_the_public_results(tmp_path: Path) -> None:
    """The comparison copies the run's results: ``fairpolicy.check(..., baseline=...)``
    returned the bare model before, without render, write, to_frame or its repr."""
    credit = Path(__file__).resolve().parents[2] / "examples" / "credit"
    first = fairpolicy.check(credit / "policy.yaml", credit / "predictions.csv")
    first.write("json", tmp_path / "base.json")
    again = fairpolicy.check(
        credit / "policy.yaml", credit / "predictions.csv", baseline=tmp_path / "base.json"
    )
    assert type(again) is fairpolicy.Results
    assert again.baseline is not None and "control" in again.render("text")
    assert "fairpolicy Results" in repr(again)


# ---------------------------------------------------------------- issue 27 item 7


def _cells(html: str) -> list[tuple[str, str]]:
    """(text-align, text) of every body cell of a frame's notebook table."""
    body = html.split("<tbody>")[1]
    return re.findall(r'<td style="text-align:(\w+)[^"]*">([^<]*)</td>', body)


def test_frames_in_a_notebook_align_text_left_and_mark_no_value_once(tmp_path: Path) -> None:
    csv = tmp_path / "d.csv"
    csv.write_text("y_true,y_pred,sex\n0,1,A\n0,0,A\n1,1,B\n0,0,B\n")
    pol = write_policy(
        tmp_path,
        control("c1", "equal_opportunity_diff", threshold="0.1"),
        control("c2", "demographic_parity_diff", threshold="0.9"),
    )
    results = fairpolicy.check(str(pol), str(csv))
    for frame in (results.to_frame(), results.groups_frame()):
        assert isinstance(frame, pd.DataFrame)
        html = frame._repr_html_()
        cells = _cells(html)
        columns = list(frame.columns)
        per_row = len(columns)
        assert len(cells) == per_row * len(frame)
        for i, (align, text) in enumerate(cells):
            column = columns[i % per_row]
            value = frame[column].iloc[i // per_row]
            if column in ("control_id", "metric", "status", "reason", "group", "excluded"):
                assert align == "left", (column, text)
            if column in ("n", "ci_low", "ci_high"):
                assert align == "right", (column, text)
            if value is None or (not isinstance(value, list) and pd.isna(value)):
                assert text == "—", (column, value, text)
        assert "NaN" not in html and "None" not in html and "&lt;NA&gt;" not in html
    # a frame stays a DataFrame: operations give plain pandas objects, data unchanged
    table = results.to_frame()
    assert table["value"].iloc[0] is None and type(table.head()) is pd.DataFrame
    assert table["worst_group"].iloc[0] is None  # no worst group: None, not ""


def test_the_notebook_control_table_marks_no_value_once(tmp_path: Path) -> None:
    csv = tmp_path / "d.csv"
    csv.write_text("y_true,y_pred,sex\n0,1,A\n0,0,A\n1,1,B\n0,0,B\n" * 20)
    pol = write_policy(
        tmp_path,
        control("c1", "equal_opportunity_diff", threshold="0.1", ci="50"),
        control("c2", "demographic_parity_diff", threshold="0.9"),
    )
    html = fairpolicy.check(str(pol), str(csv))._repr_html_()
    rows = html.split('<table class="summary">')[1].split("</table>")[0].split("<tr>")[2:]
    for row in rows:
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
        assert "" not in cells, row  # a missing CI or worst group is "—", never blank
