"""fairpolicy.testing.assert_gate and the pytest plugin, run in a real inner pytest
(``pytester``, the plugin loaded with ``-p fairpolicy.pytest_plugin``)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from fairpolicy.errors import PolicyError
from fairpolicy.testing import assert_gate, check
from tests.helpers import balanced_csv, control, write_policy

pytest_plugins = ["pytester"]

SRC = Path(__file__).resolve().parents[2] / "src"


def _policy_and_data(tmp: Path) -> tuple[Path, Path, Path]:
    """A CSV with a demographic-parity gap of exactly 0.25; one policy it passes (< 0.3),
    one it fails (< 0.2)."""
    data = balanced_csv(tmp)
    ok = write_policy(tmp, control("dp-ok", threshold="0.3"), name="ok.yaml")
    bad = write_policy(
        tmp,
        control("dp-ok", threshold="0.3"),
        control("dp-tight", threshold="0.2"),
        name="bad.yaml",
    )
    return ok, bad, data


def test_assert_gate_returns_the_results_when_the_gate_passes(tmp_path: Path) -> None:
    ok, _, data = _policy_and_data(tmp_path)
    results = assert_gate(str(ok), str(data))
    assert results.passed and results.findings[0].value == pytest.approx(0.25)


def test_assert_gate_message_is_the_failing_controls_table(tmp_path: Path) -> None:
    _, bad, data = _policy_and_data(tmp_path)
    with pytest.raises(AssertionError) as info:
        assert_gate(str(bad), str(data))
    message = str(info.value)
    assert message.startswith("fairpolicy gate FAIL (exit code 1)")
    assert "dp-tight" in message and "0.25" in message
    # the quiet table lists the failing control; the passing one is only counted
    table = message.split("\n\n")[1]
    assert "dp-tight" in table and "dp-ok" not in table


def test_assert_gate_bad_input_is_the_error_not_a_pass(tmp_path: Path) -> None:
    _, _, data = _policy_and_data(tmp_path)
    pol = write_policy(tmp_path, control("c1", dimension="no_such_column"), name="p.yaml")
    with pytest.raises(Exception) as info:
        assert_gate(str(pol), str(data))
    assert not isinstance(info.value, AssertionError) or "exit code 2" in str(info.value)
    assert "no_such_column" in str(info.value)


def test_check_records_nothing_without_listeners(tmp_path: Path) -> None:
    ok, _, data = _policy_and_data(tmp_path)
    assert check(str(ok), str(data)).passed
    with pytest.raises(PolicyError):
        check(str(tmp_path / "missing.yaml"), str(data))


def test_plugin_fixture_assertion_and_reports(pytester: pytest.Pytester, tmp_path: Path) -> None:
    ok, bad, data = _policy_and_data(tmp_path)
    pytester.makepyfile(
        f"""
        from fairpolicy.testing import assert_gate

        def test_fixture_passes(fairpolicy_check):
            results = fairpolicy_check({str(ok)!r}, {str(data)!r})
            assert results.passed

        def test_two_checks_one_fails(fairpolicy_check):
            fairpolicy_check({str(ok)!r}, {str(data)!r})
            assert_gate({str(bad)!r}, {str(data)!r})

        def test_no_check():
            pass

        import pytest

        @pytest.mark.parametrize("x", ["a/b", "a_b"])
        def test_same_slug(fairpolicy_check, x):
            fairpolicy_check({str(ok)!r}, {str(data)!r})
        """
    )
    reports = tmp_path / "reports"
    result = pytester.runpytest_subprocess(
        "-p",
        "fairpolicy.pytest_plugin",
        "--fairpolicy-report",
        str(reports),
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(passed=4, failed=1)
    out = result.stdout.str()
    assert "fairpolicy gate FAIL (exit code 1)" in out and "dp-tight" in out
    same = sorted(p.name for p in reports.iterdir() if "same_slug" in p.name)
    assert len(same) == 4  # two tests whose names slug alike: both reports kept
    names = sorted(p.name for p in reports.iterdir() if "same_slug" not in p.name)
    stem = "test_plugin_fixture_assertion_and_reports.py_"
    assert names == [
        f"{stem}test_fixture_passes.html",
        f"{stem}test_fixture_passes.xml",
        f"{stem}test_two_checks_one_fails-2.html",
        f"{stem}test_two_checks_one_fails-2.xml",
        f"{stem}test_two_checks_one_fails.html",
        f"{stem}test_two_checks_one_fails.xml",
    ]
    failed = ET.parse(reports / f"{stem}test_two_checks_one_fails-2.xml")
    assert [c.get("name") for c in failed.iter("testcase") if c.find("failure") is not None]
    assert "FAIL" in (reports / f"{stem}test_two_checks_one_fails-2.html").read_text()
    passed = ET.parse(reports / f"{stem}test_two_checks_one_fails.xml")
    assert not [c for c in passed.iter("testcase") if c.find("failure") is not None]


def test_plugin_without_report_dir_writes_nothing(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    ok, _, data = _policy_and_data(tmp_path)
    pytester.makepyfile(
        f"""
        def test_it(fairpolicy_check):
            assert fairpolicy_check({str(ok)!r}, {str(data)!r}).passed
        """
    )
    result = pytester.runpytest_subprocess(
        "-p", "fairpolicy.pytest_plugin", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=1)
    assert (
        "--fairpolicy-report"
        in pytester.runpytest_subprocess("-p", "fairpolicy.pytest_plugin", "--help").stdout.str()
    )
    written = [p for p in pytester.path.rglob("*") if p.suffix in (".html", ".xml")]
    assert written == []


@pytest.fixture(autouse=True)
def _worktree_src(monkeypatch: pytest.MonkeyPatch) -> None:
    """The inner pytest imports this checkout's fairpolicy, not another install."""
    monkeypatch.setenv("PYTHONPATH", str(SRC))


def test_assert_gate_message_says_each_thing_once(tmp_path: Path) -> None:
    """issue 27 item 7: the gate, the counts and each control appear once."""
    _, bad, data = _policy_and_data(tmp_path)
    with pytest.raises(AssertionError) as info:
        assert_gate(str(bad), str(data))
    message = str(info.value)
    assert message.count("FAIL") == 2  # the header's gate and the control's status
    assert message.count("control(s):") == 1 and message.count("exit") == 1
    table = message.split("warning:")[0]
    assert table.count("dp-tight") == 2  # its table row and its detail line
    assert "<fairpolicy Results" not in message
