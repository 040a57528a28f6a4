"""The CLI in process (main(argv) -> int) and as a subprocess."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from fairpolicy.cli import main
from tests.helpers import FIXTURES, balanced_csv, control, write_csv, write_policy


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), stdout=out)
    return code, out.getvalue()


def test_pass_and_fail_exit_codes(tmp_path: Path) -> None:
    data = balanced_csv(tmp_path)  # DP gap = 0.25
    ok = write_policy(tmp_path, control(threshold="0.3"), name="ok.yaml")
    bad = write_policy(tmp_path, control(threshold="0.2"), name="bad.yaml")
    code, out = run("check", str(ok), str(data))
    assert code == 0, out
    assert "PASS" in out and "0.2500" in out
    code, out = run("check", str(bad), str(data))
    assert code == 1
    assert "FAIL" in out and "violates < 0.2" in out


def test_warn_and_monitor_do_not_gate(tmp_path: Path) -> None:
    data = balanced_csv(tmp_path)
    pol = write_policy(
        tmp_path,
        control("w", threshold="0.1", enforcement_mode="warn"),
        control("m", threshold="0.1", enforcement_mode="monitor"),
    )
    code, out = run("check", str(pol), str(data), "-o", f"json={tmp_path / 'r.json'}")
    assert code == 0, out
    res = json.loads((tmp_path / "r.json").read_text())
    assert [f["status"] for f in res["findings"]] == ["warn", "warn"]
    assert [f["gating"] for f in res["findings"]] == [False, False]
    assert res["summary"]["gate"] == "pass"


def test_json_output_shape(tmp_path: Path) -> None:
    data = balanced_csv(tmp_path)
    pol = write_policy(tmp_path, control(severity="high", risk_id="R-1", lifecycle_phase="deploy"))
    out_path = tmp_path / "out" / "results.json"
    out_path.parent.mkdir()
    code, _ = run("check", str(pol), str(data), "-o", f"json={out_path}")
    assert code == 1
    res = json.loads(out_path.read_text())
    for key in ("schema_version", "tool", "policy", "data", "summary", "findings"):
        assert key in res
    assert res["tool"]["name"] == "fairpolicy"
    assert len(res["policy"]["sha256"]) == 64 and len(res["data"]["sha256"]) == 64
    assert res["data"]["rows"] == 80
    assert set(res["summary"]) >= {"total", "pass", "fail", "warn", "inconclusive", "error", "gate"}
    f = res["findings"][0]
    for key in (
        "control_id", "title", "metric_key", "inputs", "params", "value", "operator",
        "threshold", "status", "message", "groups", "excluded_groups", "details",
    ):  # fmt: skip
        assert key in f, key
    assert f["inputs"] == {"target": "y_true", "prediction": "y_pred", "dimension": "sex"}
    assert f["value"] == pytest.approx(0.25, abs=1e-15)
    assert {g["group"]: g["value"] for g in f["groups"]} == {"F": 0.25, "M": 0.5}
    assert (f["severity"], f["risk_id"], f["lifecycle_phase"]) == ("high", "R-1", "deploy")


def test_json_to_stdout_is_valid_json(tmp_path: Path) -> None:
    data = balanced_csv(tmp_path)
    pol = write_policy(tmp_path, control(threshold="0.3"))
    code, out = run("check", str(pol), str(data), "-o", "json")
    assert code == 0
    assert json.loads(out)["summary"]["gate"] == "pass"


def test_unknown_output_format_is_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = balanced_csv(tmp_path)
    pol = write_policy(tmp_path, control())
    code, _ = run("check", str(pol), str(data), "-o", "jsn")
    err = capsys.readouterr().err
    assert code == 2
    assert "unknown output format 'jsn'" in err and "Did you mean 'json'" in err
    assert "Traceback" not in err


def test_bind_override(tmp_path: Path) -> None:
    data = write_csv(
        tmp_path,
        "label,pred,gender\n"
        + "".join(f"{i % 2},{i % 3 == 0:d},{'ab'[i % 2]}\n" for i in range(120)),
    )
    pol = write_policy(tmp_path, control(threshold="0.9"))
    code, out = run("check", str(pol), str(data))
    assert code == 2 and "ERROR" in out
    code, out = run(
        "check", str(pol), str(data),
        "--bind", "target=label", "--bind", "prediction=pred", "--bind", "dimension=gender",
    )  # fmt: skip
    assert code == 0, out


def test_bad_bind_syntax(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = run("check", "p.yaml", "d.csv", "--bind", "target")
    assert code == 2
    assert "ROLE=COLUMN" in capsys.readouterr().err


def test_inconclusive_policy(tmp_path: Path) -> None:
    # two groups, one under min_samples: one comparable group left → inconclusive
    data = write_csv(tmp_path, "y_true,y_pred,sex\n" + "1,1,F\n0,0,F\n" * 20 + "1,0,M\n" * 5)
    pol = write_policy(tmp_path, control())
    assert run("check", str(pol), str(data))[0] == 1  # inconclusive fails the gate by default
    assert run("check", str(pol), str(data), "--inconclusive", "warn")[0] == 0
    assert run("check", str(pol), str(data), "--inconclusive", "pass")[0] == 0


def test_metrics_list_and_show() -> None:
    code, out = run("metrics")
    assert code == 0
    assert "weighted_f1_gap" in out and "multiclass_demographic_parity" in out
    code, out = run("metrics", "show", "equalized_odds_ratio")
    assert code == 0
    assert (
        "fairlearn" in out
        and "example control:" in out
        and "metric_key, value: equalized_odds_ratio" in out
    )


def test_metrics_show_unknown(capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = run("metrics", "show", "demographic_parity_dif")
    assert code == 2
    assert "demographic_parity_diff" in capsys.readouterr().err


def test_no_command_prints_help() -> None:
    code, out = run()
    assert code == 2 and "check" in out


def test_help_and_version() -> None:
    assert run("--help")[0] == 0
    assert run("--version")[0] == 0


def test_debug_shows_traceback_others_do_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = run("check", str(tmp_path / "missing.yaml"), str(tmp_path / "d.csv"))
    assert code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "missing.yaml" in err
    code, _ = run("--debug", "check", str(tmp_path / "missing.yaml"), str(tmp_path / "d.csv"))
    assert code == 2
    assert "Traceback" in capsys.readouterr().err


def test_output_dir_missing_is_created(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Missing parent folders are created (as ``pytest --junitxml`` does); a folder that
    cannot be created is exit 2 naming it."""
    data = balanced_csv(tmp_path)
    pol = write_policy(tmp_path, control(threshold="0.3"))
    report = tmp_path / "nope" / "deeper" / "r.json"
    code, _ = run("check", str(pol), str(data), "-o", f"json={report}")
    assert code == 0 and json.loads(report.read_text())["summary"]["gate"] == "pass"
    code, _ = run("check", str(pol), str(data), "-o", f"json={data / 'sub' / 'r.json'}")
    assert code == 2
    err = capsys.readouterr().err
    assert f"'{data}' is not a directory" in err and "Traceback" not in err


def test_no_color_when_not_a_tty(tmp_path: Path) -> None:
    data = balanced_csv(tmp_path)
    pol = write_policy(tmp_path, control(threshold="0.3"))
    _, out = run("check", str(pol), str(data))
    assert "\033[" not in out


def test_subprocess_exit_codes(tmp_path: Path) -> None:
    data = balanced_csv(tmp_path)
    ok = write_policy(tmp_path, control(threshold="0.3"), name="ok.yaml")
    bad = write_policy(tmp_path, control(threshold="0.2"), name="bad.yaml")
    for pol, expected in ((ok, 0), (bad, 1)):
        proc = subprocess.run(
            [sys.executable, "-m", "fairpolicy", "check", str(pol), str(data)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == expected, proc.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "fairpolicy", "check", str(ok), str(tmp_path / "nope.csv")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert "nope.csv" in proc.stderr and "Traceback" not in proc.stderr


def test_fixture_end_to_end(tmp_path: Path) -> None:
    pol = write_policy(
        tmp_path,
        control("dp", threshold="0.1"),
        control("f1", metric="weighted_f1_gap", threshold="0.1", dimension="site"),
    )
    code, _ = run(
        "check", str(pol), str(FIXTURES / "binary_2g.csv"), "-o", f"json={tmp_path / 'r.json'}"
    )
    res = json.loads((tmp_path / "r.json").read_text())
    assert code == 1
    assert res["findings"][0]["value"] == pytest.approx(0.15055750927181727, abs=1e-12)
    assert res["findings"][0]["status"] == "fail"


def test_outputs_get_ordinary_permissions(tmp_path: Path) -> None:
    import os
    import stat

    data = balanced_csv(tmp_path)
    pol = write_policy(tmp_path, control(threshold="0.3"))
    out = tmp_path / "r.json"
    run("check", str(pol), str(data), "-o", f"json={out}")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~umask
    assert not list(tmp_path.glob(".fairpolicy-*"))  # no temp file left behind


def test_fail_on_warning_and_never(tmp_path: Path) -> None:
    data = balanced_csv(tmp_path)  # DP gap 0.25
    warn = write_policy(tmp_path, control("w", threshold="0.1", enforcement_mode="warn"))
    assert run("check", str(warn), str(data))[0] == 0
    assert run("check", str(warn), str(data), "--fail-on", "warning")[0] == 1
    block = write_policy(tmp_path, control("b", threshold="0.1"), name="block.yaml")
    assert run("check", str(block), str(data))[0] == 1
    assert run("check", str(block), str(data), "--fail-on", "never")[0] == 0
    # never still reports could-not-evaluate as 2
    missing = write_policy(tmp_path, control("m", dimension="nope"), name="m.yaml")
    assert run("check", str(missing), str(data), "--fail-on", "never")[0] == 2


def test_quiet_shows_only_failures(tmp_path: Path) -> None:
    data = balanced_csv(tmp_path)
    pol = write_policy(tmp_path, control("ok", threshold="0.3"), control("bad", threshold="0.1"))
    _, out = run("check", str(pol), str(data), "--quiet")
    table = out.split("\n\n")[0]
    assert "bad" in table and "ok " not in table


def test_progress_callback_and_no_bar_when_captured(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import fairpolicy

    data = balanced_csv(tmp_path)
    pol = write_policy(tmp_path, control("a", threshold="0.3"), control("b", threshold="0.3"))
    seen: list[tuple[str, int, int]] = []
    fairpolicy.check(pol, data, progress=lambda s, d, t: seen.append((s, d, t)))
    assert seen[0][0] == "reading data" and seen[-1] == ("done", 2, 2)
    assert [s for s, _, _ in seen[1:-1]] == ["evaluating a", "evaluating b"]
    run("check", str(pol), str(data))  # stderr is not a terminal here: no bar at all
    assert "\033[" not in capsys.readouterr().err


def test_progress_bar_on_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    err = Tty()
    monkeypatch.setattr(sys, "stderr", err)
    data = balanced_csv(tmp_path)
    pol = write_policy(tmp_path, control(threshold="0.3"))
    code, out = run("check", str(pol), str(data))
    assert code == 0 and "\033[" not in out  # the bar never reaches stdout
    assert "━" in err.getvalue()  # the bar was drawn on the terminal's stderr


def test_only_the_program_freezes_the_collector(monkeypatch: pytest.MonkeyPatch) -> None:
    """``main()`` as the program (argv from sys.argv) freezes the heap to skip the shutdown
    collection; ``main(argv)`` in a library or test process leaves the collector alone."""
    import gc

    before = gc.get_freeze_count()
    assert main(["metrics"], io.StringIO()) == 0
    assert gc.get_freeze_count() == before
    monkeypatch.setattr(sys, "argv", ["fairpolicy", "metrics"])
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    try:
        assert main() == 0
        assert gc.get_freeze_count() > before
    finally:
        gc.unfreeze()
