"""Bad-input cases of area *groups*: the identity of group (dimension, site) values.

Only an empty cell or a true null is missing in a group column; ``NA`` (North America),
``N/A``, ``null``, ``nan``, ``None``, ``#N/A`` and ``unknown`` are group names that are
compared — here each hides a group whose selection rate breaks the threshold, so a run
that dropped it as missing would pass (the issue-12 wrong PASS). ``missing_values`` makes
tokens missing on purpose; more than 5 % missing rows warn with the count; a float NaN
is missing and ``-0.0`` is the group ``0``; a column type without a text form is exit 2.
"""

from __future__ import annotations

from pathlib import Path

from tests.bad_inputs.cases import Case, policy


def fair_pair_and(group: str, n: int = 60) -> str:
    """F and M with equal selection rates (1/2); ``group`` never selected: DP gap 0.5."""
    lines = ["y_true,y_pred,sex"]
    for g in ("F", "M"):
        lines += [f"{i % 2},{1 if i < n // 2 else 0},{g}" for i in range(n)]
    cell = '"' + group.replace('"', '""') + '"' if "," in group or '"' in group else group
    lines += [f"{i % 2},0,{cell}" for i in range(n)]
    return "\n".join(lines) + "\n"


def _token_case(token: str, slug: str) -> Case:
    return Case(
        f"groups-{slug}-is-a-group-name-not-missing",
        ("violates < 0.2", f"{token} (n=60)"),
        data=fair_pair_and(token),
        args=("-v",),
        code=1,
        report=True,
        note=f"the text {token!r} in a group column is a group name (only an empty cell is "
        "missing): its rows are compared, and the gap they make fails the gate",
    )


def float_groups(tmp: Path) -> Path:
    """A Parquet float group column: 0.0 and -0.0 are one group "0", NaN is missing."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    site = [0.0, -0.0, 1.0] * 40 + [float("nan")] * 6
    n = len(site)
    table = pa.table(
        {
            "y_true": pa.array([i % 2 for i in range(n)], pa.int64()),
            "y_pred": pa.array([(i // 2) % 2 for i in range(n)], pa.int64()),
            "sex": pa.array(site, pa.float64()),
        }
    )
    path = tmp / "data.parquet"
    pq.write_table(table, path)
    return path


def list_groups(tmp: Path) -> Path:
    """A Parquet group column of lists: no text form."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = 120
    table = pa.table(
        {
            "y_true": pa.array([i % 2 for i in range(n)], pa.int64()),
            "y_pred": pa.array([(i // 2) % 2 for i in range(n)], pa.int64()),
            "sex": pa.array([[i % 2] for i in range(n)], pa.list_(pa.int64())),
        }
    )
    path = tmp / "data.parquet"
    pq.write_table(table, path)
    return path


_ALIKE = ("Ren\u00e9e", "Rene\u0301e", "F", " F")  # NFC and NFD; spaces
LOOKALIKE = "y_true,y_pred,sex\n" + "".join(
    f"{(i // 8) % 2},{(i // 4) % 2},{_ALIKE[i % 4]}\n" for i in range(240)
)

CASES = [
    _token_case("NA", "na"),
    _token_case("N/A", "n-a"),
    _token_case("null", "null"),
    _token_case("nan", "nan"),
    _token_case("None", "none"),
    _token_case("#N/A", "hash-n-a"),
    _token_case("unknown", "unknown"),
    Case(
        "groups-missing-values-prop-makes-na-missing-and-warns",
        (
            "(missing) (n=60): dimension value missing in 'sex'",
            "missing_values 'NA'",
            "60 of 180 rows (33.3%) have no value in 'sex'",
        ),
        policy=policy(missing_values="NA"),
        data=fair_pair_and("NA"),
        code=0,
        report=True,
        note="missing_values: NA declares the token missing on purpose; the rows are "
        "excluded as (missing) and, being more than 5 % of the rows, warned about",
    ),
    Case(
        "groups-missing-values-prop-without-a-value",
        ("missing_values has no value",),
        policy=policy(missing_values="''"),
        file="policy.yaml",
        control="c1",
        key="missing_values",
    ),
    Case(
        "groups-many-empty-group-cells-warn-with-the-count",
        ("(missing) (n=30)", "30 of 150 rows (20.0%) have no value in 'sex'"),
        data=fair_pair_and("A").replace(",A\n", ",\n")[: -len("1,0,\n") * 30],
        code=0,
        report=True,
        note="empty cells are missing: excluded as (missing), warned about above 5 %",
    ),
    Case(
        "groups-float-column-nan-is-missing-negative-zero-is-zero",
        ("excluded (missing) (n=6)", "0 (n=80)"),
        data=float_groups,
        data_name="data.parquet",
        code=0,
        report=True,
        note="a float group column: NaN is missing, 0.0 and -0.0 are one group '0' on "
        "every engine (issue 19)",
    ),
    Case(
        "groups-list-typed-column-has-no-text-form",
        ("nested type list", "flatten it"),
        data=list_groups,
        data_name="data.parquet",
        file="data.parquet",
        column="sex",
        note="the reader refuses a nested bound column before any control runs (no report)",
    ),
    Case(
        "groups-lookalike-values-warn",
        ("differ only by Unicode normalization", "differ only by surrounding spaces"),
        data=LOOKALIKE,
        code=0,
        report=True,
        note="NFC/NFD forms of one name stay two groups and warn; values differing only by "
        "surrounding spaces are one group and warn (issue 19)",
    ),
]
