"""Command line: ``fairpolicy check``, ``fairpolicy metrics``.

Commands are functions returning an exit code; :func:`main` is importable
and tested in process. Exceptions become exit codes in one place
(:func:`fairpolicy.errors.exit_code_for`); only ``--debug`` shows a traceback.
Heavy modules are imported inside the commands so ``--help`` stays fast.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, TextIO

from fairpolicy.cli_args import parse_bind, parse_meta, parse_outputs
from fairpolicy.errors import EXIT_ERROR, FairpolicyError, Terminated, UsageError, exit_code_for
from fairpolicy.outputs import signals_raise
from fairpolicy.policy.numbers import cli_float, cli_int
from fairpolicy.version import __version__

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
    c.add_argument(
        "paths",
        nargs="+",
        metavar="[POLICY] DATA",
        help="the policy file (OSCAL YAML/JSON, or a bare list of controls; default: "
        "`policy` in the configuration file) and the predictions file (CSV or Parquet, or a "
        "quoted glob such as 'preds/*.parquet' for the duckdb/spark engines)",
    )
    c.add_argument(
        "--config",
        metavar="FILE",
        help="read defaults from FILE ([tool.fairpolicy] of a pyproject.toml, or a "
        "fairpolicy.toml) instead of the one found from the working directory upward",
    )
    c.add_argument(
        "--explain",
        metavar="CONTROL",
        help="print CONTROL as resolved — each setting and where it came from (catalog, "
        "profile, component-definition, command line, default) — and exit; reads no data",
    )
    c.add_argument(
        "--no-config",
        action="store_true",
        help="use no configuration file (only the command line)",
    )
    c.add_argument(
        "-o",
        "--output",
        action="append",
        default=[],
        metavar="FORMAT[=PATH]",
        help="output format and optional path (repeatable; default: text to stdout). "
        "Formats: text, json, junit, sarif, github, markdown, html, oscal (assessment results), "
        "oscal-ap (assessment plan), mlflow (log into the active MLflow run; no PATH)",
    )
    c.add_argument(
        "--mlflow-run-id",
        metavar="ID",
        default=None,
        help="log the results into this MLflow run (implies -o mlflow)",
    )
    c.add_argument(
        "--bind",
        action="append",
        default=[],
        metavar="ROLE=COLUMN",
        help="bind a role (target, prediction, dimension, score, rank, site, weight, columns, "
        "fields, sensitive_columns) to a column for every control; repeatable",
    )
    c.add_argument("--num-classes", type=cli_int, metavar="K", help="declare the number of classes")
    c.add_argument(
        "--inconclusive",
        choices=("pass", "warn", "fail"),
        default="fail",
        help="how an inconclusive gating control affects the gate (default: fail)",
    )
    c.add_argument(
        "--subject",
        metavar="TITLE",
        help='the assessed system\'s title, e.g. "model v4.2" (in every report)',
    )
    c.add_argument(
        "--meta",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="run metadata carried into every report (repeatable: git SHA, ticket, reviewer)",
    )
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
    _people_options(c)
    c.add_argument(
        "--ssp",
        metavar="FILE",
        help="the system security plan (OSCAL SSP) of the assessed system: the assessment "
        "plan (-o oscal-ap) imports it; --subject names its component for the model",
    )
    c.add_argument(
        "--timestamp",
        metavar="ISO8601",
        help="date the run (start and end) with this date-time instead of the clock, e.g. "
        "2026-01-31T12:00:00Z (beside SOURCE_DATE_EPOCH; --timestamp wins)",
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
        type=cli_int,
        metavar="N",
        help="duckdb/spark: round scores in [0, 1] to N decimals before aggregating "
        "(default 4; recorded in the results; error bounds in docs/engines.md)",
    )
    st = c.add_argument_group("statistics (override the controls' own props)")
    st.add_argument(
        "--bootstrap",
        type=cli_int,
        metavar="N",
        help="bootstrap with N resamples (stratified by group unless --resample rows): a "
        "confidence interval per control",
    )
    st.add_argument("--ci-level", type=cli_float, metavar="L", help="interval level (default 0.95)")
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
        "--p-value", type=cli_int, metavar="N", help="permutation test of the group labels, N draws"
    )
    st.add_argument(
        "--bonferroni",
        action="store_true",
        default=None,
        help="Bonferroni-adjust per-group p-values",
    )
    st.add_argument(
        "--seed", type=cli_int, help="seed of every resampling draw (default fixed; recorded)"
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
        type=cli_int,
        metavar="N",
        help="refuse data with more than N rows (exit 2), checked before the rows are read",
    )
    lim.add_argument(
        "--max-groups",
        type=int,
        metavar="N",
        help="refuse a dimension with more than N distinct groups (default 10000)",
    )
    lim.add_argument(
        "--max-classes",
        type=int,
        metavar="K",
        help="refuse more than K classes, declared or found in the labels (default 1000)",
    )
    lim.add_argument(
        "--max-resamples",
        type=int,
        metavar="N",
        help="refuse a bootstrap (ci, --bootstrap) or permutation test (p_value, --p-value) "
        "of more than N resamples, before the data is read (default 100000)",
    )
    lim.add_argument(
        "--max-cells",
        type=int,
        metavar="N",
        help="refuse a count table (groups x classes^2) or bootstrap replicates (resamples "
        "x cells) of more than N cells (default 20000000)",
    )
    lim.add_argument(
        "--max-resample-seconds",
        type=int,
        metavar="S",
        help="refuse a bootstrap or permutation test estimated to run longer than S seconds "
        "(default 600)",
    )
    lim.add_argument(
        "--allow-path",
        action="append",
        default=[],
        metavar="DIR",
        help="let the policy's hrefs and sources name files under DIR (repeatable); by "
        "default they must lie in the policy's own folder tree",
    )
    c.add_argument(
        "--strict",
        action="store_true",
        help="require valid OSCAL policy input: what NIST's schema would reject is an error "
        "(exit 2) instead of one warning per document",
    )
    _baseline_options(c)
    c.add_argument("-q", "--quiet", action="store_true", help="text: show only non-passing rows")
    c.add_argument("-v", "--verbose", action="store_true", help="per-group tables")
    c.add_argument("--no-color", action="store_true", help="never colour the text output")
    c.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)

    pl = sub.add_parser(
        "plan",
        help="write the OSCAL assessment plan of a policy before any data is seen",
        description="Resolve POLICY (with the bindings and statistics options a check would "
        "take) and write the OSCAL assessment plan an assessor approves: controls, objectives, "
        "methods, thresholds and the columns the run will read. `check --plan` then verifies "
        "that a run is the planned one.",
    )
    pl.add_argument("policy", help="policy file")
    pl.add_argument("-o", "--output", required=True, metavar="PATH", help="plan file to write")
    shared = {
        "--bind", "--num-classes", "--subject", "--assessor", "--organization", "--ssp",
        "--deterministic", "--timestamp", "--bootstrap", "--ci-level", "--ci-method",
        "--decision", "--p-value", "--bonferroni",
    }  # fmt: skip
    for action in c._actions:  # the same options as check (argparse's parents do this)
        if shared & set(action.option_strings):
            pl._add_action(action)
    pl.add_argument(
        "--write-ssp",
        metavar="PATH",
        help="also write a minimal OSCAL SSP for the model (and the profile it imports, beside "
        "it) and make the plan import it",
    )
    pl.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)
    c.add_argument(
        "--plan",
        metavar="AP",
        help="the approved assessment plan (`fairpolicy plan`): the run must match it (else "
        "exit 2) and the OSCAL results import it",
    )

    e = sub.add_parser(
        "export",
        help="re-render a results JSON in another format without recomputing",
        description="Re-render RESULTS (a fairpolicy results JSON) as OSCAL assessment results.",
    )
    e.add_argument("format", choices=("oscal",), help="the format to write")
    e.add_argument("results", help="results JSON written by `check -o json=PATH`")
    e.add_argument(
        "-o", "--output", required=True, metavar="PATH", help="file to write (- for stdout)"
    )
    e.add_argument("--subject", metavar="TITLE", help="the assessed system's title")
    e.add_argument("--embed-evidence", action="store_true", help="embed the results JSON")
    e.add_argument("--deterministic", action="store_true", help="content-derived UUIDs")
    e.add_argument(
        "--plan", metavar="AP", help="the assessment plan the results import (import-ap)"
    )
    _people_options(e)
    e.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)

    d = sub.add_parser(
        "diff",
        help="the change table between two results JSON files",
        description="Compare NEW with OLD (results JSON of the same policy) control by control; "
        "exit 0 no regression beyond max_regression, 1 a regression, 2 cannot compare.",
    )
    d.add_argument("old", metavar="OLD.json")
    d.add_argument("new", metavar="NEW.json")
    d.add_argument("-o", "--output", choices=("text", "markdown", "json"), default="text")
    _baseline_options(d, check=False)
    d.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)

    v = sub.add_parser(
        "validate",
        help="check policy files without data (exit 0 valid, 2 invalid)",
        description="Structural and semantic checks of POLICY files without data; full OSCAL "
        "documents are also checked against the NIST OSCAL JSON schema.",
    )
    v.add_argument("policies", nargs="+", metavar="POLICY")
    v.add_argument(
        "--allow-path",
        action="append",
        default=[],
        metavar="DIR",
        help="let the policies' hrefs and sources name files under DIR (repeatable)",
    )
    v.add_argument(
        "--strict",
        action="store_true",
        help="require valid OSCAL: NIST schema problems are errors (exit 2), not warnings",
    )
    v.add_argument(
        "--bind",
        action="append",
        default=[],
        metavar="ROLE=COLUMN",
        help="a role check would bind with --bind for every control (a template's open "
        "roles are then not reported missing); repeatable",
    )
    v.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)

    cv = sub.add_parser(
        "convert",
        help="convert a simple-form policy into a namespaced OSCAL catalog (+ profile)",
    )
    cv.add_argument(
        "policy", help="policy in Venturalitica assessment-plan / component-definition / list form"
    )
    cv.add_argument(
        "-o", "--output", required=True, metavar="CATALOG", help="catalog file (.json/.yaml)"
    )
    cv.add_argument("--profile", metavar="PROFILE", help="also write a profile importing it")
    cv.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)

    ex = sub.add_parser(
        "explore",
        help="find the slices (attribute-value conjunctions) whose rate diverges most",
        description="Rank conjunctions of attribute values by how far their rate diverges "
        "from the rest of the data, with intervals and Benjamini-Hochberg-adjusted p-values. "
        "Exit 0 when the report is written (exploring is not a gate), 2 on bad input.",
    )
    ex.add_argument("data", help="predictions file (CSV or Parquet)")
    ex.add_argument("--target", required=True, metavar="COL", help="true label column")
    ex.add_argument("--prediction", required=True, metavar="COL", help="predicted label column")
    ex.add_argument("--attributes", required=True, metavar="A,B,...", help="columns to slice by")
    ex.add_argument(
        "--metric",
        default="selection_rate",
        metavar="KEY",
        help="rate to compare: selection_rate (default), tpr, fpr, fnr, tnr, "
        "precision, npv, fdr, for, error_rate, accuracy, or the registry metric "
        "comparing it (e.g. equal_opportunity_diff)",
    )
    ex.add_argument("--depth", type=cli_int, default=2, help="conditions per slice (default 2)")
    ex.add_argument(
        "--min-support",
        type=cli_float,
        default=0.02,
        metavar="FRACTION",
        help="smallest slice, as a fraction of the rows (default 0.02)",
    )
    ex.add_argument(
        "--bins",
        type=cli_int,
        default=5,
        help="equal-frequency bins for numeric attributes with more distinct "
        "values than this (default 5)",
    )
    ex.add_argument(
        "--max-slices",
        type=cli_int,
        default=100_000,
        metavar="N",
        help="stop with an error past N supported slices (default 100000)",
    )
    ex.add_argument(
        "--fdr",
        type=cli_float,
        default=0.05,
        metavar="Q",
        help="false-discovery rate for significance; intervals at 1-Q (default 0.05)",
    )
    ex.add_argument("--top", type=cli_int, default=20, metavar="N", help="slices shown")
    ex.add_argument("--positive-label", metavar="LABEL", help="the positive class")
    ex.add_argument("--max-rows", type=cli_int, metavar="N", help="refuse data with more rows")
    ex.add_argument(
        "-o",
        "--output",
        action="append",
        metavar="FORMAT[=PATH]",
        help="text, json, markdown or html; repeatable (default: text)",
    )
    ex.add_argument(
        "--emit-policy",
        metavar="FILE",
        help="write the significant slices as candidate controls: .json an OSCAL "
        "catalog, otherwise the simple list form (thresholds SET-ME)",
    )
    ex.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)

    comp = sub.add_parser(
        "completion",
        help="print a shell completion script (bash, zsh, fish)",
        description="Print a completion script for SHELL, generated from this parser. "
        "bash: fairpolicy completion bash > ~/.local/share/bash-completion/completions/"
        'fairpolicy; zsh: fairpolicy completion zsh > "${fpath[1]}/_fairpolicy"; fish: '
        "fairpolicy completion fish > ~/.config/fish/completions/fairpolicy.fish",
    )
    comp.add_argument("shell", choices=("bash", "zsh", "fish"))
    comp.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)

    m = sub.add_parser("metrics", help="list metric keys, or show one")
    m.add_argument("action", nargs="?", choices=("list", "show"), default="list")
    m.add_argument("key", nargs="?", help="metric key (for show)")
    m.add_argument(
        "--for",
        dest="context",
        metavar="CONTEXT",
        help="recommended metrics for hiring, lending, criminal-justice, healthcare, search, "
        "salary or advertising (the fairness-metrics tutorial's selection guide)",
    )
    m.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)
    return p


def cmd_check(args: argparse.Namespace, stdout: TextIO) -> int:
    try:
        return _check(args, stdout)
    except FairpolicyError as exc:
        from fairpolicy.outputs import note_earlier_reports
        from fairpolicy.reports import github_error

        if any(o.partition("=")[0].strip() == "github" for o in args.output):
            github_to_stdout = any(
                o.partition("=")[0].strip() == "github" and o.partition("=")[2] in ("", "-")
                for o in args.output
            )
            github_error(exc.render(), stdout, github_to_stdout)
        note_earlier_reports(args.output, (args.policy, args.data))
        raise


def _subparser(name: str) -> argparse.ArgumentParser:
    for action in _parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            sub: argparse.ArgumentParser = action.choices[name]
            return sub
    raise KeyError(name)  # pragma: no cover


def _check(args: argparse.Namespace, stdout: TextIO) -> int:
    from fairpolicy.assemble import is_deterministic
    from fairpolicy.config import configure
    from fairpolicy.evidence import attach, prepare
    from fairpolicy.formatters import RenderOptions
    from fairpolicy.integrations.mlflow import split_mlflow
    from fairpolicy.outputs import refuse_clashes, target
    from fairpolicy.people import check_people
    from fairpolicy.reports import emit

    applied = configure(args, lambda: _subparser("check"))
    if args.explain is not None:
        from fairpolicy.explain import explain_args

        stdout.write(explain_args(args, parse_bind(args.bind)))
        return 0
    args.output, to_mlflow = split_mlflow(args.output, args.mlflow_run_id)
    outputs = parse_outputs(args.output)
    # every path is checked before the data is read, not after
    targets = [(f"-o {name}={path}", target(path)) for name, path in outputs if path is not None]
    refuse_clashes(targets, (("policy", args.policy), ("data", args.data)))
    check_people(args.assessor, args.organization)
    subject = args.subject or os.path.basename(args.data)
    chain = prepare(outputs, args.ssp, args.plan, subject)  # SSP and plan, before any work
    deterministic = is_deterministic(args.deterministic)
    with _progress_bar() as progress:
        results = _run_check(args, deterministic, progress)
    if applied.path is not None:  # the configuration used, recorded with the run
        options = {**results.run.options, "config": applied.record()}
        results = results.model_copy(
            update={"run": results.run.model_copy(update={"options": options})}
        )
    results = attach(results, chain)  # the SSP's hash; the run verified against the plan
    base = RenderOptions(
        verbose=args.verbose,
        quiet=args.quiet,
        subject=args.subject,
        embed_evidence=args.embed_evidence,
        deterministic=deterministic,
        assessors=tuple(args.assessor),
        organization=args.organization,
    )
    color = not args.no_color and "NO_COLOR" not in os.environ
    code = emit(results, outputs, base, stdout, color=color, plan=args.plan, ssp=chain.given_ssp)
    if to_mlflow:
        from fairpolicy.integrations.mlflow import log_results

        log_results(results, args.mlflow_run_id)
    return code


def _run_check(
    args: argparse.Namespace, deterministic: bool, progress: Callable[[str, int, int], None] | None
) -> Results:
    from fairpolicy.runner import check

    return check(
        args.policy,
        args.data,
        bind=parse_bind(args.bind),
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
        timestamp=args.timestamp,
        max_groups=args.max_groups,
        max_classes=args.max_classes,
        max_resamples=args.max_resamples,
        max_cells=args.max_cells,
        max_resample_seconds=args.max_resample_seconds,
        allow_paths=args.allow_path,
        strict=args.strict,
        subject=args.subject,
        meta=parse_meta(args.meta),
        baseline=args.baseline,
        max_regression=args.max_regression,
        allow_policy_change=args.allow_policy_change,
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


def _baseline_options(parser: argparse.ArgumentParser, check: bool = True) -> None:
    if check:
        parser.add_argument(
            "--baseline",
            metavar="RESULTS.json",
            help="compare every control with this earlier results JSON (`check -o json`)",
        )
    parser.add_argument(
        "--max-regression",
        type=float,
        metavar="DELTA",
        help="fail a control whose value got worse than the baseline's by more than DELTA "
        "(a control's max_regression prop wins)",
    )
    parser.add_argument(
        "--allow-policy-change",
        action="store_true",
        help="compare with results of another policy version (changed controls: not compared)",
    )


def cmd_diff(args: argparse.Namespace, stdout: TextIO) -> int:
    from fairpolicy.diff import diff

    return diff(
        args.old,
        args.new,
        stdout,
        fmt=args.output,
        max_regression=args.max_regression,
        allow_policy_change=args.allow_policy_change,
    )


def _people_options(parser: argparse.ArgumentParser) -> None:
    """``--assessor`` and ``--organization`` (check, export; plan shares check's)."""
    parser.add_argument(
        "--assessor",
        action="append",
        default=[],
        metavar="'NAME <EMAIL>'",
        help="a person who performed the assessment (repeatable): a party with the assessor "
        "role in the OSCAL documents",
    )
    parser.add_argument(
        "--organization", metavar="NAME", help="the assessors' organization (OSCAL party)"
    )


def cmd_plan(args: argparse.Namespace, stdout: TextIO) -> int:
    from fairpolicy.assemble import is_deterministic
    from fairpolicy.formatters import RenderOptions
    from fairpolicy.outputs import refuse_clashes, target
    from fairpolicy.people import check_people
    from fairpolicy.plan import plan_results, write_plan
    from fairpolicy.ssp import given_ssp

    check_people(args.assessor, args.organization)
    given = given_ssp(args.ssp, "--write-ssp" if args.write_ssp else None, args.subject)
    ssp_sha = None if given is None else given[0]
    out = target(args.output)
    outs = [(f"-o {args.output}", out)]
    if args.write_ssp is not None:
        outs.append((f"--write-ssp {args.write_ssp}", target(args.write_ssp)))
    refuse_clashes(outs, [("policy", args.policy)], noun="plan")
    deterministic = is_deterministic(args.deterministic)
    params = {
        k: v
        for k, v in {
            "ci": args.bootstrap,
            "ci_level": args.ci_level,
            "ci_method": args.ci_method,
            "decision": args.decision,
            "p_value": args.p_value,
            "bonferroni": args.bonferroni,
        }.items()
        if v is not None
    }
    results = plan_results(
        args.policy,
        bind=parse_bind(args.bind),
        num_classes=args.num_classes,
        params=params,
        timestamp=args.timestamp,
        deterministic=deterministic,
    )
    base = RenderOptions(
        subject=args.subject,
        deterministic=deterministic,
        assessors=tuple(args.assessor),
        organization=args.organization,
    )
    write_plan(
        results, args.output, out, base, ssp=args.ssp, ssp_sha256=ssp_sha, write_ssp=args.write_ssp
    )
    stdout.write(
        f"wrote the assessment plan of {len(results.findings)} control(s) to {args.output}\n"
    )
    return 0


def cmd_export(args: argparse.Namespace, stdout: TextIO) -> int:
    from fairpolicy.assemble import is_deterministic
    from fairpolicy.formatters import RenderOptions, get
    from fairpolicy.outputs import href, is_stdout, refuse_clashes, target, write_all
    from fairpolicy.people import check_people
    from fairpolicy.results import load_results

    check_people(args.assessor, args.organization)
    out = None if is_stdout(args.output) else target(args.output)  # -: standard output
    if out is not None:
        refuse_clashes([(f"-o {args.output}", out)], [("results", args.results)], noun="export")
    results = load_results(args.results)
    opts = RenderOptions(
        path=None if out is None else args.output,
        subject=args.subject,
        embed_evidence=args.embed_evidence,
        deterministic=is_deterministic(args.deterministic),
        results_href=href(args.results, args.output),
        ap_href=href(args.plan, args.output),
        plan_given=args.plan is not None,
        assessors=tuple(args.assessor),
        organization=args.organization,
    )
    text = get(args.format)(results, opts)
    if out is None:
        stdout.write(text)
    else:
        write_all([(out, text)])
    return 0


def cmd_validate(args: argparse.Namespace, stdout: TextIO) -> int:
    from fairpolicy.policy.validate import validate_files

    bound = tuple(parse_bind(args.bind))
    code: int = validate_files(
        args.policies, stdout, args.allow_path, strict=args.strict, bound=bound
    )
    return code


def cmd_convert(args: argparse.Namespace, stdout: TextIO) -> int:
    from fairpolicy.outputs import refuse_clashes, target, write_all
    from fairpolicy.policy.convert import convert_file

    staged: list[tuple[str, str]] = []  # the catalog and the profile are written together
    convert_file(
        args.policy, args.output, args.profile, write=lambda path, text: staged.append((path, text))
    )
    targets = [(f"-o {args.output}", target(args.output))]
    if args.profile:
        targets.append((f"--profile {args.profile}", target(args.profile)))
    # also through hard links and symlinks
    refuse_clashes(targets, [("policy", args.policy)], noun="output")
    write_all(staged)
    stdout.write(f"wrote {args.output}" + (f" and {args.profile}" if args.profile else "") + "\n")
    return 0


def cmd_completion(args: argparse.Namespace, stdout: TextIO) -> int:
    from fairpolicy.completion import script

    stdout.write(script(args.shell, _parser()))
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


def cmd_explore(args: argparse.Namespace, stdout: TextIO) -> int:
    from fairpolicy.explore import run

    return run(args, stdout)


def _duckdb_connections() -> int:
    engine = sys.modules.get("fairpolicy.data.sources.duckdb")
    return int(getattr(engine, "CONNECTIONS", 0))


def main(argv: Sequence[str] | None = None, stdout: TextIO | None = None) -> int:
    if argv is None:
        # run as the program: pydantic would look for plugins in the entry points of every
        # installed distribution when it builds its first model (importlib.metadata and
        # email imported, every dist-info read: ~10 ms of a check, issue 17); the command
        # line runs none. A PYDANTIC_DISABLE_PLUGINS the caller set is kept.
        os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    connections = _duckdb_connections()
    code = _main(argv, stdout)
    # run as the program (console script, python -m): the process ends now. Not after
    # DuckDB ran: its nanobind bindings count the objects left at shutdown, and frozen
    # objects are never freed, so stderr would fill with "nanobind: leaked instances"
    if argv is None and _duckdb_connections() == connections:
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
    args.argv = argv  # what the configuration file may not override (fairpolicy.config)
    debug = getattr(args, "debug", False) or "--debug" in argv
    if args.command is None:
        parser.print_help(out)
        return EXIT_ERROR
    try:
        command = {
            "check": cmd_check,
            "export": cmd_export,
            "plan": cmd_plan,
            "validate": cmd_validate,
            "convert": cmd_convert,
            "metrics": cmd_metrics,
            "explore": cmd_explore,
            "diff": cmd_diff,
            "completion": cmd_completion,
        }[args.command]
        with signals_raise():
            return command(args, out)
    except FairpolicyError as exc:
        if debug:
            import traceback

            traceback.print_exc()
        print(f"error: {exc.render()}", file=sys.stderr)
        return exit_code_for(exc)
    except (KeyboardInterrupt, Terminated) as exc:
        name = "SIGINT" if isinstance(exc, KeyboardInterrupt) else signal.Signals(exc.signum).name
        print(
            f"error: interrupted ({name}); staged output files were removed.",
            file=sys.stderr,
        )
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
