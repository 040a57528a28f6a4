"""``-o html``: one self-contained, escaped report with inline SVG charts.

Results are built in code (``finding``/``results`` below) so every chart kind is covered
without data files; the shipped examples are rendered end to end. ``parse`` is shared
with the headless-browser test, which runs the same assertions on Chromium's DOM.
"""

from __future__ import annotations

import io
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from fairpolicy.cli import main
from fairpolicy.formatters import RenderOptions, get
from fairpolicy.results import (
    ConfidenceInterval,
    DataInfo,
    ExcludedGroup,
    Finding,
    GroupResult,
    PolicyInfo,
    Results,
    RunInfo,
    Tool,
    summarize,
)

ROOT = Path(__file__).resolve().parents[2]
EVIL = '<script>alert("x")</script>'


# ---------------------------------------------------------------------------
# DOM helpers (also used by test_html_browser.py)


class Chart:
    def __init__(self, attrs: dict[str, str]) -> None:
        self.attrs = attrs
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.text: list[str] = []

    @property
    def kind(self) -> str:
        return next(c for c in classes(self.attrs) if c != "chart")

    def marks(self, tag: str, *cls: str) -> list[dict[str, str]]:
        return [a for t, a in self.elements if t == tag and set(cls) <= classes(a)]

    def bars(self) -> list[dict[str, str]]:
        return self.marks("rect", "bar")


class Dom(HTMLParser):
    """Every chart ``<svg class="chart …">`` with the elements and text inside it, plus
    every element of the page (tag, attributes) and the page text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.charts: list[Chart] = []
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.text: list[str] = []
        self._chart: Chart | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        self.elements.append((tag, a))
        if tag == "svg" and "chart" in classes(a):
            self._chart = Chart(a)
            self.charts.append(self._chart)
        elif self._chart is not None:
            self._chart.elements.append((tag, a))

    def handle_endtag(self, tag: str) -> None:
        if tag == "svg":
            self._chart = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._chart is not None:
            self._chart.text.append(data)

    def by_id(self, prefix: str) -> list[Chart]:
        return [c for c in self.charts if c.attrs.get("id", "").startswith(prefix)]


def classes(attrs: dict[str, str]) -> set[str]:
    return set(attrs.get("class", "").split())


def parse(html: str) -> Dom:
    dom = Dom()
    dom.feed(html)
    dom.close()
    return dom


# ---------------------------------------------------------------------------
# builders


def finding(
    groups: dict[str, float | None],
    *,
    metric: str = "demographic_parity_diff",
    value: float | None = None,
    threshold: float | list[float] = 0.1,
    operator: str = "<",
    status: str | None = None,
    dimension: str = "sex",
    excluded: dict[str, int] | None = None,
    ci: dict[str, tuple[float, float]] | None = None,
    cid: str = "c1",
    **kw: Any,
) -> Finding:
    vals = [v for v in groups.values() if v is not None]
    if value is None and vals:
        value = max(vals) - min(vals)
    if status is None:
        status = "pass" if value is not None and value < 0.1 else "fail"
    worst = min(groups, key=lambda g: groups[g] or 0.0) if groups else None
    return Finding(
        control_id=cid,
        title=kw.pop("title", f"{metric} control"),
        description=kw.pop("description", None),
        metric_key=metric,
        inputs={"target": "y", "prediction": "p", "dimension": dimension},
        params={},
        value=value,
        operator=operator,
        threshold=threshold,
        status=status,  # type: ignore[arg-type]
        message=f"{metric} = {value}",
        groups=[
            GroupResult(
                group=g,
                n=100 + i,
                value=v,
                ci_low=(ci or {}).get(g, (None, None))[0],
                ci_high=(ci or {}).get(g, (None, None))[1],
            )
            for i, (g, v) in enumerate(groups.items())
        ],
        excluded_groups=[
            ExcludedGroup(group=g, n=n, reason=f"fewer rows than min_samples ({n})")
            for g, n in (excluded or {}).items()
        ],
        worst_group=worst,
        classes=["0", "1"],
        counts={g: [[10, 5], [3, 12]] for g in groups if groups[g] is not None},
        **kw,
    )


def results(*findings: Finding) -> Results:
    return Results(
        tool=Tool(version="9.9.9"),
        policy=PolicyInfo(path="policy.yaml", sha256="a" * 64, title="Test policy"),
        data=DataInfo(path="data.csv", sha256="b" * 64, rows=1000, columns=["y", "p", "sex"]),
        run=RunInfo(started="2026-01-01T00:00:00+00:00", finished="2026-01-01T00:00:01+00:00"),
        summary=summarize(list(findings), "fail"),
        findings=list(findings),
    )


def render(res: Results, **opts: Any) -> str:
    return get("html")(res, RenderOptions(**opts))


def example(tmp_path: Path, name: str, *extra: str) -> str:
    out = tmp_path / f"{name}.html"
    argv = ["check", f"examples/{name}/policy.yaml", f"examples/{name}/predictions.csv"]
    main([*argv, "-o", f"html={out}", *extra], stdout=io.StringIO())
    return out.read_text(encoding="utf-8")


# ---------------------------------------------------------------------------
# the document


def test_examples_are_self_contained_and_small(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    for name in ("credit", "dermatology"):
        html = example(tmp_path, name)
        assert html.startswith("<!DOCTYPE html>")
        assert len(html.encode()) < 1_000_000
        dom = parse(html)
        tags = {t for t, _ in dom.elements}
        assert not tags & {"script", "link", "iframe", "img", "object", "embed"}
        for _, a in dom.elements:
            for key in ("src", "href"):
                assert not a.get(key, "#").strip() or a.get(key, "#").startswith("#"), a
        assert "@import" not in html and "url(http" not in html
        # every chart is accessible: role=img, a title and a desc it points to
        assert dom.charts
        for c in dom.charts:
            assert c.attrs["role"] == "img"
            ids = c.attrs["aria-labelledby"].split()
            assert [t for t, a in c.elements if a.get("id") in ids] == ["title", "desc"]


def test_header_has_verdict_counts_and_provenance() -> None:
    html = render(results(finding({"F": 0.5, "M": 0.7})))
    text = " ".join(parse(html).text)
    assert "FAIL — at least one gating control failed" in text
    assert "1 control(s): 0 pass · 1 fail" in text
    for needle in ("a" * 64, "b" * 64, "9.9.9", "2026-01-01T00:00:01+00:00", "Seed"):
        assert needle in text


def test_status_is_an_icon_and_a_word() -> None:
    fs = [
        finding({"F": 0.5, "M": 0.55}, cid="ok"),
        finding({"F": 0.5, "M": 0.7}, cid="bad"),
        finding({"F": 0.5, "M": 0.7}, cid="w", status="warn", enforcement_mode="warn"),
        finding({}, cid="inc", value=None, status="inconclusive"),
        finding({}, cid="err", value=None, status="error", reason="column missing"),
    ]
    dom = parse(render(results(*fs)))
    for status, word in [("pass", "PASS"), ("fail", "FAIL"), ("warn", "WARN"),
                         ("inconclusive", "INCONCLUSIVE"), ("error", "ERROR")]:  # fmt: skip
        badges = [a for t, a in dom.elements if t == "span" and f"s-{status}" in classes(a)]
        assert badges, status
        uses = [a for t, a in dom.elements if t == "use" and a.get("href") == f"#icon-{status}"]
        assert uses and f"icon-{status}" in {a.get("id") for _, a in dom.elements}
        assert word in dom.text


def test_user_text_is_escaped() -> None:
    f = finding(
        {EVIL: 0.4, 'F & "M"': 0.6},
        cid='id"><b>x',
        title=EVIL,
        description="<img src=x onerror=alert(1)>",
        dimension="sex,race",
        excluded={"<i>tiny</i> & x": 3},
    )
    html = render(results(f))
    assert "<script" not in html
    assert "<img" not in html and "<b>x" not in html and "<i>tiny" not in html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html
    dom = parse(html)
    bars = dom.charts[0].bars()
    assert {b["data-group"] for b in bars} == {EVIL, 'F & "M"', "<i>tiny</i> & x"}
    # chart ids never come from user text
    assert all(c.attrs["id"].startswith("c1-") for c in dom.charts)


def test_deterministic() -> None:
    res = results(finding({"F": 0.5, "M": 0.7}), finding({"A": 0.9, "B": 1.0}, cid="c2"))
    assert render(res) == render(res)


# ---------------------------------------------------------------------------
# charts


def test_gap_metric_band_and_outside_bars() -> None:
    f = finding({"A": 0.42, "B": 0.55, "C": 0.6}, excluded={"D": 5}, value=0.18)
    dom = parse(render(results(f)))
    [chart] = dom.by_id("c1-bars")
    bars = chart.bars()
    assert [b["data-group"] for b in bars] == ["A", "B", "C", "D"]
    assert classes(bars[0]) == {"bar", "outside"}  # 0.6 − 0.42 ≥ 0.1
    assert classes(bars[1]) == {"bar"}  # 0.6 − 0.55 < 0.1
    assert classes(bars[3]) == {"bar", "excluded"} and bars[3]["fill"] == "none"
    assert chart.marks("rect", "band") and chart.marks("line", "reference")
    labels = " ".join(chart.text)
    assert "outside" in labels and "excluded" in labels and "n=100" in labels
    # the fixed 0–1 axis of rates
    for tick in ("0", "0.25", "0.5", "0.75", "1"):
        assert tick in chart.text


def test_gap_band_anchors_opposite_the_worst_group() -> None:
    """For an error (MAE), the worst group is the highest: the band hangs from the lowest."""
    f = finding({"A": 4.2, "B": 6.6, "C": 4.9}, metric="mae_parity", value=2.4, threshold=2.0)
    f = f.model_copy(update={"worst_group": "B"})
    dom = parse(render(results(f)))
    [chart] = dom.by_id("c1-bars")
    assert [b["data-group"] for b in chart.bars() if "outside" in classes(b)] == ["B"]
    assert "scaled to the data" in " ".join(dom.text)


def test_ratio_metric_gets_a_log_disparity_plot() -> None:
    f = finding(
        {"F": 0.45, "M": 0.6},
        metric="demographic_parity_ratio",
        value=0.75,
        threshold=0.8,
        operator=">=",
        status="fail",
    )
    dom = parse(render(results(f)))
    [bars] = dom.by_id("c1-bars")
    [plot] = dom.by_id("c1-ratios")
    assert plot.kind == "disparity-plot"
    ratios = {b["data-group"]: float(b["data-value"]) for b in plot.bars()}
    assert ratios == pytest.approx({"F": 0.75, "M": 1.0})
    assert [b["data-group"] for b in plot.bars() if "outside" in classes(b)] == ["F"]
    assert plot.marks("rect", "band") and plot.marks("line", "parity")
    assert {"0.5", "0.8", "1", "2"} <= set(plot.text)  # log ticks, symmetric around 1
    # the rate chart shows the same rule: at least 0.8 × the highest rate
    assert [b["data-group"] for b in bars.bars() if "outside" in classes(b)] == ["F"]


def test_ratios_as_group_values_with_between_band_and_whiskers() -> None:
    f = finding(
        {"A": 1.3, "B": 0.9, "W": 1.0},
        metric="disparity_ratio",
        value=1.3,
        threshold=[0.8, 1.25],
        operator="between",
        status="fail",
        ci={"A": (1.1, 1.5), "B": (0.8, 1.0), "W": (1.0, 1.0)},
    )
    dom = parse(render(results(f)))
    assert not dom.by_id("c1-bars")  # the group values are the ratios: one plot
    [plot] = dom.by_id("c1-ratios")
    assert [b["data-group"] for b in plot.bars() if "outside" in classes(b)] == ["A"]
    assert len(plot.marks("path", "whisker")) == 3
    assert "allowed: 0.8 ≤ ratio ≤ 1.25" in " ".join(plot.text)


def test_whiskers_on_bars() -> None:
    f = finding({"F": 0.5, "M": 0.55}, ci={"F": (0.45, 0.56), "M": (0.5, 0.6)})
    [chart] = parse(render(results(f))).by_id("c1-bars")
    assert [w["data-group"] for w in chart.marks("path", "whisker")] == ["F", "M"]


def test_level_metric_draws_the_threshold() -> None:
    f = finding(
        {"A": 300.0, "B": 20.0}, metric="group_size", value=20.0, threshold=100.0, operator=">="
    )
    dom = parse(render(results(f)))
    [chart] = dom.by_id("c1-bars")
    assert chart.marks("line", "threshold")
    assert [b["data-group"] for b in chart.bars() if "outside" in classes(b)] == ["B"]
    assert "fails the threshold" in " ".join(dom.text)


def test_aggregate_value_draws_no_threshold_on_bars() -> None:
    """A mean over classes is not the spread of the bars: no band, and the caption says so."""
    f = finding({"F": 0.62, "M": 0.52}, metric="macro_equal_opportunity_multiclass", value=0.05)
    dom = parse(render(results(f)))
    [chart] = dom.by_id("c1-bars")
    assert not chart.marks("rect", "band") and not chart.marks("line", "reference")
    assert "applies to the control's value" in " ".join(dom.text)


def test_intersection_heatmap() -> None:
    f = finding(
        {"F & Black": 0.44, "F & White": 0.6, "M & Black": 0.55, "M & White": 0.62},
        dimension="sex,race",
        excluded={"F & Asian": 52, "M & Asian": 71},
        value=0.18,
    )
    dom = parse(render(results(f)))
    [heat] = dom.by_id("c1-heat")
    cells = heat.marks("rect", "cell")
    assert len(cells) == 6  # 2 sexes × 3 races
    assert {c["data-group"] for c in heat.marks("rect", "cell", "excluded")} == {
        "F & Asian",
        "M & Asian",
    }
    assert [c["data-group"] for c in heat.marks("rect", "cell", "outside")] == ["F & Black"]
    assert {"F", "M"} <= set(heat.text) and {"Black", "White", "Asian"} <= set(heat.text)
    assert "n=52" in heat.text and "excluded" in heat.text


def test_heatmap_marks_missing_combinations() -> None:
    f = finding({"F & A": 0.5, "M & B": 0.55}, dimension="sex,race")
    [heat] = parse(render(results(f))).by_id("c1-heat")
    assert len(heat.marks("rect", "cell")) == 4
    assert len(heat.marks("rect", "cell", "missing")) == 2


def test_one_column_dimension_has_no_heatmap() -> None:
    assert not parse(render(results(finding({"F": 0.5, "M": 0.6})))).by_id("c1-heat")


def test_numbers_also_in_a_table_and_counts_in_the_appendix() -> None:
    f = finding({"F": 0.5, "M": 0.55}, ci={"F": (0.45, 0.56), "M": (0.5, 0.6)})
    f = f.model_copy(
        update={
            "ci": ConfidenceInterval(
                low=0.01,
                high=0.09,
                level=0.95,
                method="percentile",
                resamples=200,
                seed=7,
                valid=200,
            )
        }
    )
    html = render(results(f))
    text = " ".join(parse(html).text)
    assert "0.5000" in text and "[0.4500, 0.5600]" in text
    assert "95 % CI [0.01, 0.09]" in text and "200 resamples" in text
    assert "Multinomial" in text  # the bootstrap method note
    # appendix: one 2×2 table per group, with the class labels
    assert text.count("true ↓ / predicted →") == 2


def test_error_and_inconclusive_controls_render_without_charts() -> None:
    err = finding({}, value=None, status="error", reason="column 'y' missing")
    inc = finding(
        {"F": None}, cid="c2", value=None, status="inconclusive", excluded={"M": 3}, reason="few"
    )
    dom = parse(render(results(err, inc)))
    assert not dom.charts
    assert "column 'y' missing" in " ".join(dom.text)


def test_quiet_details_only_what_did_not_pass() -> None:
    res = results(finding({"F": 0.5, "M": 0.55}), finding({"F": 0.4, "M": 0.6}, cid="c2"))
    dom = parse(render(res, quiet=True))
    sections = [a["id"] for t, a in dom.elements if t == "section" and "control" in classes(a)]
    assert sections == ["c2"]
    assert "c1" in dom.text  # still listed in the summary table
