"""Writing outputs safely: one module for ``check``, ``export`` and ``convert``.

The rules (``docs/outputs.md`` has the reasons):

- **Checked before any work.** Every path is classified first (:func:`target`): a regular
  file or a new path is *staged* (written to a temporary file beside it, renamed into place
  at the end); a character device (``/dev/null``, a terminal) or a FIFO is *written to
  directly* — renaming over it would replace the device node; any other special file (a
  socket, a block device) and a directory are refused. A symlink is followed: the file it
  points to is replaced and the link stays a link. Missing parent folders are created when
  the file is written; a parent that cannot be created (a regular file on the way, no
  permission) is exit 2 naming it, before the data is read.
- **One path, one writer.** Two outputs naming one file (also through a symlink or a hard
  link) and an output naming an input are refused before any work
  (:func:`refuse_clashes`).
- **All or nothing, one run at a time.** :func:`write_all` stages every file before it
  renames any. The renames run with SIGINT/SIGTERM/SIGHUP held back and under an advisory
  lock (``flock``) on each output's folder, so two concurrent runs writing the same
  outputs leave a set that comes from one run. Devices and FIFOs are written after the
  renames, outside the lock (a FIFO waits for its reader; a signal still stops it).
- **No stale verdicts.** When a file cannot be written (disk full, no permission, a file
  size limit), every output path of the run that holds a regular file is unlinked
  (unlinking needs no space) and the error says which were removed: a pipeline that
  uploads the reports cannot publish an earlier run's "pass" as this run's. A run that
  stops *before* it has a verdict (bad policy, bad data, interrupted) writes nothing and
  leaves earlier files as they were; the CLI says on stderr that they are not this run's.
- **Signals.** :func:`signals_raise` turns SIGTERM and SIGHUP into
  :class:`~fairpolicy.errors.Terminated`, which unwinds like ``KeyboardInterrupt``:
  staged temporary files are removed and the process exits 128 + the signal number.

Test-only hooks (environment variables, never for production use; the subprocess tests
need a run that is slow at a known moment):

- ``FAIRPOLICY_TEST_PAUSE_STAGED=SECONDS``: sleep after every output is staged, before
  the first rename (the signal tests send SIGTERM/SIGHUP then);
- ``FAIRPOLICY_TEST_PAUSE_RENAMES=SECONDS``: sleep between two renames (the concurrency
  test makes two runs' renames overlap).
"""

from __future__ import annotations

import os
import re
import signal
import stat
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import field
from typing import TYPE_CHECKING, Literal

from fairpolicy.errors import OutputError, Terminated, UsageError
from fairpolicy.records import lean

if TYPE_CHECKING:
    pass

#: ``-o FORMAT=-`` writes to standard output
STDOUT = "-"

#: prefix and suffix of staged temporary files (beside their output)
TMP_PREFIX = ".fairpolicy-"
TMP_SUFFIX = ".tmp"

#: the signals that unwind a run like Ctrl-C does
SIGNALS: tuple[int, ...] = tuple(
    s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s
)

Kind = Literal["staged", "direct"]


@lean
class Target:
    """Where an output goes. ``real`` is the path with symlinks resolved (the file that is
    replaced); ``identity`` says when two paths are one file."""

    path: str
    real: str
    kind: Kind
    identity: tuple[object, ...]


def _not_a_directory(path: str, parent: str) -> OutputError:
    return OutputError(
        f"'{parent}' is not a directory, so nothing can be written under it.",
        file=path,
        hint="choose a path in a directory.",
    )


def _creatable(path: str, directory: str) -> None:
    """The nearest existing ancestor of ``directory`` is a writable directory."""
    parent = directory
    while not os.path.lexists(parent):
        up = os.path.dirname(parent)
        if up == parent:
            break
        parent = up
    if not os.path.isdir(parent):
        raise _not_a_directory(path, parent)
    if not os.access(parent, os.W_OK | os.X_OK):
        what = "create files" if parent == directory else f"create the folder '{directory}'"
        raise OutputError(
            f"no permission to {what} in '{parent}'.",
            file=path,
            hint="choose a writable location or fix the folder's permissions.",
        )


def target(path: str) -> Target:
    """Classify ``path`` as an output, or raise :class:`OutputError` (exit 2) naming it."""
    if not path or path == STDOUT:
        raise UsageError(f"'{path}' is not a file path.", hint="name a file, or use - for stdout.")
    try:
        st: os.stat_result | None = os.stat(path)  # follows symlinks
    except FileNotFoundError:
        st = None
    except NotADirectoryError:
        real = os.path.realpath(path)
        parent = os.path.dirname(real)
        while parent and os.path.lexists(parent) is False:
            parent = os.path.dirname(parent)
        raise _not_a_directory(path, parent) from None
    except OSError as exc:
        raise OutputError(f"cannot write: {exc.strerror or exc}.", file=path) from None
    if st is None:
        real = os.path.realpath(path)  # a dangling symlink: its target is created
        _creatable(path, os.path.dirname(real))
        return Target(path, real, "staged", ("path", real))
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        raise OutputError(
            "this is a directory; name the file to write.",
            file=path,
            hint=f"e.g. {os.path.join(path, 'report')}.",
        )
    identity = ("inode", st.st_dev, st.st_ino)
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        return Target(path, path, "direct", identity)
    if not stat.S_ISREG(mode):
        kind = (
            "a socket"
            if stat.S_ISSOCK(mode)
            else "a block device"
            if stat.S_ISBLK(mode)
            else ("a special file")
        )
        raise OutputError(
            f"this is {kind}; fairpolicy writes reports only to regular files, character "
            "devices (such as /dev/null or a terminal) and FIFOs.",
            file=path,
            hint="name a regular file, or use - for standard output.",
        )
    real = os.path.realpath(path)
    try:
        same = os.path.samestat(os.stat(real), st)
    except OSError:
        same = False
    if not same or _through_a_descriptor(path):
        # /dev/stdout redirected to a file (``> out.json``), /proc/self/fd/N: the open file
        # is the target, so write through the link; a rename would miss it
        return Target(path, path, "direct", identity)
    return Target(path, real, "staged", identity)


_DESCRIPTOR_LINK = re.compile(r"^/(proc/(self|thread-self|\d+)(/task/\d+)?/fd|dev/fd)/")


def _through_a_descriptor(path: str) -> bool:
    """``path`` or a symlink it leads through is a file-descriptor link (``/dev/stdout`` →
    ``/proc/self/fd/1``)."""
    p = os.path.abspath(path)
    for _ in range(40):
        if _DESCRIPTOR_LINK.match(p):
            return True
        if not os.path.islink(p):
            return False
        p = os.path.normpath(os.path.join(os.path.dirname(p), os.readlink(p)))
    return False


def is_stdout(path: str) -> bool:
    """``path`` is the file this process's standard output already writes to
    (``/dev/stdout``, ``/proc/self/fd/1``, or the file stdout is redirected to): writing it
    through a second descriptor would overwrite what stdout writes, so it is treated as
    ``-``."""
    if path == STDOUT:
        return True
    try:
        return os.path.samestat(os.stat(path), os.fstat(1))
    except (OSError, ValueError):
        return False


def check_output_path(path: str) -> None:
    """Fail before any work when ``path`` cannot be an output (see :func:`target`)."""
    target(path)


def _identity_of_input(path: str) -> tuple[object, ...] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return ("path", os.path.realpath(path)) if path else None
    return ("inode", st.st_dev, st.st_ino)


def refuse_clashes(
    outputs: Sequence[tuple[str, Target]],
    inputs: Iterable[tuple[str, str | None]] = (),
    noun: str = "report",
) -> None:
    """Refuse two outputs that are one file and an output that is an input.

    ``outputs`` are (label, target) pairs, the label as the user wrote the option (e.g.
    ``-o json=r.json``); ``inputs`` are (role, path) pairs, e.g. ``("data", "preds.csv")``."""
    seen: dict[tuple[object, ...], str] = {}
    reals: dict[str, str] = {}
    for label, t in outputs:
        other = seen.get(t.identity) or reals.get(t.real)
        if other is not None:
            raise UsageError(
                f"{other} and {label} name the same file; one run cannot write "
                f"two {noun}s to one file.",
                file=t.path,
                hint="give every output its own path.",
            )
        seen[t.identity] = label
        reals[t.real] = label
    for role, given in inputs:
        if not given:
            continue
        ident = _identity_of_input(given)
        real = os.path.realpath(given)
        for label, t in outputs:
            if ident is not None and (
                ident == t.identity
                or real == t.real
                or os.path.abspath(given) == os.path.abspath(t.path)
            ):
                same = "" if os.path.abspath(given) == os.path.abspath(t.path) else f" ({given})"
                raise UsageError(
                    f"{label}: this is the {role} file{same}; the {noun} would overwrite it. "
                    "Choose another output path.",
                    file=t.path,
                )


def refuse_written(
    files: Sequence[tuple[str, str | Target]],
    inputs: Iterable[tuple[str, str | None]] = (),
    noun: str = "report",
) -> None:
    """:func:`refuse_clashes` for every file a run is about to write — the outputs asked
    for and the files written beside them (the profile and catalog beside ``-o
    oscal-ssp``) — as ``(label, path or target)`` pairs, against each other and the run's
    inputs (the policy and every document it imports, the data, the baseline, the plan,
    the SSP, the configuration file)."""
    refuse_clashes(
        [(label, p if isinstance(p, Target) else target(p)) for label, p in files], inputs, noun
    )


# ---------------------------------------------------------------- signals


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated(signum)


@contextmanager
def signals_raise() -> Iterator[None]:
    """While inside, SIGTERM and SIGHUP raise :class:`Terminated` (in the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}
    for s in SIGNALS:
        with suppress(OSError, ValueError):
            previous[s] = signal.signal(s, _raise_terminated)
    try:
        yield
    finally:
        for s, handler in previous.items():
            with suppress(OSError, ValueError, TypeError):
                signal.signal(s, handler)


@contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP wait until the block ends (then act as usual)."""
    held = {signal.SIGINT, *SIGNALS}
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _pause(name: str) -> None:
    """Test-only hooks (see the module docstring)."""
    value = os.environ.get(name)
    if value:
        with suppress(ValueError):
            time.sleep(float(value))


# ---------------------------------------------------------------- writing


def _cannot(path: str, exc: OSError) -> OutputError:
    return OutputError(f"cannot write: {exc.strerror or exc}.", file=path)


@lean(frozen=False)
class _Output:
    target: Target
    text: str
    tmp: str | None = None

    def stage(self) -> None:
        t = self.target
        directory = os.path.dirname(t.real)
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError as exc:
            raise OutputError(
                f"cannot create the folder '{directory}': {exc.strerror or exc}.",
                file=t.path,
                hint="choose a path whose folder can be created.",
            ) from None
        # the name is recorded before the file exists, so a signal at any moment leaves
        # nothing that discard() does not know about
        import secrets  # only when a report is written to a file (hmac, base64: ~1 ms)

        self.tmp = os.path.join(directory, f"{TMP_PREFIX}{secrets.token_hex(6)}{TMP_SUFFIX}")
        try:
            umask = os.umask(0)
            os.umask(umask)
            fd = os.open(self.tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 & ~umask)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(self.text)
        except OSError as exc:
            self.discard()
            raise _cannot(t.path, exc) from None

    def commit(self) -> None:
        t = self.target
        try:
            if t.kind == "direct":
                with open(t.path, "w", encoding="utf-8") as fh:
                    fh.write(self.text)
                return
            assert self.tmp is not None
            os.replace(self.tmp, t.real)
            self.tmp = None
        except OSError as exc:
            self.discard()
            raise _cannot(t.path, exc) from None

    def discard(self) -> None:
        if self.tmp is not None:
            with suppress(OSError):
                os.unlink(self.tmp)
            self.tmp = None


def _lock_folders(stack: ExitStack, outputs: Sequence[_Output]) -> None:
    """An exclusive ``flock`` on the folder of every staged output, in one global order (no
    deadlock between runs); released when ``stack`` closes."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return
    folders = sorted({os.path.dirname(o.target.real) for o in outputs if o.target.kind == "staged"})
    for folder in folders:
        try:
            fd = os.open(folder, os.O_RDONLY)
        except OSError:
            continue
        stack.callback(os.close, fd)
        with suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_EX)
            stack.callback(fcntl.flock, fd, fcntl.LOCK_UN)


def _remove_stale(targets: Iterable[Target]) -> tuple[list[str], list[str]]:
    """Unlink the regular files at these outputs' paths: (removed, could not remove)."""
    removed: list[str] = []
    kept: list[str] = []
    for t in targets:
        if t.kind != "staged":
            continue
        try:
            if not stat.S_ISREG(os.stat(t.real).st_mode):
                continue
            os.unlink(t.real)
            removed.append(t.path)
        except FileNotFoundError:
            continue
        except OSError:
            kept.append(t.path)
    return removed, kept


@lean(frozen=False)
class _Set:
    outputs: list[_Output] = field(default_factory=list)

    def discard(self) -> None:
        for o in self.outputs:
            o.discard()


def write_all(items: Sequence[tuple[str | Target, str]]) -> None:
    """Write every ``(path or target, text)``: stage them all, then rename them all (under
    the folder locks, signals held). On a write error, remove the files at every path of
    the set (no stale verdicts) and raise :class:`OutputError` saying so."""
    outputs = [_Output(p if isinstance(p, Target) else target(p), text) for p, text in items]
    try:
        for o in outputs:
            if o.target.kind == "staged":
                o.stage()
        _pause("FAIRPOLICY_TEST_PAUSE_STAGED")
        staged = [o for o in outputs if o.target.kind == "staged"]
        with _signals_held(), ExitStack() as stack:
            _lock_folders(stack, staged)
            for i, o in enumerate(staged):
                if i:
                    _pause("FAIRPOLICY_TEST_PAUSE_RENAMES")
                o.commit()
        # devices and FIFOs last, outside the lock and with signals live: opening a FIFO
        # waits for its reader, and Ctrl-C must still stop that wait
        for o in outputs:
            if o.target.kind == "direct":
                o.commit()
    except OutputError as exc:
        for o in outputs:
            o.discard()
        raise _stale_removed(exc, [o.target for o in outputs]) from None
    finally:
        for o in outputs:
            o.discard()


def _stale_removed(exc: OutputError, targets: list[Target]) -> OutputError:
    removed, kept = _remove_stale(targets)
    problem = exc.problems[0]
    extra = ""
    if removed:
        extra += (
            f" Removed the earlier {', '.join(removed)} so no earlier run's report is taken "
            "for this run's."
        )
    if kept:
        extra += f" Could not remove the earlier {', '.join(kept)}: it is NOT this run's report."
    if not extra:
        return exc
    return OutputError(problem.message + extra, file=problem.file, hint=problem.hint)


def write_atomic(path: str, text: str) -> None:
    """Write one output (see :func:`write_all`)."""
    write_all([(path, text)])


# ---------------------------------------------------------------- step summary

#: GitHub rejects step summaries over 1 MiB
STEP_SUMMARY_LIMIT = 1 << 20


def append_step_summary(path: str, markdown: str) -> None:
    """Append ``markdown`` to ``$GITHUB_STEP_SUMMARY``, cut to stay under 1 MiB. All or
    nothing: a failed append (disk full) truncates the file back to its previous size."""
    data = markdown.encode("utf-8")
    if len(data) >= STEP_SUMMARY_LIMIT:
        note = b"\n\n_(report truncated to fit GitHub's 1 MiB step-summary limit)_\n"
        data = data[: STEP_SUMMARY_LIMIT - len(note) - 1].decode("utf-8", "ignore").encode()
        data += note
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    except OSError as exc:
        raise OutputError(
            f"cannot append the step summary: {exc.strerror or exc}.", file=path
        ) from None
    try:
        size = os.fstat(fd).st_size
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
        with _signals_held():
            try:
                view = memoryview(data)
                while view:
                    n = os.write(fd, view)
                    view = view[n:]
            except OSError as exc:
                if regular:
                    with suppress(OSError):
                        os.ftruncate(fd, size)
                raise OutputError(
                    f"cannot append the step summary: {exc.strerror or exc}; the summary was "
                    "left as it was.",
                    file=path,
                ) from None
    finally:
        os.close(fd)


def error_summary(reason: str) -> str:
    """The step-summary Markdown of a run that could not evaluate (exit 2)."""
    fence = "```"
    while fence in reason:
        fence += "`"
    return (
        "## fairpolicy: ERROR — could not evaluate (exit 2)\n\n"
        f"{fence}text\n{reason}\n{fence}\n\n"
        "No report of this run was written; reports left at the output paths, if any, are "
        "from an earlier run.\n"
    )


def href(target: str | None, document: str | None) -> str | None:
    """``target``'s path relative to the folder of ``document`` (stdout: the working
    directory), as a relative reference from that document; None without a target."""
    if target is None:
        return None
    base = os.path.dirname(os.path.abspath(document)) if document else os.getcwd()
    return os.path.relpath(os.path.abspath(target), base).replace(os.sep, "/")


def note_earlier_reports(items: Sequence[str], inputs: Sequence[str]) -> None:
    """A run that stops before it has a verdict writes nothing and leaves earlier reports
    as they were (they may be the last good evidence); say that they are not this run's.
    ``items``: the ``-o FORMAT[=PATH]`` values; ``inputs``: the run's input files."""
    import sys

    from fairpolicy.errors import printable

    earlier = []
    for item in items:
        path = item.partition("=")[2]
        if not path or path == STDOUT or not os.path.isfile(path):
            continue
        if any(os.path.exists(i) and os.path.samefile(path, i) for i in inputs):
            continue  # refused because it is an input: not a report
        earlier.append(printable(path))
    if earlier:
        print(
            f"note: this run wrote no report; {', '.join(earlier)} "
            f"{'is' if len(earlier) == 1 else 'are'} from an earlier run, not this one.",
            file=sys.stderr,
        )
