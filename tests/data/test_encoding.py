"""The fast encoders agree exactly with the straightforward Arrow formulations they replace.

Group columns (``encode_dimension``), label sets (``distinct_values``), label codes
(``label_codes``) and the block-wise count table (``_blocked_counts``) are checked against
reference implementations over odd inputs: empty and whitespace-only strings, nulls,
unicode, numeric-looking text, dictionaries with unused or null entries, sliced arrays,
one chunk and many chunks.
"""

from __future__ import annotations

import hashlib
import io
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pytest

from fairpolicy.data.bind.codes import arrow_values, distinct_values, label_codes, validity
from fairpolicy.data.bind.groups import encode_dimension
from fairpolicy.data.sources import read_table
from fairpolicy.errors import DataError
from fairpolicy.stats import counts as stats

ODD = [
    "F",
    " F ",
    "F ",
    "",
    "   ",
    None,
    "01",
    "1",
    "1.0",
    "é",
    "e\u0301",
    "中文",
    "🙂",
    "None",
    "nan",
    "f",
    "Zebra",
    "a & b",
    "\tM\n",
]


def reference_encode_dimension(arr: pa.ChunkedArray) -> tuple[np.ndarray, list[str]]:
    """The previous implementation: trim, empty → null, sorted unique, index_in; a float
    column's NaN is null and its -0.0 is 0 (one group on every engine)."""
    if pa.types.is_floating(arr.type):
        values = [None if v is None or v != v else v + 0.0 for v in arr.to_pylist()]
        arr = pa.chunked_array([pa.array(values, pa.float64())])
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        arr = arr.cast(pa.string())
    arr = pc.utf8_trim_whitespace(arr)
    arr = pc.if_else(pc.equal(arr, ""), pa.scalar(None, pa.string()), arr)
    uniq = sorted(v for v in pc.unique(arr).to_pylist() if v is not None)
    codes = pc.index_in(arr, value_set=pa.array(uniq, type=pa.string()))
    out = codes.to_numpy(zero_copy_only=False)
    out = np.where(np.isnan(out), -1, out) if out.dtype.kind == "f" else out
    return np.asarray(out, dtype=np.int64), uniq


def chunked(values: list[Any], type: pa.DataType | None = None, sizes: int = 0) -> pa.ChunkedArray:
    """One chunk, or chunks of ``sizes`` rows cut from a larger array (with offsets)."""
    arr = pa.array(values, type=type)
    if not sizes:
        return pa.chunked_array([arr])
    parts = [arr.slice(i, sizes) for i in range(0, len(arr), sizes)]
    return pa.chunked_array([arr.slice(0, 0), *parts, arr.slice(len(arr), 0)], type=arr.type)


def assert_same_dimension(arr: pa.ChunkedArray) -> None:
    codes, names = encode_dimension(arr)
    ref_codes, ref_names = reference_encode_dimension(arr)
    assert names == ref_names
    assert codes.dtype.kind == "i"
    assert np.iinfo(codes.dtype).max >= len(names)  # the "missing" slot fits
    np.testing.assert_array_equal(codes.astype(np.int64), ref_codes)


def rows(n: int, seed: int = 0) -> list[Any]:
    rng = np.random.default_rng(seed)
    return [ODD[i] for i in rng.integers(0, len(ODD), n)]


@pytest.mark.parametrize("sizes", [0, 1, 7, 64])
def test_encode_dimension_strings(sizes: int) -> None:
    assert_same_dimension(chunked(rows(300), pa.string(), sizes))
    assert_same_dimension(chunked(rows(300, 1), pa.large_string(), sizes))


@pytest.mark.parametrize("sizes", [0, 5])
def test_encode_dimension_dictionary_input(sizes: int) -> None:
    arr = chunked(rows(200), pa.string(), sizes)
    assert_same_dimension(pc.dictionary_encode(arr))
    # a dictionary holding values no row uses, a null entry, and null indices
    dictionary = pa.array(["unused", "B", None, " A", "", "B "])
    indices = pa.array([1, 3, None, 2, 4, 5, 1, None, 3], type=pa.int32())
    arr = pa.DictionaryArray.from_arrays(indices, dictionary)
    assert_same_dimension(pa.chunked_array([arr, arr.slice(2, 5)]))
    # dictionary of integers
    ints = pa.DictionaryArray.from_arrays(pa.array([0, 1, 1, None], pa.int8()), pa.array([10, 2]))
    assert_same_dimension(pa.chunked_array([ints]))


def test_encode_dimension_other_types() -> None:
    assert_same_dimension(chunked([3, 1, None, 3, 20, -1, 1] * 5, pa.int64(), 4))
    assert_same_dimension(chunked([1.5, None, 2.0, float("nan"), 1.5] * 3, pa.float64(), 2))
    assert_same_dimension(chunked([0.0, -0.0, float("nan"), 1.0, -0.0] * 3, pa.float32(), 4))
    assert encode_dimension(chunked([0.0, -0.0, float("nan")], pa.float64()))[1] == ["0"]
    assert_same_dimension(chunked([True, None, False] * 4, pa.bool_(), 5))
    assert_same_dimension(pa.chunked_array([pa.nulls(5), pa.nulls(3)]))
    assert_same_dimension(chunked(["", "  ", None], pa.string()))  # nothing but missing


def test_encode_dimension_wide_code_types() -> None:
    for n in (127, 128, 40_000):
        values = [f"g{i:05d}" for i in range(n)] + [None]
        codes, names = encode_dimension(chunked(values, pa.string(), 999))
        assert len(names) == n
        assert np.iinfo(codes.dtype).max >= n
        assert codes[-1] == -1 and codes[n - 1] == n - 1


def test_csv_dictionary_read_equals_string_read(tmp_path: Path) -> None:
    """Reading a group column dictionary-encoded gives the groups the text read gives."""
    values = rows(3000, 2)

    def cell(v: Any) -> str:
        if v is None:
            return "NA"
        v = v.replace("\n", " ")  # quoted newlines need newlines_in_values, not used here
        return '"' + v.replace('"', '""') + '"' if any(c in v for c in ',"\n\t ') else v

    text = "g,y\n" + "".join(f"{cell(v)},{i % 2}\n" for i, v in enumerate(values))
    text += '"",1\nnull,0\nN/A,1\n"NA",0\n'
    for block in (1 << 10, 1 << 20):
        tables = [
            pacsv.read_csv(
                io.BytesIO(text.encode()),
                read_options=pacsv.ReadOptions(block_size=block),
                # group columns: only an empty cell is missing, "NA"/"null"/"N/A" are names
                convert_options=pacsv.ConvertOptions(
                    column_types={"g": t}, strings_can_be_null=False
                ),
            )
            for t in (pa.string(), pa.dictionary(pa.int32(), pa.string()))
        ]
        assert tables[0].column("g").num_chunks == tables[1].column("g").num_chunks
        if block == 1 << 10:
            assert tables[1].column("g").num_chunks > 10
        ref_codes, ref_names = reference_encode_dimension(tables[0].column("g"))
        codes, names = encode_dimension(tables[1].column("g"))
        assert names == ref_names
        np.testing.assert_array_equal(codes.astype(np.int64), ref_codes)
    # and read_table reads group columns that way
    path = tmp_path / "d.csv"
    path.write_text(text)
    table = read_table(path, ["g", "y"], string_columns=["g"])
    assert pa.types.is_dictionary(table.columns["g"].type)
    codes, names = encode_dimension(table.columns["g"])
    assert names == ref_names
    np.testing.assert_array_equal(codes.astype(np.int64), ref_codes)


def reference_codes(arr: pa.ChunkedArray, classes: list[Any], integer: bool) -> np.ndarray:
    value_set = pa.array(classes, type=pa.int64() if integer else pa.string())
    return np.asarray(pc.index_in(arr, value_set=value_set).to_numpy(zero_copy_only=False))


@pytest.mark.parametrize("sizes", [0, 3])
def test_label_codes_and_distinct_values_integers(sizes: int) -> None:
    rng = np.random.default_rng(3)
    for values in (
        rng.integers(0, 3, 100),
        rng.integers(-5, 5, 100),
        rng.integers(7, 9, 100),
        np.array([0, 1 << 40, -(1 << 40), 5] * 10),  # a range too wide for a lookup table
    ):
        arr = chunked(values.tolist(), pa.int64(), sizes)
        other = chunked(values[::-1].tolist(), pa.int64(), sizes)
        observed = distinct_values([arr, other])
        assert observed == sorted(set(values.tolist()))
        assert all(type(v) is int for v in observed)
        classes = sorted({*observed, 100})  # classes may include unseen values
        codes = label_codes(arr, classes, True)
        np.testing.assert_array_equal(codes, reference_codes(arr, classes, True))
        assert codes.dtype == np.int8


@pytest.mark.parametrize("sizes", [0, 4])
def test_label_codes_and_distinct_values_strings(sizes: int) -> None:
    values = [v for v in rows(120, 4) if v is not None] + ["yes", "no", "1", "01"]
    arr = chunked(values, pa.string(), sizes)
    observed = distinct_values([arr])
    assert observed == sorted(set(values))
    classes = [*observed, "(other)"]
    np.testing.assert_array_equal(
        label_codes(arr, classes, False), reference_codes(arr, classes, False)
    )


def test_label_codes_many_classes_use_a_wider_type() -> None:
    arr = chunked(list(range(300)), pa.int64(), 50)
    codes = label_codes(arr, list(range(300)), True)
    assert codes.dtype == np.int16
    np.testing.assert_array_equal(codes, np.arange(300))


def test_values_and_validity_follow_slice_offsets() -> None:
    arr = pa.array([1, None, 3, 4, None, 6, 7, 8, 9, None, 11], type=pa.int32()).slice(3, 7)
    valid = validity(arr)
    assert valid is not None
    np.testing.assert_array_equal(valid, [True, False, True, True, True, True, False])
    np.testing.assert_array_equal(arrow_values(arr)[valid], [4, 6, 7, 8, 9])
    assert validity(pa.array([1.0, 2.0]).slice(1)) is None
    assert len(arrow_values(pa.array([], type=pa.int64()))) == 0


@pytest.mark.parametrize("n", [0, 1, 6, 7, 8, 500])
def test_blocked_counts_equal_one_bincount(monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    monkeypatch.setattr(stats, "_BLOCK_ROWS", 7)  # many blocks, a ragged last one
    rng = np.random.default_rng(n)
    dims = {
        "a": (rng.integers(-1, 2, n).astype(np.int8), ["x", "y"]),
        "b": (rng.integers(0, 3, n).astype(np.int8), ["p", "q", "r"]),
        "c": (rng.integers(-1, 4, n).astype(np.int16), ["0", "1", "2", "3"]),
    }
    t = rng.integers(0, 3, n).astype(np.int8)
    p = rng.integers(0, 3, n).astype(np.int8)
    cols = list(dims)
    radix = [len(dims[c][1]) + 1 for c in cols]
    cell = np.zeros(n, dtype=np.int64)
    for c, card in zip(cols, radix, strict=True):
        codes, names = dims[c]
        cell = cell * card + np.where(codes < 0, len(names), codes)
    expected = stats.confusion_counts(cell, t, p, int(np.prod(radix)), 3)
    got = stats._blocked_counts([dims[c] for c in cols], radix, t, p, int(np.prod(radix)), 3)
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == np.int64
    # and the full builder gives the same groups as before, block size or not
    requests = [("a",), ("b", "c"), ("a", "b", "c")]
    small = stats.build_group_stats(t, p, ("0", "1", "2"), dims, requests, None)
    monkeypatch.setattr(stats, "_BLOCK_ROWS", 1 << 16)
    big = stats.build_group_stats(t, p, ("0", "1", "2"), dims, requests, None)
    monkeypatch.setattr(stats, "_BLOCK_BINS", 0)  # the full-index path
    full = stats.build_group_stats(t, p, ("0", "1", "2"), dims, requests, None)
    for req in requests:
        for other in (big, full):
            assert small[req].groups == other[req].groups
            assert small[req].unknown_n == other[req].unknown_n
            np.testing.assert_array_equal(small[req].counts, other[req].counts)


def test_hash_runs_beside_the_read_and_matches(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text("y,g\n" + "1,a\n0,b\n" * 5000)
    table = read_table(path, ["y", "g"], string_columns=["g"])
    assert table.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    before = threading.active_count()
    bad = tmp_path / "bad.csv"
    bad.write_text("y,g\n1,a\n1,a,extra\n")
    with pytest.raises(DataError):
        read_table(bad, ["y", "g"], string_columns=["g"])
    assert threading.active_count() == before  # the hashing thread was stopped and joined


def test_a_csv_check_does_not_import_pandas(tmp_path: Path) -> None:
    """pandas costs 0.2 s of start-up; a CSV check on the fast path never needs it."""
    from tests.helpers import balanced_csv, control, write_policy

    data = balanced_csv(tmp_path)
    policy = write_policy(tmp_path, control())
    code = (
        "import sys, io\n"
        "from fairpolicy.cli import main\n"
        f"rc = main(['check', {str(policy)!r}, {str(data)!r}], io.StringIO())\n"
        "assert rc in (0, 1), rc\n"
        "print('pandas' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr


def _plain(path: Path, column: str) -> pa.ChunkedArray:
    return pacsv.read_csv(path).column(column)


@pytest.mark.parametrize(
    ("tail", "expected_type"),
    [
        ("1\n-128\n127\n", pa.int8()),  # fits: read as int8
        ("1\n300\n", pa.int64()),  # a later value does not fit int8: inferred again
        ("1\n1.5\n", pa.float64()),  # a later fraction: the type inference gives
        ("1\nyes\n", pa.string()),
        ("NA\n\n0\n", pa.int8()),  # missing values stay missing
    ],
)
def test_small_integer_columns_read_as_int8_or_as_inferred(
    tmp_path: Path, tail: str, expected_type: pa.DataType
) -> None:
    path = tmp_path / "d.csv"
    # the first block (64 KiB) holds small integers only
    path.write_text(
        "y,g\n" + "0,a\n1,b\n" * 20_000 + "".join(f"{v},c\n" for v in tail.split("\n")[:-1])
    )
    table = read_table(path, ["y", "g"], string_columns=["g"])
    col = table.columns["y"]
    assert col.type == expected_type
    plain = _plain(path, "y")
    assert col.to_pylist() == plain.to_pylist()
    assert col.null_count == plain.null_count


def test_check_results_do_not_depend_on_the_int8_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fairpolicy
    from fairpolicy.data.sources import arrow_files

    root = Path(__file__).resolve().parents[2] / "examples"
    for example in ("credit", "dermatology"):
        policy, data = root / example / "policy.yaml", root / example / "predictions.csv"
        narrow = fairpolicy.check(policy, data, deterministic=True).model_dump(mode="json")
        with monkeypatch.context() as m:
            m.setattr(arrow_files, "_small_int_columns", lambda path, columns: [])
            wide = fairpolicy.check(policy, data, deterministic=True).model_dump(mode="json")
        assert narrow == wide
