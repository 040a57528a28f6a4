"""The command line's argparse parser: ``fairpolicy --help`` and every command's options.

A run builds only the subparser of the command it runs (:func:`command_of` reads the
command off the arguments; issue 17, a lean start: every subparser is ~110 options, a
few milliseconds of each run). ``--help``, ``--version``, an unknown or abbreviated
command, no command, and anything else argparse would read differently build them all.
A command's subparser is the same either way, so its help, parse results, usage and
error messages are (``tests/cli/test_lazy_parser.py``).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from fairpolicy.policy.numbers import cli_float, cli_int
from fairpolicy.version import __version__

__all__ = ["COMMANDS", "EXIT_CODES_HELP", "build_parser", "command_of", "subparser"]

if TYPE_CHECKING:
    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]
#: the subparsers built so far, by command (``plan`` takes some of ``check``'s options)
Built = dict[str, argparse.ArgumentParser]

EXIT_CODES_HELP = """exit codes:
  0  every gating control passed
  1  at least one gating control failed (or was inconclusive, by default)
  2  could not evaluate: bad usage, unreadable policy or data, missing column,
     invalid values
"""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with every command's subparser, or with ``command``'s only (and
    ``check``'s for ``plan``, which takes some of its options)."""
    p = argparse.ArgumentParser(
        prog="fairpolicy",
        description="Policy-as-code compliance checks for machine-learning fairness.",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"fairpolicy {__version__}")
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    built: Built = {}
    for name, add in _BUILDERS.items():
        if command is None or name == command or (name, command) == ("check", "plan"):
            built[name] = add(sub, built)
    return p


def command_of(argv: Sequence[str]) -> str | None:
    """The command ``argv`` runs, when argparse is sure to pick it: the first word after
    nothing but ``--debug`` flags, spelled as a command is. None otherwise (no command,
    ``--help``, ``--version``, an abbreviated option, an unknown command): build them all."""
    for word in argv:
        if word != "--debug":
            return word if word in COMMANDS else None
    return None


def subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    """The subparser of command ``name`` in ``parser``."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            sub: argparse.ArgumentParser = action.choices[name]
            return sub
    raise KeyError(name)  # pragma: no cover


def _check(sub: Subparsers, built: Built) -> argparse.ArgumentParser:
    c = sub.add_parser(
        "check",
        help="evaluate a policy against a predictions file",
        description="Evaluate every control of POLICY on DATA; exit 0 (pass), 1 (fail), 2 (error).",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    c.add_argument(
        "paths",
        nargs="*",  # none with --explain and the policy from the configuration file
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
        metavar="[CONTROL:]ROLE=COLUMN",
        help="bind a role (target, prediction, dimension, score, rank, site, weight, count, "
        "selected, rate, columns, fields, sensitive_columns) to a column for every control, "
        "or with CONTROL: for one control (count with selected or rate: a count table, "
        "docs/ll144.md); every control it changes is named in the results; repeatable",
    )
    c.add_argument(
        "--rename",
        action="append",
        default=[],
        metavar="OLD=NEW",
        help="the data calls NEW the column the policy calls OLD: every control that reads "
        "OLD reads NEW (and is named in the results); repeatable",
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
        "--positive-label",
        metavar="LABEL",
        help="the positive (favourable or selected) label of every control that does not "
        "name its own positive_label; wins over the policy-wide one",
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
        type=cli_int,
        metavar="N",
        help="refuse a dimension with more than N distinct groups (default 10000)",
    )
    lim.add_argument(
        "--max-classes",
        type=cli_int,
        metavar="K",
        help="refuse more than K classes, declared or found in the labels (default 1000)",
    )
    lim.add_argument(
        "--max-resamples",
        type=cli_int,
        metavar="N",
        help="refuse a bootstrap (ci, --bootstrap) or permutation test (p_value, --p-value) "
        "of more than N resamples, before the data is read (default 100000)",
    )
    lim.add_argument(
        "--max-cells",
        type=cli_int,
        metavar="N",
        help="refuse a count table (groups x classes^2) or bootstrap replicates (resamples "
        "x cells) of more than N cells (default 20000000)",
    )
    lim.add_argument(
        "--max-resample-seconds",
        type=cli_int,
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
    _window_options(c)
    c.add_argument("-q", "--quiet", action="store_true", help="text: show only non-passing rows")
    c.add_argument("-v", "--verbose", action="store_true", help="per-group tables")
    c.add_argument("--no-color", action="store_true", help="never colour the text output")
    c.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)
    c.add_argument(
        "--plan",
        metavar="AP",
        help="the approved assessment plan (`fairpolicy plan`): the run must match it (else "
        "exit 2) and the OSCAL results import it",
    )
    return c


def _plan(sub: Subparsers, built: Built) -> argparse.ArgumentParser:
    c = built["check"]
    pl = sub.add_parser(
        "plan",
        help="write the OSCAL assessment plan of a policy before any data is seen",
        description="Resolve POLICY (with the bindings and statistics options a check would "
        "take) and write the OSCAL assessment plan an assessor approves: controls, objectives, "
        "methods, thresholds, the columns the run will read and every setting that can change "
        "a verdict (--fail-on, --inconclusive, --seed, --subject, ...). `check --plan` then "
        "verifies that a run is the planned one (another setting is exit 2).",
    )
    pl.add_argument("policy", help="policy file")
    pl.add_argument("-o", "--output", required=True, metavar="PATH", help="plan file to write")
    shared = {
        "--bind", "--rename", "--num-classes", "--subject", "--assessor", "--organization", "--ssp",
        "--deterministic", "--timestamp", "--bootstrap", "--ci-level", "--ci-method",
        "--decision", "--p-value", "--bonferroni", "--positive-label", "--resample", "--seed",
        "--fail-on", "--inconclusive", "--max-regression", "--score-decimals",
        "--window", "--window-tz", "--window-gate", "--min-window-rows", "--pool-windows",
        "--reference",
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
    pl.add_argument(
        "--approver",
        action="append",
        default=[],
        metavar="'NAME <EMAIL>'",
        help="a person approving the plan (repeatable): a party with the approver role; the "
        "plan records the approval with its time (--timestamp) and the SHA-256 of the "
        "approved content",
    )
    from fairpolicy.gate_settings import SETTINGS

    pl.add_argument(
        "--allow-deviation",
        action="append",
        default=[],
        choices=tuple(SETTINGS),
        metavar="SETTING",
        help="let a run verified against this plan use another value of SETTING (repeatable; "
        "recorded in the plan and in the results). Pinned settings: " + ", ".join(SETTINGS),
    )
    pl.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)
    return pl


def _export(sub: Subparsers, built: Built) -> argparse.ArgumentParser:
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
    return e


def _diff(sub: Subparsers, built: Built) -> argparse.ArgumentParser:
    d = sub.add_parser(
        "diff",
        help="the change table between two results JSON files",
        description="Compare NEW with OLD (results JSON of the same policy) control by control; "
        "exit 0 no regression beyond max_regression, 1 a regression, 2 cannot compare. "
        "Decided by diff's own options alone, never by those stored in either file.",
    )
    d.add_argument("old", metavar="OLD.json")
    d.add_argument("new", metavar="NEW.json")
    d.add_argument("-o", "--output", choices=("text", "markdown", "json"), default="text")
    _baseline_options(d, check=False)
    d.add_argument(
        "--fail-on",
        choices=("error", "warning", "never"),
        default="error",
        help="which regressions fail diff's gate: on blocking controls (error, default), also "
        "on warn-mode controls (warning), or none (never); the options NEW or OLD were "
        "checked with are never read",
    )
    d.add_argument(
        "--inconclusive",
        choices=("pass", "warn", "fail"),
        default="fail",
        help="how a change that cannot be decided affects diff's gate (default: fail)",
    )
    d.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)
    return d


def _validate(sub: Subparsers, built: Built) -> argparse.ArgumentParser:
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
    return v


def _verify(sub: Subparsers, built: Built) -> argparse.ArgumentParser:
    vf = sub.add_parser(
        "verify",
        help="the auditor's check of an OSCAL assessment results: hashes recomputed, the "
        "verdict re-derived from the hashed policy and data (exit 0 verified, 1 mismatch, "
        "2 unreadable)",
        description="Walk the assessment results -> assessment plan -> SSP -> profile -> "
        "catalog and the data, recompute every SHA-256, re-run the check on the hashed "
        "policy and data with the settings the assessment results record, and compare every "
        "observation, finding, risk, the gate and the exit code. Never reads fairpolicy's "
        "results JSON, never the network. See docs/verify.md.",
        epilog="exit codes:\n  0  every hash and every re-derived statement matches\n"
        "  1  a mismatch (each named on a MISMATCH line)\n"
        "  2  something cannot be read (the assessment results, a linked file, a remote "
        "link)\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    vf.add_argument("ar", metavar="AR", help="the assessment results (`check -o oscal=ar.json`)")
    vf.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)
    return vf


def _convert(sub: Subparsers, built: Built) -> argparse.ArgumentParser:
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
    return cv


def _explore(sub: Subparsers, built: Built) -> argparse.ArgumentParser:
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
        default="5",
        metavar="SPEC",
        help="bins for numeric attributes, as a control's bins prop: N or qN "
        "equal-frequency bins for those with more distinct values than N (default 5), "
        "edges such as 0,25,60,inf, or COLUMN=SPEC;COLUMN=SPEC",
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
    return ex


def _completion(sub: Subparsers, built: Built) -> argparse.ArgumentParser:
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
    return comp


def _metrics(sub: Subparsers, built: Built) -> argparse.ArgumentParser:
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
    return m


#: the commands in the order ``fairpolicy --help`` lists them, each with its builder
def _power(sub: Subparsers, built: Built) -> argparse.ArgumentParser:
    pw = sub.add_parser(
        "power",
        help="rows per group needed for an interval decision to decide a control",
        description="For a gap or ratio of one binary rate and the group rates you expect: "
        "the rows per group at which decision ci_upper proves compliance (or ci_lower "
        "proves the violation) with the given probability, from the interval fairpolicy "
        "check reports (score method). Exit 0; 2 on bad input.",
    )
    pw.add_argument("metric", metavar="METRIC", help="a metric key (demographic_parity_diff, …)")
    pw.add_argument("--rates", required=True, help="expected rate per group, comma-separated")
    pw.add_argument(
        "--threshold", required=True, help="the threshold, decided as written (exact decimal)"
    )
    pw.add_argument(
        "--operator", default=None, help="<, <=, > or >= (default: < for a gap, >= for a ratio)"
    )
    pw.add_argument("--level", type=cli_float, default=0.95, help="interval level (0.95)")
    pw.add_argument(
        "--probability", type=cli_float, default=0.8, help="probability of a decision (0.8)"
    )
    pw.add_argument(
        "--share",
        type=cli_float,
        default=1.0,
        help="share of a group's rows in the rate's denominator: 1 for "
        "demographic parity, the prevalence for TPR, the selection rate for PPV",
    )
    pw.add_argument("--sims", type=cli_int, default=400, help="simulated samples per size")
    pw.add_argument("--max-rows", type=cli_int, default=10_000_000)
    pw.add_argument("--seed", type=cli_int, default=20261127)
    pw.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)
    return pw


_BUILDERS: dict[str, Callable[[Subparsers, Built], argparse.ArgumentParser]] = {
    "check": _check,
    "plan": _plan,
    "export": _export,
    "diff": _diff,
    "validate": _validate,
    "verify": _verify,
    "convert": _convert,
    "explore": _explore,
    "completion": _completion,
    "metrics": _metrics,
    "power": _power,
}
COMMANDS = tuple(_BUILDERS)


def _baseline_options(parser: argparse.ArgumentParser, check: bool = True) -> None:
    if check:
        parser.add_argument(
            "--baseline",
            metavar="RESULTS.json",
            help="compare every control with this earlier results JSON (`check -o json`)",
        )
    parser.add_argument(
        "--max-regression",
        metavar="DELTA",
        help="fail a control whose value got worse than the baseline's by more than DELTA "
        "(a control's own max_regression applies where it is stricter)",
    )
    parser.add_argument(
        "--allow-policy-change",
        action="store_true",
        help="compare with results of another policy version (changed controls: not compared)",
    )


def _window_options(parser: argparse.ArgumentParser) -> None:
    """``check``'s monitoring options (issue 30)."""
    w = parser.add_argument_group("monitoring (every control in every time window)")
    w.add_argument(
        "--window",
        metavar="COLUMN=PERIOD",
        help="evaluate every control in every window: calendar periods 1d, 1w (from Monday), "
        "1mo, 1q, 1y of a timestamp column (COLUMN=1w), or each value of a period column "
        "(COLUMN)",
    )
    w.add_argument(
        "--window-tz",
        metavar="ZONE",
        help="the IANA time zone the calendar periods are cut in (default UTC; timestamps "
        "without an offset are read as UTC)",
    )
    w.add_argument(
        "--window-gate",
        choices=("last", "any", "sequential"),
        help="what decides a control across windows: the newest window (last), any window "
        "(any), or an alarm whose false-alarm rate is at most alpha over all windows however "
        "many are looked at (sequential, the default)",
    )
    w.add_argument(
        "--min-window-rows",
        type=cli_int,
        metavar="N",
        help="a window with fewer rows is inconclusive (never a pass)",
    )
    w.add_argument(
        "--pool-windows",
        action="store_true",
        default=None,
        help="pool a window under --min-window-rows with the next ones until it has N rows",
    )
    w.add_argument(
        "--reference",
        metavar="FROM..TO",
        help="the windows FROM..TO (labels, inclusive) are the reference period: every "
        "window's change against it, as with --baseline (--max-regression applies)",
    )
    w.add_argument(
        "--state",
        metavar="FILE",
        help="keep every window's count tables (no rows) in FILE: a run adds only its new "
        "rows and evaluates every window from the merged tables (refused for another policy "
        "or binding, or a batch the state already holds)",
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
