"""Run every row of the bad-input matrix (``cases.py``) in process, and a subset as real
subprocesses: exit code, message fragments, the named file/control/column/key, no
traceback, and either a complete report or a previous report left untouched."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from fairpolicy.cli import main
from tests.bad_inputs.cases import CASES, DEFAULT_DATA, Case, policy

ROOT = Path(__file__).resolve().parents[2]
PREVIOUS = '{"previous": "a good report from an earlier run"}\n'


@dataclass
class Prepared:
    argv: list[str]
    report: Path | None
    inputs: dict[Path, bytes]

    def inputs_untouched(self) -> bool:
        return all(p.read_bytes() == b for p, b in self.inputs.items())


def prepare(case: Case, tmp: Path) -> Prepared:
    pol = tmp / case.policy_name
    text = policy() if case.policy is None else case.policy
    pol.write_bytes(text.encode("latin-1" if case.policy_name == "latin1.yaml" else "utf-8"))
    if callable(case.data):
        data = case.data(tmp)
    else:
        data = tmp / case.data_name
        raw = DEFAULT_DATA if case.data is None else case.data
        data.write_bytes(raw.encode() if isinstance(raw, str) else raw)
    subs = {"tmp": str(tmp), "policy": str(pol), "data": str(data)}
    args = [a.format(**subs) for a in case.args]
    # a row may run another command than check (export: its own argv, output=False)
    argv = (
        args
        if args[:1] in (["check"], ["export"], ["verify"])
        else ["check", str(pol), str(data), *args]
    )
    report = None
    if case.output:
        (tmp / "out").mkdir()
        report = tmp / "out" / "report.json"
        report.write_text(PREVIOUS)
        argv += ["-o", f"json={report}"]
    small = [p for p in (pol, data) if p.is_file() and p.stat().st_size < 1 << 24]
    return Prepared(argv, report, {p: p.read_bytes() for p in small})


def assert_outcome(case: Case, prep: Prepared, code: int, out: str, err: str) -> None:
    text = out + err
    assert code == case.code, f"exit {code}, expected {case.code}\n{text}"
    assert "Traceback" not in text and "internal error" not in text, text
    for fragment in case.fragments:
        assert fragment in text, f"missing {fragment!r} in:\n{text}"
    if case.file:
        assert case.file in text, text
    if case.control:
        assert f"control '{case.control}'" in text, text
    if case.column:
        assert f"column '{case.column}'" in text, text
    if case.key:
        assert f"key '{case.key}'" in text, text
    if code == 2:
        assert "error" in err, "exit 2 always says why on stderr"
    assert prep.inputs_untouched(), "an input file was modified"
    if prep.report is None:
        return
    left = sorted(p.name for p in prep.report.parent.iterdir())
    assert left == ["report.json"], f"stray files: {left}"
    written = prep.report.read_text()
    if not case.report:
        assert written == PREVIOUS, "a run that could not evaluate replaced the previous report"
        return
    doc = json.loads(written)
    assert doc["summary"]["gate"] == {0: "pass", 1: "fail", 2: "error"}[code]
    if code == 2:
        errors = [f["message"] for f in doc["findings"] if f["status"] == "error"]
        assert errors, "exit 2 with a report: the report names the control in error"
        assert all(frag in " ".join(errors) for frag in case.fragments)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case_in_process(
    case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    prep = prepare(case, tmp_path)
    stdout = io.StringIO()
    code = main(prep.argv, stdout)
    err = capsys.readouterr().err
    assert_outcome(case, prep, code, stdout.getvalue(), err)


#: the DuckDB engine parses CSV itself: its own words (with the line) for these
DUCKDB_WORDS = {"ragged-rows", "unclosed-quote", "non-utf8-in-a-bound-column-far-down"}
ENGINE_CASES = [c for c in CASES if "--engine" not in c.args]


@pytest.mark.parametrize("case", ENGINE_CASES, ids=[c.id for c in ENGINE_CASES])
def test_case_on_duckdb(
    case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same matrix with ``--engine duckdb``: the same exit codes, never a traceback."""
    pytest.importorskip("duckdb")
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    prep = prepare(case, tmp_path)
    if prep.argv[0] == "check":
        prep.argv.insert(3, "--engine=duckdb")
    stdout = io.StringIO()
    code = main(prep.argv, stdout)
    err = capsys.readouterr().err
    if case.id in DUCKDB_WORDS:
        case = dataclasses.replace(case, fragments=("CSV Error on Line",), column=None)
    assert_outcome(case, prep, code, stdout.getvalue(), err)


SUBPROCESS = [c for c in CASES if c.subprocess]


@pytest.mark.parametrize("case", SUBPROCESS, ids=[c.id for c in SUBPROCESS])
def test_case_as_subprocess(case: Case, tmp_path: Path) -> None:
    prep = prepare(case, tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"}
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run(
        [sys.executable, "-m", "fairpolicy", *prep.argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert_outcome(case, prep, proc.returncode, proc.stdout, proc.stderr)


def test_the_matrix_is_big_and_covers_every_kind() -> None:
    assert len(CASES) >= 40
    assert len({c.id for c in CASES}) == len(CASES)
    assert {c.code for c in CASES} == {0, 1, 2}
    for c in CASES:  # every outcome other than "could not evaluate" is explained
        assert c.code == 2 or c.note, c.id
    assert len(SUBPROCESS) >= 8


def test_bom_does_not_reach_the_first_column_name(tmp_path: Path) -> None:
    from fairpolicy.data.sources import peek_columns, read_table

    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbf" + DEFAULT_DATA.encode())
    assert peek_columns(path)[0] == "y_true"
    table = read_table(path, ["y_true", "sex"])
    assert list(table.columns) == ["y_true", "sex"] and table.available[0] == "y_true"


def test_convert_writes_both_files_or_neither(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pol = tmp_path / "p.yaml"
    pol.write_text(policy())
    catalog = tmp_path / "catalog.json"
    catalog.write_text("previous")
    uncreatable = tmp_path / "p.yaml" / "profile.json"  # a folder that cannot be created
    code = main(
        ["convert", str(pol), "-o", str(catalog), "--profile", str(uncreatable)], io.StringIO()
    )
    assert code == 2 and "is not a directory" in capsys.readouterr().err
    assert catalog.read_text() == "previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["catalog.json", "p.yaml"]
