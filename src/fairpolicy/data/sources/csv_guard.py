"""The guard every file source passes before a CSV is parsed: the file's kind (compression
and the first bytes sniffed), its header, and one streaming scan (hash, quotes, line
lengths, line breaks) that stops at the first over-long line.

:func:`scan_csv` reads the file once in 1 MiB blocks (constant memory) and returns its
SHA-256, its size and how many quote characters it holds (and, for ``--max-rows``, its
line breaks), and stops at the first line longer than the CSV reader's block size, so a
2 GB line fails in milliseconds instead of being parsed. The counts drive three
decisions:

- quotes present → the reader must allow newlines inside quoted values (otherwise a
  quoted newline that straddles a block boundary shifts every later field);
- an odd number of quotes → a quote may never close, which makes the reader swallow the
  rest of a block silently; :func:`unclosed_quote_line` looks for it;
- line breaks bound the row count from above for ``--max-rows``; without it, the memory
  estimate uses the mean line length of the first block.
"""

from __future__ import annotations

import csv
import hashlib
import io
from pathlib import Path
from typing import Any

from fairpolicy.errors import DataError
from fairpolicy.records import lean

#: pyarrow's CSV block size: a line longer than this cannot be parsed
MAX_LINE_BYTES = 1 << 20


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


#: compressed CSV files read directly (pyarrow and DuckDB decompress by extension)
CSV_COMPRESSION = {".gz": "gzip", ".bz2": "bz2", ".zst": "zstd", ".zstd": "zstd"}


#: the first bytes of file kinds that are not a CSV, and what to do about each
_MAGIC = (
    (b"\x1f\x8b", "gzip", "name it .csv.gz (read directly) or decompress it (gunzip)"),
    (b"BZh", "bz2", "name it .csv.bz2 (read directly) or decompress it (bunzip2)"),
    (b"\x28\xb5\x2f\xfd", "zstd", "name it .csv.zst (read directly) or decompress it (unzstd)"),
    (b"PK\x03\x04", "zip", "unzip it (an .xlsx workbook: export the sheet as CSV)"),
    (b"\xfd7zXZ\x00", "xz", "decompress it (unxz), or recompress it with gzip or zstd"),
    (b"\x04\x22\x4d\x18", "lz4", "decompress it (unlz4), or recompress it with gzip or zstd"),
    (b"PAR1", "Parquet", "name it .parquet"),
)


def csv_compression(path: Path) -> str | None:
    """The compression a CSV's name declares (``data.csv.gz`` → gzip), else None."""
    return CSV_COMPRESSION.get(path.suffix.lower())


def sniff(head: bytes) -> tuple[str, str] | None:
    """(what it is, fix) when the first bytes of a file say it is no plain CSV: a compressed
    file, a zip archive, a Parquet file, or UTF-16 text (with or without a byte-order
    mark); None for anything else (the CSV reader judges it)."""
    for magic, kind, fix in _MAGIC:
        if head.startswith(magic):
            return f"{'an' if kind[0] in 'aeiouxl' else 'a'} {kind} file", fix
    utf16 = "re-export it as UTF-8 (e.g. iconv -f UTF-16 -t UTF-8)"
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "UTF-16 text (with a byte-order mark)", utf16
    sample = head[:4096]
    if len(sample) >= 4 and b"\x00" in sample:
        even, odd = sample[0::2], sample[1::2]
        # ASCII text in UTF-16: every other byte is NUL, and the others are not
        for zeros, chars, order in ((odd, even, "LE"), (even, odd, "BE")):
            if zeros.count(0) >= 0.9 * len(zeros) and chars.count(0) <= 0.1 * len(chars):
                return (
                    f"UTF-16{order} text without a byte-order mark",
                    f"re-export it as UTF-8 (e.g. iconv -f UTF-16{order} -t UTF-8)",
                )
    return None


def open_csv_stream(path: Path) -> Any:
    """The CSV's bytes, decompressed when its name says so (a binary file object). A
    file whose first bytes contradict its name (a gzip file named .csv, a Parquet file,
    UTF-16 text, a .gz that is no gzip) is a DataError naming what it is."""
    from fairpolicy.files import open_regular

    raw = open_regular(path, DataError, "data")
    head = raw.read(8192)
    raw.seek(0)
    declared = csv_compression(path)
    found = sniff(head)
    if declared is not None:
        if found is None or not found[0].endswith(f" {declared} file"):
            raw.close()
            what = found[0] if found else "not compressed"
            raise DataError(
                f"the name says {declared}-compressed ({path.suffix}), but the file is {what}.",
                file=str(path),
                hint="give the file the name its content has (data.csv for plain text).",
            )
        if declared in ("gzip", "bz2"):  # the standard library's, on the open file
            import bz2
            import gzip

            raw.close()  # checked to be a regular file: opened again by the decompressor
            return gzip.open(path) if declared == "gzip" else bz2.open(path)
        import pyarrow as pa

        raw.close()
        return pa.input_stream(str(path), compression=declared)
    if found is not None:
        raw.close()
        what, fix = found
        raise DataError(
            f"this is {what}, not "
            + ("valid UTF-8 text." if what.startswith("UTF-16") else "a plain-text CSV."),
            file=str(path),
            hint=f"{fix}.",
        )
    return raw


def csv_header(path: Path) -> list[str]:
    """The header's column names, trimmed (the policy's names are trimmed too)."""
    return [c.strip() for c in raw_header(path)]


def raw_header(path: Path) -> list[str]:
    """The first record of the file as written; reads at most one reader block."""
    with open_csv_stream(path) as fh:
        head = fh.read(MAX_LINE_BYTES)
    if not head.strip():
        raise DataError(
            "the file is empty.",
            file=str(path),
            hint="export the predictions with a header row and at least one data row.",
        )
    try:
        text = head.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        # not merely a multi-byte character cut at the end of a full block
        if len(head) < MAX_LINE_BYTES or exc.start < len(head) - 4:
            line = head[: exc.start].count(b"\n") + 1
            raise DataError(
                f"the file is not valid UTF-8 (line {line}, byte {exc.start}).",
                file=str(path),
                hint="re-export the CSV as UTF-8.",
            ) from None
        text = head[: exc.start].decode("utf-8-sig")
    try:
        first = next(csv.reader(io.StringIO(text, newline="")), [])
    except csv.Error as exc:
        raise DataError(
            f"the header cannot be read as CSV: {exc}.",
            file=str(path),
            hint="the first line must name the columns, separated by commas.",
        ) from None
    return first


def require_file(path: Path) -> None:
    if path.is_dir():
        raise DataError(
            "this is a directory, not a data file.",
            file=str(path),
            hint="name a CSV or Parquet file.",
        )
    if not path.exists():
        raise DataError("the data file does not exist.", file=str(path), hint="check the path.")
    from fairpolicy.files import require_regular

    require_regular(path, DataError, "data")  # a FIFO or a device would block the reader


def parquet_error(path: Path, exc: Exception) -> DataError:
    """A Parquet file that cannot be read, saying what it is when its first bytes tell
    (a CSV named .parquet, a gzip file…)."""
    head = b""
    try:
        with path.open("rb") as fh:
            head = fh.read(4096)
    except OSError:
        pass
    found = sniff(head) if head else None
    hint = None
    if found is not None and not found[0].endswith("Parquet file"):
        hint = f"this is {found[0]}, not Parquet."
    elif head and not head.startswith(b"PAR1") and b"," in head and b"\n" in head:
        hint = "it looks like a CSV (comma-separated text): name it .csv."
    return DataError(
        f"the Parquet file could not be read: {str(exc).splitlines()[0]}",
        file=str(path),
        hint=hint,
    )


@lean
class CsvScan:
    size: int
    sha256: str | None
    quotes: int
    #: data rows: an upper bound when ``counted`` (lines after the header; quoted line
    #: breaks and blank lines only make the true count smaller), else an estimate from
    #: the mean line length of the first block
    rows: int
    counted: bool


def scan_csv(path: Path, *, hash_file: bool = True, count_lines: bool = False) -> CsvScan:
    """One streaming pass: hash, quotes, (line breaks); DataError on an over-long line.

    Counting line breaks costs as much as hashing, so it happens only when asked
    (``--max-rows``); otherwise the row count is estimated from the first block."""
    h = hashlib.sha256() if hash_file else None
    newlines = quotes = 0
    since = 0  # bytes since the last line break
    offset = 0
    head = b""
    last = b"\n"
    compressed = csv_compression(path) is not None
    with open_csv_stream(path) as fh:  # decompressed: lines and quotes are the text's
        for block in iter(lambda: fh.read(MAX_LINE_BYTES), b""):
            if h is not None and not compressed:
                h.update(block)
            if not head:
                head = block
            first = block.find(b"\n")
            run = since + (len(block) if first < 0 else first)
            if run > MAX_LINE_BYTES:
                raise DataError(
                    f"line {_line_at(path, offset - since)} is longer than "
                    f"{MAX_LINE_BYTES >> 20} MiB, the longest line the CSV reader takes: the "
                    "file is not a CSV of predictions, or an unclosed quote runs on.",
                    file=str(path),
                    hint="export one prediction per line (drop long free-text columns) and "
                    "check that every quote is closed.",
                )
            since = run if first < 0 else len(block) - block.rfind(b"\n") - 1
            if count_lines:
                newlines += block.count(b"\n")
            if b'"' in block:  # a memchr; counting only files that have quotes
                quotes += block.count(b'"')
            offset += len(block)
            last = block[-1:]
    size = offset
    digest = file_sha256(path) if compressed and hash_file else (h.hexdigest() if h else None)
    if count_lines or size <= len(head):
        lines = (newlines if count_lines else head.count(b"\n")) + (last != b"\n")
        return CsvScan(size, digest, quotes, max(lines - 1, 0), True)
    mean = len(head) / max(head.count(b"\n"), 1)
    return CsvScan(size, digest, quotes, int(size / mean), False)


def _line_at(path: Path, offset: int) -> int:
    """1-based line number of byte ``offset`` (error path only: a second read)."""
    line = 1
    with open_csv_stream(path) as fh:
        while offset > 0:
            block = fh.read(min(MAX_LINE_BYTES, offset))
            if not block:
                break
            line += block.count(b"\n")
            offset -= len(block)
    return line


def unclosed_quote_line(path: Path) -> int | None:
    """The line where a quoted field opens and never closes, if one does (a strict
    parse with the csv module: only called when the file has an odd number of quotes)."""
    with io.TextIOWrapper(
        open_csv_stream(path), encoding="utf-8-sig", errors="replace", newline=""
    ) as fh:
        reader = csv.reader(fh, strict=True)
        start = 1
        try:
            for _ in reader:
                start = reader.line_num + 1
        except csv.Error:
            return start
    return None


def count_csv_rows(path: Path, column: str, limit: int) -> int:
    """Rows of a CSV, counted by streaming one column; stops once past ``limit``. A file
    the reader cannot parse counts as 0 (the full read reports why)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    n = 0
    try:
        reader = pacsv.open_csv(
            path,
            parse_options=pacsv.ParseOptions(newlines_in_values=True),
            convert_options=pacsv.ConvertOptions(
                include_columns=[column], column_types={column: pa.string()}
            ),
        )
        for batch in reader:
            n += batch.num_rows
            if n > limit:
                break
    except (pa.ArrowInvalid, OSError):
        return 0
    return n
