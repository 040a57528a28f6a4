"""OSCAL catalogs and profiles: loading, and profile resolution (import/merge/modify).

A catalog's controls are read into :class:`CatalogControl` objects (their params'
values, and where each was set, as :class:`ParamValue`); a profile imports catalogs or
other profiles (``include-controls``, ``exclude-controls``, ``with-child-controls``,
``matching``), merges them (``combine``/``as-is``/``flat``) and modifies them
(``set-parameters`` and ``alters`` with ``removes``/``adds``). :func:`catalog_control`
turns a resolved control into a :class:`~fairpolicy.policy.oscal.RawControl`. Shared
types, document reading and href confinement live in :mod:`fairpolicy.policy.oscal`;
the types of catalogs and profiles live here (a bare-list policy never creates them,
nor imports this module).
"""

from __future__ import annotations

import copy
import dataclasses
import fnmatch
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fairpolicy.errors import PolicyError, did_you_mean
from fairpolicy.policy.keys import check_keys
from fairpolicy.policy.oscal import (
    Ctx,
    RawControl,
    at,
    items,
    line_of,
    mapping,
    read_document,
    read_props,
    resolve_href,
    validate_oscal,
)
from fairpolicy.policy.params import Params, ParamValue


@dataclass
class CatalogControl:
    """A control of a resolved catalog: the control as the profile chain left it."""

    raw: RawControl
    params: Params
    fairness: bool  # carries fairpolicy props (catalog/profile forms keep only these)
    #: the control's mapping (props, params, parts, links; not its child controls),
    #: modified by the profiles' alters and set-parameters
    node: dict[str, Any] = field(default_factory=dict)
    #: ids of its child controls in the catalog (``with-child-controls``)
    children: tuple[str, ...] = ()
    #: where the control was written
    where: str = ""


def load_source(
    path: Path, ctx: Ctx, seen: frozenset[Path] = frozenset()
) -> dict[str, CatalogControl]:
    """The controls of a catalog or profile file (profile modifications applied)."""
    file = str(path)
    if path.resolve() in seen:
        ctx.add("imports itself (an import cycle)", file, key="imports")
        return {}
    try:
        data, sha = read_document(path)
    except PolicyError as exc:
        ctx.problems.extend(exc.problems)
        return {}
    root = next(
        (r for r in ("catalog", "profile") if isinstance(data, Mapping) and r in data), None
    )
    if root is None:
        ctx.add("an imported document must be an OSCAL catalog or profile", file)
        return {}
    if (file, sha, root) not in ctx.documents:
        ctx.documents.append((file, sha, root))
    return catalog_or_profile(root, data[root], file, path.parent, ctx, seen | {path.resolve()})


#: keys of the profile constructs fairpolicy resolves; any other key is refused by name
#: (a construct ignored silently could drop or loosen a control)
PROFILE_KEYS = frozenset({"uuid", "metadata", "imports", "merge", "modify", "back-matter"})
IMPORT_KEYS = frozenset({"href", "include-all", "include-controls", "exclude-controls"})
SELECT_KEYS = frozenset({"with-ids", "matching", "with-child-controls"})
MERGE_KEYS = frozenset({"combine", "as-is", "flat"})
MODIFY_KEYS = frozenset({"set-parameters", "alters"})
SET_PARAM_KEYS = frozenset(
    {"param-id", "values", "label", "usage", "class", "depends-on", "props", "links"}
    | {"constraints", "guidelines", "remarks"}
)
ALTER_KEYS = frozenset({"control-id", "removes", "adds"})
REMOVE_KEYS = frozenset({"by-name", "by-class", "by-id", "by-item-name", "by-ns"})
ADD_KEYS = frozenset({"position", "by-id", "params", "props", "parts", "links"})
#: what a remove's ``by-item-name`` names → the list that holds such items
ITEM_LISTS = {"param": "params", "prop": "props", "link": "links", "part": "parts"}
#: ``merge.combine.method`` values: keep (the default) and use-first are resolved
COMBINE_METHODS = ("keep", "use-first")


def _unknown_keys(
    obj: Any, allowed: frozenset[str], what: str, file: str | None, ctx: Ctx, control: Any = None
) -> None:
    """Refuse, by name, the keys of ``obj`` fairpolicy does not resolve."""
    if not isinstance(obj, Mapping):
        return
    for key in obj:
        if str(key) not in allowed:
            ctx.add(
                f"{what} has '{key}', which fairpolicy does not resolve; it would change the "
                f"resolved catalog, so it is refused rather than ignored."
                f"{did_you_mean(str(key), allowed)}",
                file,
                control,
                str(key),
                hint=f"{what} may hold: {', '.join(sorted(allowed))}",
            )


def catalog_or_profile(
    root: str,
    body: Any,
    file: str | None,
    base: Path,
    ctx: Ctx,
    seen: frozenset[Path] = frozenset(),
) -> dict[str, CatalogControl]:
    """The resolved controls of a catalog or profile (OSCAL profile resolution: import
    with selection, merge, modify), in catalog order, keyed by control id."""
    if not isinstance(body, Mapping):
        ctx.add(f"'{root}' must be a mapping", file, key=root)
        return {}
    if root == "catalog":
        from fairpolicy.policy.forms import hybrid_catalog

        if hybrid_catalog(body, file, ctx) or not check_keys(root, body, file, ctx):
            return {}
    if not validate_oscal(root, body, file, ctx):
        return {}
    if root == "catalog":
        return _catalog(body, file, ctx)
    return _profile(body, file, base, ctx, seen)


def _profile(
    body: Mapping[str, Any], file: str | None, base: Path, ctx: Ctx, seen: frozenset[Path]
) -> dict[str, CatalogControl]:
    _unknown_keys(body, PROFILE_KEYS, "the profile", file, ctx)
    merge = mapping(body, "merge")
    _unknown_keys(merge, MERGE_KEYS, "merge", file, ctx)
    method = mapping(merge, "combine").get("method", "keep")
    if method not in COMBINE_METHODS:
        ctx.add(
            f"merge.combine.method '{method}' is not supported; supported: "
            f"{', '.join(COMBINE_METHODS)}",
            file,
            key="merge.combine.method",
            hint="'merge' (deprecated in OSCAL 1.1) combines two copies of a control field by "
            "field; import each control once instead, or use use-first",
        )
    controls: dict[str, CatalogControl] = {}
    origin: dict[str, str] = {}
    for i, imp in enumerate(items(body, "imports", file, ctx)):
        href = imp.get("href") if isinstance(imp, Mapping) else None
        where = at(file, f"imports[{i}] (href {href!r})", imp)
        _unknown_keys(imp, IMPORT_KEYS, f"imports[{i}]", file, ctx)
        path = resolve_href(href, base, body, file, ctx)
        if path is None:
            ctx.add(f"import href {href!r} names no local catalog or profile", file, key="href")
            continue
        if not path.exists():
            ctx.add(f"imported file not found: {path}", file, key="href")
            continue
        for cid, cc in _select(load_source(path, ctx, seen), imp, file, ctx, where).items():
            if cid in controls:
                if method == "use-first":
                    continue
                ctx.add(
                    f"control '{cid}' is imported twice: by {origin[cid]} and by {where}; "
                    "which copy applies is ambiguous",
                    file,
                    cid,
                    "imports",
                    hint="import the control once (exclude-controls on one import), or set "
                    "merge.combine.method: use-first to keep the first import's copy",
                )
                continue
            controls[cid] = copy_control(cc)
            origin[cid] = where
    param_at: dict[str, str] = {}
    for cid, cc in controls.items():  # children that were not selected are not children here
        cc.children = tuple(c for c in cc.children if c in controls)
        for pid, pv in cc.params.items():  # two imported catalogs may share a param id
            if pid in param_at and param_at[pid] != pv.where:
                ctx.add(
                    f"param id '{pid}' is defined twice among the imported controls: "
                    f"{param_at[pid]} and {pv.where}; set-parameters could not tell them apart",
                    file,
                    cid,
                    "imports",
                    hint="rename one of the params in its catalog",
                )
            param_at.setdefault(pid, pv.where)
    modify = mapping(body, "modify")
    _unknown_keys(modify, MODIFY_KEYS, "modify", file, ctx)
    set_parameters(
        items(modify, "set-parameters", file, ctx),
        list(controls.values()),
        file,
        ctx,
        "profile",
        "modify.set-parameters",
    )
    for j, alter in enumerate(items(modify, "alters", file, ctx)):
        _alter(alter, controls, file, ctx, f"modify.alters[{j}]")
    return controls


def copy_control(cc: CatalogControl) -> CatalogControl:
    return CatalogControl(
        dataclasses.replace(cc.raw, props=list(cc.raw.props), prop_where=dict(cc.raw.prop_where)),
        dict(cc.params),
        cc.fairness,
        copy.deepcopy(cc.node),
        cc.children,
        cc.where,
    )


def _catalog(body: Mapping[str, Any], file: str | None, ctx: Ctx) -> dict[str, CatalogControl]:
    out: dict[str, CatalogControl] = {}
    param_at: dict[str, str] = {}
    for path, c, parent in _walk(body, file, ctx, "catalog"):
        cid = c.get("id")
        where = at(file, path, c)
        if str(cid) in out:
            ctx.add(
                f"control id '{cid}' is defined twice: {out[str(cid)].where} and {where}",
                file,
                cid,
                "id",
                hint="control ids must be unique within a catalog; rename or remove one",
            )
            continue
        node = {k: copy.deepcopy(v) for k, v in c.items() if k != "controls"}
        params: Params = {}
        for k, p in enumerate(items(c, "params", file, ctx, cid)):
            if isinstance(p, Mapping) and isinstance(p.get("id"), str):
                pwhere = at(file, f"{path}.params[{k}]", p)
                if p["id"] in param_at:
                    ctx.add(
                        f"param id '{p['id']}' is defined twice: {param_at[p['id']]} and {pwhere}",
                        file,
                        cid,
                        "params",
                        hint="param ids must be unique within a catalog",
                    )
                    continue
                param_at[p["id"]] = pwhere
                values = p.get("values")
                params[p["id"]] = ParamValue(
                    values if isinstance(values, list) else None, file, "catalog", pwhere
                )
        if parent is not None and parent in out:
            out[parent].children += (str(cid),)
        out[str(cid)] = _make(node, params, file, line_of(c), where, ctx, {})
    return out


def _make(
    node: dict[str, Any],
    params: Params,
    file: str | None,
    line: int | None,
    where: str,
    ctx: Ctx,
    prop_where: dict[str, str],
    children: tuple[str, ...] = (),
) -> CatalogControl:
    """A catalog control from its (resolved) mapping."""
    cid = node.get("id")
    props = read_props(node.get("props"), file, cid, ctx)
    fairness = any(n in ("metric_key", "operator", "threshold") for n, _ in props)
    raw = RawControl(
        cid,
        file,
        line,
        props,
        title=node.get("title"),
        description=node.get("description"),  # Venturalitica's catalogs write one
        objective_id=part_id(node, "assessment-objective"),
        statement_id=part_id(node, "statement"),
        prop_where={n: prop_where.get(n, where) for n, _ in props},
    )
    return CatalogControl(raw, params, fairness, node, children, where)


def part_id(node: Mapping[str, Any], name: str) -> str | None:
    """The id of the first part called ``name`` among ``node``'s parts, searched depth
    first (an objective may sit inside another part); None when absent or unnamed."""
    parts = node.get("parts")
    for part in parts if isinstance(parts, list) else ():
        if not isinstance(part, Mapping):
            continue
        pid = part.get("id")
        if part.get("name") == name and isinstance(pid, str) and pid.strip():
            return pid.strip()
        if (found := part_id(part, name)) is not None:
            return found
    return None


def _walk(
    node: Mapping[str, Any], file: str | None, ctx: Ctx, path: str, parent: str | None = None
) -> Iterator[tuple[str, Mapping[str, Any], str | None]]:
    """(path, control, parent control id) of every control, however deep in groups and
    nested controls, in document order."""
    for i, c in enumerate(items(node, "controls", file, ctx)):
        if isinstance(c, Mapping):
            here = f"{path}.controls[{i}]"
            yield here, c, parent
            yield from _walk(c, file, ctx, here, str(c.get("id")))
    for i, g in enumerate(items(node, "groups", file, ctx)):
        if isinstance(g, Mapping):
            yield from _walk(g, file, ctx, f"{path}.groups[{i}]", parent)


def _select(
    controls: dict[str, CatalogControl],
    imp: Mapping[str, Any],
    file: str | None,
    ctx: Ctx,
    where: str,
) -> dict[str, CatalogControl]:
    """The controls an import selects: include-all or include-controls (with-ids, matching
    glob patterns, with-child-controls), minus exclude-controls; in catalog order."""

    def descendants(cid: str) -> list[str]:
        out: list[str] = []
        for child in controls[cid].children if cid in controls else ():
            out += [child, *descendants(child)]
        return out

    def ids(key: str) -> set[str]:
        out: set[str] = set()
        for k, sel in enumerate(items(imp, key, file, ctx)):
            label = f"{where}: {key}[{k}]"
            _unknown_keys(sel, SELECT_KEYS, label, file, ctx)
            children = sel.get("with-child-controls", "no") if isinstance(sel, Mapping) else "no"
            if children not in ("yes", "no"):
                ctx.add(f"{label}: with-child-controls must be yes or no", file, key=key)
            chosen: list[str] = []
            for cid in items(sel, "with-ids", file, ctx):
                if str(cid) not in controls:
                    ctx.add(
                        f"{key} names control '{cid}', which the imported document does not "
                        f"define ({label}).{did_you_mean(str(cid), controls)}",
                        file,
                        key=key,
                    )
                chosen.append(str(cid))
            for m in items(sel, "matching", file, ctx):
                pattern = m.get("pattern") if isinstance(m, Mapping) else None
                if not isinstance(pattern, str) or not pattern:
                    ctx.add(f"{label}: matching needs a pattern", file, key="matching")
                    continue
                hits = [c for c in controls if fnmatch.fnmatchcase(c, pattern)]
                if not hits:
                    ctx.add(
                        f"{label}: matching pattern '{pattern}' matches no control of the "
                        f"imported document (ids: {', '.join(list(controls)[:8])})",
                        file,
                        key="matching",
                    )
                chosen += hits
            if children == "yes":
                chosen += [d for c in list(chosen) for d in descendants(c)]
            out.update(chosen)
        return out

    has_all, has_some = "include-all" in imp, "include-controls" in imp
    if has_all and has_some:
        ctx.add(f"{where} has both include-all and include-controls; use one", file, key="imports")
    elif not has_all and not has_some:
        ctx.add(
            f"{where} selects no controls (no include-all or include-controls)",
            file,
            key="imports",
            hint="add include-all: {} to import every control, or include-controls",
        )
        return {}
    include = set(controls) if has_all else ids("include-controls")
    exclude = ids("exclude-controls")
    return {cid: cc for cid, cc in controls.items() if cid in include and cid not in exclude}


def set_parameters(
    entries: list[Any],
    controls: list[CatalogControl],
    file: str | None,
    ctx: Ctx,
    kind: str,
    path: str,
    earlier_here: dict[str, str] | None = None,
) -> None:
    """Apply a list of set-parameters entries to whichever of ``controls`` define the
    params; ``kind`` (``profile``, ``component-definition``) records which document set
    them. One param set twice in the list is an error naming both entries (never last
    wins); ``earlier_here`` (param → place) holds settings of the same document that these
    entries may not repeat either."""
    placed: dict[str, str] = dict(earlier_here or {})
    for i, sp in enumerate(entries):
        where = at(file, f"{path}[{i}]", sp)
        pid = sp.get("param-id") if isinstance(sp, Mapping) else None
        values = sp.get("values") if isinstance(sp, Mapping) else None
        _unknown_keys(sp, SET_PARAM_KEYS, f"{path}[{i}]", file, ctx)
        if not isinstance(pid, str) or not isinstance(values, list):
            ctx.add("set-parameters entries need a 'param-id' and a list of 'values'", file)
            continue
        if pid in placed:
            ctx.add(
                f"param '{pid}' is set twice: {placed[pid]} and {where}; which one applies is "
                "ambiguous",
                file,
                key="set-parameters",
                hint="set each param once",
            )
            continue
        placed[pid] = where
        if earlier_here is not None:
            earlier_here[pid] = where
        set_parameter(sp, controls, file, ctx, kind, where)


def set_parameter(
    sp: Any,
    controls: list[CatalogControl],
    file: str | None,
    ctx: Ctx,
    kind: str,
    where: str = "",
) -> None:
    """Apply one set-parameters entry to whichever of ``controls`` defines the param;
    the values it replaces are kept (``ParamValue.earlier``) for the precedence checks."""
    pid = sp.get("param-id") if isinstance(sp, Mapping) else None
    values = sp.get("values") if isinstance(sp, Mapping) else None
    if not isinstance(pid, str) or not isinstance(values, list):
        ctx.add("set-parameters entries need a 'param-id' and a list of 'values'", file)
        return
    owners = [c for c in controls if pid in c.params]
    if not owners:
        known = [p for c in controls for p in c.params]
        ctx.add(
            f"set-parameters names param '{pid}', which no selected control defines."
            f"{did_you_mean(pid, known)}",
            file,
            key="param-id",
        )
    for c in owners:
        old = c.params[pid]
        c.params = {
            **c.params,
            pid: ParamValue(
                list(values),
                file,
                kind,
                where or at(file, "set-parameters", sp),
                (*old.earlier, old),
            ),
        }
        for p in c.node.get("params") or ():
            if isinstance(p, dict) and p.get("id") == pid:
                p["values"] = list(values)


def _alter(
    alter: Any, controls: dict[str, CatalogControl], file: str | None, ctx: Ctx, path: str
) -> None:
    """Apply one ``modify.alters`` entry: its removes, then its adds (props, params, parts,
    links; at the control or relative to a part or param ``by-id``)."""
    _unknown_keys(alter, ALTER_KEYS, path, file, ctx)
    cid = alter.get("control-id") if isinstance(alter, Mapping) else None
    if str(cid) not in controls:
        ctx.add(
            f"{path} alters control '{cid}', which the profile does not select."
            f"{did_you_mean(str(cid), controls)}",
            file,
            cid,
            "control-id",
        )
        return
    cc = controls[str(cid)]
    prop_where = dict(cc.raw.prop_where)
    for k, rm in enumerate(items(alter, "removes", file, ctx, cid)):
        label = f"{path}.removes[{k}]"
        _unknown_keys(rm, REMOVE_KEYS, label, file, ctx, cid)
        if not isinstance(rm, Mapping) or not any(key in rm for key in REMOVE_KEYS):
            ctx.add(f"{label} names nothing to remove", file, cid, "removes")
            continue
        item = rm.get("by-item-name")
        if item is not None and item not in ITEM_LISTS:
            ctx.add(
                f"{label}: by-item-name '{item}' is not one of {', '.join(ITEM_LISTS)}",
                file,
                cid,
                "by-item-name",
            )
            continue
        if _remove(cc.node, rm) == 0:
            ctx.add(
                f"{label} matches nothing in control '{cid}' (so it would remove nothing)",
                file,
                cid,
                "removes",
                hint="check by-name/by-ns/by-id against the control in its catalog",
            )
    for k, add in enumerate(items(alter, "adds", file, ctx, cid)):
        label = f"{path}.adds[{k}]"
        _unknown_keys(add, ADD_KEYS, label, file, ctx, cid)
        if isinstance(add, Mapping):
            _add(cc, add, file, ctx, label, at(file, label, add), prop_where, controls)
    node = cc.node
    line = cc.raw.line
    fresh = _make(node, cc.params, cc.raw.file, line, cc.where, ctx, prop_where, cc.children)
    controls[str(cid)] = fresh


def _matches(obj: Mapping[str, Any], list_key: str, rm: Mapping[str, Any]) -> bool:
    checks = {
        "by-name": obj.get("name"),
        "by-class": obj.get("class"),
        "by-id": obj.get("id"),
        "by-ns": obj.get("ns"),
    }
    for key, value in checks.items():
        if key in rm and str(rm[key]) != str(value):
            return False
    return "by-item-name" not in rm or ITEM_LISTS.get(str(rm["by-item-name"])) == list_key


def _remove(node: dict[str, Any], rm: Mapping[str, Any]) -> int:
    """Remove every prop, param, link and part (at any depth of parts) that matches all
    the criteria of ``rm``; how many were removed."""
    removed = 0
    for list_key in ITEM_LISTS.values():
        entries = node.get(list_key)
        if not isinstance(entries, list):
            continue
        keep = [e for e in entries if not (isinstance(e, Mapping) and _matches(e, list_key, rm))]
        removed += len(entries) - len(keep)
        node[list_key] = keep
        if not keep:
            del node[list_key]
    for part in node.get("parts") or ():
        if isinstance(part, dict):
            removed += _remove(part, rm)
    return removed


def _add(
    cc: CatalogControl,
    add: Mapping[str, Any],
    file: str | None,
    ctx: Ctx,
    label: str,
    where: str,
    prop_where: dict[str, str],
    controls: dict[str, CatalogControl],
) -> None:
    cid = cc.raw.control_id
    position = add.get("position", "ending")
    if position not in ("starting", "ending", "before", "after"):
        ctx.add(
            f"{label}: position '{position}' is not one of starting, ending, before, after",
            file,
            cid,
            "position",
        )
        return
    by_id = add.get("by-id")
    if by_id is None or by_id == cid:
        if position in ("before", "after"):
            ctx.add(
                f"{label}: position '{position}' needs a by-id naming a part or param of the "
                "control",
                file,
                cid,
                "position",
            )
            return
        parent, target = cc.node, None
    else:
        found = _find(cc.node, str(by_id))
        if found is None:
            ctx.add(
                f"{label}: by-id '{by_id}' names no part or param of control '{cid}'",
                file,
                cid,
                "by-id",
            )
            return
        parent, target = found
    if target is not None and position in ("starting", "ending"):
        parent, target = target, None  # into the part named by by-id
    own_props = {
        n for n, _ in read_props(cc.node.get("props"), file, cid, Ctx()) if n != "lifecycle_phase"
    }
    for list_key in ("props", "params", "parts", "links"):
        new = add.get(list_key)
        if new is None:
            continue
        if not isinstance(new, list):
            ctx.add(f"{label}: '{list_key}' must be a list", file, cid, list_key)
            continue
        new = copy.deepcopy(new)
        if list_key == "params" and parent is not cc.node:
            ctx.add(f"{label}: params can only be added to the control", file, cid, "params")
            continue
        if list_key == "props" and parent is cc.node:
            before = len(ctx.problems)
            added = read_props(new, file, cid, ctx)
            if len(ctx.problems) > before:
                return  # a malformed prop: said once, naming the profile
            for name, _ in added:
                if name in own_props:
                    ctx.add(
                        f"{label} adds prop '{name}', which control '{cid}' already has "
                        f"({prop_where.get(name, cc.where)}); two values would be ambiguous",
                        file,
                        cid,
                        name,
                        hint=f"remove the old one in the same alter first (removes: [{{by-name: "
                        f"{name}}}])",
                    )
                    return
                prop_where[name] = where
        if list_key == "params":
            for p in new:
                pid = p.get("id") if isinstance(p, Mapping) else None
                if not isinstance(pid, str):
                    ctx.add(f"{label}: an added param needs an id", file, cid, "params")
                    return
                clash = next((c for c in controls.values() if pid in c.params), None)
                if clash is not None:
                    ctx.add(
                        f"{label} adds param '{pid}', which is already defined "
                        f"({clash.params[pid].where})",
                        file,
                        cid,
                        "params",
                    )
                    return
                values = p.get("values")
                cc.params = {
                    **cc.params,
                    pid: ParamValue(
                        values if isinstance(values, list) else None, file, "profile", where
                    ),
                }
        entries = parent.setdefault(list_key, [])
        if target is None:
            parent[list_key] = new + entries if position == "starting" else entries + new
        else:
            if list_key not in ("parts", "params") or target not in entries:
                ctx.add(
                    f"{label}: {list_key} cannot be placed {position} '{by_id}' (a "
                    f"{'part' if 'name' in target else 'param'}); use position starting or "
                    "ending",
                    file,
                    cid,
                    "position",
                )
                return
            i = next(n for n, e in enumerate(entries) if e is target)
            i += 1 if position == "after" else 0
            parent[list_key] = entries[:i] + new + entries[i:]


def _find(node: dict[str, Any], pid: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(parent, item) of the part or param with id ``pid`` inside ``node``."""
    for list_key in ("params", "parts"):
        for e in node.get(list_key) or ():
            if isinstance(e, dict):
                if e.get("id") == pid:
                    return node, e
                if list_key == "parts" and (found := _find(e, pid)) is not None:
                    return found
    return None


def threshold_param(cc: CatalogControl, ctx: Ctx) -> tuple[str, ParamValue] | None:
    """The threshold param of a catalog control (if it has values): (key for messages,
    its values and where they were set)."""
    raw, params = cc.raw, cc.params
    named = [str(v) for n, v in raw.props if n == "threshold_param"]
    ends = [p for p in params if p.endswith("threshold")]
    if named:
        pid = named[-1]
        if pid not in params:
            ctx.add(
                f"threshold_param names '{pid}', which is not a param of this control."
                f"{did_you_mean(pid, params)}",
                raw.file,
                raw.control_id,
                "threshold_param",
            )
            return None
    elif f"{raw.control_id}_prm_threshold" in params:
        pid = f"{raw.control_id}_prm_threshold"
    elif ends:
        pid = ends[0]
    elif len(params) == 1:
        pid = next(iter(params))
    else:
        return None
    value = params[pid]
    if value.values is None:
        return None
    return f"param '{pid}'" + (f" (set in {value.file})" if value.file else ""), value


_INSERT = re.compile(r"\{\{\s*insert:\s*param,\s*([^\s}]+)\s*\}\}")


def statement_text(node: Mapping[str, Any], params: Params) -> str | None:
    """The control's ``statement`` part as a reader reads it: its prose and its items'
    prose, one per line, with every ``{{ insert: param, ID }}`` replaced by the param's
    values as the policy chain left them (``[ID: not set]`` when it has none)."""
    parts = node.get("parts")
    statement = next(
        (
            p
            for p in (parts if isinstance(parts, list) else ())
            if isinstance(p, Mapping) and p.get("name") == "statement"
        ),
        None,
    )
    if statement is None:
        return None
    lines: list[str] = []

    def collect(part: Mapping[str, Any]) -> None:
        prose = part.get("prose")
        if isinstance(prose, str) and prose.strip():
            lines.append(prose.strip())
        sub = part.get("parts")
        for child in sub if isinstance(sub, list) else ():
            if isinstance(child, Mapping):
                collect(child)

    collect(statement)

    def value(m: re.Match[str]) -> str:
        pv = params.get(m.group(1))
        if pv is None or not pv.values:
            return f"[{m.group(1)}: not set]"
        return ", ".join(str(v) for v in pv.values)

    return _INSERT.sub(value, "\n".join(lines)) if lines else None


def catalog_control(cc: CatalogControl, ctx: Ctx) -> RawControl:
    raw = cc.raw
    found = threshold_param(cc, ctx)
    if raw.description is None:  # the statement, with its parameters inserted
        raw = dataclasses.replace(raw, description=statement_text(cc.node, cc.params))
    return dataclasses.replace(
        raw,
        threshold=None if found is None else (found[0], list(found[1].values or [])),
        threshold_source=None if found is None else found[1].kind,
        threshold_param=None if found is None else found[1],
    )
