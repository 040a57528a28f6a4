"""The parsed-document cache hands each reader its own copy (issue 17: a check reads its
policy twice). The copy is made by ``oscal._deep_copy`` instead of ``copy.deepcopy``;
it must be what ``copy.deepcopy`` gives: equal values and types, the same line numbers,
aliases still one shared object, and nothing mutable shared with the cached original."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from fairpolicy.policy import oscal

DOCUMENTS = [
    "- control-id: a\n  props:\n  - {name: metric_key, value: x}\n  - {name: threshold, "
    "value: '0.2'}\n",
    "base: &b {name: threshold, value: 0.5}\nuses: [*b, *b]\nmore:\n  <<: *b\n  extra: 1\n",
    "s: !!set {a, b}\no: !!omap [{x: {deep: [1]}}, {y: 2}]\np: !!pairs [{k: v}]\n",
    "when: 2026-01-01\nstamp: 2026-01-01T10:00:00Z\nbin: !!binary aGVsbG8=\n",
    '{"catalog": {"uuid": "u", "controls": [{"id": "c", "props": []}]}}',
    "shared: &l [1, {a: &m {b: 2}}]\nagain: *l\nm: *m\n",
    "[]\n",
    "plain\n",
]


def _walk(obj: Any) -> list[Any]:
    """Every object of a document, depth first, each once (aliases visited once)."""
    seen: set[int] = set()
    out: list[Any] = []

    def go(o: Any) -> None:
        if id(o) in seen:
            return
        seen.add(id(o))
        out.append(o)
        if isinstance(o, dict):
            for k, v in o.items():
                go(k)
                go(v)
        elif isinstance(o, list | tuple | set | frozenset):
            for v in o:
                go(v)

    go(obj)
    return out


def _shape(obj: Any) -> list[Any]:
    """Types, line numbers and which positions are the same object (aliases)."""
    objs = _walk(obj)
    index = {id(o): i for i, o in enumerate(objs)}
    shape = []
    for o in objs:
        children: list[Any] = []
        if isinstance(o, dict):
            children = [index[id(x)] for kv in o.items() for x in kv]
        elif isinstance(o, list | tuple):
            children = [index[id(x)] for x in o]
        shape.append((type(o).__name__, oscal.line_of(o), children))
    return shape


@pytest.mark.parametrize("text", DOCUMENTS)
def test_the_copy_is_what_deepcopy_gives(text: str) -> None:
    original = oscal.parse_text(text, None)
    fast = oscal._deep_copy(original, {})
    slow = copy.deepcopy(original)
    assert fast == slow == original
    assert _shape(fast) == _shape(slow) == _shape(original)
    mutable = {id(o) for o in _walk(original) if isinstance(o, dict | list | set)}
    assert not any(id(o) in mutable for o in _walk(fast))


def test_a_reader_changing_its_copy_changes_no_other_reader(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(DOCUMENTS[1])
    first, sha = oscal.read_document(path)
    first["base"]["value"] = "changed"
    first["uses"].append("more")
    second, sha2 = oscal.read_document(path)
    assert sha2 == sha
    assert second["base"]["value"] == 0.5 and len(second["uses"]) == 2
    assert second["uses"][0] is second["base"]  # the alias survives the copy
