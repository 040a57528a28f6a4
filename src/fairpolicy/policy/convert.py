"""``fairpolicy convert``: a simple-form policy → a namespaced OSCAL catalog (+ profile).

The simple forms (Venturalitica's assessment-plan, Venturalitica's self-contained
component-definition, a bare list of controls) carry each control's threshold and column
bindings as plain props. Converting writes the same controls as standard OSCAL, so a team
can move to catalog + profile (+ component-definition) without retyping anything:

- each control becomes a catalog control: ``id`` (an OSCAL token; other ids are
  sanitised, the original kept in an ``alt-identifier`` prop and reported), ``title``,
  one param ``<id>_prm_threshold`` holding the threshold (two values, low and high, for
  ``between``), props in fairpolicy's namespace (``metric_key`` as the canonical registry
  key, ``operator`` in its canonical spelling, ``input.<role>``, metric parameters,
  ``min_samples``/``missing`` when not the default, ``enforcement_mode`` and
  ``severity``/``lifecycle_phase``/``risk_id`` when given), a ``statement`` part quoting
  the param with ``{{ insert: param, <id>_prm_threshold }}`` and an
  ``assessment-objective`` part;
- metadata: the source's title and version, ``oscal-version`` 1.2.1 (as the packs under
  ``policies/``) and a back-matter resource naming the source file and its SHA-256;
- the profile (``--profile``) imports the catalog by an href relative to the profile's
  folder with ``include-all`` and no ``modify``: the catalog's params stay the only place
  a threshold is written; tighten one by adding ``modify.set-parameters`` to the profile.

The output is deterministic: UUIDs are version-5 UUIDs of the content, and
``last-modified`` is ``SOURCE_DATE_EPOCH`` when set, else the source's own
``metadata.last-modified`` when it is a valid OSCAL date-time, else the source file's
modification time. Converting the same file twice writes the same bytes.
The format (JSON or YAML) follows each output's extension.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import sys
import unicodedata
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from fairpolicy.errors import Problem, UsageError
from fairpolicy.exact import written_text
from fairpolicy.outputs import target, write_atomic
from fairpolicy.policy import oscal
from fairpolicy.policy.dialect import DIFFERING
from fairpolicy.policy.schema import NS, ROLES, Control, Operator, Policy, Threshold

__all__ = ["convert_file", "convert_policy"]

OSCAL_VERSION = "1.2.1"

#: Namespace of the version-5 UUIDs fairpolicy writes.
_UUID_NS = uuid.uuid5(uuid.NAMESPACE_URL, NS)

#: OSCAL token, restricted to ASCII (the NIST schema's ``\p{L}`` also allows other letters;
#: ASCII ids travel through every tool unchanged).
_TOKEN = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")
_DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
_SUFFIXES = {".json": "json", ".yaml": "yaml", ".yml": "yaml"}

_OPERATOR_WORDS = {
    Operator.LT: "below",
    Operator.LE: "at most",
    Operator.GT: "above",
    Operator.GE: "at least",
    Operator.EQ: "equal to",
    Operator.NE: "different from",
}


def _stderr(message: str) -> None:
    print(f"note: {message}", file=sys.stderr)


def convert_file(
    policy_path: str | os.PathLike[str],
    output: str | os.PathLike[str],
    profile: str | os.PathLike[str] | None = None,
    write: Callable[[str, str], None] = write_atomic,
    report: Callable[[str], None] = _stderr,
) -> list[str]:
    """Convert the policy at ``policy_path`` into an OSCAL catalog at ``output`` (and a
    profile importing it at ``profile``). Returns the notes (the loader's warnings, renamed
    control ids, metric aliases written as their keys), each also passed to ``report``
    (default: ``note: ...`` on stderr).

    Raises :class:`UsageError` for a bad output path or a policy that is already OSCAL
    (a catalog, a profile, or a component-definition implementing one), and
    :class:`~fairpolicy.errors.PolicyError` for a policy that does not load.
    """
    from fairpolicy.policy.load import load_policy

    source, out = Path(policy_path), Path(output)
    prof = None if profile is None else Path(profile)
    out_format = _format(out, "-o")
    prof_format = None if prof is None else _format(prof, "--profile")
    if prof is not None and prof.resolve() == out.resolve():
        raise UsageError(
            "the catalog and the profile would be the same file.",
            file=str(prof),
            hint="give --profile another path than -o",
        )
    for path in (out, prof):
        if path is not None and path.resolve() == source.resolve():
            raise UsageError(
                "the output would overwrite the policy being converted.",
                file=str(path),
                hint="write the catalog (and profile) to new files",
            )
    for path in (out, prof):  # before anything is written: no half-written pair
        if path is not None:
            target(str(path))  # a folder on the way that cannot be created, a directory
    data, sha = oscal.read_document(source)
    _refuse_oscal(data, source)
    policy = load_policy(source)
    notes: list[str] = []
    catalog = convert_policy(
        policy,
        last_modified=source_last_modified(data, source),
        source_href=_href(source, out.parent),
        source_sha256=sha,
        notes=notes,
    )
    write(str(out), dump_document(catalog, out_format))
    if prof is not None and prof_format is not None:
        write(str(prof), dump_document(profile_for(catalog, _href(out, prof.parent)), prof_format))
    for note in notes:
        report(note)
    return notes


# ---------------------------------------------------------------- documents


def convert_policy(
    policy: Policy,
    *,
    last_modified: str,
    source_href: str | None = None,
    source_sha256: str | None = None,
    notes: list[str] | None = None,
) -> dict[str, Any]:
    """The ``{"catalog": ...}`` document of a loaded policy's controls."""
    notes = [] if notes is None else notes
    notes.extend(policy.warnings)  # e.g. `input:x` spellings, which the catalog corrects
    ids = _token_ids([c.control_id for c in policy.controls])
    controls = []
    renamed = []
    for c in policy.controls:
        cid = ids[c.control_id]
        if cid != c.control_id:
            renamed.append(f"'{c.control_id}' → '{cid}'")
            notes.append(
                f"control '{c.control_id}': renamed '{cid}' (OSCAL ids are tokens: a letter or "
                "'_', then letters, digits, '.', '-', '_'); the original id is kept in the "
                "control's alt-identifier prop"
            )
        if c.metric_key != c.metric_key_as_written:
            notes.append(
                f"control '{c.control_id}': metric_key '{c.metric_key_as_written}' is written "
                f"as its registry key '{c.metric_key}'"
            )
        controls.append(_control(c, cid, notes))
    name = Path(policy.path).name if policy.path else "a policy"
    remarks = (
        f"Converted by `fairpolicy convert` from {name} ({policy.form} form). Each control's "
        "threshold is its param `<id>_prm_threshold`; a profile's modify.set-parameters "
        "overrides it."
    )
    if renamed:
        remarks += " Renamed control ids (OSCAL tokens): " + ", ".join(renamed) + "."
    metadata: dict[str, Any] = {
        "title": _line(policy.title) or f"fairness controls converted from {name}",
        "last-modified": last_modified,
        "version": policy.version or "1.0.0",
        "oscal-version": OSCAL_VERSION,
        "remarks": remarks,
    }
    body: dict[str, Any] = {"metadata": metadata, "controls": controls}
    if source_href is not None:
        link: dict[str, Any] = {"href": source_href}
        if source_sha256:
            link["hashes"] = [{"algorithm": "SHA-256", "value": source_sha256}]
        resource = {
            "title": f"Source policy: {name}",
            "description": f"The {policy.form}-form policy this catalog was converted from.",
            "rlinks": [link],
        }
        body["back-matter"] = {"resources": [{"uuid": _uuid("resource", resource), **resource}]}
    return {"catalog": {"uuid": _uuid("catalog", body), **body}}


def profile_for(catalog: Mapping[str, Any], href: str) -> dict[str, Any]:
    """A profile importing every control of ``catalog`` (written at ``href``, relative to
    the profile's folder) without modifications."""
    cat = catalog["catalog"]
    meta = cat["metadata"]
    body: dict[str, Any] = {
        "metadata": {
            "title": f"{meta['title']} (profile)",
            "last-modified": meta["last-modified"],
            "version": meta["version"],
            "oscal-version": OSCAL_VERSION,
            "remarks": "Imports every control of the converted catalog. To change a "
            "threshold for this baseline, add modify.set-parameters with param-id "
            "<control-id>_prm_threshold.",
        },
        "imports": [{"href": href, "include-all": {}}],
    }
    return {"profile": {"uuid": _uuid("profile", {"catalog": cat["uuid"], **body}), **body}}


def _control(c: Control, cid: str, notes: list[str]) -> dict[str, Any]:
    from fairpolicy.metrics.registry import REGISTRY

    pid = f"{cid}_prm_threshold"
    insert = "{{ insert: param, " + pid + " }}"
    between = c.operator is Operator.BETWEEN
    props: list[dict[str, str]] = []
    if cid != c.control_id:
        props.append({"name": "alt-identifier", "value": c.control_id})

    def prop(name: str, value: Any) -> None:
        text = _value(value)
        if "\n" in text or "\r" in text:  # OSCAL prop values are one line
            text = " ".join(text.split())
            notes.append(f"control '{c.control_id}': prop '{name}' is written on one line")
        props.append({"name": name, "ns": NS, "value": text})

    prop("metric_key", c.metric_key)
    if c.metric_key in DIFFERING:  # its meaning depends on the dialect: say which
        prop("dialect", "fairpolicy")
    prop("operator", c.operator.value)
    for role in (*ROLES, *sorted(set(c.inputs) - set(ROLES))):
        if role in c.inputs:
            prop(f"input.{role}", c.inputs[role])
    for name, value in c.params.items():
        prop(name, value)
    if c.min_samples != 30:
        prop("min_samples", c.min_samples)
    if c.missing != "error":
        prop("missing", c.missing)
    prop("enforcement_mode", c.enforcement_mode.value)
    for name in ("severity", "lifecycle_phase", "risk_id"):
        if (value := getattr(c, name)) is not None:
            prop(name, value)

    spec = REGISTRY[c.metric_key]
    columns = ", ".join(f"{role} `{col}`" for role, col in c.inputs.items())
    if between:
        bound = f"within the inclusive range {insert} (low, high)"
    else:
        bound = f"{_OPERATOR_WORDS[c.operator]} {insert}"
    over = f" across `{c.inputs['dimension']}`" if "dimension" in c.inputs else ""
    requirement = f"`{c.metric_key}`{over} must be {bound}. The metric: {spec.summary}."
    description = (c.description or "").strip()
    statement = f"{description}\n\n{requirement}" if description else requirement
    objective = f"Determine whether `{c.metric_key}` computed on the columns {columns} is {bound}."
    return {
        "id": cid,
        "title": _line(c.title) or cid,
        "params": [
            {
                "id": pid,
                "label": "inclusive bounds (low, high)" if between else "threshold",
                "values": _threshold_values(c.threshold),
            }
        ],
        "props": props,
        "parts": [
            {"id": f"{cid}_smt", "name": "statement", "prose": statement},
            {"id": f"{cid}_obj", "name": "assessment-objective", "prose": objective},
        ],
    }


def _threshold_values(t: Threshold) -> list[str]:
    if t.text is not None:  # the decimals written: no digit rounded away
        return [written_text(p) for p in t.text.split(",")]
    if t.value is not None:
        return [_number(t.value)]
    assert t.low is not None and t.high is not None
    return [_number(t.low), _number(t.high)]


def _number(x: float) -> str:
    """The shortest text that reads back as ``x`` (``0.1``, ``30``, ``1e-05``)."""
    if x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return repr(x)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _number(value)
    return str(value)


def _line(text: str | None) -> str | None:
    """One line of text (OSCAL titles are markup-line)."""
    return " ".join(text.split()) if text else None


def _token_ids(ids: list[str]) -> dict[str, str]:
    """Each control id → an OSCAL token: itself when it is one, else a sanitised,
    unique spelling."""
    out: dict[str, str] = {}
    taken = {cid for cid in ids if _TOKEN.match(cid)}
    for cid in ids:
        if _TOKEN.match(cid):
            out[cid] = cid
            continue
        ascii_id = unicodedata.normalize("NFKD", cid).encode("ascii", "ignore").decode()
        base = re.sub(r"[^A-Za-z0-9_.\-]+", "-", ascii_id).strip("-") or "control"
        if not re.match(r"[A-Za-z_]", base):
            base = f"c-{base}"
        new, n = base, 1
        while new in taken:
            n += 1
            new = f"{base}-{n}"
        taken.add(new)
        out[cid] = new
    return out


def _uuid(kind: str, content: Any) -> str:
    text = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return str(uuid.uuid5(_UUID_NS, f"{kind}:{text}"))


# ---------------------------------------------------------------- files


def _format(path: Path, option: str) -> str:
    fmt = _SUFFIXES.get(path.suffix.lower())
    if fmt is None:
        raise UsageError(
            f"cannot tell the format of '{path.name}' from its extension.",
            file=str(path),
            key=option,
            hint="name the file .json, .yaml or .yml",
        )
    return fmt


def dump_document(doc: Mapping[str, Any], fmt: str) -> str:
    """``doc`` as JSON text when ``fmt`` is "json", else as YAML text."""
    if fmt == "json":
        return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    import yaml

    text: str = yaml.safe_dump(
        doc, sort_keys=False, allow_unicode=True, default_flow_style=False, width=4096
    )
    return text


def _href(target: Path, base: Path) -> str:
    """``target`` relative to the folder ``base`` (forward slashes), else a file URI."""
    try:
        return Path(os.path.relpath(target.resolve(), base.resolve())).as_posix()
    except ValueError:  # another drive on Windows
        return target.resolve().as_uri()


def _refuse_oscal(data: Any, source: Path) -> None:
    """A catalog, a profile, or a component-definition that implements one is already
    standard OSCAL: converting it would copy its catalog."""
    root = next(
        (r for r in ("catalog", "profile") if isinstance(data, Mapping) and r in data), None
    )
    if root is None and isinstance(data, Mapping) and "component-definition" in data:
        body = data["component-definition"]
        ctx = oscal.Ctx()
        for comp in oscal.items(body, "components", None, ctx):
            for impl in oscal.items(comp, "control-implementations", None, ctx):
                src = impl.get("source") if isinstance(impl, Mapping) else None
                if oscal.resolve_href(src, source.parent, body, None, ctx) is not None:
                    root = f"component-definition (implementing {src})"
    if root is not None:
        raise UsageError(
            Problem(
                f"the policy is already OSCAL (a {root}); nothing to convert.",
                file=str(source),
                hint=f"run it as it is (`fairpolicy check {source} DATA`); `fairpolicy convert` "
                "turns the Venturalitica assessment-plan, Venturalitica component-definition and "
                "bare-list forms into a catalog",
            )
        )


def source_last_modified(data: Any, source: Path) -> str:
    """``SOURCE_DATE_EPOCH``, else the source's ``metadata.last-modified`` (when a valid
    OSCAL date-time with a time zone), else the source file's modification time."""
    from fairpolicy.env import source_date_epoch

    epoch = source_date_epoch()
    if epoch is not None:
        return _iso(epoch)
    written = None
    if isinstance(data, Mapping):
        for root in ("assessment-plan", "component-definition"):
            written = oscal.mapping(oscal.mapping(data, root), "metadata").get("last-modified")
            if written is not None:
                break
    if isinstance(written, _dt.datetime) and written.tzinfo is not None:  # unquoted YAML
        return written.isoformat()
    if isinstance(written, str) and _DATE_TIME.match(written.strip()):
        try:
            _dt.datetime.fromisoformat(written.strip())
        except ValueError:
            pass
        else:
            return written.strip()
    return _iso(int(source.stat().st_mtime))


def _iso(seconds: int) -> str:
    return _dt.datetime.fromtimestamp(seconds, tz=_dt.UTC).isoformat(timespec="seconds")
