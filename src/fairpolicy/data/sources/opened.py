"""The data argument of one run, inspected once (issue 30, item 5).

Before this object, ``check``'s data argument was looked at in six places before it was
read: its kind, its header (column peeks), the engine choice, the embedded engine's
memory estimate, the speculative prefetch and the open. :class:`Opened` is made once at
the start of a run; every later step asks it, and each question is answered once (the
header is read once, the engine is chosen once).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from fairpolicy.data.sources import (
    Source,
    Table,
    estimate_embedded_peak,
    open_source,
    peek_columns,
    resolve_engine,
)
from fairpolicy.data.sources.frames import is_arrow_like, is_dataframe, is_spark_dataframe
from fairpolicy.data.sources.paths import is_glob

#: what the data argument is: a Spark DataFrame, an in-memory table (pandas, polars,
#: Arrow), a glob of files, one path
Kind = str


class Opened:
    """The data of one run: asked for its kind, columns, engine, memory estimate,
    prefetch and read, each answered once."""

    def __init__(self, data: Any, budget: int) -> None:
        self.data = data
        self.budget = budget
        self._columns: list[str] | None = None
        self._engine: tuple[str, list[str]] | None = None
        self.prefetch: Any = None

    @property
    def kind(self) -> Kind:
        """``spark``, ``frame``, ``glob`` or ``path``."""
        if is_spark_dataframe(self.data):
            return "spark"
        if is_dataframe(self.data) or is_arrow_like(self.data):
            return "frame"
        return "glob" if is_glob(self.data) else "path"

    @property
    def path(self) -> str | None:
        """The data's path or glob as given (None for an in-memory table)."""
        return os.fspath(self.data) if isinstance(self.data, str | os.PathLike) else None

    def columns(self) -> list[str]:
        """The header, without reading rows (read once per run)."""
        if self._columns is None:
            self._columns = peek_columns(self.data)
        return self._columns

    def memory_estimate(self, bound: Callable[[], list[str]]) -> int:
        """The embedded engine's estimated peak memory in bytes on this data."""
        return estimate_embedded_peak(self.data, bound)

    def engine(
        self,
        requested: str,
        bound: Callable[[], list[str]],
        resolve: Callable[..., tuple[str, list[str]]] = resolve_engine,
    ) -> tuple[str, list[str]]:
        """The engine that reads this data and notes for the results (chosen once)."""
        if self._engine is None:
            self._engine = resolve(requested, self.data, bound, self.budget)
        return self._engine

    def start_prefetch(self, start: Callable[[], Any]) -> Any:
        """Start (and keep) the speculative read ``start`` returns (or None)."""
        self.prefetch = start()
        return self.prefetch

    def wait(self) -> None:
        """Let a speculative read finish (the run is about to fail)."""
        if self.prefetch is not None:
            self.prefetch.wait()

    @contextmanager
    def open(self, engine: str) -> Iterator[Source]:
        """The source that reads this data on ``engine``, closed on exit."""
        source = open_source(engine, self.data, self.budget, self.prefetch, self.columns)
        try:
            yield source
        finally:
            source.close()


__all__ = ["Opened", "Table"]
