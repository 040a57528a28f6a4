"""Start reading the data while the policy is still being loaded.

Loading a policy that claims to be OSCAL validates it with compliance-trestle's models,
which take about 0.3 s to import; the data read does not depend on that. The columns a
policy binds can be read off its ``input.*`` props as soon as the file is parsed, so
:class:`Prefetch` starts :func:`~fairpolicy.data.sources.read_table` in a thread at once.

The runner takes the prefetched table only when the columns it finally needs (after
validation, ``--bind`` and profiles) are among those read, each read the same way (as
text or with inferred types), and the read succeeded; otherwise it reads again, so the
guess can cost time but never changes a result or an error message.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from fairpolicy.data.sources import Table, peek_columns, read_table

#: roles naming the columns the data-quality metrics measure (comma lists): read as
#: bound, never grouped on by an engine's main aggregation
MEASURED_ROLES = ("columns", "fields", "sensitive_columns")


#: the pseudo-roles of a monitoring run's window column (``--window``): a time column read
#: as it is, and a discrete period column read as text
WINDOW_ROLE = "--window"
WINDOW_TEXT_ROLE = "--window (discrete)"


def bound_columns(
    available: list[str], bindings: list[tuple[str, str]]
) -> tuple[list[str], list[str]]:
    """(columns to read, those read as text) for (role, value) bindings, as the runner
    derives them: dimension and site columns are text, score prefixes expand."""
    from fairpolicy.data.bind.scores import score_column_names

    wanted: list[str] = []
    strings: list[str] = []
    for role, value in bindings:
        if role == "sensitive_columns":
            continue  # data_minimization counts names, it reads no row
        if role in MEASURED_ROLES:
            wanted += [c.strip() for c in value.split(",") if c.strip()]
        elif role == "dimension":
            cols = [c.strip() for c in value.split(",") if c.strip()]
            wanted += cols
            strings += cols
        elif role in ("site", WINDOW_TEXT_ROLE):
            wanted.append(value)
            strings.append(value)
        elif role == "score":
            wanted += score_column_names(available, value)
        else:
            wanted.append(value)
    return wanted, strings


def _props(obj: Any) -> Iterator[tuple[str, Any]]:
    """Every (name, value) prop anywhere in a parsed policy document."""
    if isinstance(obj, Mapping):
        for key, value in obj.items():
            if key == "props" and isinstance(value, list):
                for p in value:
                    if isinstance(p, Mapping) and isinstance(p.get("name"), str):
                        yield p["name"], p.get("value")
            elif key == "props" and isinstance(value, Mapping):
                yield from ((str(k), v) for k, v in value.items())
            else:
                yield from _props(value)
    elif isinstance(obj, list):
        for value in obj:
            yield from _props(value)


def guess_bindings(document: Any, bind: Mapping[str, str] | None) -> list[tuple[str, str]]:
    """The (role, column) pairs of every ``input.*``/``input:*`` prop, plus ``--bind``."""
    out = []
    for name, value in _props(document):
        name = name.strip()
        if name.startswith(("input.", "input:")) and isinstance(value, str | int | float):
            column = str(value).strip()
            if column:
                out.append((name[6:], column))
    out += [(role, column) for role, column in (bind or {}).items()]
    return out


def _import_what_the_read_imports() -> None:
    """Import here, in the calling thread, the fairpolicy modules the read thread would
    import lazily, so that no module of ours is first imported in that thread. Under pytest,
    whose plugin entry point (``fairpolicy.pytest_plugin``) marks every fairpolicy module
    for assertion rewriting, each first import parses the module's source with
    ``ast.parse``, and CPython 3.11 keeps the AST converter's recursion depth per
    interpreter: a read thread and the main thread each importing one of our modules at
    once failed with "SystemError: AST constructor recursion depth mismatch" (the user's
    ``fairpolicy_check`` fixture, and our suite under pytest-xdist)."""
    import fairpolicy.data.bind.scores
    import fairpolicy.data.kernels
    import fairpolicy.data.sources.arrow_files
    import fairpolicy.data.sources.csv_guard
    import fairpolicy.errors
    import fairpolicy.files  # noqa: F401


class Prefetch:
    """A speculative :func:`read_table` in a background thread."""

    def __init__(self, data: Path, bindings: list[tuple[str, str]]) -> None:
        self._data = data
        self._bindings = bindings
        self.columns: list[str] = []
        self.strings: set[str] = set()
        self._table: Table | None = None
        self._failed = False
        _import_what_the_read_imports()
        self._thread = threading.Thread(target=self._run, name="fairpolicy-read", daemon=True)
        self._thread.start()

    @classmethod
    def start(cls, policy: Any, data: Any, bind: Mapping[str, str] | None) -> Prefetch | None:
        """A prefetch when both policy and data are files and the policy parses; else None."""
        if not isinstance(policy, str | os.PathLike) or not isinstance(data, str | os.PathLike):
            return None
        from fairpolicy.errors import FairpolicyError
        from fairpolicy.policy.oscal import read_document

        try:
            document, _ = read_document(Path(policy))
        except FairpolicyError:
            return None  # the real load reports it
        bindings = guess_bindings(document, bind)
        return cls(Path(os.fspath(data)), bindings) if bindings else None

    def _run(self) -> None:
        try:
            available = peek_columns(self._data)
            wanted, strings = bound_columns(available, self._bindings)
            self.columns = [c for c in dict.fromkeys(wanted) if c in available]
            self.strings = set(strings)
            if self.columns:
                self._table = read_table(self._data, self.columns, string_columns=self.strings)
        except BaseException:  # the runner's own read reports whatever went wrong
            self._failed = True

    def take(self, wanted: list[str], strings: list[str], available: list[str]) -> Table | None:
        """The prefetched table restricted to ``wanted`` if it was read the way the runner
        would read it; else None (the caller reads)."""
        self._thread.join()
        table, self._table = self._table, None  # not kept alive beside a second read
        if self._failed or table is None:
            return None
        present = [c for c in dict.fromkeys(wanted) if c in available]
        text = set(strings)
        if not present or any(
            c not in table.columns or (c in text) != (c in self.strings) for c in present
        ):
            return None
        return dataclasses.replace(table, columns={c: table.columns[c] for c in present})

    def wait(self) -> None:
        """Let the read finish (the caller is about to fail): no thread outlives the run."""
        self._thread.join()
