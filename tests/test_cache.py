"""The OSCAL validation cache (:mod:`fairpolicy.cache`) never changes an outcome.

It stores successes only, so an invalid document gets the validator's own messages on
every run; a hit skips the validator; corrupted entries, ``FAIRPOLICY_NO_CACHE=1`` and an
unwritable folder fall back to validating. The property test mutates a valid
component-definition at random and checks that the outcome with a warm cache equals the
outcome with the cache off — the class of bug "a cached result says valid when it is not".
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairpolicy import cache
from fairpolicy.errors import PolicyError
from fairpolicy.policy.load import load_policy
from fairpolicy.policy.oscal import Ctx, validate_oscal

REPO = Path(__file__).resolve().parents[1]

PROPS = [
    {"name": "metric_key", "value": "demographic_parity_diff"},
    {"name": "threshold", "value": "0.5"},
    {"name": "operator", "value": "<"},
    {"name": "input.target", "value": "y_true"},
    {"name": "input.prediction", "value": "y_pred"},
    {"name": "input.dimension", "value": "sex"},
]


def component(**meta: Any) -> dict[str, Any]:
    return {
        "uuid": "9a6f2b1e-0c4d-4e8f-a1b2-c3d4e5f60718",
        "metadata": {
            "title": "t",
            "last-modified": "2026-01-01T00:00:00+00:00",
            "version": "1",
            "oscal-version": "1.2.1",
            **meta,
        },
        "components": [
            {
                "uuid": "1b2c3d4e-5f60-4718-8a9b-0c1d2e3f4a5b",
                "type": "software",
                "title": "model",
                "description": "model",
                "control-implementations": [
                    {
                        "uuid": "2c3d4e5f-6071-4829-9bac-1d2e3f4a5b6c",
                        "source": "#catalog",
                        "description": "gate",
                        "implemented-requirements": [
                            {
                                "uuid": "3d4e5f60-7182-4a3b-8c4d-5e6f7a8b9c0d",
                                "control-id": "dp",
                                "description": "DP gap",
                                "props": copy.deepcopy(PROPS),
                            }
                        ],
                    }
                ],
            }
        ],
    }


def outcome(body: Any) -> tuple[bool, list[str]]:
    """Strict validation (``--strict``): what the schema rejects is a problem (by default
    it is one warning and the document is read)."""
    ctx = Ctx(strict=True)
    ok = validate_oscal("component-definition", body, "p.json", ctx)
    return ok, [p.render() for p in ctx.problems]


def entries(tmp: Path) -> list[Path]:
    folder = tmp / "fairpolicy" / "valid"
    return (
        sorted(p for p in folder.iterdir() if not p.name.startswith(".")) if folder.exists() else []
    )


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("FAIRPOLICY_NO_CACHE", raising=False)
    return tmp_path


def test_success_is_stored_and_a_hit_skips_the_validator(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = component()
    assert outcome(body) == (True, [])
    [entry] = entries(cache_home)
    assert entry.read_text() == entry.name  # the file holds its own key
    from trestle.oscal.component import ComponentDefinition

    def boom(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("validator called on a cache hit")

    monkeypatch.setattr(ComponentDefinition, "model_validate", boom)
    assert outcome(body) == (True, [])
    # another document is a miss: the validator runs (and here raises)
    with pytest.raises(AssertionError, match="validator called"):
        outcome(component(title="another"))


def test_failure_is_never_stored_and_messages_are_the_validators(cache_home: Path) -> None:
    bad = component()
    bad["uuid"] = "not-a-uuid"
    cold = outcome(bad)
    assert cold[0] is False and cold[1]
    assert entries(cache_home) == []
    assert outcome(component())[0] is True  # warm the cache with the valid neighbour
    assert outcome(bad) == cold
    monkeypatch = pytest.MonkeyPatch()
    with monkeypatch.context() as m:
        m.setenv("FAIRPOLICY_NO_CACHE", "1")
        assert outcome(bad) == cold


@pytest.mark.parametrize("garbage", ["", "x", "0" * 64, "\udcff"])
def test_corrupted_entry_is_a_miss_and_is_rewritten(cache_home: Path, garbage: str) -> None:
    body = component()
    assert outcome(body)[0] is True
    [entry] = entries(cache_home)
    entry.write_bytes(garbage.encode("utf-8", "surrogateescape"))
    assert not cache.seen_valid(entry.name)
    assert outcome(body) == (True, [])
    assert entry.read_text() == entry.name


def test_no_cache_env_writes_nothing(cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAIRPOLICY_NO_CACHE", "1")
    assert outcome(component()) == (True, [])
    assert entries(cache_home) == []


def test_unwritable_cache_folder_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # mkdir under a file fails
    monkeypatch.delenv("FAIRPOLICY_NO_CACHE", raising=False)
    assert outcome(component()) == (True, [])
    assert outcome(component()) == (True, [])


def test_concurrent_writers_agree(cache_home: Path) -> None:
    key = cache.key_for("k", {"a": 1})
    threads = [threading.Thread(target=cache.remember, args=(key,)) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert cache.seen_valid(key)
    assert [p.name for p in (cache_home / "fairpolicy" / "valid").iterdir()] == [key]


def test_key_covers_kind_document_and_versions() -> None:
    doc = {"a": "1"}
    assert cache.key_for("x", doc) == cache.key_for("x", {"a": "1"})
    assert cache.key_for("x", doc) != cache.key_for("y", doc)
    assert cache.key_for("x", doc) != cache.key_for("x", {"a": "2"})
    assert cache.key_for("x", doc) != cache.key_for("x", doc, ("pydantic",))
    assert cache.key_for("x", {"d": object()}) is None  # no canonical JSON: never cached


def test_versions_are_looked_up_once_per_process_and_a_missing_one_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.metadata

    asked: list[str] = []

    def version(name: str) -> str:
        asked.append(name)
        if name == "not-installed":
            raise importlib.metadata.PackageNotFoundError(name)
        return "1.2.3"

    monkeypatch.setattr(importlib.metadata, "version", version)
    cache._installed_version.cache_clear()
    try:
        for _ in range(3):
            assert cache._versions(("lib-a", "not-installed"))[1:] == [
                "lib-a=1.2.3",
                "not-installed=?",
            ]
        assert asked == ["lib-a", "not-installed", "not-installed", "not-installed"]
    finally:
        cache._installed_version.cache_clear()


MUTATION = st.tuples(
    st.sampled_from(
        [
            ("uuid",),
            ("metadata", "title"),
            ("metadata", "last-modified"),
            ("metadata", "oscal-version"),
            ("components", 0, "uuid"),
            ("components", 0, "type"),
            ("components", 0, "control-implementations", 0, "uuid"),
            ("components", 0, "control-implementations", 0, "implemented-requirements", 0, "uuid"),
            (
                "components",
                0,
                "control-implementations",
                0,
                "implemented-requirements",
                0,
                "control-id",
            ),
        ]
    ),
    st.one_of(
        st.text(max_size=12),
        st.sampled_from(["", " x", "3d4e5f60-7182-4a3b-8c4d-5e6f7a8b9c0e", "2026-01-01"]),
        st.integers(),
        st.none(),
        st.lists(st.text(max_size=3), max_size=2),
    ),
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(mutations=st.lists(MUTATION, min_size=1, max_size=3))
def test_property_warm_cache_equals_no_cache(
    cache_home: Path, mutations: list[tuple[tuple[Any, ...], Any]]
) -> None:
    body = component()
    for path, value in mutations:
        target: Any = body
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value
    outcome(component())  # a warm cache holding the valid original
    first = outcome(body)  # may store this document if valid
    again = outcome(body)  # may hit
    monkeypatch = pytest.MonkeyPatch()
    with monkeypatch.context() as m:
        m.setenv("FAIRPOLICY_NO_CACHE", "1")
        off = outcome(body)
    assert first == again == off


def test_cli_check_same_output_cold_warm_and_off(tmp_path: Path) -> None:
    """End to end: a valid and an invalid OSCAL policy, three CLI runs each."""
    data = tmp_path / "d.csv"
    data.write_text("y_true,y_pred,sex\n" + "1,1,F\n0,1,M\n1,0,F\n0,0,M\n" * 20)
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"component-definition": component()}))
    broken = component()
    broken["metadata"]["last-modified"] = "yesterday"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"component-definition": broken}))
    env_base = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "SOURCE_DATE_EPOCH": "1700000000"}
    import os

    def run(policy: Path, **extra: str) -> tuple[int, str]:
        env = dict(os.environ, **env_base, **extra)
        env["PYTHONPATH"] = str(REPO / "src")
        proc = subprocess.run(
            [sys.executable, "-m", "fairpolicy", "check", "--strict", str(policy), str(data)],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        return proc.returncode, proc.stdout + proc.stderr

    for policy in (good, bad):
        cold = run(policy)
        warm = run(policy)
        off = run(policy, FAIRPOLICY_NO_CACHE="1")
        assert cold == warm == off, policy.name
    assert run(good)[0] in (0, 1)
    assert run(bad)[0] == 2
    assert len(list((tmp_path / "cache" / "fairpolicy" / "valid").iterdir())) == 1


def test_load_policy_error_identical_with_cache(cache_home: Path, tmp_path: Path) -> None:
    broken = component()
    broken["components"][0]["type"] = ""
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"component-definition": broken}))
    messages = []
    for _ in range(2):
        with pytest.raises(PolicyError) as info:
            load_policy(path, strict=True)
        messages.append(info.value.render())
    assert messages[0] == messages[1]


def test_validate_nist_schema_cached_only_on_success(
    cache_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``fairpolicy validate``: the NIST schema check of a document that passed is skipped
    the next time; an invalid document prints the same messages cold, warm and off."""
    import io

    from fairpolicy import oscal_schema
    from fairpolicy.cli import main

    good = tmp_path / "good.json"
    good.write_text(json.dumps({"component-definition": component()}))
    broken = component()
    broken["metadata"]["last-modified"] = "yesterday"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"component-definition": broken}))

    def run(path: Path) -> tuple[int, str]:
        out = io.StringIO()
        return main(["validate", "--strict", str(path)], stdout=out), out.getvalue()

    cold_bad = run(bad)
    assert cold_bad[0] == 2 and "NIST" in cold_bad[1]
    assert run(good)[0] == 0
    stored = entries(cache_home)
    assert len(stored) == 2  # trestle and the NIST schema, for the good document only
    assert run(bad) == cold_bad
    with monkeypatch.context() as m:
        m.setenv("FAIRPOLICY_NO_CACHE", "1")
        assert run(bad) == cold_bad

    def boom(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("NIST check called on a cache hit")

    monkeypatch.setattr(oscal_schema, "check_document", boom)
    assert run(good)[0] == 0
    from fairpolicy.policy.validate import schema_errors

    assert schema_errors(good) == []
    with pytest.raises(AssertionError, match="NIST check called"):
        schema_errors(bad)
