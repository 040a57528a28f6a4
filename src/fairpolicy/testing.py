"""pytest helpers: a fairness gate as a test assertion.

    from fairpolicy.testing import assert_gate

    def test_model_is_fair(predictions):
        assert_gate("policy.yaml", predictions)   # a path, pandas, polars, Arrow, DuckDB, Spark

:func:`assert_gate` runs :func:`fairpolicy.check` and raises an ``AssertionError`` whose
message is the table of the controls that did not pass, so pytest's output reads like the
CLI's. The pytest plugin (:mod:`fairpolicy.pytest_plugin`) adds a ``fairpolicy_check``
fixture and ``--fairpolicy-report DIR``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fairpolicy.results import Results

#: called with every Results a check of this module returns (the pytest plugin listens)
_listeners: list[Callable[[Results], None]] = []


def add_listener(fn: Callable[[Results], None]) -> None:
    """Call ``fn(results)`` after every :func:`check` / :func:`assert_gate` of this module."""
    _listeners.append(fn)


def remove_listener(fn: Callable[[Results], None]) -> None:
    if fn in _listeners:
        _listeners.remove(fn)


def check(policy: Any, data: Any, **options: Any) -> Results:
    """:func:`fairpolicy.check`, reported to the listeners (the plugin's report folder)."""
    from fairpolicy.runner import check as run

    results = run(policy, data, **options)
    for fn in list(_listeners):
        fn(results)
    return results


def failure_message(results: Results) -> str:
    """The gate with its counts, then the table of every control that did not pass: each
    fact once (the text report's closing summary line and the results' repr would say the
    gate, the counts and every control a second time)."""
    from fairpolicy.present import render

    s = results.summary
    gate = s.gate.upper()
    counts = (
        f"{s.total} control(s): {s.pass_} pass, {s.fail} fail, {s.warn} warn, "
        f"{s.inconclusive} inconclusive, {s.error} error"
    )
    body = render(results, "text", quiet=True).rstrip().splitlines()
    if body and body[-1].startswith(f"{gate}: "):  # the summary line, said in the header
        body = body[:-1]
    while body and not body[-1].strip():
        body.pop()
    lines = [
        f"fairpolicy gate {gate} (exit code {results.exit_code}) for policy "
        f"{results.policy.path or '—'} on {results.data.path or '—'}: {counts}",
        "",
        *body,
    ]
    if s.gate == "error":  # the reasons are in the table; say what to do
        lines += ["", "(exit 2: a control could not be evaluated; the reason is in its row)"]
    return "\n".join(lines)


def assert_gate(policy: Any, data: Any, **options: Any) -> Results:
    """Run the check and return its :class:`~fairpolicy.results.Results` when the gate
    passed; raise ``AssertionError`` with the failing-controls table when it failed or a
    control could not be evaluated (exit 1 or 2). A bad policy or data file raises the
    :class:`fairpolicy.errors.FairpolicyError` naming it, never a silent pass."""
    results = check(policy, data, **options)
    if not results.passed:
        raise AssertionError(failure_message(results))
    return results
