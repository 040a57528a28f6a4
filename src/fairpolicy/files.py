"""Opening input files without hanging: only regular files are read.

A FIFO, a character device (``/dev/zero``, ``/dev/stdin``) or a socket given as the
policy, as a file the policy imports, or as the data would make a read block forever or
never end. :func:`open_regular` opens with ``O_NONBLOCK`` (so opening a FIFO without a
writer returns at once), checks the opened descriptor (no race with a rename between a
check and the open) and refuses anything that is not a regular file. :func:`require_regular`
is the same check by path, for files another library opens itself (pyarrow, DuckDB).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from fairpolicy.errors import FairpolicyError, Problem

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def kind_of(mode: int) -> str:
    """What a non-regular file is, in words."""
    return next((word for test, word in _KINDS if test(mode)), "not a regular file")


def _refuse(path: Path, mode: int, error: type[FairpolicyError], what: str) -> FairpolicyError:
    kind = kind_of(mode)
    why = "" if stat.S_ISDIR(mode) else f" (reading {kind} could block forever or never end)"
    return error(
        Problem(
            f"this is {kind}, not a regular file; the {what} must be a file on disk{why}.",
            file=str(path),
            hint=f"save the {what} to a file first and pass that file's path.",
        )
    )


def open_regular(path: Path, error: type[FairpolicyError], what: str) -> BinaryIO:
    """``path`` opened for binary reading; ``error`` (naming the file) when it is not a
    regular file. OSError (missing file, no permission) propagates to the caller."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _refuse(path, mode, error, what)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def require_regular(path: Path, error: type[FairpolicyError], what: str) -> None:
    """``error`` when ``path`` exists and is not a regular file (a missing file is left to
    the caller, which knows how to say so)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return
    if not stat.S_ISREG(mode):
        raise _refuse(path, mode, error, what)
