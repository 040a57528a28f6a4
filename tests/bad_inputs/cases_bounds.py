"""Bad-input rows of the bounds area: caps on the work a policy asks for, inputs that are
not regular files, hrefs outside the policy's folder, file types named wrongly, nested
columns. Collected into ``cases.CASES`` (ids prefixed ``bounds-``).

Which row covers each item of issue 13 (the rest, which the matrix cannot express — the
environment, ``export``, the Python API, stderr of a DuckDB run, many-group reports — is
in ``test_bounds.py``):

- p_value / --p-value cap: bounds-p-value-prop-over-cap, bounds-p-value-flag-over-cap,
  bounds-p-value-policy-wide-over-cap (metadata.props)
- ci / --bootstrap cap: bounds-ci-prop-over-cap, bounds-bootstrap-flag-over-cap,
  bounds-resampled-cells-over-cap; estimated time (--max-resample-seconds):
  bounds-permutation-time-over-cap
- num_classes / --num-classes cap: bounds-num-classes-prop-over-cap,
  bounds-num-classes-flag-over-cap, bounds-classes-in-data-over-cap
- distinct groups (--max-groups): bounds-ten-thousand-and-one-groups, bounds-max-groups-flag,
  bounds-count-table-over-max-cells
- FIFO as policy / data / imported href: bounds-fifo-policy, bounds-fifo-data,
  bounds-fifo-href, bounds-character-device-data
- href confinement: bounds-href-parent-dir, bounds-href-absolute, bounds-href-file-url,
  bounds-href-allowed-with-allow-path, bounds-href-url
- nested Parquet dimension: bounds-parquet-list-dimension, bounds-parquet-struct-dimension
- file types: bounds-gzip-named-csv, bounds-zip-named-csv, bounds-zstd-named-csv,
  bounds-bz2-named-csv, bounds-parquet-named-csv, bounds-utf16-without-bom,
  bounds-gz-that-is-not-gzip, bounds-csv-named-parquet, bounds-csv-gz-read-directly,
  bounds-csv-bz2-read-directly, bounds-csv-zst-read-directly
"""

from __future__ import annotations

import bz2
import gzip
import io
import os
import zipfile
from pathlib import Path

from tests.bad_inputs.cases import DEFAULT_DATA, Case, policy, rows

BIG = "100000000"


def _fifo(name: str) -> object:
    """A data callable that writes the default data and makes ``name`` a FIFO."""

    def make(tmp: Path) -> Path:
        data = tmp / "data.csv"
        data.write_text(DEFAULT_DATA)
        os.mkfifo(tmp / name)
        return tmp / name if name.endswith(".csv") else data

    return make


def _groups(n: int) -> str:
    return "y_true,y_pred,sex\n" + "".join(f"{i % 2},{(i // 2) % 2},g{i}\n" for i in range(n))


def _parquet(kind: str) -> object:
    def make(tmp: Path) -> Path:
        import pyarrow as pa
        import pyarrow.parquet as pq

        n = 120
        sex = [[i % 2] for i in range(n)] if kind == "list" else [{"a": i % 2} for i in range(n)]
        table = pa.table(
            {"y_true": [i % 2 for i in range(n)], "y_pred": [(i // 2) % 2 for i in range(n)]}
        ).append_column("sex", pa.array(sex))
        path = tmp / "data.parquet"
        pq.write_table(table, path)
        return path

    return make


def _compressed(kind: str, name: str) -> object:
    def make(tmp: Path) -> Path:
        raw = DEFAULT_DATA.encode()
        if kind == "gzip":
            blob = gzip.compress(raw, mtime=0)
        elif kind == "bz2":
            blob = bz2.compress(raw)
        elif kind == "zstd":
            import pyarrow as pa

            buf = pa.BufferOutputStream()
            with pa.CompressedOutputStream(buf, "zstd") as out:
                out.write(raw)
            blob = buf.getvalue().to_pybytes()
        elif kind == "zip":
            sink = io.BytesIO()
            with zipfile.ZipFile(sink, "w") as zf:
                zf.writestr("data.csv", raw)
            blob = sink.getvalue()
        elif kind == "parquet":
            import pyarrow.csv as pacsv
            import pyarrow.parquet as pq

            sink = io.BytesIO()
            pq.write_table(pacsv.read_csv(io.BytesIO(raw)), sink)
            blob = sink.getvalue()
        else:
            blob = raw
        path = tmp / name
        path.write_bytes(blob)
        return path

    return make


def _outside(href: str) -> object:
    """A catalog outside the policy's folder: the policy (a profile) lives in tmp/pol/."""

    def make(tmp: Path) -> Path:
        data = tmp / "data.csv"
        data.write_text(DEFAULT_DATA)
        (tmp / "pol").mkdir()
        (tmp / "pol" / "profile.yaml").write_text(_profile(href.format(tmp=tmp)))
        (tmp / "catalog.yaml").write_text(CATALOG)
        return data

    return make


NS = "https://fairpolicy.example.org/ns/oscal"
META = "{title: c, last-modified: '2026-01-01T00:00:00+00:00', version: '1', oscal-version: 1.2.1}"
CATALOG = (
    "catalog:\n  uuid: 5b4c3d2e-1f0a-4b9c-8d7e-6f5a4b3c2d1e\n"
    f"  metadata: {META}\n"
    "  controls:\n    - id: c1\n      title: a control\n      props:\n"
    + "".join(
        f"        - {{name: {k}, ns: '{NS}', value: '{v}'}}\n"
        for k, v in {
            "metric_key": "demographic_parity_diff",
            "threshold": "0.2",
            "operator": "lt",
            "input.target": "y_true",
            "input.prediction": "y_pred",
            "input.dimension": "sex",
        }.items()
    )
)


def _profile(href: str) -> str:
    return f"""profile:
  uuid: 6c5d4e3f-2a1b-4c0d-9e8f-7a6b5c4d3e2f
  metadata: {META}
  imports:
    - href: '{href}'
      include-all: {{}}
"""


PROFILE_ARGS = ("check", "{tmp}/pol/profile.yaml", "{data}")

POLICY_WIDE = """assessment-plan:
  metadata:
    title: t
    props:
      - {name: p_value, value: '100000000', ns: 'https://fairpolicy.example.org/ns/oscal'}
  control-implementations:
    - implemented-requirements:
""" + "".join("      " + line + "\n" for line in policy().splitlines())

CASES = [
    # ------------------------------------------------------------ caps written oddly
    Case(
        "bounds-cap-written-oddly",
        ("--max-resamples", "invalid int value: '1_000'"),
        args=("--bootstrap", "50", "--max-resamples", "1_000"),
        note="int() read 1_000 as 1000; every count flag now uses the policy's grammar",
    ),
    # ------------------------------------------------------------ resamples and classes
    Case(
        "bounds-p-value-prop-over-cap",
        ("100,000,000 permutations", "--max-resamples 100000", "h even on two groups"),
        policy=policy(p_value=f"'{BIG}'"),
        file="policy.yaml",
        control="c1",
        key="p_value",
        subprocess=True,
    ),
    Case(
        "bounds-p-value-flag-over-cap",
        ("--p-value 100000000", "--max-resamples"),
        args=("--p-value", BIG),
    ),
    Case(
        "bounds-p-value-policy-wide-over-cap",
        ("100,000,000 permutations", "--max-resamples"),
        policy=POLICY_WIDE,
        file="policy.yaml",
        control="c1",
        key="p_value",
    ),
    Case(
        "bounds-ci-prop-over-cap",
        ("1,000,000,000 bootstrap resamples", "--max-resamples", "of memory"),
        policy=policy(ci="'1000000000'"),
        file="policy.yaml",
        control="c1",
        key="ci",
    ),
    Case(
        "bounds-bootstrap-flag-over-cap",
        ("--bootstrap 1000000000", "--max-resamples"),
        args=("--bootstrap", "1000000000"),
    ),
    Case(
        "bounds-resampled-cells-over-cap",
        ("1,000 bootstrap resamples × 8 cells", "--max-cells 5000"),
        args=("--bootstrap", "1000", "--max-cells", "5000"),
        file="data.csv",
        control="c1",
        key="ci",
        report=True,
    ),
    Case(
        "bounds-permutation-time-over-cap",
        ("20,000 permutations", "--max-resample-seconds 1", "estimated ~"),
        args=("--p-value", "20000", "--max-resample-seconds", "1"),
        file="data.csv",
        control="c1",
        key="p_value",
        report=True,
    ),
    Case(
        "bounds-num-classes-prop-over-cap",
        ("1,000,000,000 classes", "--max-classes 1000"),
        policy=policy(num_classes="'1000000000'"),
        file="policy.yaml",
        control="c1",
        key="num_classes",
    ),
    Case(
        "bounds-num-classes-flag-over-cap",
        ("--num-classes 1000000000", "--max-classes"),
        args=("--num-classes", "1000000000"),
    ),
    Case(
        "bounds-classes-in-data-over-cap",
        ("3 distinct classes", "--max-classes 2"),
        policy=policy(metric_key="multiclass_demographic_parity"),
        data="y_true,y_pred,sex\n"
        + "".join(f"{i % 3},{(i + 1) % 3},{'FM'[i % 2]}\n" for i in range(120)),
        args=("--max-classes", "2"),
        file="data.csv",
        control="c1",
        column="y_true",
        report=True,
    ),
    # ------------------------------------------------------------ groups and cells
    Case(
        "bounds-ten-thousand-and-one-groups",
        ("10,001 distinct groups", "--max-groups 10000"),
        data=_groups(10_001),
        file="data.csv",
        control="c1",
        column="sex",
        report=True,
        subprocess=True,
    ),
    Case(
        "bounds-max-groups-flag",
        ("3 distinct groups", "--max-groups 2"),
        data="y_true,y_pred,sex\n" + rows(40, ("A", "B", "C")),
        args=("--max-groups", "2"),
        file="data.csv",
        column="sex",
        report=True,
    ),
    Case(
        "bounds-count-table-over-max-cells",
        ("count table of 'sex'", "--max-cells 10"),
        data="y_true,y_pred,sex\n" + rows(40, ("A", "B", "C")),
        args=("--max-cells", "10"),
        file="data.csv",
        control="c1",
        report=True,
    ),
    Case(
        "bounds-max-groups-zero",
        ("--max-groups must be a whole number of at least 1",),
        args=("--max-groups", "0"),
    ),
    # ------------------------------------------------------------ non-regular files
    Case(
        "bounds-fifo-policy",
        ("named pipe (FIFO)", "not a regular file"),
        data=_fifo("pipe.yaml"),
        args=("check", "{tmp}/pipe.yaml", "{data}"),
        file="pipe.yaml",
        subprocess=True,
    ),
    Case(
        "bounds-fifo-data",
        ("named pipe (FIFO)", "not a regular file"),
        data=_fifo("pipe.csv"),
        file="pipe.csv",
        subprocess=True,
    ),
    Case(
        "bounds-character-device-data",
        ("character device", "not a regular file"),
        data=lambda tmp: Path("/dev/zero"),
        file="/dev/zero",
    ),
    Case(
        "bounds-fifo-href",
        ("named pipe (FIFO)",),
        data=lambda tmp: _fifo_href(tmp),
        args=PROFILE_ARGS,
        file="pipe-catalog.yaml",
        subprocess=True,
    ),
    # ------------------------------------------------------------ href confinement
    Case(
        "bounds-href-parent-dir",
        ("href '../catalog.yaml'", "outside the policy's folder", "--allow-path"),
        data=_outside("../catalog.yaml"),
        args=PROFILE_ARGS,
        file="profile.yaml",
        key="href",
    ),
    Case(
        "bounds-href-absolute",
        ("outside the policy's folder", "--allow-path"),
        data=_outside("{tmp}/catalog.yaml"),
        args=PROFILE_ARGS,
        file="profile.yaml",
        key="href",
    ),
    Case(
        "bounds-href-file-url",
        ("href 'file://", "outside the policy's folder", "--allow-path"),
        data=_outside("file://{tmp}/catalog.yaml"),
        args=PROFILE_ARGS,
        file="profile.yaml",
        key="href",
    ),
    Case(
        "bounds-href-allowed-with-allow-path",
        (),
        data=_outside("../catalog.yaml"),
        args=(*PROFILE_ARGS, "--allow-path", "{tmp}"),
        code=0,
        report=True,
        note="--allow-path names the folder the import may come from",
    ),
    Case(
        "bounds-href-url",
        ("href 'https://example.org/catalog.yaml' names no local catalog or profile",),
        data=_outside("https://example.org/catalog.yaml"),
        args=PROFILE_ARGS,
        file="profile.yaml",
        key="href",
    ),
    # ------------------------------------------------------------ nested columns
    Case(
        "bounds-parquet-list-dimension",
        ("nested type list<", "flatten"),
        data=_parquet("list"),
        file="data.parquet",
        column="sex",
    ),
    Case(
        "bounds-parquet-struct-dimension",
        ("nested type struct<", "flatten"),
        data=_parquet("struct"),
        file="data.parquet",
        column="sex",
    ),
    # ------------------------------------------------------------ file types
    Case(
        "bounds-gzip-named-csv",
        ("this is a gzip file", "name it .csv.gz"),
        data=_compressed("gzip", "data.csv"),
        file="data.csv",
    ),
    Case(
        "bounds-bz2-named-csv",
        ("this is a bz2 file", ".csv.bz2"),
        data=_compressed("bz2", "data.csv"),
        file="data.csv",
    ),
    Case(
        "bounds-zstd-named-csv",
        ("this is a zstd file", ".csv.zst"),
        data=_compressed("zstd", "data.csv"),
        file="data.csv",
    ),
    Case(
        "bounds-zip-named-csv",
        ("this is a zip file", "unzip it"),
        data=_compressed("zip", "data.csv"),
        file="data.csv",
    ),
    Case(
        "bounds-parquet-named-csv",
        ("this is a Parquet file", "name it .parquet"),
        data=_compressed("parquet", "data.csv"),
        file="data.csv",
    ),
    Case(
        "bounds-csv-named-parquet",
        ("the Parquet file could not be read", "it looks like a CSV", "name it .csv"),
        data=DEFAULT_DATA,
        data_name="data.parquet",
        file="data.parquet",
    ),
    Case(
        "bounds-utf16-without-bom",
        ("UTF-16LE text without a byte-order mark", "not valid UTF-8", "iconv"),
        data=DEFAULT_DATA.encode("utf-16-le"),
        file="data.csv",
    ),
    Case(
        "bounds-gz-that-is-not-gzip",
        ("the name says gzip-compressed (.gz), but the file is not compressed",),
        data=_compressed("plain", "data.csv.gz"),
        file="data.csv.gz",
    ),
    Case(
        "bounds-csv-gz-read-directly",
        (),
        data=_compressed("gzip", "data.csv.gz"),
        code=0,
        report=True,
        note=".csv.gz is decompressed while it is read (pyarrow, DuckDB)",
    ),
    Case(
        "bounds-csv-bz2-read-directly",
        (),
        data=_compressed("bz2", "data.csv.bz2"),
        code=0,
        report=True,
        note=".csv.bz2 is decompressed while it is read (DuckDB: into its temporary folder)",
    ),
    Case(
        "bounds-csv-zst-read-directly",
        (),
        data=_compressed("zstd", "data.csv.zst"),
        code=0,
        report=True,
        note=".csv.zst is decompressed while it is read (pyarrow, DuckDB)",
    ),
]


def _fifo_href(tmp: Path) -> Path:
    """A profile in tmp/pol/ importing a FIFO that lies inside its own folder."""
    data = tmp / "data.csv"
    data.write_text(DEFAULT_DATA)
    (tmp / "pol").mkdir()
    (tmp / "pol" / "profile.yaml").write_text(_profile("pipe-catalog.yaml"))
    os.mkfifo(tmp / "pol" / "pipe-catalog.yaml")
    return data
