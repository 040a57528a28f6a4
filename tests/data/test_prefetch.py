"""The speculative read (data/prefetch.py) is used only when it read what the runner needs,
and never changes a result or an error."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

import fairpolicy
from fairpolicy.data.prefetch import Prefetch, bound_columns, guess_bindings
from fairpolicy.data.sources import arrow_files
from fairpolicy.errors import PolicyError
from tests.helpers import balanced_csv, control, write_csv, write_policy

ROOT = Path(__file__).resolve().parents[2]
CREDIT = ROOT / "examples" / "credit"


def dump(policy: Any, data: Any, **kw: Any) -> dict[str, Any]:
    out: dict[str, Any] = fairpolicy.check(policy, data, deterministic=True, **kw).model_dump(
        mode="json"
    )
    return out


def count_reads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    calls: list[tuple[Any, ...]] = []
    real = arrow_files.read_file

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(arrow_files, "read_file", spy)
    return calls


def no_prefetch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Prefetch, "start", classmethod(lambda cls, *args: None))


@pytest.mark.parametrize(
    "bind",
    [
        None,
        {"four-fifths-sex:dimension": "age_band"},
        {"equalized-odds-age:dimension": "sex,race", "accuracy-age:dimension": "race"},
    ],
)
def test_prefetched_read_serves_the_run_and_changes_nothing(
    monkeypatch: pytest.MonkeyPatch, bind: dict[str, str] | None
) -> None:
    policy, data = CREDIT / "policy.yaml", CREDIT / "predictions.csv"
    calls = count_reads(monkeypatch)
    fast = dump(policy, data, bind=bind)
    assert calls == []  # the table came from the prefetch
    no_prefetch(monkeypatch)
    slow = dump(policy, data, bind=bind)
    assert len(calls) == 1
    assert fast == slow


def test_a_column_read_another_way_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = balanced_csv(tmp_path)
    # the file binds y_pred as a dimension too, so the guess reads it as text ...
    prefetch = Prefetch(data, [("target", "y_true"), ("dimension", "y_pred,sex")])
    # ... but a run that needs it as a label must not take that table
    assert prefetch.take(["y_true", "y_pred", "sex"], ["sex"], ["y_true", "y_pred", "sex"]) is None
    prefetch = Prefetch(data, [("target", "y_true"), ("dimension", "sex")])
    assert prefetch.take(["y_true", "y_pred", "sex"], ["sex"], ["y_true", "y_pred", "sex"]) is None
    prefetch = Prefetch(
        data, [("target", "y_true"), ("prediction", "y_pred"), ("dimension", "sex")]
    )
    table = prefetch.take(["sex", "y_true"], ["sex"], ["y_true", "y_pred", "sex"])
    assert table is not None and list(table.columns) == ["sex", "y_true"]  # runner's order
    assert prefetch.take(["sex"], ["sex"], ["y_true", "y_pred", "sex"]) is None  # taken once


def test_a_failed_prefetch_leaves_the_error_to_the_real_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a duplicated header column the guess reads but the run does not need
    data = write_csv(tmp_path, "y_true,y_pred,sex,x,x\n" + "1,0,F,1,2\n0,1,M,1,2\n" * 40)
    policy = write_policy(tmp_path, control(), control("c2", dimension="x"))
    prefetch = Prefetch.start(policy, data, None)
    assert prefetch is not None
    assert prefetch.take(["y_true", "y_pred", "sex"], ["sex"], ["y_true", "y_pred", "sex"]) is None
    fast = fairpolicy.check(policy, data, deterministic=True, bind={"c2:dimension": "sex"})
    no_prefetch(monkeypatch)
    slow = fairpolicy.check(policy, data, deterministic=True, bind={"c2:dimension": "sex"})
    assert fast.model_dump(mode="json") == slow.model_dump(mode="json")
    assert fast.findings[0].status == "fail"


def test_a_policy_error_waits_for_the_read(tmp_path: Path) -> None:
    data = balanced_csv(tmp_path)
    policy = write_policy(tmp_path, control(metric="demographic_parity_dif"))
    before = threading.active_count()
    with pytest.raises(PolicyError, match="Did you mean"):
        fairpolicy.check(policy, data)
    assert threading.active_count() == before


def test_no_prefetch_without_files_or_bindings(tmp_path: Path) -> None:
    data = balanced_csv(tmp_path)
    assert Prefetch.start([control()], data, None) is None  # a parsed policy
    assert Prefetch.start(write_policy(tmp_path, control()), object(), None) is None
    assert Prefetch.start(tmp_path / "missing.yaml", data, None) is None
    assert Prefetch.start(write_policy(tmp_path, {"metric_key": "x"}), data, None) is None


def test_guess_reads_every_prop_form() -> None:
    doc = {
        "component-definition": {
            "components": [
                {
                    "control-implementations": [
                        {
                            "implemented-requirements": [
                                {"props": [{"name": "input:target", "value": " y "}]},
                                {"props": {"input.dimension": "a, b", "input.rank": 3}},
                                {"props": [{"name": "input.score", "value": ""}]},
                                {"props": [{"name": "threshold", "value": "0.1"}]},
                            ]
                        }
                    ]
                }
            ]
        }
    }
    pairs = guess_bindings(doc, {"site": "s"})
    assert pairs == [("target", "y"), ("dimension", "a, b"), ("rank", "3"), ("site", "s")]
    wanted, strings = bound_columns(["y", "a", "b", "3", "s", "p_0", "p_1"], pairs)
    assert wanted == ["y", "a", "b", "3", "s"] and strings == ["a", "b", "s"]
    assert bound_columns(["p_0", "p_1"], [("score", "p")]) == (["p_0", "p_1"], [])
