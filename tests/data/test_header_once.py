"""A check reads a CSV's header once on its own thread (issue 17): the engine choice and
the embedded reader share it (the speculative read in its thread reads its own)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

import fairpolicy
from fairpolicy.data.sources import arrow_files
from tests.helpers import balanced_csv, control, write_policy


@pytest.mark.parametrize("engine", ["auto", "embedded"])
@pytest.mark.parametrize("prefetch", [True, False], ids=["prefetch", "no-prefetch"])
def test_the_header_is_read_once_a_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str, prefetch: bool
) -> None:
    data = balanced_csv(tmp_path)
    policy = write_policy(tmp_path, control())
    expected = fairpolicy.check(policy, data, deterministic=True, engine=engine)
    main_thread: list[Path] = []
    real = arrow_files.csv_header

    def spy(path: Path) -> list[str]:
        if threading.current_thread() is threading.main_thread():
            main_thread.append(path)
        return real(path)

    monkeypatch.setattr(arrow_files, "csv_header", spy)
    kw: dict[str, Any] = {} if prefetch else {"max_rows": 10_000}  # a limit: no prefetch
    got = fairpolicy.check(policy, data, deterministic=True, engine=engine, **kw)
    assert main_thread == [data]
    assert got.findings == expected.findings
