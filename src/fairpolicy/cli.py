"""Command line: ``fairpolicy check``, ``fairpolicy metrics``.

Commands are functions returning an exit code; :func:`main` is importable
and tested in process. Exceptions become exit codes in one place
(:func:`fairpolicy.errors.exit_code_for`); only ``--debug`` shows a traceback.
Heavy modules are imported inside the commands so ``--help`` stays fast.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, TextIO

from fairpolicy import __version__
from fairpolicy.errors import EXIT_ERROR, FairpolicyError, UsageError, exit_code_for

if TYPE_CHECKING:
    from fairpolicy.results import Results

EXIT_CODES_HELP = """exit codes:
  0  every gating control passed
  1  at least one gating control failed (or was inconclusive, by default)
  2  could not evaluate: bad usage, unreadable policy or data, missing column,
     invalid values
"""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="fairpolicy",
        description="Policy-as-code compliance checks for machine-learning fairness.",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"fairpolicy {__version__}")
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    c = sub.add_parser(
        "check",
        help="evaluate a policy against a predictions file",
        description="Evaluate every control of POLICY on DATA; exit 0 (pass), 1 (fail), 2 (error).",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    c.add_argument("policy", help="policy file (OSCAL YAML/JSON, or a bare list of controls)")
    c.add_argument(
        "data",
        help="predictions file (CSV or Parquet), or a quoted glob such as 'preds/*.parquet' "
        "(duckdb/spark engines)",
    )
    c.add_argument(
        "-o",
        "--output",
        action="append",
        default=[],
        metavar="FORMAT[=PATH]",
        help="output format and optional path (repeatable; default: text to stdout). "
        "Formats: text, json, junit, sarif, github, markdown, html, oscal (assessment results), "
        "oscal-ap (assessment plan)",
    )
    c.add_argument(
        "--bind",
        action="append",
        default=[],
        metavar="ROLE=COLUMN",
        help="bind a role (target, prediction, dimension, score) to a column for every control",
    )
    c.add_argument("--num-classes", type=int, metavar="K", help="declare the number of classes")
    c.add_argument(
        "--inconclusive",
        choices=("pass", "warn", "fail"),
        default="fail",
        help="how an inconclusive gating control affects the gate (default: fail)",
    )
    c.add_argument("--subject", metavar="TITLE", help="the assessed system's title in OSCAL output")
    c.add_argument(
        "--embed-evidence",
        action="store_true",
        help="embed the results JSON (base64) in the OSCAL back-matter",
    )
    c.add_argument(
        "--deterministic",
        action="store_true",
        help="reproducible output: fixed timestamps, content-derived UUIDs "
        "(also on when SOURCE_DATE_EPOCH is set)",
    )
    en = c.add_argument_group("engine (where the counting happens)")
    en.add_argument(
        "--engine",
        choices=("auto", "embedded", "duckdb", "spark"),
        default="auto",
        help="embedded: in memory with pyarrow + NumPy; duckdb: one GROUP BY in DuckDB, "
        "spilling to disk (larger-than-memory files, globs); spark: the same aggregation "
        "in a local Spark session; auto (default): duckdb for globs and for files whose "
        "bound columns would not fit the memory budget, else embedded",
    )
    en.add_argument(
        "--memory-budget",
        metavar="SIZE",
        help="memory the run may use, e.g. 4GB, 512MB or 25%% of physical memory (default "
        "50%%); auto's threshold and DuckDB's memory limit. The embedded engine refuses "
        "(exit 2, before reading rows) data it estimates would need more than this budget, "
        "when given, or than the memory available",
    )
    en.add_argument(
        "--score-decimals",
        type=int,
        metavar="N",
        help="duckdb/spark: round scores in [0, 1] to N decimals before aggregating "
        "(default 4; recorded in the results; error bounds in docs/engines.md)",
    )
    st = c.add_argument_group("statistics (override the controls' own props)")
    st.add_argument(
        "--bootstrap",
        type=int,
        metavar="N",
        help="bootstrap with N resamples (stratified by group unless --resample rows): a "
        "confidence interval per control",
    )
    st.add_argument("--ci-level", type=float, metavar="L", help="interval level (default 0.95)")
    st.add_argument(
        "--ci-method",
        choices=("percentile", "bca"),
        help="interval method (default percentile; gaps and ratios over groups always get the "
        "simultaneous band, docs/statistics.md)",
    )
    st.add_argument(
        "--resample",
        choices=("stratified", "rows"),
        help="stratified (default): resample rows within each group, group sizes fixed; rows: "
        "resample all rows together, for metrics that depend on group shares",
    )
    st.add_argument(
        "--decision",
        choices=("point", "ci_upper", "ci_lower"),
        help="point: the value decides (default); ci_upper: pass only if the whole interval "
        "satisfies the threshold; ci_lower: fail only if the whole interval violates it",
    )
    st.add_argument(
        "--p-value", type=int, metavar="N", help="permutation test of the group labels, N draws"
    )
    st.add_argument(
        "--bonferroni",
        action="store_true",
        default=None,
        help="Bonferroni-adjust per-group p-values",
    )
    st.add_argument(
        "--seed", type=int, help="seed of every resampling draw (default fixed; recorded)"
    )
    c.add_argument(
        "--fail-on",
        choices=("error", "warning", "never"),
        default="error",
        help="what fails the gate: failing controls (error, default), also warn-mode "
        "failures (warning), or nothing (never; exit 2 still means could not evaluate)",
    )
    lim = c.add_argument_group("resource limits")
    lim.add_argument(
        "--max-rows",
        type=int,
        metavar="N",
        help="refuse data with more than N rows (exit 2), checked before the rows are read",
    )
    c.add_argument("-q", "--quiet", action="store_true", help="text: show only non-passing rows")
    c.add_argument("-v", "--verbose", action="store_true", help="per-group tables")
    c.add_argument("--no-color", action="store_true", help="never colour the text output")
    c.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)

    e = sub.add_parser(
        "export",
        help="re-render a results JSON in another format without recomputing",
        description="Re-render RESULTS (a fairpolicy results JSON) as OSCAL assessment results.",
    )
    e.add_argument("format", choices=("oscal",), help="the format to write")
    e.add_argument("results", help="results JSON written by `check -o json=PATH`")
    e.add_argument("-o", "--output", required=True, metavar="PATH", help="file to write")
    e.add_argument("--subject", metavar="TITLE", help="the assessed system's title")
    e.add_argument("--embed-evidence", action="store_true", help="embed the results JSON")
    e.add_argument("--deterministic", action="store_true", help="content-derived UUIDs")
    e.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)

    v = sub.add_parser(
        "validate",
        help="check policy files without data (exit 0 valid, 2 invalid)",
        description="Structural and semantic checks of POLICY files without data; full OSCAL "
        "documents are also checked against the NIST OSCAL JSON schema.",
    )
    v.add_argument("policies", nargs="+", metavar="POLICY")
    v.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)

    cv = sub.add_parser(
        "convert",
        help="convert a simple-form policy into a namespaced OSCAL catalog (+ profile)",
    )
    cv.add_argument("policy", help="policy in the seed-003 / Venturalitica / list form")
    cv.add_argument(
        "-o", "--output", required=True, metavar="CATALOG", help="catalog file (.json/.yaml)"
    )
    cv.add_argument("--profile", metavar="PROFILE", help="also write a profile importing it")
    cv.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)

    m = sub.add_parser("metrics", help="list metric keys, or show one")
    m.add_argument("action", nargs="?", choices=("list", "show"), default="list")
    m.add_argument("key", nargs="?", help="metric key (for show)")
    m.add_argument(
        "--for",
        dest="context",
        metavar="CONTEXT",
        help="recommended metrics for hiring, lending, criminal-justice, healthcare, search, "
        "salary or advertising (seed 004's selection guide)",
    )
    m.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)
    return p


def _parse_outputs(items: Sequence[str]) -> list[tuple[str, str | None]]:
    from fairpolicy.formatters import get

    outputs: list[tuple[str, str | None]] = []
    for item in items or ["text"]:
        name, _, path = item.partition("=")
        get(name.strip())  # validates the name now, before any work
        outputs.append((name.strip(), path or None))
    return outputs


def _parse_bind(items: Sequence[str]) -> dict[str, str]:
    out = {}
    for item in items:
        role, sep, column = item.partition("=")
        if not sep or not role.strip() or not column.strip():
            raise UsageError(f"--bind expects ROLE=COLUMN, got '{item}'.")
        out[role.strip()] = column.strip()
    return out


def check_output_path(path: str) -> None:
    """Fail before any work when ``path`` cannot be an output file: its directory is
    missing or is a file, or the path is a directory."""
    from fairpolicy.errors import OutputError

    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise OutputError(
            "this is a directory; name the file to write.",
            file=path,
            hint=f"e.g. {os.path.join(path, 'report')}.",
        )
    parent = directory
    while parent and not os.path.exists(parent):
        parent = os.path.dirname(parent) if os.path.dirname(parent) != parent else ""
    if parent and not os.path.isdir(parent):
        raise OutputError(
            f"'{parent}' is not a directory, so nothing can be written under it.",
            file=path,
            hint="choose a path in a directory.",
        )
    if not os.path.isdir(directory):
        raise OutputError(
            f"the directory '{directory}' does not exist.",
            file=path,
            hint="create it first or choose another path.",
        )


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def write_atomic(path: str, text: str) -> None:
    """Write to a temporary file beside ``path`` and rename it into place."""
    _Staged(path, text).commit()


class _Staged:
    """``text`` written to a temporary file beside ``path``; :meth:`commit` renames it into
    place. Staging every output before renaming any means a run whose last output fails
    leaves every previous output as it was."""

    def __init__(self, path: str, text: str) -> None:
        import tempfile

        from fairpolicy.errors import OutputError

        check_output_path(path)
        self.path = path
        self.tmp: str | None = None
        try:
            fd, self.tmp = tempfile.mkstemp(
                dir=os.path.dirname(os.path.abspath(path)), prefix=".fairpolicy-", suffix=".tmp"
            )
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(self.tmp, 0o666 & ~umask)  # as an ordinary open() would, not mkstemp's
        except OSError as exc:
            self.discard()
            raise OutputError(f"cannot write: {exc.strerror or exc}.", file=path) from None

    def commit(self) -> None:
        from fairpolicy.errors import OutputError

        assert self.tmp is not None
        try:
            os.replace(self.tmp, self.path)
        except OSError as exc:
            self.discard()
            raise OutputError(f"cannot write: {exc.strerror or exc}.", file=self.path) from None
        self.tmp = None

    def discard(self) -> None:
        if self.tmp is not None:
            with suppress(OSError):
                os.unlink(self.tmp)
            self.tmp = None


def cmd_check(args: argparse.Namespace, stdout: TextIO) -> int:
    from fairpolicy.runner import is_deterministic

    outputs = _parse_outputs(args.output)
    for _, path in outputs:
        if path is not None:
            check_output_path(path)  # before the data is read, not after
            for role, given in (("policy", args.policy), ("data", args.data)):
                if os.path.abspath(path) == os.path.abspath(given) or _same_file(path, given):
                    raise UsageError(
                        f"-o {path}: this is the {role} file; the report would overwrite it. "
                        "Choose another output path."
                    )
    deterministic = is_deterministic(args.deterministic)
    with _progress_bar() as progress:
        results = _run_check(args, deterministic, progress)
    return _emit(args, results, outputs, deterministic, stdout)


def _run_check(
    args: argparse.Namespace, deterministic: bool, progress: Callable[[str, int, int], None] | None
) -> Results:
    from fairpolicy.runner import check

    return check(
        args.policy,
        args.data,
        bind=_parse_bind(args.bind),
        num_classes=args.num_classes,
        inconclusive=args.inconclusive,
        fail_on=args.fail_on,
        deterministic=deterministic,
        bootstrap=args.bootstrap,
        ci_level=args.ci_level,
        ci_method=args.ci_method,
        resample=args.resample,
        decision=args.decision,
        p_value=args.p_value,
        bonferroni=args.bonferroni,
        seed=args.seed,
        progress=progress,
        engine=args.engine,
        memory_budget=args.memory_budget,
        score_decimals=args.score_decimals,
        max_rows=args.max_rows,
    )


@contextmanager
def _progress_bar() -> Iterator[Callable[[str, int, int], None] | None]:
    """A transient rich progress bar on stderr, only when stderr is a terminal (never in
    captured output, CI logs or pipes)."""
    if not (hasattr(sys.stderr, "isatty") and sys.stderr.isatty()):
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    task = bar.add_task("fairpolicy", total=None)

    def update(stage: str, done: int, total: int) -> None:
        bar.update(task, description=stage, completed=done, total=total or None)

    with bar:
        yield update


def _emit(
    args: argparse.Namespace,
    results: Results,
    outputs: list[tuple[str, str | None]],
    deterministic: bool,
    stdout: TextIO,
) -> int:
    from fairpolicy.formatters import RenderOptions, get

    color = (
        not args.no_color
        and "NO_COLOR" not in os.environ
        and hasattr(stdout, "isatty")
        and stdout.isatty()
    )
    if not any(path is None for _, path in outputs):
        outputs.insert(0, ("text", None))  # the table always reaches the terminal
    ap_path = next((p for n, p in outputs if n == "oscal-ap" and p), None)
    # every output is rendered before any file is written, and every file is written to a
    # temporary file before any is renamed: a failure leaves the previous reports as they
    # were (the table still reaches the terminal)
    shown: list[str] = []
    staged: list[_Staged] = []
    try:
        for name, path in outputs:
            ap_href = None
            if name == "oscal" and ap_path is not None:
                base = os.path.dirname(os.path.abspath(path)) if path else os.getcwd()
                ap_href = os.path.relpath(os.path.abspath(ap_path), base).replace(os.sep, "/")
            opts = RenderOptions(
                color=color and path is None,
                verbose=args.verbose,
                quiet=args.quiet,
                path=path,
                subject=args.subject,
                embed_evidence=args.embed_evidence,
                deterministic=deterministic,
                ap_href=ap_href,
            )
            text = get(name)(results, opts)
            if path is None:
                shown.append(text)
            else:
                staged.append(_Staged(path, text))
        for output in staged:
            output.commit()
    finally:
        for output in staged:
            output.discard()  # those not renamed into place
        for text in shown:
            stdout.write(text)
    summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary_file and any(n == "github" for n, _ in outputs):
        _append_step_summary(summary_file, get("markdown")(results, RenderOptions()))
    failed = [f.control_id for f in results.findings if f.status == "error"]
    if failed:  # the reasons are in the report; stderr gets the one line CI logs grep for
        print(
            f"error: {len(failed)} control(s) could not be evaluated: {', '.join(failed)}",
            file=sys.stderr,
        )
    return results.exit_code


#: GitHub rejects step summaries over 1 MiB
STEP_SUMMARY_LIMIT = 1 << 20


def _append_step_summary(path: str, markdown: str) -> None:
    """Append the Markdown report to ``$GITHUB_STEP_SUMMARY``, cut to stay under 1 MiB."""
    from fairpolicy.errors import OutputError

    data = markdown.encode("utf-8")
    if len(data) >= STEP_SUMMARY_LIMIT:
        note = b"\n\n_(report truncated to fit GitHub's 1 MiB step-summary limit)_\n"
        data = data[: STEP_SUMMARY_LIMIT - len(note) - 1].decode("utf-8", "ignore").encode()
        data += note
    try:
        with open(path, "ab") as fh:
            fh.write(data)
    except OSError as exc:
        raise OutputError(f"cannot append the step summary: {exc.strerror}.", file=path) from None


def cmd_export(args: argparse.Namespace, stdout: TextIO) -> int:
    from fairpolicy.formatters import RenderOptions, get
    from fairpolicy.results import load_results
    from fairpolicy.runner import is_deterministic

    results = load_results(args.results)
    opts = RenderOptions(
        path=args.output,
        subject=args.subject,
        embed_evidence=args.embed_evidence,
        deterministic=is_deterministic(args.deterministic),
    )
    write_atomic(args.output, get(args.format)(results, opts))
    return 0


def cmd_validate(args: argparse.Namespace, stdout: TextIO) -> int:
    from fairpolicy.policy.validate import validate_files

    code: int = validate_files(args.policies, stdout)
    return code


def cmd_convert(args: argparse.Namespace, stdout: TextIO) -> int:
    from fairpolicy.policy.convert import convert_file

    staged: list[_Staged] = []  # the catalog and the profile are renamed together
    try:
        convert_file(
            args.policy,
            args.output,
            args.profile,
            write=lambda path, text: staged.append(_Staged(path, text)),
        )
        for output in staged:
            output.commit()
    finally:
        for output in staged:
            output.discard()
    stdout.write(f"wrote {args.output}" + (f" and {args.profile}" if args.profile else "") + "\n")
    return 0


def cmd_metrics(args: argparse.Namespace, stdout: TextIO) -> int:
    from fairpolicy.metrics.docs import list_metrics, recommend, show_metric

    if args.context:
        stdout.write(recommend(args.context))
    elif args.action == "show" or args.key:
        if not args.key:
            raise UsageError("fairpolicy metrics show KEY: name a metric key.")
        stdout.write(show_metric(args.key))
    else:
        stdout.write(list_metrics())
    return 0


def main(argv: Sequence[str] | None = None, stdout: TextIO | None = None) -> int:
    code = _main(argv, stdout)
    if argv is None:  # run as the program (console script, python -m): the process ends now
        import gc

        # everything allocated lives until exit; frozen objects are not traversed by the
        # collector at interpreter shutdown (0.2 s after a check, mostly trestle's models)
        gc.freeze()
    return code


def _main(argv: Sequence[str] | None, stdout: TextIO | None) -> int:
    out = stdout or sys.stdout
    parser = _parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help/--version (0) or usage error (2)
        return int(exc.code or 0)
    debug = getattr(args, "debug", False) or "--debug" in argv
    if args.command is None:
        parser.print_help(out)
        return EXIT_ERROR
    try:
        command = {
            "check": cmd_check,
            "export": cmd_export,
            "validate": cmd_validate,
            "convert": cmd_convert,
            "metrics": cmd_metrics,
        }[args.command]
        return command(args, out)
    except FairpolicyError as exc:
        if debug:
            import traceback

            traceback.print_exc()
        print(f"error: {exc.render()}", file=sys.stderr)
        return exit_code_for(exc)
    except KeyboardInterrupt as exc:
        return exit_code_for(exc)
    except Exception as exc:  # a bug: still exit 2, never a silent pass
        if debug:
            raise
        print(
            f"error: internal error ({type(exc).__name__}: {exc}). This is a fairpolicy bug; "
            "rerun with --debug for a traceback and report it.",
            file=sys.stderr,
        )
        return EXIT_ERROR
