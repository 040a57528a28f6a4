"""The gate is decided in one place (``results.gate_effect``) and every output renders it.

For every status × decision rule × enforcement mode × ``--inconclusive`` × ``--fail-on``
combination: the table's answer obeys the product's rules (an interval-based rule never
passes without an interval; a stricter option never loosens the gate; …), and the exit
code, text, JSON, JUnit, SARIF, GitHub, Markdown, HTML and OSCAL all say the same thing.
"""

from __future__ import annotations

import itertools
import json
import re
import xml.etree.ElementTree as ET
from functools import cache
from pathlib import Path
from typing import Any

import pytest

import fairpolicy
from fairpolicy.formatters import RenderOptions, get
from fairpolicy.results import ConfidenceInterval, Finding, Results, gate_effect

ROOT = Path(__file__).resolve().parents[1]
CREDIT = (ROOT / "examples/credit/policy.yaml", ROOT / "examples/credit/predictions.csv")

KINDS = [
    "pass",
    "violation",  # status fail on a block control, warn on a warn/monitor one
    "straddle",  # an interval was computed and straddles the threshold
    "no-interval",  # an interval rule asked for one, none was computed
    "undefined-interval",  # the bootstrap ran but gave no interval (too many undefined)
    "no-value",  # the metric is undefined
    "error",
]
DECISIONS = ["point", "ci_upper", "ci_lower"]
MODES = ["block", "warn", "monitor"]
INCONCLUSIVE = ["pass", "warn", "fail"]
FAIL_ON = ["never", "error", "warning"]  # from loosest to strictest
RANK = {"pass": 0, "warn": 1, "fail": 2, "error": 3}

COMBOS = list(itertools.product(KINDS, DECISIONS, MODES, INCONCLUSIVE, FAIL_ON))


def _interval(low: float | None, high: float | None) -> ConfidenceInterval:
    return ConfidenceInterval(
        low=low,
        high=high,
        level=0.95,
        method="percentile",
        resamples=200,
        seed=7,
        valid=200 if low is not None else 150,
        reason=None if low is not None else "more than 5% of the replicates were undefined",
    )


def _finding(base: Finding, kind: str, decision: str, mode: str) -> Finding:
    """``base`` turned into a finding of one kind (a ``< 0.1`` control)."""
    value: float | None = 0.05
    ci: ConfidenceInterval | None = _interval(0.02, 0.08) if decision != "point" else None
    status = "pass"
    reason: str | None = None
    if kind == "violation":
        value, status = 0.2, "fail" if mode == "block" else "warn"
        ci = _interval(0.15, 0.25) if decision != "point" else None
    elif kind == "straddle":
        value, status, ci = 0.09, "inconclusive", _interval(0.05, 0.15)
        reason = "the interval straddles the threshold"
    elif kind == "no-interval":
        status, ci, reason = "inconclusive", None, "no interval was computed"
    elif kind == "undefined-interval":
        status, ci = "inconclusive", _interval(None, None)
        reason = "more than 5% of the replicates were undefined"
    elif kind == "no-value":
        value, status, reason = None, "inconclusive", "fewer than two groups"
    elif kind == "error":
        value, status, ci, reason = None, "error", None, "column 'sex' not found"
    return base.model_copy(
        update={
            "value": value,
            "status": status,
            "ci": ci,
            "decision": decision,
            "reason": reason,
            "message": f"{kind} under {decision}",
            "enforcement_mode": mode,
            "gating": mode == "block",
            "threshold": 0.1,
            "operator": "<",
            "gate_effect": "pass",  # stale on purpose: Results must decide it again
        }
    )


@cache
def _base() -> Results:
    return fairpolicy.check(str(CREDIT[0]), str(CREDIT[1]), deterministic=True)


def _results(kind: str, decision: str, mode: str, inc: str, fail_on: str) -> Results:
    base = _base()
    f = _finding(base.findings[0], kind, decision, mode)
    run = base.run.model_copy(update={"inconclusive": inc, "fail_on": fail_on})
    return Results(
        tool=base.tool,
        policy=base.policy,
        data=base.data,
        run=run,
        summary=base.summary,  # stale on purpose: Results must summarise again
        findings=[f],
    )


def test_every_cell_of_the_table_follows_the_rules() -> None:
    for kind, decision, mode, inc, fail_on in COMBOS:
        res = _results(kind, decision, mode, inc, fail_on)
        f = res.findings[0]
        e = f.gate_effect
        cell = (kind, decision, mode, inc, fail_on, e)
        assert e == gate_effect(f, inc, fail_on), cell  # type: ignore[arg-type]
        assert res.summary.gate == {"pass": "pass", "warn": "pass"}.get(e, e), cell
        if kind == "error":
            assert e == "error" and res.exit_code == 2, cell
            continue
        assert e != "error", cell
        if kind == "pass" or mode == "monitor" or fail_on == "never":
            assert e != "fail", cell  # nothing to fail, a monitor never gates, --fail-on never
        if kind == "violation" and mode == "block" and fail_on != "never":
            assert e == "fail", cell
        if kind == "violation" and mode == "warn":
            assert e == ("fail" if fail_on == "warning" else "warn"), cell
        proven_nothing = kind == "straddle" and decision == "ci_lower"
        if kind not in ("pass", "violation") and not proven_nothing and mode == "block":
            # no interval / no value: --inconclusive decides, under every decision rule;
            # by default (fail) it never passes
            expected = {"pass": "pass", "warn": "warn", "fail": "fail"}[inc]
            if fail_on == "warning" and expected == "warn":
                expected = "fail"  # --inconclusive warn --fail-on warning fails the gate
            if fail_on == "never" and expected == "fail":
                expected = "warn"
            assert e == expected, cell
        if proven_nothing and mode == "block":
            assert e == ("fail" if fail_on == "warning" else "warn"), cell
        if inc == "fail" and fail_on == "error" and mode == "block" and kind != "pass":
            # the defaults: only a computed ci_lower interval that proves nothing passes
            assert (e == "fail") != proven_nothing, cell


def test_a_stricter_option_never_loosens_the_gate() -> None:
    for kind, decision, mode in itertools.product(KINDS, DECISIONS, MODES):
        for fail_on in FAIL_ON:
            effects = [
                _results(kind, decision, mode, inc, fail_on).findings[0].gate_effect
                for inc in INCONCLUSIVE
            ]
            assert [RANK[e] for e in effects] == sorted(RANK[e] for e in effects)
        for inc in INCONCLUSIVE:
            effects = [
                _results(kind, decision, mode, inc, fo).findings[0].gate_effect for fo in FAIL_ON
            ]
            assert [RANK[e] for e in effects] == sorted(RANK[e] for e in effects)
        for inc, fail_on in itertools.product(INCONCLUSIVE, FAIL_ON):
            # enforcement block is stricter than warn, warn than monitor (same data)
            by_mode = []
            for m in ("monitor", "warn", "block"):
                by_mode.append(_results(kind, decision, m, inc, fail_on).findings[0].gate_effect)
            assert [RANK[e] for e in by_mode] == sorted(RANK[e] for e in by_mode)


def _walk(obj: Any) -> Any:
    if isinstance(obj, dict):
        yield obj
        for v in obj.values():
            yield from _walk(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _walk(v)


def _oscal_props(doc: dict[str, Any], where: str) -> dict[str, str]:
    node = doc["assessment-results"]["results"][0]
    if where != "result":
        node = node[where][0]
    return {p["name"]: p["value"] for p in node.get("props", [])}


def _read_every_format(res: Results) -> dict[str, tuple[str, bool]]:
    """Each format's (gate, does the one control fail the gate) as a reader sees it."""
    opts = RenderOptions(deterministic=True)
    out: dict[str, tuple[str, bool]] = {}
    text = get("text")(res, opts)
    last = text.strip().splitlines()[-1]
    word = last.split(":")[0].lower()
    out["text"] = (word, word != "pass")

    j = json.loads(get("json")(res, opts))
    out["json"] = (j["summary"]["gate"], j["findings"][0]["gate_effect"] in ("fail", "error"))

    junit = ET.fromstring(get("junit")(res, opts))
    case = next(junit.iter("testcase"))
    failed = case.find("failure") is not None or case.find("error") is not None
    gate_prop = next(p.get("value") for p in junit.iter("property") if p.get("name") == "gate")
    out["junit"] = (str(gate_prop), failed)

    sarif = json.loads(get("sarif")(res, opts))
    run = sarif["runs"][0]
    gates = [d["gate"] for d in _walk(run) if isinstance(d.get("gate"), str)]
    results = run.get("results", [])
    # SARIF's level follows the control's severity; whether it fails the gate is a property
    fails_prop = [r["properties"]["fails_gate"] for r in results if "properties" in r]
    out["sarif"] = (gates[0], any(fails_prop))

    gh = get("github")(res, opts)
    m = re.search(r"fairpolicy: (PASS|FAIL|ERROR)", gh)
    assert m, gh
    out["github"] = (m.group(1).lower(), "::error" in gh)

    md = get("markdown")(res, opts)
    md_gate = next(
        g for g, s in (("pass", "✅ PASS"), ("fail", "❌ FAIL"), ("error", "⛔ ERROR")) if s in md
    )
    out["markdown"] = (md_gate, md_gate != "pass")

    html = get("html")(res, opts)
    hm = re.search(r'class="verdict gate-(pass|fail|error)"', html)
    assert hm
    out["html"] = (hm.group(1), hm.group(1) != "pass")

    oscal = json.loads(get("oscal")(res, RenderOptions(deterministic=True, path="ar.json")))
    finding = _oscal_props(oscal, "findings")
    out["oscal"] = (
        _oscal_props(oscal, "result")["gate"],
        finding["gate-effect"] in ("fail", "error"),
    )
    return out


@pytest.mark.parametrize(
    "combo",
    # every kind × decision × mode under each --inconclusive/--fail-on pair once (the full
    # product is covered by the table tests above; the rendering does not depend on it)
    [
        c
        for c in COMBOS
        if (c[3], c[4])
        in {
            ("fail", "error"),
            ("warn", "warning"),
            ("pass", "never"),
            ("fail", "warning"),
            ("warn", "error"),
        }
    ],
    ids=lambda c: "-".join(c),
)
def test_every_format_renders_the_one_decision(combo: tuple[str, ...]) -> None:
    res = _results(*combo)
    f = res.findings[0]
    fails = f.gate_effect in ("fail", "error")
    gate = res.summary.gate
    assert res.exit_code == {"pass": 0, "fail": 1, "error": 2}[gate]
    seen = _read_every_format(res)
    for fmt, (fmt_gate, fmt_fails) in seen.items():
        assert fmt_gate == gate, (fmt, combo, seen)
        if fmt in ("text", "markdown", "html"):
            continue  # they state the gate; the control's line shows its status
        assert fmt_fails == fails, (fmt, combo, seen)


def test_ci_lower_without_interval_fails_end_to_end(tmp_path: Path) -> None:
    """A real run: ``decision: ci_lower`` with no bootstrap asked for has no interval, so
    the control is inconclusive and fails the gate by default (it used to pass)."""
    from fairpolicy.cli import main

    pol = tmp_path / "p.yaml"
    pol.write_text(
        "- control-id: c1\n  props:\n"
        "    - {name: metric_key, value: demographic_parity_diff}\n"
        "    - {name: threshold, value: '0.05'}\n"
        "    - {name: operator, value: '<'}\n"
        "    - {name: decision, value: ci_lower}\n"
        "    - {name: input.target, value: y_true}\n"
        "    - {name: input.prediction, value: y_pred}\n"
        "    - {name: input.dimension, value: sex}\n"
    )
    rows = ["y_true,y_pred,sex"]
    rows += [f"{i % 2},{int(i < 300)},F" for i in range(600)]
    rows += [f"{i % 2},{int(i < 200)},M" for i in range(600)]
    data = tmp_path / "d.csv"
    data.write_text("\n".join(rows) + "\n")
    out = tmp_path / "r.json"
    assert main(["check", str(pol), str(data), "-o", f"json={out}"]) == 1
    f = json.loads(out.read_text())["findings"][0]
    assert f["status"] == "inconclusive" and f["gate_effect"] == "fail"
    assert main(["check", str(pol), str(data), "--inconclusive", "warn"]) == 0
    assert (
        main(["check", str(pol), str(data), "--inconclusive", "warn", "--fail-on", "warning"]) == 1
    )
    # with an interval, ci_lower decides on it: 0.167 is far above 0.05, a proven violation
    argv = ["check", str(pol), str(data), "--bootstrap", "200", "--seed", "1", "-o", f"json={out}"]
    assert main(argv) == 1
    f = json.loads(out.read_text())["findings"][0]
    assert f["status"] == "fail" and f["ci"]["low"] > 0.05 and f["gate_effect"] == "fail"
