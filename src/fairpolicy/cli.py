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
from typing import TYPE_CHECKING, Any, TextIO

from fairpolicy.cli_args import parse_bind, parse_meta, parse_outputs
from fairpolicy.cli_parser import build_parser, command_of, subparser
from fairpolicy.errors import EXIT_ERROR, FairpolicyError, Terminated, UsageError, exit_code_for
from fairpolicy.outputs import signals_raise

if TYPE_CHECKING:
    from fairpolicy.results import Results


def _parser() -> argparse.ArgumentParser:
    """The parser with every command's subparser (``--help``, completion scripts)."""
    return build_parser()


def _window_options(args: argparse.Namespace) -> dict[str, Any]:
    """The window settings `check` and `plan` both pass on (a plan pins what a check runs)."""
    return {
        "window": args.window,
        "window_tz": args.window_tz,
        "window_gate": args.window_gate,
        "min_window_rows": args.min_window_rows,
        "pool_windows": bool(args.pool_windows),
        "reference": args.reference,
    }


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
        # the paths may not have been read yet (a usage error in them): the ones given
        read = [p for p in (getattr(args, "policy", None), getattr(args, "data", None)) if p]
        note_earlier_reports(args.output, read or list(getattr(args, "paths", [])))
        raise


def _check(args: argparse.Namespace, stdout: TextIO) -> int:
    from fairpolicy.assemble import is_deterministic
    from fairpolicy.config import configure
    from fairpolicy.evidence import attach, prepare
    from fairpolicy.formatters import RenderOptions
    from fairpolicy.integrations.mlflow import split_mlflow
    from fairpolicy.outputs import refuse_clashes, target
    from fairpolicy.reports import emit

    applied = configure(args, lambda: subparser(build_parser("check"), "check"))
    if args.explain is not None:
        from fairpolicy.explain import explain_args

        stdout.write(explain_args(args, parse_bind(args.bind, args.rename)))
        return 0
    args.output, to_mlflow = split_mlflow(args.output, args.mlflow_run_id)
    outputs = parse_outputs(args.output)
    # every path is checked before the data is read, not after
    targets = [(f"-o {name}={path}", target(path)) for name, path in outputs if path is not None]
    inputs = [
        ("baseline", args.baseline),
        ("plan", args.plan),
        ("SSP", args.ssp),
        ("configuration", applied.path),
    ]
    refuse_clashes(targets, (("policy", args.policy), ("data", args.data), *inputs))
    if args.assessor or args.organization is not None:  # fairpolicy.people only then
        from fairpolicy.people import check_people

        check_people(args.assessor, args.organization)
    # SSP and plan, before any work; with a plan, the subject it pins unless --subject
    chain = prepare(outputs, args.ssp, args.plan, args.subject, os.path.basename(args.data))
    from_plan = ["subject"] if args.subject is None and chain.subject is not None else []
    args.subject = chain.subject
    deterministic = is_deterministic(args.deterministic)
    from_config = any(k.replace("_", "-") == "max-regression" for k in applied.settings)
    args.max_regression_source = "config" if from_config else "flag"
    with _progress_bar() as progress:
        results = _run_check(args, deterministic, progress)
    recorded: dict[str, object] = {}
    if applied.path is not None:  # the configuration file, its settings and their sources
        recorded["config"] = applied.record(args)
    if from_plan:  # settings the run took from the approved plan
        recorded["settings_from_plan"] = {"file": args.plan, "settings": from_plan}
    if args.assessor:  # the people, kept for `fairpolicy export`
        recorded["assessors"] = list(args.assessor)
    if args.organization is not None:
        recorded["organization"] = args.organization
    if recorded:
        options = {**results.run.options, **recorded}
        results = results.model_copy(
            update={"run": results.run.model_copy(update={"options": options})}
        )
    # the SSP's hash; the run verified against the plan (fairpolicy.plan.verify)
    results, verified = attach(results, chain)
    if to_mlflow:  # MLflow keys that cannot be logged: exit 2 before any report is written
        from fairpolicy.integrations.mlflow import keys

        keys(results)
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
    code = emit(
        results,
        outputs,
        base,
        stdout,
        color=color,
        plan=verified,
        ssp=chain.given_ssp,
        inputs=inputs,
    )
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
        bind=parse_bind(args.bind, args.rename),
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
        positive_label=args.positive_label,
        strict=args.strict,
        subject=args.subject,
        meta=parse_meta(args.meta),
        baseline=args.baseline,
        max_regression=args.max_regression,
        max_regression_source=getattr(args, "max_regression_source", "flag"),
        allow_policy_change=args.allow_policy_change,
        **_window_options(args),
        state=args.state,
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


def cmd_diff(args: argparse.Namespace, stdout: TextIO) -> int:
    from fairpolicy.diff import diff

    return diff(
        args.old,
        args.new,
        stdout,
        fmt=args.output,
        max_regression=args.max_regression,
        allow_policy_change=args.allow_policy_change,
        fail_on=args.fail_on,
        inconclusive=args.inconclusive,
    )


def cmd_plan(args: argparse.Namespace, stdout: TextIO) -> int:
    from fairpolicy.assemble import is_deterministic
    from fairpolicy.formatters import RenderOptions
    from fairpolicy.outputs import refuse_clashes, target
    from fairpolicy.people import check_people
    from fairpolicy.plan import plan_results, write_plan
    from fairpolicy.ssp import given_ssp

    check_people(args.assessor, args.organization)
    check_people(args.approver, None, flag="--approver")
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
            "resample": args.resample,
            "decision": args.decision,
            "p_value": args.p_value,
            "bonferroni": args.bonferroni,
        }.items()
        if v is not None
    }
    results = plan_results(
        args.policy,
        bind=parse_bind(args.bind, args.rename),
        num_classes=args.num_classes,
        params=params,
        timestamp=args.timestamp,
        deterministic=deterministic,
        positive_label=args.positive_label,
        fail_on=args.fail_on,
        inconclusive=args.inconclusive,
        seed=args.seed,
        subject=args.subject,
        max_regression=args.max_regression,
        score_decimals=args.score_decimals,
        allow_deviation=args.allow_deviation,
        **_window_options(args),
    )
    base = RenderOptions(
        subject=args.subject,
        deterministic=deterministic,
        assessors=tuple(args.assessor),
        organization=args.organization,
        approvers=tuple(args.approver),
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
        refuse_clashes(
            [(f"-o {args.output}", out)],
            [("results", args.results), ("plan", args.plan)],
            noun="export",
        )
    results = load_results(args.results)
    verified = None
    if args.plan is not None:  # verified exactly as `check --plan` verifies, or exit 2
        from fairpolicy.plan import verify

        verified = verify(args.plan, results)
    opts = RenderOptions(
        path=None if out is None else args.output,
        subject=args.subject,
        embed_evidence=args.embed_evidence,
        deterministic=is_deterministic(args.deterministic),
        results_href=href(args.results, args.output),
        ap_href=href(args.plan, args.output),
        plan=verified,
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

    bound = parse_bind(args.bind).bound_roles()
    ars = {p for p in args.policies if _is_ar(p)}
    code = 0
    for path in args.policies:  # in the order given, each file its own verdict
        if path in ars:  # assessment results: hashes, plan and verdict re-derived
            from fairpolicy.audit import validate_ar

            ok = validate_ar(path, stdout)
            code = max(code, 0 if ok else EXIT_ERROR)
        else:
            code = max(
                code,
                validate_files([path], stdout, args.allow_path, strict=args.strict, bound=bound),
            )
    return code


def _is_ar(path: str) -> bool:
    """Whether ``path`` looks like OSCAL assessment results (read fully only then). Only a
    regular file is opened here (a FIFO would block): anything else goes to the policy
    validator, which refuses it with its message."""
    import stat

    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except (OSError, ValueError):
        return False
    if b"assessment-results" not in head:
        return False
    from fairpolicy.audit import is_assessment_results

    return is_assessment_results(path)


def cmd_verify(args: argparse.Namespace, stdout: TextIO) -> int:
    from fairpolicy.verify import run

    return run(args.ar, stdout)


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


def cmd_power(args: argparse.Namespace, stdout: TextIO) -> int:
    from fairpolicy.policy.numbers import parse_float
    from fairpolicy.power import metric_form, render, required_rows

    try:
        rates = [parse_float(x.strip()) for x in str(args.rates).split(",")]
    except (ValueError, FairpolicyError) as exc:
        raise UsageError(
            f"fairpolicy power: --rates {args.rates!r} is not a comma-separated list of "
            f"numbers ({exc}); give one expected rate per group, e.g. --rates 0.5,0.4"
        ) from None
    _, reduce = metric_form(args.metric)
    op = args.operator or ("<" if reduce == "gap" else ">=")
    got = required_rows(
        args.metric,
        rates,
        args.threshold,
        op,
        level=args.level,
        probability=args.probability,
        share=args.share,
        sims=args.sims,
        seed=args.seed,
        max_rows=args.max_rows,
    )
    stdout.write(
        render(got, rates, args.threshold, op, args.level, args.probability, args.share, args.sims)
    )
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
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(command_of(argv))  # a run builds its own command's subparser only
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
            "verify": cmd_verify,
            "convert": cmd_convert,
            "metrics": cmd_metrics,
            "explore": cmd_explore,
            "diff": cmd_diff,
            "completion": cmd_completion,
            "power": cmd_power,
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
