"""``docs/architecture.md`` names only things that exist, and its recipes work.

Every backticked ``fairpolicy.…`` name must import (a module) or resolve as an attribute
of the longest importable prefix (a function, class or constant); every backticked repo
path (``tests/…``, ``docs/…``, ``benchmarks/…``) must exist. The "add a metric" recipe is
then followed in a test — a toy metric registered in ``REGISTRY`` is loaded from a policy
and evaluated through ``fairpolicy.check`` and the CLI, against a value computed by hand —
and so is "add an output format" (a toy formatter in ``FORMATS`` rendered by ``check -o``).
"""

from __future__ import annotations

import importlib
import io
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import fairpolicy
from fairpolicy.cli import main
from fairpolicy.formatters import FORMATS, RenderOptions
from fairpolicy.metrics.base import MetricSpec, MetricValue
from fairpolicy.metrics.registry import REGISTRY
from fairpolicy.results import Results
from fairpolicy.stats import GroupStats

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "architecture.md"
TEXT = DOC.read_text(encoding="utf-8")

NAMES = sorted(set(re.findall(r"`(fairpolicy(?:\.\w+)+)`", TEXT)))
PATHS = sorted(set(re.findall(r"`((?:tests|docs|benchmarks|src)/[\w./-]*)`", TEXT)))


def resolve(dotted: str) -> Any:
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:i]))
        except ModuleNotFoundError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ModuleNotFoundError(dotted)


def test_doc_names_something() -> None:
    assert len(NAMES) > 20 and len(PATHS) > 3


@pytest.mark.parametrize("name", NAMES)
def test_named_module_or_attribute_exists(name: str) -> None:
    try:
        resolve(name)
    except (ImportError, AttributeError) as exc:
        pytest.fail(f"{DOC.name} names `{name}`, which does not exist ({exc}); update the doc")


@pytest.mark.parametrize("path", PATHS)
def test_named_path_exists(path: str) -> None:
    assert (REPO / path).exists(), f"{DOC.name} names `{path}`, which does not exist"


# ---------------------------------------------------------------- recipe: add a metric

TOY = "toy_max_base_rate"


def toy_max_base_rate(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """max_g P(Y = 1 | A = g): the highest base rate of any group."""
    assert stats.positive is not None
    pos = stats.counts[:, stats.positive, :].sum(axis=1)
    n = stats.counts.sum(axis=(1, 2))
    rates = pos / n
    return MetricValue(value=float(np.max(rates)))


SPEC = MetricSpec(
    key=TOY,
    fn=toy_max_base_rate,
    summary="the highest base rate of any group (a toy for the architecture recipe)",
    inputs=("target", "prediction", "dimension"),
    tasks=("binary",),
    ideal=0.0,
    value_range=(0.0, 1.0),
    null_stratum=None,
)


def write_case(tmp_path: Path, threshold: str) -> tuple[Path, Path, float]:
    rng = np.random.default_rng(5)
    rows = []
    for group, n, rate in (("F", 60, 0.6), ("M", 50, 0.3)):
        y = (rng.random(n) < rate).astype(int)
        p = rng.integers(0, 2, n)
        rows += [(int(a), int(b), group) for a, b in zip(y, p, strict=True)]
    data = tmp_path / "d.csv"
    data.write_text("y_true,y_pred,sex\n" + "".join(f"{a},{b},{g}\n" for a, b, g in rows))
    by_group: dict[str, list[int]] = {}
    for a, _b, g in rows:
        by_group.setdefault(g, []).append(a)
    expected = max(sum(v) / len(v) for v in by_group.values())  # by hand, from the rows
    policy = tmp_path / "p.yaml"
    policy.write_text(
        f"- control-id: toy\n  props:\n  - {{name: metric_key, value: {TOY}}}\n"
        f"  - {{name: threshold, value: '{threshold}'}}\n  - {{name: operator, value: '<'}}\n"
        "  - {name: input.target, value: y_true}\n  - {name: input.prediction, value: y_pred}\n"
        "  - {name: input.dimension, value: sex}\n"
    )
    return policy, data, expected


@pytest.fixture
def toy_metric(monkeypatch: pytest.MonkeyPatch) -> None:
    assert TOY not in REGISTRY
    monkeypatch.setitem(REGISTRY, TOY, SPEC)


@pytest.mark.usefixtures("toy_metric")
@pytest.mark.parametrize(("threshold", "status", "code"), [("0.9", "pass", 0), ("0.2", "fail", 1)])
def test_recipe_add_a_metric(tmp_path: Path, threshold: str, status: str, code: int) -> None:
    policy, data, expected = write_case(tmp_path, threshold)
    results = fairpolicy.check(str(policy), str(data))
    [finding] = results.findings
    assert finding.value == pytest.approx(expected, abs=1e-12)
    assert finding.status == status
    assert results.exit_code == code
    out = io.StringIO()
    assert main(["check", str(policy), str(data), "-o", "json"], stdout=out) == code


def test_recipe_metric_unknown_without_registration(tmp_path: Path) -> None:
    """The recipe's step 2 is what makes the key exist: without it, exit 2."""
    policy, data, _ = write_case(tmp_path, "0.9")
    out = io.StringIO()
    assert main(["check", str(policy), str(data)], stdout=out) == 2


# ---------------------------------------------------------------- recipe: add a format


def render(results: Results, opts: RenderOptions) -> str:
    """The toy format: one line per finding."""
    return "".join(f"{f.control_id}={f.status}\n" for f in results.findings)


@pytest.mark.usefixtures("toy_metric")
def test_recipe_add_an_output_format(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(FORMATS, "toy", __name__)
    policy, data, _ = write_case(tmp_path, "0.2")
    out = tmp_path / "out.txt"
    assert main(["check", str(policy), str(data), "-o", f"toy={out}"], stdout=io.StringIO()) == 1
    assert out.read_text() == "toy=fail\n"
