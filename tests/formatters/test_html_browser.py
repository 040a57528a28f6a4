"""The HTML report in a real browser: headless Chromium renders it to a PNG and dumps the DOM.

The DOM Chromium built (not our string) must hold every chart with one bar per
group (compared + excluded), the group labels, the whiskers of a ``--bootstrap``
run, the disparity plot of a ratio metric and the intersection heatmap's cells.
Runs the shipped examples (credit with ``--bootstrap 200``; dermatology) and an
impact-ratio policy over credit's sex × race intersection.

Skipped only when no ``chromium`` binary is on PATH; ``.ci/run`` installs Debian's.
"""

from __future__ import annotations

import io
import json
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from fairpolicy.cli import main
from tests.formatters.test_html import Dom, classes, parse

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium")

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium binary on PATH (.ci/run installs Debian's chromium)"
)

IMPACT_POLICY = [
    {
        "control-id": "impact-ratio-sex-race",
        "description": "LL144 impact ratio across sex × race",
        "props": [
            {"name": "metric_key", "value": "impact_ratio"},
            {"name": "threshold", "value": "0.8"},
            {"name": "operator", "value": ">="},
            {"name": "input.target", "value": "approved"},
            {"name": "input.prediction", "value": "predicted"},
            {"name": "input.dimension", "value": "sex,race"},
            # each cell on its own share, so the small cell shows as excluded in the heatmap
            {"name": "min_share_scope", "value": "cell"},
        ],
    }
]


def chromium(tmp: Path, *args: str) -> str:
    assert CHROMIUM is not None
    cmd = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-dev-shm-usage",
        f"--user-data-dir={tmp / 'profile'}",
        *args,
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def report(tmp: Path, name: str, policy: str, data: str, *extra: str) -> tuple[Path, Any]:
    html, js = tmp / f"{name}.html", tmp / f"{name}.json"
    argv = ["check", policy, data, "-o", f"html={html}", "-o", f"json={js}", *extra]
    main(argv, stdout=io.StringIO())
    return html, json.loads(js.read_text(encoding="utf-8"))


def in_browser(tmp: Path, html: Path) -> Dom:
    png = tmp / f"{html.stem}.png"
    chromium(tmp, f"--screenshot={png}", "--window-size=1280,4000", html.as_uri())
    assert png_size(png) == (1280, 4000)
    assert png.stat().st_size > 50_000  # something was painted, not a blank page
    dom = chromium(tmp, "--dump-dom", html.as_uri())
    assert "</html>" in dom
    return parse(dom)


def check_charts(dom: Dom, res: dict[str, Any]) -> None:
    """One bar chart and/or disparity plot per control with groups, each with one bar per
    group; labels and n under/next to every bar; the heatmap of a two-column dimension."""
    for i, f in enumerate(res["findings"], start=1):
        names = [g["group"] for g in f["groups"]] + [e["group"] for e in f["excluded_groups"]]
        charts = dom.by_id(f"c{i}-")
        assert charts, f["control_id"]
        for chart in charts:
            if chart.kind in ("bar-chart", "disparity-plot"):
                bars = chart.bars()
                assert [b["data-group"] for b in bars] == names, (f["control_id"], chart.kind)
                excluded = [b["data-group"] for b in bars if "excluded" in classes(b)]
                assert excluded == [e["group"] for e in f["excluded_groups"]]
                labels = {a["data-group"] for a in chart.marks("text", "bar-label")}
                assert labels == set(names)
                ns = [t for t in chart.text if t.startswith("n=")]
                assert len(ns) == len(names)
                with_ci = [g["group"] for g in f["groups"] if g["ci_low"] is not None]
                whiskers = [w["data-group"] for w in chart.marks("path", "whisker")]
                if chart.kind == "bar-chart":
                    assert whiskers == with_ci
        kinds = {c.kind for c in charts}
        dims = f["inputs"]["dimension"].split(",")
        if len(dims) == 2:
            [heat] = [c for c in charts if c.kind == "heatmap"]
            rows = {n.split(" & ")[0] for n in names}
            cols = {n.split(" & ")[1] for n in names}
            cells = heat.marks("rect", "cell")
            assert len(cells) == len(rows) * len(cols)
            assert {c["data-group"] for c in cells if "data-group" in c} == set(names)
        else:
            assert "heatmap" not in kinds


def test_credit_with_bootstrap_in_chromium(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    html, res = report(
        tmp_path,
        "credit",
        "examples/credit/policy.yaml",
        "examples/credit/predictions.csv",
        "--bootstrap",
        "200",
    )
    dom = in_browser(tmp_path, html)
    check_charts(dom, res)
    ids = [f["control_id"] for f in res["findings"]]
    ratio = ids.index("four-fifths-sex") + 1
    assert [c.kind for c in dom.by_id(f"c{ratio}-")] == ["bar-chart", "disparity-plot"]
    inter = ids.index("demographic-parity-sex-race") + 1
    [bars] = [c for c in dom.by_id(f"c{inter}-") if c.kind == "bar-chart"]
    assert len(bars.marks("path", "whisker")) == 6  # 8 cells, 2 excluded
    assert {b["data-group"] for b in bars.bars() if "outside" in classes(b)} == {
        "F & Black",
        "F & Hispanic",
    }
    assert "WARN" in dom.text and "PASS — every gating control passed" in dom.text


def test_dermatology_in_chromium(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    html, res = report(
        tmp_path,
        "dermatology",
        "examples/dermatology/policy.yaml",
        "examples/dermatology/predictions.csv",
    )
    dom = in_browser(tmp_path, html)
    check_charts(dom, res)
    assert "FAIL — at least one gating control failed" in dom.text
    assert sum(1 for t in dom.text if t == "FAIL") >= 3


def test_impact_ratio_heatmap_in_chromium(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    policy = tmp_path / "impact.yaml"
    policy.write_text(yaml.safe_dump(IMPACT_POLICY, sort_keys=False), encoding="utf-8")
    html, res = report(
        tmp_path, "impact", str(policy), "examples/credit/predictions.csv", "--bootstrap", "200"
    )
    dom = in_browser(tmp_path, html)
    check_charts(dom, res)
    [plot] = dom.by_id("c1-ratios")
    assert plot.kind == "disparity-plot" and plot.marks("rect", "band")
    assert plot.marks("path", "whisker")  # the group values are ratios: their intervals
    [heat] = dom.by_id("c1-heat")
    assert heat.marks("rect", "cell", "excluded") and heat.marks("rect", "cell", "outside")
