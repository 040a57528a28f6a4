"""Simple YAML policies are parsed by libyaml (issue 17, a lean start) with the same
constructors as the pure-Python loader. Whenever the fast path answers, it must answer
exactly what the pure-Python path answers — values, types and the line of every mapping —
and it must never accept a document the pure-Python path refuses. Checked over YAML that
PyYAML writes in every style, over the repository's own YAML files, and over those files
with YAML's syntax characters edited in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from fairpolicy.errors import PolicyError
from fairpolicy.policy import oscal

REPO = Path(__file__).resolve().parents[2]
FILES = sorted(
    p
    for p in REPO.rglob("*.y*ml")
    if ".git" not in p.parts and p.suffix in (".yaml", ".yml") and p.stat().st_size < 200_000
)

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(10**30), 10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | st.sampled_from(
        ["0.8", "1e5", "010", "0x1A", "yes", "~", "null", "1_000", ".inf", "<", ">=", "a: b"]
    )
    | st.sampled_from(["2026-01-01", "1:30", "a#b", "a #b", "- x", "[x]", "{x}", "'q'", '"q"'])
)
documents = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=25,
)


def slow(text: str) -> Any:
    """What the pure-Python loader reads (PolicyError: it refuses the document)."""
    loader = oscal._Loader(text)
    try:
        data = loader.get_single_data()
    except yaml.YAMLError:
        raise PolicyError("refused") from None
    finally:
        loader.dispose()
    if loader.duplicates:
        raise PolicyError("duplicates")
    return data


def lines(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [oscal.line_of(value), *(x for kv in value.items() for v in kv for x in lines(v))]
    if isinstance(value, list):
        return [x for v in value for x in lines(v)]
    return [repr(type(value)), repr(value)]


def same(text: str) -> bool:
    """The fast path answers what the slow one does (or declines); True when it answered."""
    fast = oscal._parse_plain_yaml(text)
    if fast is None:
        return False
    expected = slow(text)  # raises if the slow path refuses what the fast path read
    assert fast == expected
    assert lines(fast) == lines(expected)
    return True


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(st.text(max_size=10), documents, max_size=4) | st.lists(documents, max_size=4),
    st.sampled_from([None, True, False]),
    st.sampled_from([None, "'", '"']),
    st.sampled_from([2, 4]),
    st.sampled_from([20, 80, 1000]),
    st.booleans(),
    st.booleans(),
)
def test_the_fast_path_reads_what_the_python_loader_reads(
    doc: Any,
    flow: bool | None,
    style: str | None,
    indent: int,
    width: int,
    unicode: bool,
    start: bool,
) -> None:
    text = yaml.safe_dump(
        doc,
        default_flow_style=flow,
        default_style=style,
        indent=indent,
        width=width,
        allow_unicode=unicode,
        explicit_start=start,
    )
    same(text)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_the_repository_files_read_alike(path: Path) -> None:
    same(path.read_text(encoding="utf-8-sig"))


EDITS = [*" :-,[]{}#'\"\n\r|>%@`=~?&*!\\\t.", "\n  ", ": ", "- ", "\n- ", "---\n", "..."]


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from(FILES),
    st.lists(st.tuples(st.floats(0, 1), st.sampled_from(EDITS)), min_size=1, max_size=3),
)
def test_edited_files_read_alike_or_are_declined(
    path: Path, edits: list[tuple[float, str]]
) -> None:
    text = path.read_text(encoding="utf-8-sig")[:3000]
    for where, what in edits:
        i = int(where * len(text))
        text = text[:i] + what + text[i:]
    try:
        same(text)
    except PolicyError:
        pytest.fail(f"the fast path read a document the pure-Python loader refuses: {text!r}")


def test_the_fast_path_is_taken_for_a_bare_list_policy() -> None:
    text = (
        "# a policy\n- control-id: dp\n  props:\n"
        "  - {name: metric_key, value: demographic_parity_diff}\n"
        "  - {name: threshold, value: '0.2'}\n  - {name: operator, value: '<'}\n"
        "  - name: input.dimension\n    value: 'sex,race'\n"
    )
    assert same(text)
    assert oscal.line_of(oscal._parse_plain_yaml(text)[0]) == 2


def test_the_fast_path_declines_what_it_could_read_differently() -> None:
    for text in (
        "a: &x 1\nb: *x\n",  # aliases: the Python loader counts and limits them
        "a: !!str 1\n",  # tags
        "a: |\n  text\n",  # block scalars
        "a: >\n  text\n",
        "{a: x?y}\n",  # '?' ends a plain scalar in PyYAML's flow context only
        "a: 'one\n  two'\n",  # a scalar folded over lines
        "a: 1\na: 2\n",  # a duplicate key: the Python loader reports it
        "%YAML 1.1\n---\na: 1\n",  # directives
        "a:\t1\n",  # tabs
        "a: \ufeffb\n",  # a BOM
        "a: b\\c\n",  # backslashes
        "<<: {a: 1}\n",  # merge keys
        "a: " + "x" * 1200 + "\n",  # long lines
        "- " * 60 + "x\n",  # deep
    ):
        assert oscal._parse_plain_yaml(text) is None, text
