"""Plain JSON policies are parsed by libyaml (issue 17, a lean start) with the same
constructors as the pure-Python loader: the property below checks that whenever the fast
path answers, it answers exactly what the pure-Python path answers — values, types and the
line of every mapping — over generated JSON written with any layout."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from fairpolicy.policy import oscal

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(10**30), 10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | st.sampled_from(["0.8", "1e5", "010", "0x1A", "yes", "~", "null", "1_000", ".inf", "<"])
)
documents = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=25,
)


def slow(text: str) -> Any:
    loader = oscal._Loader(text)
    try:
        data = loader.get_single_data()
    finally:
        loader.dispose()
    return None if loader.duplicates else data


def lines(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [oscal.line_of(value), *(x for v in value.values() for x in lines(v))]
    if isinstance(value, list):
        return [x for v in value for x in lines(v)]
    return [repr(type(value)), repr(value)]


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(st.text(max_size=10), documents, max_size=4) | st.lists(documents, max_size=4),
    st.sampled_from([None, 0, 1, 2, 4]),
    st.booleans(),
    st.booleans(),
)
def test_the_fast_path_reads_what_the_python_loader_reads(
    doc: Any, indent: int | None, ascii_only: bool, crlf: bool
) -> None:
    text = json.dumps(doc, indent=indent, ensure_ascii=ascii_only)
    if crlf:
        text = text.replace("\n", "\r\n")
    fast = oscal._parse_plain_json(text)
    if fast is None:
        return
    expected = slow(text)
    assert fast == expected
    assert lines(fast) == lines(expected)


def test_the_fast_path_is_taken_for_a_plain_oscal_document() -> None:
    text = json.dumps({"catalog": {"uuid": "u", "controls": [{"id": "c", "props": []}]}}, indent=2)
    fast = oscal._parse_plain_json(text)
    assert fast is not None and fast == slow(text)
    assert oscal.line_of(fast["catalog"]["controls"][0]) == 5


def test_the_fast_path_declines_what_it_could_read_differently() -> None:
    for text in (
        '{"a":\t1}',  # tabs: the Python loader may refuse them
        '{"a": "\\ud83d\\ude00"}',  # surrogate escapes
        '{"a": 1, "a": 2}',  # a duplicate key: the Python loader reports it
        '{"a": "x\u0085y"}',  # a line break only YAML sees
        "- a: 1",  # YAML, not JSON
        '{"' + "k" * 200 + '": 1}',  # a key near YAML's simple-key limit
        "[" * 80 + "]" * 80,  # deep
    ):
        assert oscal._parse_plain_json(text) is None, text
