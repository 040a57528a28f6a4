"""The fairpolicy pytest plugin (entry point ``pytest11``; or ``-p fairpolicy.pytest_plugin``).

- fixture ``fairpolicy_check``: ``fairpolicy_check(policy, data, **options) -> Results``,
  the check of :func:`fairpolicy.testing.check` (it does not assert; use
  ``results.passed`` or :func:`fairpolicy.testing.assert_gate`);
- ``--fairpolicy-report DIR``: every check a test ran (through the fixture or
  :mod:`fairpolicy.testing`) writes ``DIR/<test>[-N].html`` and ``DIR/<test>[-N].xml``
  (JUnit), so a CI job can archive them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from fairpolicy import testing

if TYPE_CHECKING:
    from fairpolicy.results import Results


#: the report names this session has written (a name is never reused)
_STEMS = pytest.StashKey[set[str]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("fairpolicy")
    group.addoption(
        "--fairpolicy-report",
        metavar="DIR",
        default=None,
        help="write the HTML and JUnit report of every fairpolicy check a test ran into DIR",
    )


def _slug(nodeid: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid).strip("_")[:150] or "check"


@pytest.fixture(autouse=True)
def _fairpolicy_reports(request: pytest.FixtureRequest) -> Iterator[None]:
    """Write the reports of the checks this test runs when ``--fairpolicy-report`` is given."""
    folder = request.config.getoption("--fairpolicy-report")
    if not folder:
        yield
        return
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    base = _slug(request.node.nodeid)
    used = request.config.stash.setdefault(_STEMS, set())

    def save(results: Results) -> None:
        # two node ids can share a slug (test[a/b], test[a_b]): number, never overwrite
        stem, k = base, 1
        while stem in used:
            k += 1
            stem = f"{base}-{k}"
        used.add(stem)
        from fairpolicy.present import write

        write(results, "html", out / f"{stem}.html")
        write(results, "junit", out / f"{stem}.xml")

    testing.add_listener(save)
    try:
        yield
    finally:
        testing.remove_listener(save)


@pytest.fixture
def fairpolicy_check() -> Callable[..., Results]:
    """``fairpolicy_check(policy, data, **options) -> Results`` (reports written under
    ``--fairpolicy-report``)."""

    def run(policy: Any, data: Any, **options: Any) -> Results:
        return testing.check(policy, data, **options)

    return run
