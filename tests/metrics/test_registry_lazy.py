"""The registry names its metric functions by reference, imported on first read (issue 17,
a lean start). Every entry must resolve to the function of that name in its family module,
and the binary metrics' vectorised twins to ``binary.BATCH``'s entry, exactly as when the
registry imported the families itself."""

from __future__ import annotations

import dataclasses
import importlib
import pickle
from typing import Any

import pytest

from fairpolicy.metrics.base import MetricSpec, Ref
from fairpolicy.metrics.registry import REGISTRY


@pytest.mark.parametrize("key", sorted(REGISTRY))
def test_every_spec_resolves_to_its_family_function(key: str) -> None:
    spec = REGISTRY[key]
    fn = spec.fn
    assert callable(fn) and not isinstance(fn, Ref)
    module = importlib.import_module(fn.__module__)
    assert module.__name__.startswith("fairpolicy.metrics.")
    assert getattr(module, fn.__name__) is fn
    assert spec.fn is fn  # resolved once, kept
    binary = importlib.import_module("fairpolicy.metrics.binary")
    if module is binary:
        assert spec.batch is binary.BATCH.get(fn)
    assert not isinstance(spec.batch, Ref)
    assert spec.formula  # the docstring `metrics show` prints


def test_a_spec_built_from_a_reference_equals_one_built_from_the_function() -> None:
    binary = importlib.import_module("fairpolicy.metrics.binary")
    common: dict[str, Any] = dict(key="k", summary="s", inputs=("target",), tasks=("binary",))
    lazy = MetricSpec(
        fn=Ref("fairpolicy.metrics.binary", "fpr_diff"),  # type: ignore[arg-type]
        batch=Ref("fairpolicy.metrics.binary", "fpr_diff", "fairpolicy.metrics.binary:BATCH"),  # type: ignore[arg-type]
        **common,
    )
    eager = MetricSpec(fn=binary.fpr_diff, batch=binary.BATCH[binary.fpr_diff], **common)
    assert lazy == eager and hash(lazy) == hash(eager)
    assert dataclasses.replace(lazy, key="k2").fn is binary.fpr_diff
    plain = dataclasses.replace(eager, batch=None)  # a twin is a closure: not picklable
    lazy_plain = MetricSpec(fn=Ref("fairpolicy.metrics.binary", "fpr_diff"), **common)  # type: ignore[arg-type]
    assert pickle.loads(pickle.dumps(lazy_plain)) == plain
    with pytest.raises(TypeError):
        MetricSpec(**common)  # fn stays required


def test_a_wrong_reference_fails_when_read() -> None:
    spec = MetricSpec(
        key="k",
        fn=Ref("fairpolicy.metrics.binary", "no_such_metric"),  # type: ignore[arg-type]
        summary="s",
        inputs=(),
        tasks=(),
    )
    with pytest.raises(AttributeError):
        _ = spec.fn
