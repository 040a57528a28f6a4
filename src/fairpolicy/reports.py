"""A check's reports: render every format asked for and write them all or none.

The one place the CLI's ``check`` turns a :class:`~fairpolicy.results.Results` into files:
:func:`emit` renders each ``-o FORMAT[=PATH]`` (formatters only render), stages and writes
them with :func:`fairpolicy.outputs.write_all` (the safe-writing rules live there, one layer
down, so the policy converter can use them too), appends the GitHub step summary and prints
the stderr error line. :func:`github_error` is the error annotation a run that could not
evaluate prints on GitHub Actions.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from contextlib import suppress
from typing import TYPE_CHECKING, TextIO

from fairpolicy.outputs import (
    append_step_summary,
    error_summary,
    href,
    refuse_written,
    write_all,
)

if TYPE_CHECKING:
    from fairpolicy.formatters import RenderOptions
    from fairpolicy.gate_settings import VerifiedPlan
    from fairpolicy.results import Results


def github_error(reason: str, stdout: TextIO, to_stdout: bool) -> None:
    """``-o github`` on a run that stops with exit 2: an ``::error`` annotation with the
    reason (on ``stdout`` when the github output goes there, else on stderr — the runner
    reads both) and the reason appended to the step summary."""
    import sys

    from fairpolicy.errors import FairpolicyError
    from fairpolicy.formatters.github import command

    line = command("error", reason, title="fairpolicy: could not evaluate (exit 2)") + "\n"
    (stdout if to_stdout else sys.stderr).write(line)
    summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary_file:
        with suppress(FairpolicyError):
            append_step_summary(summary_file, error_summary(reason))


def emit(
    results: Results,
    outputs: list[tuple[str, str | None]],
    base: RenderOptions,
    stdout: TextIO,
    *,
    color: bool,
    plan: VerifiedPlan | None = None,
    ssp: tuple[str, str] | None = None,
    inputs: Sequence[tuple[str, str | None]] = (),
) -> int:
    """Render every output of a check and write them all or none (:func:`write_all`); the
    text table also reaches the terminal when no ``-o text`` asked for it. ``outputs``:
    (format, path) pairs, path None for stdout; ``base``: the options every format shares;
    ``color``: colour allowed on a terminal; ``plan``: the approved assessment plan the
    results were verified against (``--plan``, :func:`fairpolicy.plan.verify`); ``ssp``:
    (path, SHA-256) of the team's SSP (``--ssp``); ``inputs``: (role, path) of the run's
    input files besides the policy, its documents and the data (baseline, plan,
    configuration file). Every file to be written — the outputs and the files beside them —
    is checked against the others and against every input before any is written
    (:func:`refuse_written`). Returns the exit code."""
    import dataclasses
    import hashlib
    import sys

    from fairpolicy.formatters import RenderOptions, get

    def tty(stream: TextIO) -> bool:
        return hasattr(stream, "isatty") and stream.isatty()

    names = {n for n, _ in outputs}
    table: TextIO | None = None  # where the text table goes besides the outputs
    if "text" not in names:
        # the table reaches the terminal: on stdout unless another format took it, then on
        # stderr, so stdout stays clean for jq
        table = sys.stderr if any(p is None for _, p in outputs) else stdout
    ap_path = next((p for n, p in outputs if n == "oscal-ap" and p), None)
    if plan is not None:
        ap_path = plan.path
    json_path = next((p for n, p in outputs if n == "json" and p), None)
    ssp_path = next((p for n, p in outputs if n == "oscal-ssp" and p), None)
    profile_href = profile_sha = ssp_sha = None
    # every output is rendered before any file is written, and every file is staged before
    # any is renamed (write_all)
    to_stdout: list[tuple[str, str]] = []
    files: list[tuple[str, str]] = []
    labels: list[tuple[str, str]] = []  # (label, path) of every file to write
    if ssp_path is not None:  # with the profile (and catalog) it imports, written beside it
        from fairpolicy.ssp import profile_chain

        chain = profile_chain(results.policy.path, results.policy.form, ssp_path)
        files += chain.documents
        labels += [(f"{p} (written beside -o oscal-ssp={ssp_path})", p) for p, _ in chain.documents]
        profile_href, profile_sha = chain.profile_href, chain.profile_sha256
    elif ssp is not None:
        ssp_path, ssp_sha = ssp
    rendered: dict[str, str] = {}
    every = [*outputs, *([("text", None)] if table is not None else [])]
    # the SSP first (the plan hashes it), the plan before the results (they hash it)
    order = {"oscal-ssp": 0, "oscal-ap": 1}
    for name, path in sorted(every, key=lambda o: order.get(o[0], 2)):
        ap_href = results_href = ssp_href = ap_sha = None
        if name == "oscal":
            ap_href = href(ap_path, path)
            results_href = href(json_path, path)
            if plan is None and "oscal-ap" in rendered:
                ap_sha = hashlib.sha256(rendered["oscal-ap"].encode()).hexdigest()
        if name == "oscal" and ssp_path is not None and any(n == "oscal-ssp" for n, _ in outputs):
            ssp_href = href(ssp_path, path)  # the SSP this run writes: its statements
        if name == "oscal-ap" and ssp_path is not None:
            ssp_href = href(ssp_path, path)
            if "oscal-ssp" in rendered:
                ssp_sha = hashlib.sha256(rendered["oscal-ssp"].encode()).hexdigest()
        stream = (table or stdout) if (name == "text" and path is None) else stdout
        opts = dataclasses.replace(
            base,
            color=color and path is None and tty(stream),
            path=path,
            ap_href=ap_href,
            ap_sha256=ap_sha,
            results_href=results_href,
            ssp_href=ssp_href,
            ssp_sha256=ssp_sha,
            plan=plan,
            profile_href=profile_href if name == "oscal-ssp" else None,
            profile_sha256=profile_sha if name == "oscal-ssp" else None,
        )
        text = rendered[name] = get(name)(results, opts)
        if path is None:
            to_stdout.append((name, text))
        else:
            files.append((path, text))
            labels.append((f"-o {name}={path}", path))
    every_input = [
        ("policy", results.policy.path),
        *((f"policy's {d.kind}", d.path) for d in results.policy.documents),
        ("data", results.data.path),
        *inputs,
    ]
    refuse_written(labels, every_input)
    try:
        write_all(files)
    except BaseException:
        for name, text in to_stdout:  # the table still reaches the terminal, no verdict
            if name == "text":  # in a machine format goes to stdout
                (table or stdout).write(text)
        raise
    for name, text in to_stdout:
        (table if (name == "text" and table is not None) else stdout).write(text)
    summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary_file and "github" in names:
        append_step_summary(summary_file, get("markdown")(results, RenderOptions()))
    failed = [f.control_id for f in results.findings if f.status == "error"]
    if failed:  # the reasons are in the report; stderr gets the one line CI logs grep for
        print(
            f"error: {len(failed)} control(s) could not be evaluated: {', '.join(failed)}",
            file=sys.stderr,
        )
    return results.exit_code
