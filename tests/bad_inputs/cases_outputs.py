"""Bad-input rows of the outputs area (writing outputs safely, issue 13).

Which test covers each item of "Writing outputs" (rows here run in process, on DuckDB and,
when marked, as subprocesses; the rest need a real process, a signal or root and live in
``tests/cli/test_outputs.py``):

- never rename over a non-regular file: ``outputs-character-device-stays-one`` (here),
  ``outputs-socket-is-refused`` (here); ``test_character_device_is_written_not_replaced``
  (``os.mknod``, root only), ``test_fifo_is_written_directly``,
  ``test_symlink_stays_a_symlink``, ``test_block_device_is_refused`` (root only),
  ``test_dev_stdout_is_not_replaced`` (subprocess);
- ``-`` means standard output: ``outputs-two-formats-on-stdout``, ``outputs-empty-path``
  (an unset ``$OUT`` in ``-o json=$OUT`` no longer means stdout) (here);
  ``test_dash_sends_one_format_to_stdout``, ``test_text_to_a_file_is_not_also_on_stdout``;
- one path, one writer: ``outputs-same-path-twice``, ``outputs-same-file-through-a-symlink``
  (here); ``test_hard_link_to_another_output_is_refused``,
  ``test_export_refuses_to_overwrite_its_input``,
  ``test_convert_refuses_a_hard_link_to_its_policy``;
- missing parent folders are created: ``outputs-missing-folders-are-created`` (here, and
  ``output-directory-missing`` in ``cases.py``), ``output-under-a-regular-file``;
  ``test_uncreatable_folder_is_named``;
- signals: ``test_signal_while_staged_removes_temp_files`` (SIGTERM, SIGHUP, SIGINT;
  subprocess);
- no mixed sets: ``test_concurrent_runs_leave_one_runs_set`` (subprocesses);
- no stale verdicts: ``test_failed_write_removes_earlier_reports`` (a file-size limit stands
  in for a full disk; subprocess), ``test_step_summary_is_not_left_half_written``;
  a run that stops before its verdict: every ``report=False`` row keeps the earlier report
  byte for byte, and ``test_exit_2_says_earlier_reports_are_not_this_runs``;
- ``-o github`` on exit 2: ``outputs-github-annotates-exit-2`` (here);
  ``test_github_exit_2_appends_the_reason_to_the_step_summary``;
- JUnit ``time``: ``test_junit_time_is_the_measured_duration``.
"""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

from tests.bad_inputs.cases import DEFAULT_DATA, Case


def _data(tmp: Path) -> Path:
    path = tmp / "data.csv"
    path.write_text(DEFAULT_DATA)
    return path


def with_socket(tmp: Path) -> Path:
    """The data, and a Unix socket at ``{tmp}/sock``."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(tmp / "sock"))
    sock.close()  # the socket file stays
    return _data(tmp)


def with_device(tmp: Path) -> Path:
    """The data, and ``{tmp}/null``: a character device (root) or a symlink to /dev/null."""
    try:
        os.mknod(tmp / "null", stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        os.symlink("/dev/null", tmp / "null")
    return _data(tmp)


def with_alias(tmp: Path) -> Path:
    """The data, and ``{tmp}/alias.json``: a symlink to the report ``{tmp}/out/report.json``."""
    os.symlink(tmp / "out" / "report.json", tmp / "alias.json")
    return _data(tmp)


def with_baseline(tmp: Path) -> Path:
    """The data, and ``{tmp}/base.json`` standing for a baseline results file."""
    (tmp / "base.json").write_text("{}")
    return _data(tmp)


def missing_data(tmp: Path) -> Path:
    return tmp / "no-such-data.csv"


CASES = [
    Case(
        "outputs-two-formats-on-stdout",
        ("-o sarif and -o junit ask for standard output", "-o FORMAT=PATH"),
        args=("-o", "sarif=-", "-o", "junit"),
        subprocess=True,
    ),
    Case(
        "outputs-same-path-twice",
        ("name the same file", "report.json", "give every output its own path"),
        args=("-o", "html={tmp}/out/report.json"),
        file="report.json",
    ),
    Case(
        "outputs-same-file-through-a-symlink",
        ("name the same file", "alias.json"),
        data=with_alias,
        args=("-o", "sarif={tmp}/alias.json"),
        file="alias.json",
    ),
    Case(
        "outputs-socket-is-refused",
        ("this is a socket", "regular files, character devices", "use - for standard output"),
        data=with_socket,
        args=("-o", "sarif={tmp}/sock"),
        file="sock",
        subprocess=True,
    ),
    Case(
        "outputs-character-device-stays-one",
        (),
        data=with_device,
        args=("-o", "sarif={tmp}/null"),
        code=0,
        report=True,
        note="a character device is written to, never renamed over "
        "(test_outputs.py checks the node is still a device)",
    ),
    Case(
        "outputs-missing-folders-are-created",
        (),
        args=("-o", "sarif={tmp}/new/folders/report.sarif"),
        code=0,
        report=True,
        note="missing parent folders are created, as pytest --junitxml does",
    ),
    Case(
        "outputs-github-annotates-exit-2",
        ("::error title=fairpolicy%3A could not evaluate (exit 2)::", "no-such-data.csv"),
        data=missing_data,
        args=("-o", "github"),
        file="no-such-data.csv",
        subprocess=True,
    ),
    Case(
        "outputs-empty-path",
        ("-o sarif=: the path is empty", "or - for stdout"),
        args=("-o", "sarif="),
    ),
]
