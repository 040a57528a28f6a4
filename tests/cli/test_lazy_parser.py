"""A run builds only its own command's subparser (issue 17, a lean start).

The lazily built parser (:func:`fairpolicy.cli_parser.build_parser` with a command) must
be indistinguishable from the full one for that command: the same help, the same parse
results, the same usage and error messages and exit codes, for every command and for
arguments generated from every option of each.
"""

from __future__ import annotations

import argparse
import contextlib
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fairpolicy.cli import main
from fairpolicy.cli_parser import COMMANDS, build_parser, command_of, subparser


def _outcome(parser: argparse.ArgumentParser, argv: list[str]) -> tuple[Any, str, str]:
    """(the namespace's attributes, or the exit code; stdout; stderr) of parsing argv."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            result: Any = sorted(vars(parser.parse_args(argv)).items(), key=str)
        except SystemExit as exc:
            result = ("exit", exc.code)
    return result, out.getvalue(), err.getvalue()


def _value(action: argparse.Action, bad: bool) -> str:
    if bad:
        return "nope"
    if action.choices:
        return str(next(iter(action.choices)))
    return "1"


def _argvs(name: str) -> Iterator[list[str]]:
    """Arguments for command ``name``: each option with a good and a bad value, the
    positionals, abbreviations, unknown options, help."""
    sub = subparser(build_parser(), name)
    positionals = [_value(a, False) for a in sub._actions if not a.option_strings and a.required]
    yield [name]
    yield [name, *positionals]
    yield ["--debug", name, *positionals]
    yield ["--debug", "--debug", name, *positionals, "--debug"]
    yield [name, "-h"]
    yield [name, *positionals, "--help"]
    yield [name, *positionals, "--no-such-option"]
    yield [name, *positionals, "extra", "words"]
    yield [name, "--", *positionals]
    for action in sub._actions:
        for opt in action.option_strings:
            if opt in ("-h", "--help"):
                continue
            for bad in (False, True):
                value = [] if action.nargs == 0 else [_value(action, bad)]
                yield [name, *positionals, opt, *value]
                yield [name, opt, *value, *positionals]
            if opt.startswith("--") and len(opt) > 4:
                yield [name, *positionals, opt[:4], "1"]  # an abbreviation (maybe ambiguous)
                yield [name, *positionals, f"{opt}=1"]


@pytest.mark.parametrize("name", COMMANDS)
def test_a_command_parses_alike_with_its_subparser_only(name: str) -> None:
    full = build_parser()
    lazy = build_parser(name)
    assert subparser(lazy, name).format_help() == subparser(full, name).format_help()
    assert subparser(lazy, name).format_usage() == subparser(full, name).format_usage()
    argvs = list(_argvs(name))
    assert len(argvs) > 10
    for argv in argvs:
        assert command_of(argv) == name
        assert _outcome(lazy, argv) == _outcome(full, argv), argv


def test_the_command_is_taken_off_the_arguments_only_when_argparse_is_sure() -> None:
    assert command_of(["check", "p.yaml", "d.csv"]) == "check"
    assert command_of(["--debug", "validate", "p.yaml"]) == "validate"
    assert command_of(["--debug", "--debug", "metrics"]) == "metrics"
    for argv in (
        [],
        ["--help"],
        ["-h", "check"],
        ["--version", "check"],
        ["--deb", "check"],  # an abbreviation of --debug: argparse decides
        ["--debug=1", "check"],
        ["--", "check"],
        ["chek", "p.yaml"],
        ["CHECK"],
        ["--debug"],
    ):
        assert command_of(argv) is None, argv


@pytest.mark.parametrize(
    "argv",
    [[], ["--help"], ["--version"], ["nope"], ["--deb", "check", "-h"], ["--", "check"]],
)
def test_anything_else_is_parsed_by_every_subparser(
    argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    built = _record_builds(monkeypatch)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        main(argv, io.StringIO())
    assert built == list(COMMANDS)


def _record_builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    built: list[str] = []
    add_parser = argparse._SubParsersAction.add_parser

    def recording(self: Any, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        built.append(name)
        return add_parser(self, name, **kwargs)

    monkeypatch.setattr(argparse._SubParsersAction, "add_parser", recording)
    return built


def test_a_check_builds_only_the_check_subparser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "d.csv"
    data.write_text("y_true,y_pred,sex\n" + "1,1,F\n0,1,M\n1,0,F\n0,0,M\n" * 5)
    policy = tmp_path / "p.yaml"
    policy.write_text(
        "- control-id: dp\n  props:\n"
        "  - {name: metric_key, value: demographic_parity_diff}\n"
        "  - {name: threshold, value: '0.5'}\n  - {name: operator, value: '<'}\n"
        "  - {name: input.target, value: y_true}\n  - {name: input.prediction, value: y_pred}\n"
        "  - {name: input.dimension, value: sex}\n"
    )
    monkeypatch.chdir(tmp_path)  # no configuration file found
    built = _record_builds(monkeypatch)
    assert main(["check", str(policy), str(data)], io.StringIO()) in (0, 1)
    assert built == ["check"]
    built.clear()
    assert main(["validate", str(policy)], io.StringIO()) == 0
    assert built == ["validate"]
