"""``fairpolicy completion bash|zsh|fish``: scripts generated from the parser (issue 15).

Every subcommand and every option of each appears in each shell's script (so a new flag
can never be missing), the bash script passes ``bash -n`` and completes subcommands,
options and option choices when bash runs it the way programmable completion does; zsh's
and fish's pass their shells' syntax check where those shells are installed.
"""

from __future__ import annotations

import io
import shutil
import subprocess
from pathlib import Path

import pytest

from fairpolicy.cli import _parser, main
from fairpolicy.completion import SHELLS, commands


def _script(shell: str) -> str:
    out = io.StringIO()
    assert main(["completion", shell], out) == 0
    return out.getvalue()


@pytest.mark.parametrize("shell", SHELLS)
def test_every_subcommand_and_option_is_in_the_script(shell: str) -> None:
    text = _script(shell)
    cmds = commands(_parser())
    assert {c.name for c in cmds} >= {"check", "validate", "export", "metrics", "completion"}
    for c in cmds:
        assert c.name in text
        for opt in c.options:
            word = opt if shell != "fish" else (f"-l {opt[2:]}" if opt[:2] == "--" else opt[1:])
            assert word in text, (shell, c.name, opt)


def _complete(tmp: Path, *words: str) -> list[str]:
    script = tmp / "fp.bash"
    script.write_text(_script("bash"))
    line = " ".join(f"'{w}'" for w in words)
    program = (
        f"source {script}\n"
        f"COMP_WORDS=({line}); COMP_CWORD={len(words) - 1}\n"
        "_fairpolicy\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    done = subprocess.run(["bash", "-c", program], capture_output=True, text=True, cwd=tmp)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_bash_completes_commands_options_and_choices(tmp_path: Path) -> None:
    assert subprocess.run(["bash", "-n", "-c", _script("bash")]).returncode == 0
    assert _complete(tmp_path, "fairpolicy", "che") == ["check"]
    assert "--engine" in _complete(tmp_path, "fairpolicy", "check", "--eng")
    assert _complete(tmp_path, "fairpolicy", "check", "--engine", "d") == ["duckdb"]
    assert _complete(tmp_path, "fairpolicy", "completion", "f") == ["fish"]
    (tmp_path / "results.json").write_text("{}")
    assert _complete(tmp_path, "fairpolicy", "export", "oscal", "res") == ["results.json"]
    (tmp_path / "policy.yaml").write_text("[]\n")
    assert "policy.yaml" in _complete(tmp_path, "fairpolicy", "check", "pol")


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_other_shells_parse_their_script(shell: str, tmp_path: Path) -> None:
    exe = shutil.which(shell)
    if exe is None:
        pytest.skip(f"{shell} is not installed")
    path = tmp_path / f"fp.{shell}"
    path.write_text(_script(shell))
    assert subprocess.run([exe, "-n", str(path)]).returncode == 0


def test_an_unknown_shell_is_a_usage_error() -> None:
    assert main(["completion", "powershell"], io.StringIO()) == 2
