"""``positive_label`` named once (issue 27 item 4): policy-wide in ``metadata.props`` (the
simple YAML component-definition form and the OSCAL JSON form), as ``--positive-label``
(and ``positive_label=`` in Python), a control's own value winning; the results say which
applied to which control; the text-label message names the labels and proposes none."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml

import fairpolicy
from fairpolicy.cli import main
from fairpolicy.policy.schema import NS


def credit(n: int = 600, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], n)
    y = np.where(rng.random(n) < 0.7, "approved", "denied")
    p = np.where(rng.random(n) < np.where(sex == "F", 0.5, 0.8), "approved", "denied")
    return pd.DataFrame({"y": y, "p": p, "sex": sex})


def props(cid: str, **extra: str) -> dict[str, Any]:
    base = {
        "metric_key": "demographic_parity_diff",
        "threshold": "0.5",
        "operator": "<",
        "input.target": "y",
        "input.prediction": "p",
        "input.dimension": "sex",
        **extra,
    }
    return {"control-id": cid, "props": [{"name": k, "value": v} for k, v in base.items()]}


def component(tmp: Path, wide: list[dict[str, str]], *controls: dict[str, Any], form: str) -> Path:
    doc = {
        "component-definition": {
            "metadata": {"title": "credit", "props": wide},
            "components": [
                {
                    "title": "model",
                    "control-implementations": [
                        {"description": "gate", "implemented-requirements": list(controls)}
                    ],
                }
            ],
        }
    }
    path = tmp / f"policy.{form}"
    path.write_text(json.dumps(doc) if form == "json" else yaml.safe_dump(doc, sort_keys=False))
    return path


def selection_gap(df: pd.DataFrame, label: str) -> float:
    rates = (df.p == label).groupby(df.sex).mean()
    return float(rates.max() - rates.min())


@pytest.mark.parametrize("form", ["yaml", "json"])
def test_policy_wide_label_applies_and_a_control_wins(tmp_path: Path, form: str) -> None:
    df = credit()
    wide = [{"name": "positive_label", "value": "approved", "ns": NS}]
    pol = component(tmp_path, wide, props("a"), props("b", positive_label="denied"), form=form)
    res = fairpolicy.check(str(pol), df)
    a, b = res.findings
    assert a.status != "error" and a.value == pytest.approx(selection_gap(df, "approved"))
    assert b.value == pytest.approx(selection_gap(df, "denied"))
    note = next(w for w in res.warnings if w.startswith("positive_label:"))
    assert "'approved' from the policy-wide metadata.props for a" in note
    assert "'denied' from the control's own prop for b" in note


def test_the_run_option_wins_over_the_policy_wide_one_not_over_a_control(tmp_path: Path) -> None:
    df = credit()
    wide = [{"name": "positive_label", "value": "denied", "ns": NS}]
    pol = component(tmp_path, wide, props("a"), props("b", positive_label="denied"), form="yaml")
    res = fairpolicy.check(str(pol), df, positive_label="approved")
    a, b = res.findings
    assert a.value == pytest.approx(selection_gap(df, "approved"))
    assert b.value == pytest.approx(selection_gap(df, "denied"))
    assert res.run.options["positive_label"] == "approved"
    note = next(w for w in res.warnings if w.startswith("positive_label:"))
    assert (
        "from the run's positive_label option (--positive-label, the config file or the API) for a"
        in note
    )


def test_positive_label_flag_on_the_command_line_and_in_explain(tmp_path: Path) -> None:
    df = credit()
    data = tmp_path / "d.csv"
    df.to_csv(data, index=False)
    pol = tmp_path / "list.yaml"
    pol.write_text(yaml.safe_dump([props("a"), props("b", positive_label="denied")]))
    out = tmp_path / "r.json"
    code = main(["check", str(pol), str(data), "--positive-label", "approved", "-o",
                 f"json={out}"], io.StringIO())  # fmt: skip
    doc = json.loads(out.read_text())
    assert code in (0, 1) and doc["run"]["options"]["positive_label"] == "approved"
    assert [f["status"] != "error" for f in doc["findings"]] == [True, True]
    text = io.StringIO()
    assert main(["check", str(pol), "--explain", "a", "--positive-label", "approved"], text) == 0
    row = next(x for x in text.getvalue().splitlines() if x.strip().startswith("positive_label "))
    assert "approved" in row and "--positive-label" in row


def test_text_labels_without_a_positive_label_name_the_labels_and_propose_none(
    tmp_path: Path,
) -> None:
    df = credit()
    pol = tmp_path / "list.yaml"
    pol.write_text(yaml.safe_dump([props("a")]))
    f = fairpolicy.check(str(pol), df).findings[0]
    assert f.status == "error"
    assert "'approved', 'denied'" in f.message
    assert "favourable or selected outcome" in f.message
    assert "<approved or denied>" in f.message and "--positive-label" in f.message
    assert "e.g." not in f.message  # no example that may be the negative outcome


@pytest.mark.parametrize("bad", ["", "  ", True, 1.5])
def test_a_bad_positive_label_option_is_a_usage_error(tmp_path: Path, bad: Any) -> None:
    pol = tmp_path / "list.yaml"
    pol.write_text(yaml.safe_dump([props("a")]))
    with pytest.raises(fairpolicy.FairpolicyError, match="positive_label"):
        fairpolicy.check(str(pol), credit(), positive_label=bad)
