"""``fairpolicy validate ar.json``: an OSCAL assessment-results document checked on its own
(issue 29), so an edited AR is caught without re-running the check.

What is checked, each mismatch one problem naming the resource or control, the prop and
both values:

- the NIST OSCAL 1.2.3 schema;
- every rlink with a hash: the file it names (relative to the AR's folder, or a ``file:``
  URI) exists and has that SHA-256 (the policy and its documents, the data, the results
  JSON, the imported plan); an ``http(s)`` link is named as not checked (no network);
- the imported plan, when the AR says it was verified against it: it reads as an
  assessment plan and its approved content still hashes to what the AR records;
- the results JSON the AR names (linked, or embedded base64), read back as fairpolicy
  reads it: the gate and exit code re-derived from its findings and settings by the one
  decision (``Results``), and every observation's measured value, status, gate effect,
  threshold and operator, every finding's state, the result's gate, exit code and pinned
  settings compared with it.

Output on ``stdout`` as ``fairpolicy validate`` writes it: ``OK  path  (...)`` or the
error paragraph.
"""

from __future__ import annotations

import base64
import hashlib
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from fairpolicy import gate_settings
from fairpolicy.errors import FairpolicyError, PolicyError, Problem
from fairpolicy.policy.schema import NS
from fairpolicy.results import Results

ROOT = "assessment-results"


class ResultsError(PolicyError):
    """Assessment results that do not check out (exit 2, as an invalid policy)."""

    title = "invalid assessment results"


def is_assessment_results(path: str) -> bool:
    """Whether ``path`` is an OSCAL assessment-results document (its root key)."""
    from fairpolicy.policy import oscal

    try:
        data, _ = oscal.read_document(Path(path))
    except FairpolicyError:
        return False
    return isinstance(data, Mapping) and list(data) == [ROOT]


def validate_ar(path: str, stdout: Any) -> bool:
    """Check the assessment results at ``path``; write the verdict; True when valid."""
    try:
        summary = check_ar(path)
    except FairpolicyError as exc:
        stdout.write(f"error: {exc.render()}\n")
        return False
    stdout.write(f"OK  {path}  ({summary})\n")
    return True


def _props(node: Mapping[str, Any]) -> dict[str, str]:
    return {p["name"]: p["value"] for p in node.get("props", []) if p.get("ns") == NS}


def _target(ar_path: Path, href: str) -> Path | None:
    """The local file an rlink names, or None for a remote URL."""
    if href.startswith("file:"):
        return Path(unquote(urlparse(href).path))
    if "://" in href:
        return None
    return (ar_path.parent / unquote(href)).resolve()


def check_ar(path: str) -> str:
    """The checks of the module docstring; returns a one-line summary. Raises
    PolicyError listing every problem."""
    from fairpolicy.oscal_schema import check_document
    from fairpolicy.policy import oscal

    p = Path(path)
    data, _ = oscal.read_document(p)
    if not isinstance(data, Mapping) or list(data) != [ROOT]:
        raise ResultsError("not an OSCAL assessment-results document.", file=path)
    check_document(dict(data), ROOT, path, error=ResultsError)
    body = data[ROOT]
    problems: list[Problem] = []
    notes: list[str] = []
    resources = body.get("back-matter", {}).get("resources", [])
    for res in resources:
        for link in res.get("rlinks", []):
            hashes = [h["value"] for h in link.get("hashes", []) if h["algorithm"] == "SHA-256"]
            if not hashes:
                continue
            target = _target(p, link["href"])
            title = res.get("title", res["uuid"])
            if target is None:
                notes.append(f"{link['href']} not checked (no network)")
                continue
            try:
                digest = hashlib.sha256(target.read_bytes()).hexdigest()
            except OSError as exc:
                problems.append(
                    Problem(
                        f"{title}: the file it links ({target}) cannot be read ({exc.strerror}).",
                        file=path,
                    )
                )
                continue
            if digest not in hashes:
                problems.append(
                    Problem(
                        f"{title}: the file {target} has the SHA-256 {digest}, and the "
                        f"assessment results record {hashes[0]}: it changed after the run.",
                        file=path,
                    )
                )
    problems += _plan_problems(p, body, resources)
    results = _results(p, resources)
    if results is None:
        notes.append("no results JSON to re-derive the verdict from")
    else:
        problems += _verdict_problems(body, results, path)
    if problems:
        raise ResultsError(problems, title="the assessment results do not check out")
    # the run's result (a monitoring run's per-window results follow it: not counted again)
    n = sum(len(r.get("observations", [])) for r in body.get("results", [])[:1])
    gate = _props(body["results"][0]).get("gate", "?") if body.get("results") else "?"
    extra = "; " + "; ".join(notes) if notes else ""
    return f"assessment results: {n} observation(s), gate {gate}, every hash recomputed{extra}"


def _plan_problems(p: Path, body: Mapping[str, Any], resources: list[Any]) -> list[Problem]:
    href = body.get("import-ap", {}).get("href", "")
    res = next((r for r in resources if f"#{r['uuid']}" == href), None)
    if res is None or _props(res).get("verified") != "true":
        return []
    target = _target(p, res["rlinks"][0]["href"])
    if target is None:
        return []
    from fairpolicy.plan import read_plan

    try:
        plan, _ = read_plan(str(target))
    except FairpolicyError as exc:
        return [Problem(f"the imported plan cannot be read: {exc.render()}", file=str(p))]
    recorded = _props(res).get("approved-content-sha256")
    computed = gate_settings.content_digest(plan)
    if recorded != computed:
        return [
            Problem(
                f"the imported plan's approved content hashes to {computed}, and the "
                f"assessment results record {recorded}.",
                file=str(p),
            )
        ]
    return []


def _results(p: Path, resources: list[Any]) -> Results | None:
    """The results JSON the AR names, read as ``fairpolicy export`` reads it."""
    from fairpolicy.results import load_results

    for res in resources:
        if "results-sha256" not in _props(res):
            continue
        for link in res.get("rlinks", []):
            target = _target(p, link["href"])
            if target is not None and target.is_file():
                return load_results(str(target))
        if "base64" in res:
            raw = base64.b64decode(res["base64"]["value"])
            with tempfile.TemporaryDirectory() as tmp:
                file = Path(tmp) / "results.json"
                file.write_bytes(raw)
                return load_results(str(file))
    return None


def _verdict_problems(body: Mapping[str, Any], results: Results, path: str) -> list[Problem]:
    """The AR's statements compared with the verdict re-derived from the results JSON."""
    from fairpolicy.formatters._oscal_common import num, threshold_text
    from fairpolicy.formatters.oscal import STATE

    problems: list[Problem] = []

    def differ(what: str, stated: str | None, derived: str | None, control: str | None) -> None:
        if stated != derived:
            problems.append(
                Problem(
                    f"{what} is {stated!r} in the assessment results and {derived!r} when "
                    "re-derived from the results JSON they name.",
                    file=path,
                    control=control,
                )
            )

    (result,) = body.get("results", [])[:1] or [{}]
    props = _props(result)
    differ("the gate", props.get("gate"), results.summary.gate, None)
    differ("the exit code", props.get("exit-code"), str(results.exit_code), None)
    for name, value in gate_settings.of_results(results).items():
        if f"setting.{name}" in props:
            differ(f"the setting {name}", props[f"setting.{name}"], value or "not given", None)
    by_id = {f.control_id: f for f in results.findings}
    for obs in result.get("observations", []):
        o = _props(obs)
        cid = o.get("control-id")
        f = by_id.get(cid or "")
        if f is None:
            problems.append(
                Problem(
                    f"observes control '{cid}', which the results JSON does not hold.", file=path
                )
            )
            continue
        value = None if f.value is None else num(f.value)
        differ("the measured value", o.get("measured-value"), value, cid)
        differ("the status", o.get("status"), f.status, cid)
        differ("the gate effect", o.get("gate-effect"), results.effect(f), cid)
        differ("the threshold", o.get("threshold"), threshold_text(f), cid)
        differ("the operator", o.get("operator"), f.operator, cid)
    for finding in result.get("findings", []):
        x = _props(finding)
        cid = x.get("control-id")
        f = by_id.get(cid or "")
        if f is None:
            continue
        state = finding.get("target", {}).get("status", {}).get("state")
        differ("the finding's state", state, STATE[f.status][0], cid)
        differ("the finding's status", x.get("status"), f.status, cid)
    return problems
