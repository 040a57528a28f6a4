"""``--state FILE``: a monitoring run's count tables, kept between runs (issue 30 item 3).

The state holds, for every window, the distinct tuples of the bound columns with their
row counts — the sufficient statistics every control of the policy is computed from, and
no row (no timestamp, no row order: each row is reduced to its window label and its
bound values). A daily job reads only the new rows: they are reduced the same way,
added to the state (counts of equal tuples summed) and every window is evaluated from the
merged tables. The merged table is put in one canonical order, so the result does not
depend on how the rows were split between runs or in which order the runs came: a run
over all the data with a fresh state gives the same windows and findings.

The file is an Arrow IPC file whose schema metadata holds a JSON header:

- ``format``: ``fairpolicy-state``, ``version`` :data:`VERSION` (another version is refused);
- ``policy_sha256`` and ``binding`` (the window, the columns, those read as text, their
  types): a state built with another policy or binding is refused (exit 2);
- ``batches``: the SHA-256 of every batch added (its canonical tuples): a batch the state
  already holds is refused, so a re-run of the same daily job cannot count rows twice
  (a batch that only *overlaps* an earlier one cannot be detected without row identities);
- ``rows_outside``: rows in no window.

A run holds an exclusive ``flock`` on ``FILE.lock`` from reading the state to writing it
back (written to a temporary file, then renamed), so two runs at once never lose rows.
The file's SHA-256 after the run is recorded in the results' run options.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fairpolicy.errors import DataError, UsageError

if TYPE_CHECKING:
    import pyarrow as pa

VERSION = 1
FORMAT = "fairpolicy-state"
#: the state's columns beside the bound ones: the window label and the row count
LABEL, COUNT = "__window", "__w"
_META = b"fairpolicy-state"


@dataclass
class State:
    """A state as read (or a fresh one): its header and its tuples."""

    path: Path
    header: dict[str, Any]
    table: pa.Table | None = None
    batches: list[str] = field(default_factory=list)


def canonical(table: pa.Table) -> pa.Table:
    """Equal tuples merged (counts summed) and sorted by every column: one order whatever
    order the rows came in."""
    keys = [c for c in table.column_names if c != COUNT]
    merged = table.group_by(keys, use_threads=False).aggregate([(COUNT, "sum")])
    merged = merged.rename_columns([*keys, COUNT]) if merged.column_names[-1] != COUNT else merged
    merged = merged.select([*keys, COUNT])
    order = [(LABEL, "ascending"), *((k, "ascending") for k in keys if k != LABEL)]
    return merged.sort_by(order)


def digest(table: pa.Table) -> str:
    """SHA-256 of a canonical table's Arrow IPC stream (without metadata)."""
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    plain = table.replace_schema_metadata(None)
    with pa.ipc.new_stream(sink, plain.schema) as writer:
        writer.write_table(plain)
    return hashlib.sha256(sink.getvalue().to_pybytes()).hexdigest()


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path``'s ``.lock`` file for the block (waits for another
    run holding it)."""
    import fcntl

    lock = path.with_name(path.name + ".lock")
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise UsageError(
            f"--state {path}: cannot create its lock file {lock}: {exc.strerror}.",
            hint="give a state file in a folder you can write to",
        ) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def read_state(path: Path, header: dict[str, Any]) -> State:
    """The state at ``path`` (a fresh one when the file does not exist), checked against
    this run's ``header`` (policy, binding); DataError naming what differs."""
    import pyarrow as pa

    if not path.exists():
        return State(path, header)
    if not path.is_file():
        raise UsageError(f"--state {path}: not a regular file.", hint="name a state file")
    try:
        with pa.memory_map(str(path)) as source:
            table = pa.ipc.open_file(source).read_all()
        meta = json.loads((table.schema.metadata or {})[_META])
    except (pa.ArrowInvalid, OSError, KeyError, ValueError) as exc:
        raise DataError(
            f"--state: the file is not a fairpolicy state ({type(exc).__name__}).",
            file=str(path),
            hint="give the state file an earlier `check --window … --state` wrote, or a "
            "new path to start one",
        ) from None
    if meta.get("format") != FORMAT or meta.get("version") != VERSION:
        raise DataError(
            f"--state: the file is {meta.get('format')} version {meta.get('version')}; this "
            f"fairpolicy reads {FORMAT} version {VERSION}.",
            file=str(path),
            hint="start a new state file (run over the data it covered once more)",
        )
    for key, what in (("policy_sha256", "policy"), ("binding", "binding")):
        if meta.get(key) != header[key]:
            raise DataError(
                f"--state: the state was built with another {what} ({key} "
                f"{_short(meta.get(key))}, this run's {_short(header[key])}); its count "
                "tables cannot be added to.",
                file=str(path),
                key=key,
                hint="run with the policy, --bind/--rename and --window the state was built "
                "with, or start a new state file",
            )
    return State(
        path,
        {**header, "rows_outside": int(meta.get("rows_outside", 0))},
        table.replace_schema_metadata(None),
        list(meta.get("batches", [])),
    )


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True) if not isinstance(value, str) else value
    return text[:12] + "…" if len(text) > 16 else text


def add_batch(state: State, batch: pa.Table, outside: int) -> str:
    """Add a canonical batch to the state (refused when the state already holds it);
    returns its digest."""
    import pyarrow as pa

    key = digest(batch)
    if key in state.batches:
        raise DataError(
            "--state: the state already holds this batch of rows (the same tuples, window by "
            "window): adding it again would count every row twice. Nothing was written.",
            file=str(state.path),
            hint="give only the rows that are new since the last run",
        )
    if state.table is not None:
        if state.table.schema != batch.schema:
            raise DataError(
                f"--state: the new rows' column types ({batch.schema.types}) differ from the "
                f"state's ({state.table.schema.types}).",
                file=str(state.path),
                hint="give the new rows in the same format (CSV or Parquet, same types)",
            )
        batch = canonical(pa.concat_tables([state.table, batch]))
    state.table = batch
    state.batches.append(key)
    state.header["rows_outside"] = int(state.header.get("rows_outside", 0)) + outside
    return key


def write_state(state: State) -> str:
    """Write the state (temporary file, then rename); its SHA-256."""
    import pyarrow as pa

    assert state.table is not None
    meta = {**state.header, "format": FORMAT, "version": VERSION, "batches": state.batches}
    table = state.table.replace_schema_metadata({_META: json.dumps(meta, sort_keys=True)})
    tmp = state.path.with_name(state.path.name + ".tmp")
    with pa.OSFile(str(tmp), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    os.replace(tmp, state.path)
    return file_sha256(state.path)


def file_sha256(path: Path) -> str:
    """The SHA-256 of a state file's bytes (the project's streaming hasher)."""
    from fairpolicy.data.sources.csv_guard import file_sha256 as streamed

    return streamed(path)
