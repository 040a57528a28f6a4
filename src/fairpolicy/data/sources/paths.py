"""The files a data path names (one file, or a glob of files), and how many rows they
hold, as the engine choice and the DuckDB and Spark sources see them."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from fairpolicy.errors import DataError

_GLOB = re.compile(r"[*?\[]")


def is_glob(data: Any) -> bool:
    """A pattern of files (``*``, ``?`` or ``[`` in the name), unless a file has that name."""
    return (
        isinstance(data, str)
        and bool(_GLOB.search(os.path.basename(data)))
        and not os.path.exists(data)
    )


def expand_paths(data: Any) -> list[Path]:
    """The files a path or glob names, sorted; an error naming the pattern when none."""
    text = os.fspath(data)
    if is_glob(text):
        import glob  # only for a pattern

        found = sorted(Path(p) for p in glob.glob(text, recursive=True) if os.path.isfile(p))
        if not found:
            raise DataError(
                "the pattern matches no file.", file=text, hint="check the path and the pattern."
            )
        return found
    path = Path(text)
    if not path.exists():
        raise DataError("the data file does not exist.", file=text, hint="check the path.")
    if path.is_dir():
        raise DataError("this is a directory, not a data file.", file=text)
    from fairpolicy.files import require_regular

    require_regular(path, DataError, "data")  # a FIFO would block the engine's reader
    return [path]


def is_parquet(path: Path) -> bool:
    return path.suffix.lower() in (".parquet", ".pq")


def estimate_rows(data: Any) -> int:
    """Data rows: from the Parquet footers, or a CSV's size over the mean length of the
    lines in its first MiB."""
    total = 0
    for path in expand_paths(data):
        if is_parquet(path):
            import pyarrow.parquet as pq

            try:
                total += int(pq.ParquetFile(path).metadata.num_rows)
            except Exception:  # unreadable: the reader reports it properly
                total += path.stat().st_size // 8
            continue
        size = path.stat().st_size
        with path.open("rb") as fh:
            head = fh.read(1 << 20)
        lines = max(head.count(b"\n"), 1)
        total += int(size / (len(head) / lines)) if head else 0
    return total
