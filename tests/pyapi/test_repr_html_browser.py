"""``Results._repr_html_`` in a real browser, as a notebook shows it: the fragment inside a
page of its own, rendered by headless Chromium; the DOM it built holds the report's verdict
banner and one control row per finding with its status badge, and the report's stylesheet
stays inside the fragment (no rule reaches the page's body)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import fairpolicy
from tests.formatters.test_html_browser import CHROMIUM, chromium, png_size

CREDIT = Path(__file__).resolve().parents[2] / "examples" / "credit"


def test_scoped_stylesheet_never_styles_the_page() -> None:
    results = fairpolicy.check(str(CREDIT / "policy.yaml"), str(CREDIT / "predictions.csv"))
    html = results._repr_html_()
    css = re.search(r"<style>(.*?)</style>", html, re.S)
    assert css is not None
    for selectors in re.findall(r"([^{}]+)\{", css.group(1)):
        for sel in selectors.split(","):
            assert sel.strip().startswith(".fairpolicy-report"), sel
    assert "<html" not in html and "<body" not in html and "@media" not in html


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary on PATH")
def test_repr_html_in_chromium(tmp_path: Path) -> None:
    results = fairpolicy.check(str(CREDIT / "policy.yaml"), str(CREDIT / "predictions.csv"))
    page = tmp_path / "notebook.html"
    page.write_text(
        "<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>"
        "<p id='cell-before'>In [1]:</p>"
        f"<div class='output'>{results._repr_html_()}</div></body></html>",
        encoding="utf-8",
    )
    png = tmp_path / "nb.png"
    chromium(tmp_path, f"--screenshot={png}", "--window-size=1000,800", page.as_uri())
    assert png_size(png) == (1000, 800) and png.stat().st_size > 10_000
    dom = chromium(tmp_path, "--dump-dom", page.as_uri())
    assert f'class="verdict gate-{results.summary.gate}"' in dom
    rows = re.findall(r"<tr><td>(.*?)</td>.*?class=\"badge s-(\w+)\"", dom, re.S)
    assert [(cid, st) for cid, st in rows] == [(f.control_id, f.status) for f in results.findings]
    assert 'id="cell-before"' in dom
