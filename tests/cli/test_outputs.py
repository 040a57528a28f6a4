"""Writing outputs safely (``fairpolicy.outputs``): special files, standard output, one
path one writer, created folders, signals, concurrent runs, stale verdicts, ``-o github``
on exit 2 and the JUnit time. Signals, concurrency and write failures run real processes
(``python -m fairpolicy`` on this worktree's ``src``); which test covers which item is
listed in ``tests/bad_inputs/cases_outputs.py``."""

from __future__ import annotations

import io
import json
import os
import resource
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairpolicy.cli import main
from tests.bad_inputs.cases import DEFAULT_DATA, policy, rows

ROOT = Path(__file__).resolve().parents[2]
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="os.mknod of a device node needs root")
FAILING_DATA = "y_true,y_pred,sex\n" + rows(groups=("F", "M")).replace(",1,M", ",0,M")


@pytest.fixture
def inputs(tmp_path: Path) -> tuple[Path, Path]:
    pol = tmp_path / "policy.yaml"
    pol.write_text(policy())
    data = tmp_path / "data.csv"
    data.write_text(DEFAULT_DATA)
    return pol, data


def run(argv: list[str]) -> tuple[int, str, str]:
    """In process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    real = sys.stderr
    sys.stderr = err
    try:
        code = main(argv, out)
    finally:
        sys.stderr = real
    return code, out.getvalue(), err.getvalue()


def env(**extra: str) -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"}
    e["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + e.get("PYTHONPATH", "")
    e["PYTHONDONTWRITEBYTECODE"] = "1"
    e.update(extra)
    return e


def fairpolicy(*argv: str) -> list[str]:
    return [sys.executable, "-m", "fairpolicy", *argv]


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".fairpolicy-"))


# ---------------------------------------------------------------- special files


@ROOT_ONLY
def test_character_device_is_written_not_replaced(
    inputs: tuple[Path, Path], tmp_path: Path
) -> None:
    pol, data = inputs
    dev = tmp_path / "null"
    os.mknod(dev, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a /dev/null of our own
    code, _, err = run(["check", str(pol), str(data), "-o", f"json={dev}", "-o", f"sarif={dev}x"])
    assert code == 0, err
    assert stat.S_ISCHR(os.lstat(dev).st_mode), "the device node was replaced"
    assert os.lstat(dev).st_rdev == os.makedev(1, 3)
    assert json.loads((tmp_path / "nullx").read_text())["runs"]
    assert leftovers(tmp_path) == []


@ROOT_ONLY
def test_block_device_is_refused(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    pol, data = inputs
    dev = tmp_path / "blk"
    os.mknod(dev, stat.S_IFBLK | 0o600, os.makedev(7, 200))
    code, _, err = run(["check", str(pol), str(data), "-o", f"json={dev}"])
    assert code == 2 and "this is a block device" in err and str(dev) in err
    assert stat.S_ISBLK(os.lstat(dev).st_mode)


def test_fifo_is_written_directly(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    pol, data = inputs
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    code, _, err = run(["check", str(pol), str(data), "-o", f"json={fifo}"])
    reader.join(timeout=30)
    assert code == 0, err
    assert json.loads(got[0])["summary"]["gate"] == "pass"
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_socket_is_refused_before_the_data_is_read(tmp_path: Path) -> None:
    pol = tmp_path / "policy.yaml"
    pol.write_text(policy())
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "s"))
    sock.close()
    code, _, err = run(
        ["check", str(pol), str(tmp_path / "absent.csv"), "-o", f"json={tmp_path}/s"]
    )
    assert code == 2 and "this is a socket" in err and "absent.csv" not in err


def test_symlink_stays_a_symlink(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    pol, data = inputs
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    dangling = tmp_path / "dangling.sarif"
    dangling.symlink_to(tmp_path / "made" / "by-the-run.sarif")
    code, _, err = run(
        ["check", str(pol), str(data), "-o", f"json={link}", "-o", f"sarif={dangling}"]
    )
    assert code == 0, err
    assert link.is_symlink() and dangling.is_symlink()
    assert json.loads(real.read_text())["summary"]["gate"] == "pass"
    assert json.loads((tmp_path / "made" / "by-the-run.sarif").read_text())["runs"]


def test_dev_stdout_is_not_replaced(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    """``-o json=/dev/stdout`` is standard output (a pipe here, a file when redirected)."""
    pol, data = inputs
    proc = subprocess.run(
        fairpolicy("check", str(pol), str(data), "-o", "json=/dev/stdout"),
        capture_output=True,
        env=env(),
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["summary"]["gate"] == "pass"  # clean for jq
    assert b"PASS" in proc.stderr  # the table went to stderr
    redirected = tmp_path / "redirected.json"
    with redirected.open("wb") as fh:
        proc = subprocess.run(
            fairpolicy("check", str(pol), str(data), "-o", "json=/dev/stdout"),
            stdout=fh,
            stderr=subprocess.PIPE,
            env=env(),
            timeout=120,
            check=False,
        )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(redirected.read_text())["summary"]["gate"] == "pass"
    assert Path("/dev/stdout").is_symlink() or not Path("/dev/stdout").exists()


# ---------------------------------------------------------------- standard output


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_dash_sends_one_format_to_stdout(
    fmt: str, inputs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    pol, data = inputs
    out = io.StringIO()
    assert main(["check", str(pol), str(data), "-o", f"{fmt}=-"], out) == 0
    doc = json.loads(out.getvalue())  # nothing but the document
    assert doc["summary"]["gate"] == "pass" if fmt == "json" else doc["runs"]
    assert "demographic_parity_diff" in capsys.readouterr().err  # the table, on stderr


def test_text_to_a_file_is_not_also_on_stdout(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    pol, data = inputs
    table = tmp_path / "table.txt"
    code, out, _ = run(["check", str(pol), str(data), "-o", f"text={table}"])
    assert code == 0 and out == ""
    assert "demographic_parity_diff" in table.read_text()
    code, out, err = run(["check", str(pol), str(data), "-o", f"text={table}", "-o", "json=-"])
    assert code == 0 and json.loads(out) and "demographic_parity_diff" not in err


@pytest.mark.parametrize(
    "outputs", [["json=-", "sarif=-"], ["json", "text"], ["github", "junit=-"], ["json=-", "json"]]
)
def test_two_formats_on_stdout_is_a_usage_error(
    outputs: list[str], inputs: tuple[Path, Path]
) -> None:
    pol, data = inputs
    argv = ["check", str(pol), str(data)]
    for o in outputs:
        argv += ["-o", o]
    code, out, err = run(argv)
    assert code == 2 and "ask for standard output" in err
    assert all(line.startswith("::error ") for line in out.splitlines())  # -o github's


# ---------------------------------------------------------------- one path, one writer


def test_hard_link_to_another_output_is_refused(tmp_path: Path) -> None:
    pol = tmp_path / "policy.yaml"
    pol.write_text(policy())
    a = tmp_path / "a.json"
    a.write_text("previous")
    os.link(a, tmp_path / "b.html")
    argv = ["check", str(pol), str(tmp_path / "absent.csv")]  # refused before any work
    code, _, err = run([*argv, "-o", f"json={a}", "-o", f"html={tmp_path / 'b.html'}"])
    assert code == 2 and "name the same file" in err and "absent.csv" not in err
    assert a.read_text() == "previous"
    os.link(pol, tmp_path / "policy-link.json")
    code, _, err = run([*argv, "-o", f"json={tmp_path / 'policy-link.json'}"])
    assert code == 2 and "this is the policy file" in err


def test_export_refuses_to_overwrite_its_input(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    pol, data = inputs
    results = tmp_path / "r.json"
    assert run(["check", str(pol), str(data), "-o", f"json={results}"])[0] == 0
    before = results.read_bytes()
    os.link(results, tmp_path / "r-link.json")
    for target in (results, tmp_path / "r-link.json"):
        code, _, err = run(["export", "oscal", str(results), "-o", str(target)])
        assert code == 2 and "this is the results file" in err
        assert results.read_bytes() == before
    code, _, err = run(["export", "oscal", str(results), "-o", str(tmp_path / "new" / "ar.json")])
    assert code == 0, err
    assert "assessment-results" in json.loads((tmp_path / "new" / "ar.json").read_text())
    code, out, err = run(["export", "oscal", str(results), "-o", "-"])
    assert code == 0 and "assessment-results" in json.loads(out), err


def test_convert_refuses_a_hard_link_to_its_policy(tmp_path: Path) -> None:
    pol = tmp_path / "policy.yaml"
    pol.write_text(policy())
    before = pol.read_bytes()
    os.link(pol, tmp_path / "catalog.yaml")
    code, _, err = run(["convert", str(pol), "-o", str(tmp_path / "catalog.yaml")])
    assert code == 2 and "this is the policy file" in err
    assert pol.read_bytes() == before


# ---------------------------------------------------------------- folders


def test_uncreatable_folder_is_named(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    pol, data = inputs
    blocker = tmp_path / "blocker"
    blocker.write_text("a file")
    code, _, err = run(["check", str(pol), str(data), "-o", f"json={blocker}/a/b/r.json"])
    assert code == 2 and f"'{blocker}' is not a directory" in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores folder permissions")
def test_folder_without_permission_is_named(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    pol, data = inputs
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    code, _, err = run(["check", str(pol), str(data), "-o", f"json={locked}/sub/r.json"])
    assert code == 2 and f"no permission to create the folder '{locked}/sub'" in err


# ---------------------------------------------------------------- signals


@pytest.mark.parametrize(
    ("signum", "code"),
    [(signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGINT, 130)],
    ids=["SIGTERM", "SIGHUP", "SIGINT"],
)
def test_signal_while_staged_removes_temp_files(
    signum: int, code: int, inputs: tuple[Path, Path], tmp_path: Path
) -> None:
    pol, data = inputs
    out = tmp_path / "out"
    out.mkdir()
    previous = out / "report.json"
    previous.write_text("previous\n")
    proc = subprocess.Popen(
        fairpolicy(
            "check", str(pol), str(data), "-o", f"json={previous}", "-o", f"html={out}/r.html"
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env(FAIRPOLICY_TEST_PAUSE_STAGED="60"),
    )
    deadline = time.monotonic() + 90
    while len(leftovers(out)) < 2:  # both outputs staged: the run sleeps now
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the run never staged its outputs"
        time.sleep(0.05)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert leftovers(out) == [], "staged temporary files were left behind"
    assert sorted(p.name for p in out.iterdir()) == ["report.json"]
    assert previous.read_text() == "previous\n"
    assert b"Traceback" not in err and b"interrupted" in err


# ---------------------------------------------------------------- concurrent runs


def test_concurrent_runs_leave_one_runs_set(tmp_path: Path) -> None:
    """Two runs (one passes, one fails) write the same two outputs in opposite orders and
    sleep between their renames: without the folder lock their renames interleave and the
    JSON and the SARIF disagree."""
    pol = tmp_path / "policy.yaml"
    pol.write_text(policy())
    good, bad = tmp_path / "good.csv", tmp_path / "bad.csv"
    good.write_text(DEFAULT_DATA)
    bad.write_text(FAILING_DATA)
    out = tmp_path / "out"
    report, sarif = out / "report.json", out / "report.sarif"
    for _ in range(2):
        procs = [
            subprocess.Popen(
                fairpolicy("check", str(pol), str(d), "-o", first, "-o", second),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=env(FAIRPOLICY_TEST_PAUSE_RENAMES="3"),
            )
            for d, first, second in (
                (good, f"json={report}", f"sarif={sarif}"),
                (bad, f"sarif={sarif}", f"json={report}"),
            )
        ]
        codes = sorted(p.wait(timeout=180) for p in procs)
        assert codes == [0, 1]
        gate = json.loads(report.read_text())["summary"]["gate"]
        levels = {r["level"] for r in json.loads(sarif.read_text())["runs"][0]["results"]}
        assert ("error" in levels) == (gate == "fail"), (gate, levels)
        data_in_sarif = json.dumps(json.loads(sarif.read_text())["runs"][0])
        data_in_json = json.loads(report.read_text())["data"]["path"]
        assert Path(data_in_json).name in data_in_sarif
        assert leftovers(out) == []


# ---------------------------------------------------------------- stale verdicts


def _file_size_limit(limit: int) -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def test_failed_write_removes_earlier_reports(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    """A file-size limit stands in for a full disk (root ignores permissions): the HTML
    report cannot be written, so the earlier JSON and SARIF "pass" reports at this run's
    paths are removed, and the message says so."""
    pol, _ = inputs
    data = tmp_path / "fail.csv"
    data.write_text(FAILING_DATA)
    out = tmp_path / "out"
    out.mkdir()
    earlier = {out / "report.json": '{"summary": {"gate": "pass"}}', out / "r.sarif": "{}"}
    for path, text in earlier.items():
        path.write_text(text)
    proc = subprocess.run(
        fairpolicy(
            "check",
            str(pol),
            str(data),
            "-o",
            f"json={out}/report.json",
            "-o",
            f"sarif={out}/r.sarif",
            "-o",
            f"html={out}/r.html",
        ),
        capture_output=True,
        text=True,
        env=env(),
        timeout=120,
        check=False,
        preexec_fn=lambda: _file_size_limit(8 << 10),  # JSON, SARIF fit; HTML (14 KB) not
    )
    assert proc.returncode == 2, proc.stderr
    assert "cannot write" in proc.stderr and "r.html" in proc.stderr
    assert "Removed the earlier" in proc.stderr and "report.json" in proc.stderr
    assert sorted(p.name for p in out.iterdir()) == [], "a stale report or a temp file is left"
    assert "Traceback" not in proc.stderr


@pytest.mark.skipif(
    os.geteuid() == 0,
    reason="root ignores folder permissions; test_failed_write_removes_earlier_reports "
    "makes the write fail with a file-size limit instead",
)
def test_permission_denied_removes_earlier_reports(
    inputs: tuple[Path, Path], tmp_path: Path
) -> None:
    pol, data = inputs
    writable, locked = tmp_path / "ok", tmp_path / "locked"
    writable.mkdir()
    locked.mkdir()
    (writable / "report.json").write_text('{"summary": {"gate": "pass"}}')
    (locked / "r.html").write_text("earlier")
    locked.chmod(0o500)
    try:
        proc = subprocess.run(
            fairpolicy(
                "check",
                str(pol),
                str(data),
                "-o",
                f"json={writable}/report.json",
                "-o",
                f"html={locked}/r.html",
            ),
            capture_output=True,
            text=True,
            env=env(),
            timeout=120,
            check=False,
        )
    finally:
        locked.chmod(0o700)
    assert proc.returncode == 2, proc.stderr
    assert "Removed the earlier" in proc.stderr and "Could not remove" in proc.stderr
    assert not (writable / "report.json").exists()


def test_step_summary_is_not_left_half_written(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    pol, data = inputs
    summary = tmp_path / "summary.md"
    before = b"# earlier step\n" + b"x" * (60 << 10)
    summary.write_bytes(before)
    proc = subprocess.run(
        fairpolicy("check", str(pol), str(data), "-o", "github"),
        capture_output=True,
        text=True,
        env=env(GITHUB_STEP_SUMMARY=str(summary)),
        timeout=120,
        check=False,
        preexec_fn=lambda: _file_size_limit(len(before) + 100),
    )
    assert proc.returncode == 2, proc.stderr
    assert "cannot append the step summary" in proc.stderr
    assert summary.read_bytes() == before
    proc = subprocess.run(  # the same without a limit: appended whole
        fairpolicy("check", str(pol), str(data), "-o", "github"),
        capture_output=True,
        env=env(GITHUB_STEP_SUMMARY=str(summary)),
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0
    assert summary.read_bytes().startswith(before) and len(summary.read_bytes()) > len(before) + 100


def test_exit_2_says_earlier_reports_are_not_this_runs(
    inputs: tuple[Path, Path], tmp_path: Path
) -> None:
    """The decision: a run that stops before it has a verdict writes nothing, keeps the
    earlier report byte for byte (it may be the last good evidence), and says on stderr
    that it is not this run's; exit 2 is what a pipeline gates on."""
    pol, _ = inputs
    report = tmp_path / "report.json"
    report.write_text("earlier\n")
    code, _, err = run(["check", str(pol), str(tmp_path / "absent.csv"), "-o", f"json={report}"])
    assert code == 2
    assert f"{report} is from an earlier run, not this one" in err
    assert report.read_text() == "earlier\n"


# ---------------------------------------------------------------- -o github on exit 2


def test_github_exit_2_appends_the_reason_to_the_step_summary(
    inputs: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pol, _ = inputs
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code, out, err = run(["check", str(pol), str(tmp_path / "absent.csv"), "-o", "github"])
    assert code == 2
    lines = [line for line in out.splitlines() if line.startswith("::error ")]
    assert len(lines) == 1 and "absent.csv" in lines[0], out
    assert "\n" not in lines[0]
    text = summary.read_text()
    assert "could not evaluate (exit 2)" in text and "absent.csv" in text
    # github to a file: the annotation goes to stderr (the runner reads both streams)
    code, out, err = run(
        ["check", str(pol), str(tmp_path / "absent.csv"), "-o", f"github={tmp_path}/g.txt"]
    )
    assert code == 2 and out == "" and "::error title=fairpolicy" in err


# ---------------------------------------------------------------- JUnit time


def test_junit_time_is_the_measured_duration(inputs: tuple[Path, Path], tmp_path: Path) -> None:
    pol, data = inputs
    report, junit = tmp_path / "r.json", tmp_path / "r.xml"
    started = time.perf_counter()
    code, _, err = run(
        ["check", str(pol), str(data), "-o", f"json={report}", "-o", f"junit={junit}"]
    )
    elapsed = time.perf_counter() - started
    assert code == 0, err
    seconds = json.loads(report.read_text())["run"]["seconds"]
    assert 0 < seconds <= elapsed
    root = ET.parse(junit).getroot()
    assert root.get("time") == f"{seconds:.3f}"
    assert root.find("testsuite").get("time") == f"{seconds:.3f}"  # type: ignore[union-attr]


# ---------------------------------------------------------------- the whole class

KINDS = ("new", "nested", "regular", "symlink", "fifo-free-device", "duplicate")
FORMATS = ("json", "sarif", "junit", "html", "markdown", "oscal", "text")


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    plan=st.lists(
        st.tuples(st.sampled_from(FORMATS), st.sampled_from(KINDS)), min_size=1, max_size=4
    )
)
def test_outputs_are_all_this_runs_or_the_run_is_refused(
    plan: list[tuple[str, str]], inputs: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Any mix of formats and kinds of path: either the run is refused with exit 2 and every
    file is as it was, or every output holds this run's report, special files are still
    special, symlinks are still symlinks, and no temporary file is left."""
    pol, data = inputs
    tmp = tmp_path_factory.mktemp("plan")
    argv = ["check", str(pol), str(data)]
    paths: list[Path] = []
    for i, (fmt, kind) in enumerate(plan):
        path = tmp / f"o{i}.{fmt}"
        if kind == "nested":
            path = tmp / f"n{i}" / "deeper" / f"o{i}.{fmt}"
        elif kind == "regular":
            path.write_text("earlier")
        elif kind == "symlink":
            (tmp / f"t{i}").write_text("earlier")
            path.symlink_to(tmp / f"t{i}")
        elif kind == "fifo-free-device":
            if os.geteuid() == 0:
                os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
            else:
                path.symlink_to("/dev/null")
        elif kind == "duplicate" and paths:
            path = paths[0]
        paths.append(path)
        argv += ["-o", f"{fmt}={path}"]
    before = {p: p.read_bytes() for p in tmp.rglob("*") if p.is_file() and not p.is_char_device()}
    code, out, err = run(argv)
    assert "Traceback" not in err and "internal error" not in err
    assert leftovers(tmp) == [] and not list(tmp.rglob(".fairpolicy-*"))
    duplicated = len({os.path.realpath(p) for p in paths}) < len(paths)
    if duplicated:
        assert code == 2 and "name the same file" in err
        after = {p: p.read_bytes() for p in before}
        assert after == before
        return
    assert code == 0, err
    if any(f == "text" for f, _ in plan):
        assert out == "", "-o text=FILE: the table is not also on stdout"
    else:
        assert "demographic_parity_diff" in out, "the table reaches the terminal"
    for (fmt, kind), path in zip(plan, paths, strict=True):
        if kind == "fifo-free-device":
            assert path.is_char_device()
            continue
        if kind == "symlink":
            assert path.is_symlink()
        text = path.read_text()
        assert text != "earlier" and text
        if fmt in ("json", "sarif", "oscal"):
            json.loads(text)
