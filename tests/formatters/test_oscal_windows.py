"""OSCAL assessment results of a monitoring run (issue 30 item 1): one ``result`` per
window, with the window's start and end in its time zone, props naming its label, axis and
zone, and the gated result (the window gate's decision) marked. Every document passes the
NIST schema, trestle and fairpolicy's own constraint check (``oscal_constraints``)."""

from __future__ import annotations

import datetime as dt
import itertools
import json
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import pytest

from fairpolicy.oscal_constraints import problems
from fairpolicy.policy.schema import NS
from tests.bad_inputs.cases import policy
from tests.formatters.test_oscal import check_documents, run

PARIS = "Europe/Paris"


def props(node: Any, name: str) -> list[str]:
    return [p["value"] for p in node.get("props", []) if p["name"] == name and p["ns"] == NS]


def one(node: Any, name: str) -> str | None:
    found = props(node, name)
    return found[0] if found else None


def write_data(folder: Path, seed: int = 3) -> list[tuple[str, str, str, str]]:
    """Rows over 4 calendar weeks around Paris' switch to summer time (2026-03-29), local
    times written with their offset; returns (ts, y_true, y_pred, sex) rows."""
    rng = np.random.default_rng(seed)
    zone = ZoneInfo(PARIS)
    start = dt.datetime(2026, 3, 16, tzinfo=zone)  # a Monday
    rows = []
    for _ in range(400):
        t = start + dt.timedelta(minutes=int(rng.integers(0, 28 * 24 * 60)))
        t = t.astimezone(zone)
        sex = "FM"[int(rng.integers(0, 2))]
        y = int(rng.integers(0, 2))
        p = int(rng.random() < (0.6 if sex == "F" else 0.4))
        rows.append((t.isoformat(), str(y), str(p), sex))
    lines = ["ts,y_true,y_pred,sex", *(",".join(r) for r in rows)]
    (folder / "data.csv").write_text("\n".join(lines) + "\n")
    (folder / "policy.yaml").write_text(
        policy("gap", threshold='"0.3"')
        + policy("ratio", metric_key="demographic_parity_ratio", threshold='"0.5"', operator="'>='")
    )
    return rows


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def ar_of(*argv: str) -> dict[str, Any]:
    code = run("check", "policy.yaml", "data.csv", "--deterministic", *argv,
               "-o", "oscal=ar.json", "-o", "json=r.json")  # fmt: skip
    assert code in (0, 1)
    ar, _ = check_documents(Path("ar.json"), None)  # NIST schema, trestle, references
    assert problems(ar) == []  # fairpolicy's own constraint check
    return ar


def test_one_result_per_window_with_its_bounds_label_axis_and_zone(folder: Path) -> None:
    rows = write_data(folder)
    ar = ar_of("--window", "ts=1w", "--window-tz", PARIS, "--window-gate", "any")
    gated, *windows = ar["assessment-results"]["results"]
    results = json.loads(Path("r.json").read_text())
    labels = [w["window"] for w in results["windows"]["windows"]]
    assert labels == ["2026-03-16", "2026-03-23", "2026-03-30", "2026-04-06"]
    # the gated result: the window gate's decision, marked as such
    assert one(gated, "result-kind") == "window-gate" and one(gated, "gated") == "true"
    assert one(gated, "window-gate") == "any" and one(gated, "windows") == "4"
    assert one(gated, "window-tz") == PARIS and one(gated, "window-newest") == "2026-04-06"
    assert one(gated, "setting.window") == "ts=1w"
    # one result per window, oldest first; the week of the clock change is 167 hours long
    starts = ["2026-03-16T00:00:00+01:00", "2026-03-23T00:00:00+01:00",
              "2026-03-30T00:00:00+02:00", "2026-04-06T00:00:00+02:00"]  # fmt: skip
    ends = [*starts[1:], "2026-04-13T00:00:00+02:00"]
    # instants (the writer serialises them in UTC): midnight in Paris, before and after the
    # clock change
    at = dt.datetime.fromisoformat
    assert [at(w["start"]) for w in windows] == [at(x) for x in starts]
    assert [at(w["end"]) for w in windows] == [at(x) for x in ends]
    assert windows[2]["start"].startswith("2026-03-29T22:00:00")
    assert windows[1]["start"].startswith("2026-03-22T23:00:00")
    zone = ZoneInfo(PARIS)
    for w, label, start, end in zip(windows, labels, starts, ends, strict=True):
        assert one(w, "result-kind") == "window" and one(w, "gated") == "false"
        assert one(w, "window-label") == label and one(w, "window-tz") == PARIS
        assert one(w, "window-column") == "ts" and one(w, "window-period") == "w"
        assert "calendar weeks" in str(one(w, "window-axis"))
        # oracle: the rows whose local time lies in [start, end)
        lo, hi = dt.datetime.fromisoformat(start), dt.datetime.fromisoformat(end)
        mine = [r for r in rows if lo <= dt.datetime.fromisoformat(r[0]).astimezone(zone) < hi]
        assert one(w, "window-rows") == str(len(mine))
        assert {one(o, "control-id") for o in w["observations"]} == {"gap", "ratio"}
        # the measured gap equals the rate difference on the window's rows
        rate = {
            g: sum(r[2] == "1" for r in mine if r[3] == g) / sum(r[3] == g for r in mine)
            for g in "FM"
        }
        gap = next(o for o in w["observations"] if one(o, "control-id") == "gap")
        assert float(str(one(gap, "measured-value"))) == pytest.approx(abs(rate["F"] - rate["M"]))
        finding = next(f for f in w["findings"] if one(f, "control-id") == "gap")
        assert finding["related-observations"] == [{"observation-uuid": gap["uuid"]}]
    # `fairpolicy validate` reads the AR (its hashes, its gate against the results JSON)
    assert run("validate", "ar.json") == 0
    # every window's findings are the results JSON's, status by status
    for w, block in zip(windows, results["windows"]["windows"], strict=True):
        want = {f["control_id"]: f["status"] for f in block["findings"]}
        assert {one(f, "control-id"): one(f, "status") for f in w["findings"]} == want


def test_pooled_windows_span_their_members(folder: Path) -> None:
    write_data(folder)
    ar = ar_of("--window", "ts=1d", "--window-tz", PARIS, "--window-gate", "last",
               "--min-window-rows", "40", "--pool-windows")  # fmt: skip
    windows = ar["assessment-results"]["results"][1:]
    pooled = [w for w in windows if props(w, "window-pooled")]
    assert pooled, "some days hold fewer than 40 rows"
    for w in pooled:
        members = props(w, "window-pooled")
        assert one(w, "window-label") == f"{members[0]}..{members[-1]}"
        zone = ZoneInfo(PARIS)
        first = dt.datetime.combine(dt.date.fromisoformat(members[0]), dt.time(), zone)
        after = dt.date.fromisoformat(members[-1]) + dt.timedelta(days=1)
        assert dt.datetime.fromisoformat(w["start"]) == first
        assert dt.datetime.fromisoformat(w["end"]) == dt.datetime.combine(after, dt.time(), zone)
    # the windows tile the axis: each starts where the one before ended
    assert all(a["end"] == b["start"] for a, b in itertools.pairwise(windows))


def test_a_period_columns_values_span_the_run_and_say_so(folder: Path) -> None:
    write_data(folder)
    text = Path("data.csv").read_text().splitlines()
    weeks = [text[0] + ",week"] + [line + f",w{1 + i % 3}" for i, line in enumerate(text[1:])]
    Path("data.csv").write_text("\n".join(weeks) + "\n")
    ar = ar_of("--window", "week", "--window-gate", "last")
    gated, *windows = ar["assessment-results"]["results"]
    assert [one(w, "window-label") for w in windows] == ["w1", "w2", "w3"]
    for w in windows:
        assert (w["start"], w["end"]) == (gated["start"], gated["end"])
        assert "not a calendar period" in w["remarks"]
        assert one(w, "window-period") is None and one(w, "window-tz") is None


def test_a_run_without_windows_keeps_one_result(folder: Path) -> None:
    write_data(folder)
    ar = ar_of()
    (result,) = ar["assessment-results"]["results"]
    assert one(result, "result-kind") is None and one(result, "gated") is None
