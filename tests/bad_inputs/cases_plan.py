"""Bad-input rows of the approved plan (issue 26 items 6 and 7): a run verified against a
plan (``check --plan``, ``export --plan``) that deviates from a setting the plan pins, a
plan edited after it was written, a plan from before settings were pinned, and a plan of
another policy given to ``export``. Each is exit 2 naming the plan, the setting and both
values, and writes nothing. The policy fails its control (a gap of 1/6 against ``< 0.1``),
so each loosening option would have turned a failing gate into a pass.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

from tests.bad_inputs.cases import DEFAULT_DATA, Case, policy

FAILING = policy(threshold='"0.1"')


def _plan(tmp: Path, *extra: str, name: str = "ap.json", pol: str = "policy.yaml") -> Path:
    from fairpolicy.cli import main

    assert main(["plan", str(tmp / pol), "-o", str(tmp / name), *extra], io.StringIO()) == 0
    return tmp / name


def with_plan(tmp: Path) -> Path:
    """The data, and ``{tmp}/ap.json``: the plan of ``{tmp}/policy.yaml`` with defaults."""
    _plan(tmp)
    (tmp / "data.csv").write_text(DEFAULT_DATA)
    return tmp / "data.csv"


def with_plan_and_config(tmp: Path) -> Path:
    """As :func:`with_plan`, and ``{tmp}/fairpolicy.toml`` setting ``fail-on = never``."""
    (tmp / "fairpolicy.toml").write_text('fail-on = "never"\n')
    return with_plan(tmp)


def with_edited_plan(tmp: Path) -> Path:
    """The plan, then its pinned fail-on edited to ``never`` (as a loosened approval)."""
    data = with_plan(tmp)
    ap = tmp / "ap.json"
    doc = json.loads(ap.read_text())
    for task in doc["assessment-plan"]["tasks"]:
        for p in task.get("props", []):
            if p["name"] == "setting.fail-on":
                p["value"] = "never"
    ap.write_text(json.dumps(doc, indent=2))
    return data


def with_old_plan(tmp: Path) -> Path:
    """A plan as fairpolicy wrote it before settings were pinned (its task pins none)."""
    data = with_plan(tmp)
    ap = tmp / "ap.json"
    doc = json.loads(ap.read_text())
    for task in doc["assessment-plan"]["tasks"]:
        del task["props"]
    ap.write_text(json.dumps(doc, indent=2))
    return data


def with_results_and_another_plan(tmp: Path) -> Path:
    """``{tmp}/r.json`` (a run of ``policy.yaml``) and ``{tmp}/other.json``: the plan of
    another policy (another control, another threshold)."""
    from fairpolicy.cli import main

    data = tmp / "data.csv"
    data.write_text(DEFAULT_DATA)
    argv = ["check", str(tmp / "policy.yaml"), str(data), "-o", f"json={tmp / 'r.json'}"]
    assert main(argv, io.StringIO()) in (0, 1)
    (tmp / "other.yaml").write_text(policy("c2", threshold='"0.5"'))
    _plan(tmp, name="other.json", pol="other.yaml")
    return data


PLAN = ("--plan", "{tmp}/ap.json")

CASES = [
    Case(
        "plan-deviation-fail-on-never",
        ("--fail-on", "'never' in this run", "'error' in the approved plan", "fairpolicy plan"),
        policy=FAILING,
        data=with_plan,
        args=(*PLAN, "--fail-on", "never"),
        file="ap.json",
        key="fail-on",
        subprocess=True,
    ),
    Case(
        "plan-deviation-inconclusive-pass",
        ("--inconclusive", "'pass' in this run", "'fail' in the approved plan"),
        policy=FAILING,
        data=with_plan,
        args=(*PLAN, "--inconclusive", "pass"),
        file="ap.json",
        key="inconclusive",
    ),
    Case(
        "plan-deviation-subject",
        ("--subject", "'model v5' in this run", "not given in the approved plan"),
        policy=FAILING,
        data=with_plan,
        args=(*PLAN, "--subject", "model v5"),
        file="ap.json",
        key="subject",
    ),
    Case(
        "plan-deviation-seed-and-decision",
        ("--seed", "'7' in this run", "--decision", "'ci_lower' in this run"),
        policy=FAILING,
        data=with_plan,
        args=(*PLAN, "--seed", "7", "--decision", "ci_lower", "--bootstrap", "50"),
        file="ap.json",
        key="seed",
    ),
    Case(
        "plan-deviation-from-a-configuration-file",
        ("--fail-on", "set by the configuration file", "fairpolicy.toml", "'error' in the"),
        policy=FAILING,
        data=with_plan_and_config,
        args=(*PLAN, "--config", "{tmp}/fairpolicy.toml"),
        file="ap.json",
        key="fail-on",
    ),
    Case(
        "plan-edited-after-approval",
        ("edited after it was written", "content SHA-256"),
        policy=FAILING,
        data=with_edited_plan,
        args=(*PLAN, "--fail-on", "never"),
        file="ap.json",
    ),
    Case(
        "plan-without-pinned-settings",
        ("pins none of the settings", "fairpolicy plan POLICY -o ap.json"),
        policy=FAILING,
        data=with_old_plan,
        args=PLAN,
        file="ap.json",
    ),
    Case(
        "export-with-another-policys-plan",
        (
            "does not match its assessment plan",
            "the plan tests control 'c2', the run did not",
            "policy's SHA-256",
        ),
        policy=FAILING,
        data=with_results_and_another_plan,
        args=(
            "export",
            "oscal",
            "{tmp}/r.json",
            "-o",
            "{tmp}/ar.json",
            "--plan",
            "{tmp}/other.json",
        ),
        file="other.json",
        output=False,
        subprocess=True,
    ),
]
