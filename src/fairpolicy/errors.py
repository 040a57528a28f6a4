"""One exception tree, mapped to exit codes in one place (:func:`exit_code_for`).

Every error a user can cause is a :class:`FairpolicyError`. Its message is a
paragraph that names the file, the control, the column or key, the bad value,
what is allowed and how to fix it. The CLI prints that paragraph and exits 2;
only ``--debug`` shows a traceback.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from fairpolicy.records import lean

EXIT_PASS = 0
EXIT_FAIL = 1
EXIT_ERROR = 2


@lean
class Problem:
    """One located problem: where it is, what is wrong, how to fix it."""

    message: str
    file: str | None = None
    control: str | None = None
    key: str | None = None
    column: str | None = None
    row: int | None = None
    hint: str | None = None

    def render(self) -> str:
        where = []
        if self.file:
            where.append(self.file)
        if self.control:
            where.append(f"control '{self.control}'")
        if self.key:
            where.append(f"key '{self.key}'")
        if self.column:
            where.append(f"column '{self.column}'")
        if self.row is not None:
            where.append(f"row {self.row}")
        text = (", ".join(where) + ": " if where else "") + self.message
        if self.hint:
            text += f" Fix: {self.hint}"
        return printable(text)


#: characters that would move a terminal's cursor, recolour it, end a CI log line or
#: reorder text (C0/C1 controls, DEL, line/paragraph separators, bidirectional overrides)
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(text: str) -> str:
    """``text`` on one line with control characters shown as escapes (``\\n``, ``\\x1b``,
    ``\\u202e``): user text (a group name, a column name) cannot forge a line of a
    report or a CI log, or drive the terminal."""
    return _CONTROL.sub(
        lambda m: (
            _ESCAPES.get(m.group(), f"\\x{ord(m.group()):02x}")
            if ord(m.group()) < 0x100
            else f"\\u{ord(m.group()):04x}"
        ),
        text,
    )


class FairpolicyError(Exception):
    """Base of every error fairpolicy raises on purpose. Exit code 2."""

    title: str = "fairpolicy could not evaluate"

    def __init__(
        self,
        message: str | Problem | Sequence[Problem],
        *,
        title: str | None = None,
        **where: str | int | None,
    ) -> None:
        if isinstance(message, str):
            problems = [Problem(message, **where)]  # type: ignore[arg-type]
        elif isinstance(message, Problem):
            problems = [message]
        else:
            problems = list(message)
        self.problems: list[Problem] = problems
        if title is not None:
            self.title = title
        super().__init__(self.render())

    def render(self) -> str:
        if len(self.problems) == 1:
            return f"{self.title}: {self.problems[0].render()}"
        lines = [f"{self.title}: {len(self.problems)} problems"]
        lines += [f"  - {p.render()}" for p in self.problems]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()


class UsageError(FairpolicyError):
    """Bad command-line usage or API arguments."""

    title = "usage error"


class PolicyError(FairpolicyError):
    """The policy file cannot be read or does not describe valid controls."""

    title = "invalid policy"


class DataError(FairpolicyError):
    """The data file cannot be read, or a bound column holds invalid values."""

    title = "invalid data"


class BindingError(DataError):
    """A control's input binding does not match the data (missing column, wrong kind)."""

    title = "cannot bind policy to data"


class MetricError(FairpolicyError):
    """A metric cannot be computed on this data (e.g. a binary-only metric on K>2 classes)."""

    title = "cannot compute metric"


class OutputError(FairpolicyError):
    """An output could not be written."""

    title = "cannot write output"


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived: unwind like ``KeyboardInterrupt`` (staged outputs are
    removed) and exit 128 + the signal number."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(signum)


def exit_code_for(exc: BaseException) -> int:
    """The single place where exceptions become exit codes."""
    if isinstance(exc, FairpolicyError):
        return EXIT_ERROR
    if isinstance(exc, KeyboardInterrupt):
        return 130
    if isinstance(exc, Terminated):
        return 128 + exc.signum
    return EXIT_ERROR


def close_match(value: str, allowed: Iterable[str]) -> str | None:
    """The closest allowed spelling of ``value``, if any is close enough (a spelling that
    differs only in case or surrounding spaces first)."""
    allowed = list(allowed)
    folded = value.strip().casefold()
    same = [a for a in allowed if a.strip().casefold() == folded and a != value]
    if same:
        return same[0]
    import difflib  # only on a miss: keeps it off the start-up path

    matches = difflib.get_close_matches(value, allowed, n=1, cutoff=0.6)
    return matches[0] if matches else None


def did_you_mean(value: str, allowed: Iterable[str]) -> str:
    """A ' Did you mean X?' suffix, or ''."""
    match = close_match(value, allowed)
    return f" Did you mean '{match}'?" if match else ""
