"""``--subject`` and ``--meta`` reach every report (issue 15).

The assessed system's title and the team's references (git SHA, ticket, reviewer) are
recorded in the results and shown by every format — JSON, HTML, Markdown, JUnit, SARIF,
text, GitHub, OSCAL (valid against NIST's schema) — from the CLI, the Python API and an
export of a stored JSON. Without them every report is byte-identical to before (the golden
files). Bad values are exit 2 naming the flag.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

import fairpolicy
from fairpolicy.cli import main
from fairpolicy.errors import UsageError
from fairpolicy.oscal_schema import check_document
from tests.helpers import balanced_csv, control, write_policy

SUBJECT = "credit model v4.2 «beta»"
META = {"git_sha": "1a2b3c4d", "ticket": "ML-42", "reviewer": "Ada <ada@example.org>"}
FORMATS = ("json", "html", "markdown", "junit", "sarif", "text", "github", "oscal")


def _args(tmp: Path) -> list[str]:
    data = balanced_csv(tmp)
    policy = write_policy(
        tmp, control("dp", threshold="0.3"), control("eo", "equal_opportunity_diff")
    )
    out = [f"{fmt}={tmp / ('r.' + fmt)}" for fmt in FORMATS]
    meta = [x for k, v in META.items() for x in ("--meta", f"{k}={v}")]
    return [
        "check",
        str(policy),
        str(data),
        "--subject",
        SUBJECT,
        *meta,
        *[x for o in out for x in ("-o", o)],
    ]


def _escaped(text: str, value: str) -> bool:
    """``value`` appears in ``text`` as written or escaped (HTML, XML, JSON)."""
    import html

    forms = {value, html.escape(value), html.escape(value, quote=False), json.dumps(value)[1:-1]}
    forms.add(value.replace("<", "\\<").replace(">", "\\>"))  # markdown escaping
    return any(f in text for f in forms)


def test_every_format_shows_subject_and_meta(tmp_path: Path) -> None:
    assert main(_args(tmp_path), io.StringIO()) in (0, 1)
    for fmt in FORMATS:
        text = (tmp_path / f"r.{fmt}").read_text()
        assert _escaped(text, SUBJECT), fmt
        for key, value in META.items():
            assert key in text and _escaped(text, value), (fmt, key)
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["subject"] == SUBJECT and doc["meta"] == META
    ar = json.loads((tmp_path / "r.oscal").read_text())
    check_document(ar, "assessment-results", "r.oscal")


def test_export_of_the_json_keeps_them(tmp_path: Path) -> None:
    assert main(_args(tmp_path), io.StringIO()) in (0, 1)
    results = fairpolicy.Results.model_validate_json((tmp_path / "r.json").read_text())
    assert results.subject == SUBJECT and results.meta == META
    for fmt in ("markdown", "sarif", "junit", "html"):
        assert _escaped(results.render(fmt), SUBJECT), fmt


def test_python_api_and_without_them_nothing_is_added(tmp_path: Path) -> None:
    data = balanced_csv(tmp_path)
    policy = write_policy(tmp_path, control("dp", threshold="0.3"))
    plain = fairpolicy.check(str(policy), str(data), deterministic=True)
    tagged = fairpolicy.check(
        str(policy), str(data), deterministic=True, subject=SUBJECT, meta=META
    )
    assert "subject" not in json.loads(plain.to_json()) and "meta" not in json.loads(
        plain.to_json()
    )
    assert tagged.subject == SUBJECT and tagged.meta == META
    assert plain.render("text") in tagged.render("text")  # one line added above the table
    assert tagged.render("text").splitlines()[0].startswith(f"subject: {SUBJECT}")


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--meta", "ticket"], "--meta expects KEY=VALUE"),
        (["--meta", "bad key=1"], "the key must start with a letter"),
        (["--meta", "a=1", "--meta", "a=2"], "gives 'a' twice"),
        (["--meta", "a="], "one non-empty line"),
        (["--subject", "  "], "--subject needs one non-empty line"),
        (["--subject", "model \x1b[31mred"], "without control characters"),
        (["--meta", "k=a\tb"], "without control characters"),
    ],
)
def test_bad_values_are_exit_2_naming_the_flag(
    tmp_path: Path, extra: list[str], fragment: str
) -> None:
    data = balanced_csv(tmp_path)
    policy = write_policy(tmp_path, control("dp", threshold="0.3"))
    done = subprocess.run(
        [sys.executable, "-m", "fairpolicy", "check", str(policy), str(data), *extra],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and fragment in done.stderr and "Traceback" not in done.stderr


def test_api_refuses_a_bad_key(tmp_path: Path) -> None:
    data = balanced_csv(tmp_path)
    policy = write_policy(tmp_path, control("dp", threshold="0.3"))
    with pytest.raises(UsageError, match="the key must start"):
        fairpolicy.check(str(policy), str(data), meta={"no spaces": "x"})
