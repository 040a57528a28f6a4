"""Bad-input rows of the baseline area (issue 18: ``--baseline``, ``max_regression``).

Each baseline is a real results JSON written by ``fairpolicy check -o json`` in the case's
folder (then edited where the case is about an edited file), so the rows test the reader
and the pairing, not a hand-written imitation.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

from tests.bad_inputs.cases import DEFAULT_DATA, Case, policy, rows


def _run(pol: Path, data: Path, out: Path, *args: str) -> None:
    from fairpolicy.cli import main

    code = main(["check", str(pol), str(data), "-o", f"json={out}", *args], io.StringIO())
    assert code in (0, 1), f"the baseline run itself exited {code}"


def _with_baseline(
    edit: Callable[[dict[str, object]], object] | None = None,
    other_policy: str | None = None,
    raw: Callable[[bytes], bytes] | None = None,
    data_text: str = DEFAULT_DATA,
    baseline_data: str = DEFAULT_DATA,
) -> Callable[[Path], Path]:
    """A data callable: writes data.csv and ``{tmp}/baseline.json`` from a real run (of
    ``other_policy`` when given, else the case's policy), then edits it."""

    def make(tmp: Path) -> Path:
        data = tmp / "data.csv"
        old_data = tmp / "old" / "data.csv"
        old_data.parent.mkdir()
        old_data.write_text(baseline_data)
        pol = tmp / "policy.yaml"
        if other_policy is not None:
            pol = tmp / "old" / "policy.yaml"
            pol.write_text(other_policy)
        out = tmp / "baseline.json"
        _run(pol, old_data, out)
        if edit is not None:
            doc = json.loads(out.read_text())
            edit(doc)
            out.write_text(json.dumps(doc))
        if raw is not None:
            out.write_bytes(raw(out.read_bytes()))
        data.write_text(data_text)
        return data

    return make


def _rebind(doc: dict[str, object]) -> None:
    doc["findings"][0]["inputs"]["dimension"] = "race"  # type: ignore[index]


def _flip_direction(doc: dict[str, object]) -> None:
    doc["findings"][0]["better"] = "higher"  # type: ignore[index]  # a gap: lower is better


def _bad_direction(doc: dict[str, object]) -> None:
    doc["findings"][0]["better"] = "sideways"  # type: ignore[index]


def _nan_value(doc: dict[str, object]) -> None:
    doc["findings"][0]["value"] = float("nan")  # type: ignore[index]


# a worse release that still meets the threshold (< 0.2): F 31/60 selected, M 20/60, a gap
# of 0.1833 against the baseline's 30/60 − 20/60 = 0.1667
WORSE = "y_true,y_pred,sex\n" + "".join(
    f"{i % 2},{1 if i < k else 0},{g}\n" for g, k in (("F", 31), ("M", 20)) for i in range(60)
)

BASE = "{tmp}/baseline.json"

CASES = [
    Case(
        "baseline-from-another-policy",
        ("another policy", "--allow-policy-change"),
        data=_with_baseline(other_policy=policy(threshold='"0.3"')),
        args=("--baseline", BASE),
        file="baseline.json",
        key="policy.sha256",
        subprocess=True,
    ),
    Case(
        "baseline-another-policy-allowed",
        (),
        data=_with_baseline(other_policy=policy(threshold='"0.3"')),
        args=("--baseline", BASE, "--allow-policy-change"),
        code=0,
        report=True,
        note="--allow-policy-change pairs the controls that did not change; c1 changed its "
        "threshold, so it is reported as not compared (no δ: no decision)",
    ),
    Case(
        "baseline-truncated-json",
        ("not a fairpolicy results JSON",),
        data=_with_baseline(raw=lambda b: b[: len(b) // 2]),
        args=("--baseline", BASE),
        file="baseline.json",
    ),
    Case(
        "baseline-garbled-bytes",
        ("not UTF-8",),
        data=_with_baseline(raw=lambda b: b"\xff\xfe" + b[5:]),
        args=("--baseline", BASE),
        file="baseline.json",
    ),
    Case(
        "baseline-is-a-policy-file",
        ("not a fairpolicy results JSON",),
        args=("--baseline", "{policy}"),
        file="policy.yaml",
    ),
    Case(
        "baseline-missing-file",
        ("cannot read",),
        args=("--baseline", "{tmp}/nope.json"),
        file="nope.json",
    ),
    Case(
        "baseline-control-with-other-bindings",
        ("bindings changed", "dimension: race → sex", "--allow-policy-change"),
        data=_with_baseline(edit=_rebind),
        args=("--baseline", BASE),
        file="baseline.json",
        control="c1",
        key="inputs",
    ),
    Case(
        # issue 26 item 3: the direction of a change is the measured quantity's, resolved
        # from key and parameters; a results file recording another one was edited
        "baseline-direction-edited",
        ("records that higher is better", "lower-is-better", "rerun `fairpolicy check"),
        data=_with_baseline(edit=_flip_direction),
        args=("--baseline", BASE, "--max-regression", "0.01"),
        file="baseline.json",
        control="c1",
        key="better",
        subprocess=True,
    ),
    Case(
        "baseline-direction-not-a-direction",
        ("not a fairpolicy results JSON", "better"),
        data=_with_baseline(edit=_bad_direction),
        args=("--baseline", BASE),
        file="baseline.json",
    ),
    Case(
        "baseline-with-nan-value",
        ("not a finite number",),
        data=_with_baseline(edit=_nan_value),
        args=("--baseline", BASE),
        file="baseline.json",
    ),
    Case(
        "baseline-nan-max-regression",
        ("--max-regression", "finite number"),
        data=_with_baseline(),
        args=("--baseline", BASE, "--max-regression", "nan"),
    ),
    Case(
        "baseline-max-regression-written-oddly",
        ("--max-regression must be a number ≥ 0, got '0_01'", "plain decimal number"),
        data=_with_baseline(),
        args=("--baseline", BASE, "--max-regression", "0_01"),
        note="float() read 0_01 as 1.0: a hundred times the allowance meant, a wrong pass",
    ),
    Case(
        "baseline-negative-max-regression",
        ("--max-regression", "≥ 0"),
        data=_with_baseline(),
        args=("--baseline", BASE, "--max-regression", "-0.01"),
    ),
    Case(
        "baseline-negative-max-regression-prop",
        ("max_regression", "negative"),
        policy=policy(max_regression='"-0.05"'),
        control="c1",
        key="max_regression",
    ),
    Case(
        "baseline-nan-max-regression-prop",
        ("max_regression", "not a finite number"),
        policy=policy(max_regression='".nan"'),
        control="c1",
        key="max_regression",
    ),
    Case(
        "baseline-max-regression-without-baseline",
        ("--max-regression needs --baseline",),
        args=("--max-regression", "0.1"),
    ),
    Case(
        "baseline-prop-without-baseline-warns",
        ("max_regression is set in the policy but no --baseline was given",),
        policy=policy(max_regression='"0.05"'),
        code=0,
        report=True,
        note="a policy may be checked with or without a baseline: the prop is named in a "
        "warning, never silently unused",
    ),
    Case(
        "baseline-regression-beyond-delta-fails",
        ("got worse than the baseline by more than max_regression", "regressed"),
        data=_with_baseline(data_text=WORSE),
        args=("--baseline", BASE, "--max-regression", "0.01"),
        code=1,
        report=True,
        note="the control still meets its threshold (< 0.2) but got worse by more than δ",
    ),
    Case(
        "baseline-regression-within-delta-passes",
        (),
        data=_with_baseline(data_text=WORSE),
        args=("--baseline", BASE, "--max-regression", "0.5"),
        code=0,
        report=True,
        note="worse, but by less than δ",
    ),
    Case(
        "baseline-rows-helper-keeps-default",
        (),
        data=_with_baseline(data_text="y_true,y_pred,sex\n" + rows()),
        args=("--baseline", BASE, "--max-regression", "0"),
        code=0,
        report=True,
        note="the same data: a change of exactly 0 is not more than δ = 0",
    ),
]
