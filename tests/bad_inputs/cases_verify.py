"""Bad-input rows of ``fairpolicy verify AR`` (issue 29): what cannot be read is exit 2,
named, and verifies nothing — a deleted data file, a link that is not a local file (verify
reads no network), and assessment results that are missing, a FIFO, a device, a directory,
not UTF-8, not assessment results, or written without the items a re-run needs. The
tampering rows (exit 1) are in ``tests/test_verify.py``.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.bad_inputs.cases import DEFAULT_DATA, Case

AR = ("verify", "{tmp}/ar.json")


def _chain(change: Callable[[Path, Any], None] | None = None, *extra: str) -> object:
    """A data callable: the default data, ``{tmp}/ar.json`` written by a check of
    ``{tmp}/policy.yaml`` on it, then ``change(tmp, ar_document)`` applied."""

    def make(tmp: Path) -> Path:
        from fairpolicy.cli import main

        data = tmp / "data.csv"
        data.write_text(DEFAULT_DATA)
        ar = tmp / "ar.json"
        argv = ["check", str(tmp / "policy.yaml"), str(data), "-o", f"oscal={ar}", *extra]
        assert main(argv, io.StringIO()) == 0
        if change is not None:
            doc = json.loads(ar.read_text())
            change(tmp, doc)
            ar.write_text(json.dumps(doc, indent=2))
        return data

    return make


def _delete_data(tmp: Path, doc: Any) -> None:
    (tmp / "data.csv").unlink()


def _remote_data(tmp: Path, doc: Any) -> None:
    for res in doc["assessment-results"]["back-matter"]["resources"]:
        for link in res.get("rlinks", []):
            if link["href"].endswith("data.csv"):
                link["href"] = "https://example.org/data.csv"


def _drop_rerun_items(tmp: Path, doc: Any) -> None:
    result = doc["assessment-results"]["results"][0]
    result["props"] = [p for p in result["props"] if not p["name"].startswith("rerun.")]


def _glob_chain(tmp: Path) -> Path:
    """An AR of a run on a glob of files (``{tmp}/*.csv``)."""
    from fairpolicy.cli import main

    data = tmp / "data.csv"
    data.write_text(DEFAULT_DATA)
    argv = ["check", str(tmp / "policy.yaml"), str(tmp / "*.csv"), "-o", f"oscal={tmp}/ar.json"]
    assert main(argv, io.StringIO()) == 0
    return data


def _in_memory_chain(tmp: Path) -> Path:
    """An AR of a run on a table passed in memory (the Python API): no data file."""
    import pyarrow.csv as pv

    import fairpolicy
    from fairpolicy.formatters import RenderOptions, get

    data = tmp / "data.csv"
    data.write_text(DEFAULT_DATA)
    results = fairpolicy.check(str(tmp / "policy.yaml"), pv.read_csv(data))
    ar = tmp / "ar.json"
    ar.write_text(get("oscal")(results, RenderOptions(path=str(ar))))
    return data


def _drop_baseline(tmp: Path, doc: Any) -> None:
    resources = doc["assessment-results"]["back-matter"]["resources"]
    doc["assessment-results"]["back-matter"]["resources"] = [
        r
        for r in resources
        if not any(p["value"] == "baseline-results" for p in r.get("props", []))
    ]


def _baseline_chain(tmp: Path) -> Path:
    """An AR of a run compared with a baseline, its baseline resource removed."""
    from fairpolicy.cli import main

    data = tmp / "data.csv"
    data.write_text(DEFAULT_DATA)
    base = ["check", str(tmp / "policy.yaml"), str(data)]
    assert main([*base, "-o", f"json={tmp}/base.json"], io.StringIO()) == 0
    return _chain(_drop_baseline, "--baseline", str(tmp / "base.json"))(tmp)  # type: ignore[operator]


def _ar_bytes(raw: bytes) -> object:
    def make(tmp: Path) -> Path:
        (tmp / "ar.json").write_bytes(raw)
        (tmp / "data.csv").write_text(DEFAULT_DATA)
        return tmp / "data.csv"

    return make


def _ar_fifo(tmp: Path) -> Path:
    os.mkfifo(tmp / "ar.json")
    (tmp / "data.csv").write_text(DEFAULT_DATA)
    return tmp / "data.csv"


CASES = [
    Case(
        "verify-deleted-data-file",
        ("cannot be verified", "data.csv", "cannot be read"),
        data=_chain(_delete_data),
        args=AR,
        file="ar.json",
        output=False,
        subprocess=True,
    ),
    Case(
        "verify-https-link",
        ("https://example.org/data.csv", "reads no network"),
        data=_chain(_remote_data),
        args=AR,
        file="ar.json",
        output=False,
    ),
    Case(
        "verify-ar-without-its-rerun-items",
        ("record --bind", "rerun.bind", "older fairpolicy"),
        data=_chain(_drop_rerun_items, "--bind", "c1:dimension=sex"),
        args=AR,
        file="ar.json",
        output=False,
    ),
    Case(
        "verify-a-glob-of-data-files",
        ("the run read a glob of files", "one data file only"),
        data=_glob_chain,
        args=AR,
        file="ar.json",
        output=False,
    ),
    Case(
        "verify-data-passed-in-memory",
        ("link no data file with its SHA-256", "in memory"),
        data=_in_memory_chain,
        args=AR,
        file="ar.json",
        output=False,
    ),
    Case(
        "verify-baseline-not-linked",
        ("compared with baseline results", "link no baseline results file"),
        data=_baseline_chain,
        args=AR,
        file="ar.json",
        output=False,
    ),
    Case(
        "verify-ar-missing",
        ("the assessment results file does not exist",),
        args=("verify", "{tmp}/nowhere.json"),
        file="nowhere.json",
        output=False,
    ),
    Case(
        "verify-ar-fifo",
        ("named pipe (FIFO)", "the assessment results must be a file"),
        data=_ar_fifo,
        args=AR,
        file="ar.json",
        output=False,
        subprocess=True,
    ),
    Case(
        "verify-ar-device",
        ("not a regular file", "the assessment results must be a file"),
        args=("verify", "/dev/null"),
        file="/dev/null",
        output=False,
    ),
    Case(
        "verify-ar-directory",
        ("directory", "the assessment results must be a file"),
        args=("verify", "{tmp}"),
        output=False,
    ),
    Case(
        "verify-ar-not-utf8",
        ("the assessment results are not UTF-8 text",),
        data=_ar_bytes(b'{"assessment-results": {"uuid": "\xff"}}'),
        args=AR,
        file="ar.json",
        output=False,
    ),
    Case(
        "verify-not-assessment-results",
        ("not OSCAL assessment results", "check -o oscal=ar.json"),
        args=("verify", "{policy}"),
        file="policy.yaml",
        output=False,
    ),
]
