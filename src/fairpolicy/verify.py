"""``fairpolicy verify AR``: the auditor's one command (issue 29).

It trusts nothing fairpolicy wrote about the verdict. From the assessment results (AR) it
walks the chain AR → assessment plan → system security plan → profile → catalog and the
data, recomputes the SHA-256 of every file a document links with a hash (the project's
streaming :func:`~fairpolicy.data.sources.csv_guard.file_sha256`), and re-derives the
verdict: :func:`fairpolicy.runner.check` runs again on the hashed policy and data with the
settings the AR records as data (``setting.*``, ``rerun.bind``/``rerun.rename``, the
baseline resource), and every observation (value, status, gate effect, threshold,
interval ends, group sizes and values …), finding, risk, the gate and the exit code the
AR states is compared with the re-derived ones. fairpolicy's results JSON is never read:
the chain verifies with it deleted.

Imported documents are read with the policy reader (YAML or JSON, regular files only,
size-limited); no network is ever used — a link that is not a local file cannot be
checked, so nothing is verified (exit 2).

Exit codes: 0 every hash and every re-derived statement matches; 1 a mismatch (each one
named on its own ``MISMATCH`` line); 2 something cannot be read (the AR, a linked file, a
remote link, a re-run that cannot evaluate). Each setting that loosened the gate
(``--fail-on never``, ``--inconclusive pass|warn``) is printed on a ``LOOSENED`` line, so
"VERIFIED" never hides a loosening.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import unquote, urlparse

from fairpolicy.errors import FairpolicyError, Problem
from fairpolicy.policy.schema import NS

ROOT = "assessment-results"
#: the most bytes of an AR read (it may embed the results JSON)
MAX_AR_BYTES = 64 << 20

#: props that name where a file was, not what it held (its hash is checked instead), or
#: how the run was set up without changing a verdict
_RESULT_SKIP = frozenset(
    {
        "policy-path", "data-path", "engine", "config-file", "config-sha256", "config-loosens",
        "state-path",
    }
)  # fmt: skip
_OBS_SKIP = frozenset({"control-source"})
_SOURCE = "max-regression-source"
#: every setting :func:`_rerun` passes on to ``runner.check``
_RERUN = frozenset(
    {
        "fail-on", "inconclusive", "subject", "seed", "bind", "rename", "positive-label",
        "num-classes", "bootstrap", "ci-level", "ci-method", "resample", "decision",
        "p-value", "bonferroni", "max-regression", "score-decimals",
        "window", "window-tz", "window-gate", "min-window-rows", "pool-windows", "reference",
    }
)  # fmt: skip


class VerifyError(FairpolicyError):
    """The assessment results, or a file they link, cannot be read (exit 2)."""

    title = "the assessment results cannot be verified"


@dataclasses.dataclass
class Report:
    """What :func:`verify` found: files hashed, mismatches, what could not be read."""

    #: each file whose SHA-256 matched → how it was reached
    hashed: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    mismatches: list[str] = dataclasses.field(default_factory=list)
    unreadable: list[str] = dataclasses.field(default_factory=list)
    loosened: list[str] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)
    controls: int = 0
    gate: str | None = None

    @property
    def code(self) -> int:
        return 2 if self.unreadable else 1 if self.mismatches else 0


def _ns(node: Mapping[str, Any]) -> list[tuple[str, str]]:
    return [
        (str(p.get("name")), str(p.get("value")))
        for p in node.get("props", []) or []
        if isinstance(p, Mapping) and p.get("ns") == NS
    ]


def _prop(node: Mapping[str, Any], name: str) -> str | None:
    return next((v for n, v in _ns(node) if n == name), None)


def _multi(node: Mapping[str, Any], skip: frozenset[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name, value in _ns(node):
        if name not in skip:
            out.setdefault(name, []).append(value)
    return {k: sorted(v) for k, v in out.items()}


def _shown(values: list[str] | None) -> str:
    if not values:
        return "absent"
    return repr(values[0]) if len(values) == 1 else "[" + ", ".join(map(repr, values)) + "]"


# ---------------------------------------------------------------- reading


def read_ar(path: str) -> Mapping[str, Any]:
    """The body of the assessment results at ``path``; VerifyError naming "the
    assessment results" when the file is missing, not a regular file, too large, not
    UTF-8, not YAML/JSON or not an assessment-results document."""
    from fairpolicy.files import open_regular
    from fairpolicy.policy import oscal

    what = "assessment results"
    p = Path(path)
    try:
        with open_regular(p, VerifyError, what) as fh:
            data = fh.read(MAX_AR_BYTES + 1)
    except FileNotFoundError:
        raise VerifyError(
            Problem("the assessment results file does not exist.", file=path)
        ) from None
    except OSError as exc:
        raise VerifyError(
            Problem(f"the assessment results cannot be read: {exc.strerror}.", file=path)
        ) from None
    except ValueError:
        raise VerifyError(Problem("not a valid path (it holds a NUL byte).", file=path)) from None
    if len(data) > MAX_AR_BYTES:
        raise VerifyError(
            Problem(f"the assessment results are larger than {MAX_AR_BYTES >> 20} MiB.", file=path)
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise VerifyError(
            Problem(
                f"the assessment results are not UTF-8 text (bad byte at offset {exc.start}).",
                file=path,
            )
        ) from None
    try:
        doc = oscal.parse_text(text, path, json_fallback=p.suffix.lower() == ".json")
    except FairpolicyError as exc:
        raise VerifyError(
            Problem(f"the assessment results are not valid YAML/JSON: {exc.render()}", file=path)
        ) from None
    if not isinstance(doc, Mapping) or list(doc) != [ROOT] or not isinstance(doc[ROOT], Mapping):
        raise VerifyError(
            Problem(
                "not OSCAL assessment results (the root must be 'assessment-results').",
                file=path,
                hint="pass the file `fairpolicy check -o oscal=ar.json` wrote.",
            )
        )
    body: Mapping[str, Any] = doc[ROOT]
    return body


class _Walk:
    """One verification: the report, and the files hashed so far."""

    def __init__(self, ar: Path) -> None:
        self.ar = ar
        self.report = Report()
        #: every file a document links with a SHA-256 (matched or not)
        self.hashed: set[Path] = set()

    def mismatch(self, text: str) -> None:
        self.report.mismatches.append(text)

    def unreadable(self, text: str) -> None:
        self.report.unreadable.append(text)

    def target(self, base: Path, href: str, what: str) -> Path | None:
        """The local file ``href`` (relative to the folder of ``base``) names; None (and
        unreadable) for a remote link: no network is ever used."""
        if href.startswith("file:"):
            return Path(unquote(urlparse(href).path)).resolve()
        if "://" in href:
            self.unreadable(
                f"{what}: the link {href} is not a local file; verify reads no network, so "
                "it cannot be checked (download it and point the link at the copy)."
            )
            return None
        return (base.parent / unquote(href)).resolve()

    def hash_links(self, doc: Path, body: Mapping[str, Any], name: str) -> dict[str, Path]:
        """Every rlink with a SHA-256 in ``body``'s back-matter recomputed; resource uuid
        → the file it links (read, whether its hash matched or not)."""
        from fairpolicy.data.sources.csv_guard import file_sha256
        from fairpolicy.files import require_regular

        found: dict[str, Path] = {}
        for res in body.get("back-matter", {}).get("resources", []) or []:
            title = str(res.get("title", res.get("uuid")))
            for link in res.get("rlinks", []) or []:
                hashes = [
                    str(h.get("value")).lower()
                    for h in link.get("hashes", []) or []
                    if str(h.get("algorithm", "")).upper() == "SHA-256"
                ]
                if not hashes:
                    continue
                what = f"{name}, resource '{title}'"
                target = self.target(doc, str(link.get("href", "")), what)
                if target is None:
                    continue
                evidence = _prop(res, "results-sha256") is not None
                if evidence and not target.exists():
                    # fairpolicy's results JSON: never needed, the verdict is re-derived
                    self.report.notes.append(
                        f"the results JSON {target.name} is not there (not needed: the "
                        "verdict is re-derived from the data)"
                    )
                    continue
                if not target.exists() and any(ch in target.name for ch in "*?["):
                    self.unreadable(
                        f"{what}: the run read a glob of files ({_rel(target)}); verify "
                        "re-derives runs on one data file only (the glob's hash covers "
                        "several). Check one file (or a single Parquet file) to verify it."
                    )
                    continue
                try:
                    require_regular(target, VerifyError, what)
                    digest = file_sha256(target)
                except VerifyError as exc:
                    self.unreadable(f"{what}: {exc.render()}")
                    continue
                except OSError as exc:
                    self.unreadable(
                        f"{what}: the file it links ({target}) cannot be read ({exc.strerror})."
                    )
                    continue
                found[str(res.get("uuid"))] = target  # re-derived from, even when edited
                self.hashed.add(target)
                if digest not in hashes:
                    self.mismatch(
                        f"{what}: {_rel(target)} has the SHA-256 {digest}, and {name} record "
                        f"{hashes[0]}: the file changed."
                    )
                    continue
                self.report.hashed.setdefault(_rel(target), []).append(f"linked from {name}")
        return found

    def read(self, path: Path, root: str, what: str) -> Mapping[str, Any] | None:
        """An imported OSCAL document read with the policy reader; None (unreadable)."""
        from fairpolicy.policy import oscal

        try:
            data, _ = oscal.read_document(path)
        except FairpolicyError as exc:
            self.unreadable(f"{what} ({path}) cannot be read: {exc.render()}")
            return None
        if not isinstance(data, Mapping) or list(data) != [root]:
            self.mismatch(f"{what} ({path}) is not an OSCAL {root} document.")
            return None
        body: Mapping[str, Any] = data[root]
        return body


def _rel(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:  # pragma: no cover - another drive (Windows)
        return str(path)


# ---------------------------------------------------------------- the verification


def verify(path: str) -> Report:
    """Verify the assessment results at ``path`` (module docstring). Raises VerifyError
    when the AR itself cannot be read."""
    body = read_ar(path)
    walk = _Walk(Path(path).resolve())
    results = body.get("results") or []
    # one result per run; a monitoring run's is followed by one per window (compared too)
    if (
        not results
        or not all(isinstance(r, Mapping) for r in results)
        or _prop(results[0], "result-kind") == "window"
    ):
        raise VerifyError(
            Problem(
                f"the assessment results hold {len(results)} result(s) and no run's result "
                "first; fairpolicy writes one per run (a monitoring run's followed by one "
                "per window).",
                file=path,
            )
        )
    result: Mapping[str, Any] = results[0]
    linked = walk.hash_links(walk.ar, body, "the assessment results")
    resources = {str(r.get("uuid")): r for r in body.get("back-matter", {}).get("resources", [])}

    def kind_path(test: str) -> tuple[Mapping[str, Any], Path | None] | None:
        for uid, res in resources.items():
            if _prop(res, test) is not None:
                return res, linked.get(uid)
        return None

    policy = kind_path("policy-sha256")
    data = next(
        (
            (r, linked.get(u))
            for u, r in resources.items()
            if _prop(r, "data-sha256") is not None and _prop(r, "document-kind") is None
        ),
        None,
    )
    plan = _walk_plan(walk, body, resources, linked)
    known = len(walk.report.unreadable)  # a link already named unreadable is not repeated
    if (policy is None or policy[1] is None) and not known:
        walk.unreadable("the assessment results link no policy file with its SHA-256.")
    if (data is None or data[1] is None) and not known:
        walk.unreadable(
            "the assessment results link no data file with its SHA-256 (data passed in "
            "memory cannot be re-derived)."
        )
    if walk.report.unreadable or policy is None or data is None:
        return walk.report
    policy_path, data_path = policy[1], data[1]
    assert policy_path is not None and data_path is not None
    if plan is not None:
        _walk_ssp(walk, plan, policy_path, _prop(policy[0], "policy-form"), resources, linked)
    baseline = next(
        (
            linked.get(u)
            for u, r in resources.items()
            if _prop(r, "document-kind") == "baseline-results"
        ),
        None,
    )
    rerun = _rerun(walk, result, policy_path, data_path, baseline, linked)
    if rerun is None:
        return walk.report
    _compare(walk, body, results, rerun)
    if plan is not None:
        _plan_against_rerun(walk, plan, rerun)
    from fairpolicy import gate_settings

    walk.report.loosened = [reason for _, reason in gate_settings.loosening(rerun)]
    walk.report.gate = f"{rerun.summary.gate} (exit {rerun.exit_code})"
    return walk.report


@dataclasses.dataclass
class _Plan:
    path: Path
    body: Mapping[str, Any]
    resource: Mapping[str, Any]
    verified: bool


def _walk_plan(
    walk: _Walk,
    body: Mapping[str, Any],
    resources: Mapping[str, Mapping[str, Any]],
    linked: Mapping[str, Path],
) -> _Plan | None:
    """The plan ``import-ap`` names: its hash (done), its approval and content."""
    from fairpolicy import gate_settings
    from fairpolicy.plan import read_plan

    href = str(body.get("import-ap", {}).get("href", ""))
    if not href.startswith("#"):
        walk.mismatch(
            f"import-ap links {href!r} directly: fairpolicy links a back-matter resource "
            "carrying the plan's SHA-256, so this plan is not pinned."
        )
        return None
    res = resources.get(href[1:])
    if res is None:
        walk.mismatch(f"import-ap names the resource {href}, which the back-matter does not hold.")
        return None
    if _prop(res, "document-kind") != "assessment-plan":
        return None  # no plan: the policy is the plan (its resource is hashed)
    path = linked.get(str(res.get("uuid")))
    if path is None:
        if not walk.report.unreadable and not walk.report.mismatches:
            walk.mismatch("the imported assessment plan is linked without a SHA-256.")
        return None
    try:
        plan_body, sha = read_plan(str(path))
    except FairpolicyError as exc:
        walk.unreadable(f"the imported assessment plan cannot be read: {exc.render()}")
        return None
    recorded_sha = _prop(res, "plan-sha256")
    if recorded_sha is not None and recorded_sha != sha:
        walk.mismatch(
            f"the plan resource records plan-sha256 {recorded_sha}, and its link's hash and "
            f"the file say {sha}."
        )
    verified = _prop(res, "verified") == "true"
    if verified:
        uid = _prop(res, "plan-uuid")
        if uid is not None and uid != str(plan_body.get("uuid")):
            walk.mismatch(
                f"the assessment results import the plan {uid}, and the plan file is the "
                f"plan {plan_body.get('uuid')}: the plan was swapped."
            )
        computed = gate_settings.content_digest(plan_body)
        approved = gate_settings.approval(plan_body).get(gate_settings.DIGEST)
        if approved != computed:
            walk.mismatch(
                f"the plan's approved content hashes to {computed}, and its approval "
                f"records {approved}: the plan was edited after it was approved."
            )
        stated = _prop(res, gate_settings.DIGEST)
        if stated is not None and stated != computed:
            walk.mismatch(
                f"the assessment results record the approved content SHA-256 {stated}, and "
                f"the plan's content hashes to {computed}."
            )
    walk.hash_links(path, plan_body, f"the assessment plan {path.name}")
    return _Plan(path, plan_body, res, verified)


def _walk_ssp(
    walk: _Walk,
    plan: _Plan,
    policy: Path,
    form: str | None,
    resources: Mapping[str, Mapping[str, Any]],
    linked: Mapping[str, Path],
) -> None:
    """Plan → SSP → profile → catalog: each read; a generated profile or catalog (the
    simple form's, written beside the SSP) compared with the one the hashed policy
    generates; any other one must be pinned by a hash."""
    href = str(plan.body.get("import-ssp", {}).get("href", ""))
    if not href or href.startswith("#"):
        return  # the system described in the plan's back-matter (embedded)
    ssp_path = walk.target(plan.path, href, "the plan's import-ssp")
    if ssp_path is None:
        return
    if ssp_path not in walk.hashed:
        walk.mismatch(f"the SSP {ssp_path} the plan imports is not pinned by a SHA-256.")
    ssp = walk.read(ssp_path, "system-security-plan", "the system security plan")
    if ssp is None:
        return
    walk.hash_links(ssp_path, ssp, f"the SSP {ssp_path.name}")
    team = any(
        _prop(r, "document-kind") == "system-security-plan" and linked.get(u) == ssp_path
        for u, r in resources.items()
    )
    generated: dict[Path, str] = {}
    from fairpolicy.ssp import profile_chain

    try:
        chain = profile_chain(str(policy), form, str(ssp_path))
    except FairpolicyError as exc:
        if not team:
            walk.unreadable(f"the SSP's profile cannot be regenerated: {exc.render()}")
            return
    else:
        generated = {Path(p).resolve(): text for p, text in chain.documents}
        expected = (ssp_path.parent / chain.profile_href).resolve()
        phref = str(ssp.get("import-profile", {}).get("href", ""))
        prof = walk.target(ssp_path, phref, "the SSP's import-profile")
        if not team and prof is not None and prof != expected:
            walk.mismatch(
                f"the SSP imports the profile {prof}, and the profile of the hashed policy "
                f"is {expected}."
            )
    todo = [(ssp_path, str(ssp.get("import-profile", {}).get("href", "")), "profile")]
    seen: set[Path] = set()
    while todo:
        base, ref, root = todo.pop()
        doc = walk.target(base, ref, f"the {root} import of {base.name}")
        if doc is None or doc in seen:
            continue
        seen.add(doc)
        if doc in generated:
            try:
                same = doc.read_bytes() == generated[doc].encode()
            except OSError as exc:
                walk.unreadable(f"the generated {root} {doc} cannot be read ({exc.strerror}).")
                continue
            if not same:
                walk.mismatch(
                    f"the generated {root} {doc} differs from the one the hashed policy "
                    "generates: it was edited."
                )
                continue
            walk.report.hashed.setdefault(_rel(doc), []).append(
                "regenerated from the hashed policy"
            )
        elif doc not in walk.hashed:
            if not team:
                walk.mismatch(f"the {root} {doc} the chain imports is not pinned by a SHA-256.")
                continue
            # the team's own SSP imports it: no hash covers it, and the policy (hashed)
            # shaped the verdict, not this document
            walk.report.notes.append(
                f"the {root} {_rel(doc)} the team's SSP imports is pinned by no hash (it "
                "did not shape the verdict: the hashed policy did)"
            )
        node = walk.read(doc, root, f"the {root}")
        if node is None:
            continue
        walk.hash_links(doc, node, f"the {root} {doc.name}")
        if root == "profile":
            todo += [(doc, str(i.get("href", "")), "catalog") for i in node.get("imports", [])]


def _settings(result: Mapping[str, Any]) -> dict[str, str | None]:
    from fairpolicy import gate_settings

    out: dict[str, str | None] = {}
    for name in gate_settings.SETTINGS:
        value = _prop(result, f"setting.{name}")
        out[name] = None if value in (None, "not given") else value
    return out


def _pairs(result: Mapping[str, Any], kind: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in _ns(result):
        if name == f"rerun.{kind}":
            key, column = json.loads(value)
            out[str(key)] = str(column)
    return out


def _rerun(
    walk: _Walk,
    result: Mapping[str, Any],
    policy: Path,
    data: Path,
    baseline: Path | None,
    linked: Mapping[str, Path],
) -> Any:
    """The verdict re-derived: ``runner.check`` on the hashed files with the recorded
    settings; None (unreadable) when the AR does not record them or the run cannot
    evaluate."""
    from fairpolicy.runner import check as _check

    s = _settings(result)
    unknown = sorted(n for n in s if n not in _RERUN and s[n] is not None)
    if unknown:  # a setting added to gate_settings that this re-run does not pass on
        walk.unreadable(
            f"the run set {', '.join(unknown)}, which verify cannot re-run yet: the verdict "
            "is not re-derived (a verify that ignored it could pass a changed verdict)."
        )
        return None
    try:
        bind, rename = _pairs(result, "bind"), _pairs(result, "rename")
    except (ValueError, TypeError):
        walk.unreadable("a rerun.bind/rerun.rename prop is not a JSON pair [KEY, COLUMN].")
        return None
    for name, got in (("bind", bind), ("rename", rename)):
        if s[name] is not None and not got:
            walk.unreadable(
                f"the assessment results record --{name} '{s[name]}' but not its items "
                f"(rerun.{name}): written by an older fairpolicy, the run cannot be repeated "
                "exactly. Re-run the check with this version."
            )
            return None
    compared = s["max-regression"] is not None or any(
        n == "baseline-results-sha256" for o in result.get("observations", []) for n, _ in _ns(o)
    )
    if compared and baseline is None:
        walk.unreadable(
            "the run compared with baseline results, and the assessment results link no "
            "baseline results file with its SHA-256 (written by an older fairpolicy, or the "
            "baseline was passed in memory): the comparison cannot be re-derived."
        )
        return None

    def num(name: str, kind: type) -> Any:
        value = s[name]
        return None if value is None else kind(value)

    state = _state(walk, result)
    if state is False:
        return None
    engine = _prop(result, "engine")
    # where the run's δ came from only labels the comparison (it changes no verdict)
    sources = {v for o in result.get("observations", []) for n, v in _ns(o) if n == _SOURCE}
    source = next((x for x in ("flag", "config", "api") if x in sources), "api")
    try:
        with contextlib.ExitStack() as stack:
            fresh = None
            if state:  # a new state, as the run's was (removed after the re-run)
                folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="fp-verify-"))
                fresh = os.path.join(folder, "state")
            return _check(
                str(policy),
                str(data),
                bind=bind or None,
                rename=rename or None,
                num_classes=num("num-classes", int),
                inconclusive=s["inconclusive"] or "fail",  # type: ignore[arg-type]
                fail_on=s["fail-on"] or "error",  # type: ignore[arg-type]
                # dated as the run was (and no note on an undated run)
                timestamp=str(result["start"]) if result.get("start") else None,
                bootstrap=num("bootstrap", int),
                ci_level=num("ci-level", float),
                ci_method=s["ci-method"],
                resample=s["resample"],
                decision=s["decision"],
                p_value=num("p-value", int),
                bonferroni=None if s["bonferroni"] is None else s["bonferroni"] == "true",
                seed=num("seed", int),
                engine=engine if engine in ("embedded", "duckdb") else "auto",
                score_decimals=num("score-decimals", int),
                allow_paths=sorted({str(p.parent) for p in linked.values()}),
                baseline=None if baseline is None else str(baseline),
                max_regression=s["max-regression"],
                max_regression_source=source,  # type: ignore[arg-type]
                allow_policy_change=True,
                subject=s["subject"],
                positive_label=s["positive-label"],
                window=s["window"],
                window_tz=s["window-tz"],
                window_gate=s["window-gate"],
                min_window_rows=num("min-window-rows", int),
                pool_windows=s["pool-windows"] == "true",
                reference=s["reference"],
                state=fresh,
            )
    except FairpolicyError as exc:
        walk.unreadable(
            "the verdict cannot be re-derived: the check on the hashed policy and data with "
            f"the recorded settings stops with: {exc.render()}"
        )
        return None


def _state(walk: _Walk, result: Mapping[str, Any]) -> bool | None:
    """``--state`` (issue 30): True when the run's state held only its own batch (its
    windows came from the hashed data alone: the re-run writes a new state, which must
    have the recorded SHA-256), None without ``--state``, False (named unreadable) when the
    state held earlier batches: the hashed data is then only the new rows, and the state
    the run started from is gone (the run overwrote it)."""
    if _prop(result, "state-sha256") is None:
        return None
    batches = _prop(result, "state-batches")
    if batches != "1" or _prop(result, "state-sha256-before") is not None:
        walk.unreadable(
            f"the run added its rows to a --state file that held earlier rows (now "
            f"{batches} batch(es); SHA-256 before the run "
            f"{_prop(result, 'state-sha256-before') or 'not recorded'}): the hashed data is "
            "only the new rows, and the state the run started from was overwritten by it, so "
            "the windows cannot be re-derived. Verify the assessment results of a run over "
            "all the data with a new state (equal to the incremental run, bit for bit)."
        )
        return False
    return True


def _rerendered(rerun: Any) -> list[Mapping[str, Any]]:
    """The results the OSCAL writer writes for the re-run (the same code wrote the AR):
    the run's, then one per window of a monitoring run."""
    from fairpolicy.formatters import RenderOptions
    from fairpolicy.formatters.oscal import results_of

    docs: list[Mapping[str, Any]] = json.loads(json.dumps(results_of(rerun, RenderOptions())))
    return docs


def _compare(
    walk: _Walk, body: Mapping[str, Any], results: list[Mapping[str, Any]], rerun: Any
) -> None:
    """Every statement of the AR's results compared with the re-derived ones: the run's
    result, and each window's of a monitoring run (by its label)."""
    derived, *windows = _rerendered(rerun)
    result = results[0]
    _compare_result(walk, result, derived, "the result", "")
    stated = {str(_prop(w, "window-label")): w for w in results[1:]}
    again = {str(_prop(w, "window-label")): w for w in windows}
    if len(stated) != len(results) - 1:
        walk.mismatch("the assessment results hold two results of the same window.")
    for label in sorted(set(stated) | set(again)):
        if label not in again:
            walk.mismatch(f"the assessment results hold a result of window {label}; the "
                          "re-derived run has no such window.")  # fmt: skip
        elif label not in stated:
            walk.mismatch(f"the result of window {label} is missing from the assessment "
                          "results.")  # fmt: skip
        else:
            where = f"window {label}"
            _compare_result(walk, stated[label], again[label], f"{where}'s result", f"{where}, ")
            for what in ("start", "end"):
                if stated[label].get(what) != again[label].get(what):
                    walk.mismatch(
                        f"{where}: the result's {what} is {stated[label].get(what)!r} in the "
                        f"assessment results and {again[label].get(what)!r} re-derived."
                    )
    walk.report.controls = len(derived.get("observations", []))
    stated_log = [_multi(e, frozenset()) for e in body_log(result)]
    for entry in stated_log:
        for name, value in (("gate", rerun.summary.gate), ("exit-code", str(rerun.exit_code))):
            if name in entry and entry[name] != [value]:
                walk.mismatch(
                    f"the assessment log: {name} is {_shown(entry[name])} in the assessment "
                    f"results and {value!r} re-derived."
                )


def _compare_result(
    walk: _Walk,
    result: Mapping[str, Any],
    derived: Mapping[str, Any],
    name: str,
    prefix: str,
) -> None:
    """One result's props, observations, findings, risks and reviewed controls compared
    with the re-derived result's; ``prefix`` starts every line about a control."""

    def props(
        where: str, stated: Mapping[str, Any], again: Mapping[str, Any], skip: frozenset[str]
    ) -> None:
        a, b = _multi(stated, skip), _multi(again, skip)
        for name in sorted(set(a) | set(b)):
            if a.get(name) != b.get(name):
                walk.mismatch(
                    f"{where}: {name} is {_shown(a.get(name))} in the assessment results and "
                    f"{_shown(b.get(name))} re-derived."
                )

    props(name, result, derived, _RESULT_SKIP)

    def by_control(items: list[Any]) -> dict[str, list[Mapping[str, Any]]]:
        out: dict[str, list[Mapping[str, Any]]] = {}
        for item in items or []:
            out.setdefault(str(_prop(item, "control-id")), []).append(item)
        return out

    for kind, skip in (("observations", _OBS_SKIP), ("findings", _OBS_SKIP), ("risks", _OBS_SKIP)):
        stated, again = by_control(result.get(kind, [])), by_control(derived.get(kind, []))
        noun = kind[:-1]
        for cid in sorted(set(stated) | set(again)):
            s, d = stated.get(cid, []), again.get(cid, [])
            if len(s) != len(d):
                walk.mismatch(
                    f"{prefix}control '{cid}': {len(s)} {noun}(s) in the assessment results "
                    f"and {len(d)} re-derived."
                )
                continue
            for x, y in zip(s, d, strict=True):
                where = f"{prefix}control '{cid}', {noun}"
                props(where, x, y, skip)
                for what, path in _FIELDS[kind]:
                    sx, sy = _at(x, path), _at(y, path)
                    if sx != sy:
                        walk.mismatch(
                            f"{where}: {what} is {sx!r} in the assessment results and "
                            f"{sy!r} re-derived."
                        )
    reviewed = ("reviewed-controls",)
    if _selected(_at(result, reviewed)) != _selected(_at(derived, reviewed)):
        walk.mismatch(
            f"{prefix}the reviewed controls are {_selected(_at(result, reviewed))} in the "
            f"assessment results and {_selected(_at(derived, reviewed))} re-derived."
        )


#: the statements of each finding and risk that are not props: (what, where in the node)
_FIELDS: dict[str, tuple[tuple[str, tuple[str | int, ...]], ...]] = {
    "observations": (),
    "findings": (
        ("the target's status state", ("target", "status", "state")),
        ("the target's status reason", ("target", "status", "reason")),
        ("the target", ("target", "target-id")),
        ("the target's type", ("target", "type")),
    ),
    "risks": (
        ("the risk's status", ("status",)),
        ("the risk's characterization", ("characterizations", 0, "facets")),
    ),
}


def _at(node: Any, path: tuple[str | int, ...]) -> Any:
    for key in path:
        if isinstance(key, int):
            node = node[key] if isinstance(node, list) and len(node) > key else None
        else:
            node = node.get(key) if isinstance(node, Mapping) else None
    return node


def _selected(reviewed: Any) -> list[str]:
    """The control ids a ``reviewed-controls`` selects."""
    return sorted(
        str(inc.get("control-id"))
        for sel in (reviewed or {}).get("control-selections", []) or []
        for inc in sel.get("include-controls", []) or []
    )


def body_log(result: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    entries: list[Mapping[str, Any]] = result.get("assessment-log", {}).get("entries", []) or []
    return entries


def _plan_against_rerun(walk: _Walk, plan: _Plan, rerun: Any) -> None:
    """The re-derived run compared with the plan it imports (the one comparison
    ``check --plan`` makes): a swapped plan whose hashes were rewritten into the AR still
    differs in what it pins."""
    from fairpolicy.plan import compare

    for problem in compare(plan.body, rerun, str(plan.path)):
        where = f"control '{problem.control}': " if problem.control else ""
        walk.mismatch(f"the assessment plan {plan.path.name}: {where}{problem.message}")


# ---------------------------------------------------------------- the command


def run(path: str, stdout: TextIO) -> int:
    """``fairpolicy verify AR``: the report on ``stdout``; the exit code. Something that
    cannot be read is a :class:`VerifyError` (exit 2, on stderr as every command's error),
    after the report of what could be checked."""
    report = verify(path)  # VerifyError: the assessment results themselves
    for file, how in report.hashed.items():
        stdout.write(f"hash OK    {file}  ({'; '.join(how)})\n")
    for note in report.notes:
        stdout.write(f"note       {note}\n")
    for text in report.mismatches:
        stdout.write(f"MISMATCH   {text}\n")
    for text in report.loosened:
        stdout.write(f"LOOSENED   {text}\n")
    if report.unreadable:
        problems = [Problem(text, file=path) for text in report.unreadable]
        if report.mismatches:
            problems.append(
                Problem(f"{len(report.mismatches)} mismatch(es) were found before (above).")
            )
        raise VerifyError(problems, title="the assessment results cannot be verified")
    if report.mismatches:
        stdout.write(f"NOT VERIFIED {path}: {len(report.mismatches)} mismatch(es).\n")
        return 1
    loose = f"; the gate was LOOSENED ({len(report.loosened)})" if report.loosened else ""
    stdout.write(
        f"VERIFIED {path}: {len(report.hashed)} file(s) hashed, {report.controls} control(s) "
        f"re-derived from the hashed policy and data, gate {report.gate}{loose}.\n"
    )
    return 0
