"""Every verdict path agrees with one decision (issue 26, the structural fix; DESIGN §9).

A scenario is two releases of a three-class model (groups A and B, 100 rows each, the
accuracy of each group set by a count), one policy control on
``multiclass_confusion_metrics`` (``value: accuracy_gap`` — a gap, lower is better — or
``worst_group_accuracy`` — higher is better), optionally a second control that is
inconclusive (``min_samples`` above the group sizes), the gate options (``--fail-on``,
``--inconclusive``), the allowed worsening δ from the command line, a configuration file
or the Python API, and the policy's own ``max_regression``, and ``diff``'s own options.

The oracle below decides every scenario from first principles, independently of
fairpolicy: exact fractions for values and changes, the direction of the *quantity*
(accuracy_gap: lower is better), the stricter δ, and the gate table of docs/cli.md. Then
every verdict path must agree with it:

- ``check`` on the command line: exit code, the JSON summary, the text's last line, each
  finding's change verdict and the δ (and its source) recorded;
- the Python API (``fairpolicy.check(..., baseline=..., max_regression=...)``): the
  ``Results``' gate, exit code and ``passed``;
- ``fairpolicy.testing.assert_gate`` (what the pytest plugin's fixture and helpers run):
  it raises exactly when the gate does not pass;
- ``fairpolicy diff`` (text, Markdown, JSON): exit code, header and rows, decided by
  diff's own options alone, never by the options the NEW run was checked with.

It fails on the base commit a980167 for items 3 (a grown accuracy gap read as "better"),
4 (diff inheriting a NEW run's ``--fail-on never``; a header saying "no regression" above
a regressed row) and 5 (a policy's looser ``max_regression`` overriding a stricter flag).
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

N = 100  # rows per group
DELTAS = (0.0, 0.005, 0.015, 0.035, 0.075, 0.5)  # never a tie with a change (k/100)


@dataclass(frozen=True)
class Scenario:
    which: str  # accuracy_gap | worst_group_accuracy
    old: tuple[int, int]  # correct predictions of groups A and B (of N) in the baseline
    new: tuple[int, int]
    threshold: str
    mode: str  # block | warn
    inconclusive_control: bool
    fail_on: str
    inconclusive: str
    run_delta: float | None
    source: str  # flag | config | api
    policy_delta: float | None
    diff_delta: float | None
    diff_fail_on: str
    diff_inconclusive: str


# ---------------------------------------------------------------- the inputs


def data(acc: tuple[int, int]) -> str:
    lines = ["y_true,y_pred,grp"]
    for g, k in zip("AB", acc, strict=True):
        for i in range(N):
            t = i % 3
            lines.append(f"{t},{t if i < k else (t + 1) % 3},{g}")
    return "\n".join(lines) + "\n"


def policy(s: Scenario) -> str:
    op = "<" if s.which == "accuracy_gap" else ">="
    own = (
        ""
        if s.policy_delta is None
        else f'    - {{name: max_regression, value: "{s.policy_delta}"}}\n'
    )

    def control(cid: str, extra: str) -> str:
        return (
            f"- control-id: {cid}\n  title: {cid}\n  props:\n"
            "    - {name: metric_key, value: multiclass_confusion_metrics}\n"
            f"    - {{name: value, value: {s.which}}}\n"
            f'    - {{name: threshold, value: "{s.threshold}"}}\n'
            f'    - {{name: operator, value: "{op}"}}\n'
            f"    - {{name: enforcement_mode, value: {s.mode}}}\n"
            "    - {name: input.target, value: y_true}\n"
            "    - {name: input.prediction, value: y_pred}\n"
            "    - {name: input.dimension, value: grp}\n" + own + extra
        )

    out = control("acc", "")
    if s.inconclusive_control:
        out += control("tiny", '    - {name: min_samples, value: "1000"}\n')
    return out


# ---------------------------------------------------------------- the oracle


def value(s: Scenario, acc: tuple[int, int]) -> Fraction:
    a, b = (Fraction(k, N) for k in acc)
    return abs(a - b) if s.which == "accuracy_gap" else min(a, b)


def satisfies(s: Scenario, v: Fraction) -> bool:
    t = Fraction(s.threshold)
    return v < t if s.which == "accuracy_gap" else v >= t


def worsened(s: Scenario) -> Fraction:
    """Positive: worse. accuracy_gap is a gap (lower is better) whatever its key's default."""
    d = value(s, s.new) - value(s, s.old)
    return d if s.which == "accuracy_gap" else -d


def stricter(*deltas: float | None) -> float | None:
    given_ = [d for d in deltas if d is not None]
    return min(given_, key=Fraction) if given_ else None


def verdict(s: Scenario, delta: float | None, defined: bool) -> str:
    if delta is None:
        return "none"
    if not defined:
        return "inconclusive"
    return "regressed" if worsened(s) > Fraction(repr(delta)) else "ok"


def effect(status: str, mode: str, fail_on: str, inconclusive: str) -> str:
    """The gate table (docs/cli.md): what one finding does to the gate."""
    if status == "pass":
        return "pass"
    eff = inconclusive if status == "inconclusive" else "fail"
    if eff == "pass":
        return "pass"
    if mode != "block":
        eff = "warn"
    if fail_on == "warning" and eff == "warn" and mode != "monitor":
        eff = "fail"
    if fail_on == "never" and eff == "fail":
        eff = "warn"
    return eff


@dataclass(frozen=True)
class Expected:
    check_gate: str
    verdicts: dict[str, str]
    deltas: dict[str, tuple[float | None, str | None]]
    diff_exit: int
    diff_verdicts: dict[str, str]
    diff_fails: dict[str, bool]


def oracle(s: Scenario) -> Expected:
    violated = "fail" if s.mode == "block" else "warn"
    delta = stricter(s.run_delta, s.policy_delta)
    src = None
    if delta is not None:
        pol = s.policy_delta is not None and Fraction(repr(s.policy_delta)) <= Fraction(
            repr(s.run_delta if s.run_delta is not None else s.policy_delta)
        )
        src = "policy" if pol else s.source
    controls = {"acc": True, **({"tiny": False} if s.inconclusive_control else {})}
    verdicts, deltas, effects = {}, {}, []
    for cid, defined in controls.items():
        status = (
            ("pass" if satisfies(s, value(s, s.new)) else violated) if defined else "inconclusive"
        )
        v = verdict(s, delta, defined)
        if status == "pass" and v == "regressed":
            status = violated
        if status == "pass" and v == "inconclusive":
            status = "inconclusive"
        verdicts[cid], deltas[cid] = v, (delta, src)
        effects.append(effect(status, s.mode, s.fail_on, s.inconclusive))
    gate = "fail" if "fail" in effects else "pass"
    # diff: its own options and the policy's δ; never what NEW was checked with
    ddelta = stricter(s.diff_delta, s.policy_delta)
    diff_verdicts, diff_fails = {}, {}
    for cid, defined in controls.items():
        v = verdict(s, ddelta, defined)
        change_status = {"regressed": violated, "inconclusive": "inconclusive"}.get(v, "pass")
        diff_verdicts[cid] = v
        diff_fails[cid] = (
            effect(change_status, s.mode, s.diff_fail_on, s.diff_inconclusive) == "fail"
        )
    return Expected(
        gate, verdicts, deltas, int(any(diff_fails.values())), diff_verdicts, diff_fails
    )


# ---------------------------------------------------------------- the paths


def run(argv: list[str]) -> tuple[int, str]:
    from fairpolicy.cli import main

    out = io.StringIO()
    return main(argv, out), out.getvalue()


def check_paths(s: Scenario, tmp: Path) -> None:
    """Run every path on ``s`` in ``tmp`` and compare each with the oracle."""
    import fairpolicy
    from fairpolicy import testing

    exp = oracle(s)
    (tmp / "policy.yaml").write_text(policy(s))
    (tmp / "old.csv").write_text(data(s.old))
    (tmp / "new.csv").write_text(data(s.new))
    pol, old_json, new_json = tmp / "policy.yaml", tmp / "old.json", tmp / "new.json"
    code, _ = run(
        ["check", str(pol), str(tmp / "old.csv"), "--no-config", "-o", f"json={old_json}"]
    )
    assert code in (0, 1)

    # -- check on the command line (δ from the flag or a configuration file)
    gate_opts = ["--fail-on", s.fail_on, "--inconclusive", s.inconclusive]
    argv = ["check", str(pol), str(tmp / "new.csv"), "--baseline", str(old_json), *gate_opts]
    if s.run_delta is not None and s.source == "config":
        (tmp / "fairpolicy.toml").write_text(f"max-regression = {s.run_delta!r}\n")
        argv += ["--config", str(tmp / "fairpolicy.toml")]
    else:
        argv += ["--no-config"]
        if s.run_delta is not None:
            argv += ["--max-regression", repr(s.run_delta)]
    code, text = run([*argv, "-o", "text", "-o", f"json={new_json}"])
    doc = json.loads(new_json.read_text())
    want = 1 if exp.check_gate == "fail" else 0
    assert code == want, (s, exp, text)
    assert doc["summary"]["gate"] == exp.check_gate
    assert text.rstrip().splitlines()[-1].startswith(exp.check_gate.upper())
    got = {f["control_id"]: f["change"]["verdict"] for f in doc["findings"]}
    assert got == exp.verdicts, (s, text)

    # -- the Python API and fairpolicy.testing (the pytest plugin's fixture and helper)
    api = dict(
        baseline=str(old_json),
        max_regression=s.run_delta,
        fail_on=s.fail_on,
        inconclusive=s.inconclusive,
    )
    res = fairpolicy.check(str(pol), str(tmp / "new.csv"), **api)
    assert res.summary.gate == exp.check_gate and res.exit_code == want
    assert res.passed == (exp.check_gate == "pass")
    assert {f.control_id: f.change.verdict for f in res.findings if f.change} == exp.verdicts
    if exp.check_gate == "pass":
        testing.assert_gate(str(pol), str(tmp / "new.csv"), **api)
    else:
        with pytest.raises(AssertionError, match=exp.check_gate.upper()):
            testing.assert_gate(str(pol), str(tmp / "new.csv"), **api)

    # -- diff: its own options alone (NEW was checked with the scenario's gate options)
    dargv = ["diff", str(old_json), str(new_json)]
    if s.diff_delta is not None:
        dargv += ["--max-regression", repr(s.diff_delta)]
    if s.diff_fail_on != "error":
        dargv += ["--fail-on", s.diff_fail_on]
    if s.diff_inconclusive != "fail":
        dargv += ["--inconclusive", s.diff_inconclusive]
    outs = {fmt: run([*dargv, "-o", fmt]) for fmt in ("text", "markdown", "json")}
    for fmt, (code, out) in outs.items():
        assert code == exp.diff_exit, (fmt, s, exp, out)
    jdoc = json.loads(outs["json"][1])
    assert {r["control_id"]: r["verdict"] for r in jdoc["changes"]} == exp.diff_verdicts
    assert {r["control_id"]: r["fails_gate"] for r in jdoc["changes"]} == exp.diff_fails
    for r in jdoc["changes"]:  # signed, and labelled with a positive amount
        if r["worsened_by"] is not None and r["worsened_by"] != 0:
            assert r["trend"] == ("worse" if r["worsened_by"] > 0 else "better")
            assert r["by"] == abs(r["worsened_by"])
    # header, rows and exit code never disagree
    text = outs["text"][1]
    header, rows = text.splitlines()[0], text.splitlines()[1:]
    failing = [r for r in rows if "[REGRESSED]" in r or "[INCONCLUSIVE]" in r]
    assert len(failing) == sum(exp.diff_fails.values()), text
    if exp.diff_exit:
        assert "gate FAIL" in header, text
    else:
        assert "FAIL" not in header and not failing, text
    if any(v == "regressed" for v in exp.diff_verdicts.values()):
        assert "no regression" not in header, text
    md = outs["markdown"][1]
    assert ("gate FAIL" in md.splitlines()[0]) == bool(exp.diff_exit)
    assert "worse by -" not in md and "better by -" not in md

    # -- the δ applied and where it came from, recorded on every change (item 5)
    if s.source != "api":
        recorded = {
            f["control_id"]: (
                f["change"]["max_regression"],
                f["change"].get("max_regression_source"),
            )
            for f in doc["findings"]
        }
        assert recorded == exp.deltas, (s, recorded)


# ---------------------------------------------------------------- the scenarios

ITEM3 = Scenario(  # the gap grew 0.02 → 0.09; δ 0.01: worse by 0.07, a regression
    "accuracy_gap", (90, 88), (90, 81), "0.2", "block", False, "error", "fail",
    0.01, "flag", None, 0.01, "error", "fail",
)  # fmt: skip
ITEM4 = replace(  # NEW was checked with --fail-on never; diff --max-regression 0.01 fails
    ITEM3, which="worst_group_accuracy", old=(90, 88), new=(90, 81), threshold="0.5",
    fail_on="never",
)  # fmt: skip
ITEM5 = replace(  # policy 0.5, flag 0.01: the stricter 0.01 applies (worse by 0.07)
    ITEM4, fail_on="error", policy_delta=0.5, diff_delta=None,
)  # fmt: skip


@pytest.mark.parametrize("s", [ITEM3, ITEM4, ITEM5], ids=["item3", "item4", "item5"])
def test_the_issue_cases(s: Scenario, tmp_path: Path) -> None:
    check_paths(s, tmp_path)


def test_the_config_file_delta_is_named(tmp_path: Path) -> None:
    check_paths(replace(ITEM3, source="config"), tmp_path)


def test_an_undecidable_change_follows_each_commands_own_inconclusive(tmp_path: Path) -> None:
    check_paths(
        replace(ITEM3, inconclusive_control=True, inconclusive="pass", diff_inconclusive="warn"),
        tmp_path,
    )


scenarios = st.builds(
    Scenario,
    which=st.sampled_from(["accuracy_gap", "worst_group_accuracy"]),
    old=st.tuples(st.integers(60, 100), st.integers(60, 100)),
    new=st.tuples(st.integers(60, 100), st.integers(60, 100)),
    threshold=st.sampled_from(["0.05", "0.1", "0.2", "0.7", "0.8", "0.9"]),
    mode=st.sampled_from(["block", "warn"]),
    inconclusive_control=st.booleans(),
    fail_on=st.sampled_from(["error", "warning", "never"]),
    inconclusive=st.sampled_from(["fail", "warn", "pass"]),
    run_delta=st.none() | st.sampled_from(DELTAS),
    source=st.sampled_from(["flag", "config", "api"]),
    policy_delta=st.none() | st.sampled_from(DELTAS),
    diff_delta=st.none() | st.sampled_from(DELTAS),
    diff_fail_on=st.sampled_from(["error", "warning", "never"]),
    diff_inconclusive=st.sampled_from(["fail", "warn", "pass"]),
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(s=scenarios)
@example(s=ITEM3)
@example(s=ITEM4)
@example(s=ITEM5)
def test_every_verdict_path_agrees_with_the_one_decision(
    s: Scenario, tmp_path_factory: pytest.TempPathFactory
) -> None:
    check_paths(s, tmp_path_factory.mktemp("paths"))


def test_the_diff_decision_object_is_what_every_rendering_shows(tmp_path: Path) -> None:
    """decide.decide_changes is the one decision; diff's three renderings show it."""
    from fairpolicy.baseline import compare, load_baseline
    from fairpolicy.decide import decide_changes

    s = replace(ITEM4, inconclusive_control=True)
    check_paths(s, tmp_path)
    old, sha = load_baseline(str(tmp_path / "old.json"))
    new, _ = load_baseline(str(tmp_path / "new.json"))
    plain = new.model_copy(
        update={"findings": [f.model_copy(update={"change": None}) for f in new.findings]}
    )
    compared = compare(plain, old, path="old.json", sha256=sha, max_regression=0.01)
    for fail_on in ("error", "warning", "never"):
        for inconclusive in ("fail", "warn", "pass"):
            d = decide_changes(compared, fail_on, inconclusive)  # type: ignore[arg-type]
            assert d.exit_code == (1 if any(r.fails for r in d.rows) else 0)
            assert ("gate FAIL" in d.headline) == bool(d.exit_code)
            code, out = run(
                [
                    "diff",
                    str(tmp_path / "old.json"),
                    str(tmp_path / "new.json"),
                    "--max-regression",
                    "0.01",
                    "--fail-on",
                    fail_on,
                    "--inconclusive",
                    inconclusive,
                    "-o",
                    "json",
                ]
            )
            doc: dict[str, Any] = json.loads(out)
            assert code == d.exit_code and doc["headline"] == d.headline
            assert [r["fails_gate"] for r in doc["changes"]] == [r.fails for r in d.rows]
