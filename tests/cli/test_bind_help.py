"""``check --help`` names every role ``--bind`` accepts (issue 16: the help listed four)."""

from __future__ import annotations

import contextlib
import io

from fairpolicy.cli import main
from fairpolicy.policy.schema import ROLES


def test_bind_help_names_every_role() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["check", "--help"], out) == 0
    text = " ".join(out.getvalue().split())
    start = text.index("--bind [CONTROL:]ROLE=COLUMN bind a role")
    shown = text[start : start + 300]
    for role in ROLES:
        assert role in shown, role
