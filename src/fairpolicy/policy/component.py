"""OSCAL component-definitions: implemented requirements, completed from the catalog or
profile their ``control-implementations[].source`` names (resolved by
:mod:`fairpolicy.policy.profile`), with the checks that an implementation may only
tighten what its source says."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fairpolicy.errors import did_you_mean
from fairpolicy.policy.keys import check_keys
from fairpolicy.policy.modes import MODE_RANK, effective_mode
from fairpolicy.policy.oscal import (
    Ctx,
    RawControl,
    at,
    items,
    merge_props,
    raw_control,
    resolve_href,
    validate_oscal,
)
from fairpolicy.policy.profile import (
    CatalogControl,
    catalog_control,
    copy_control,
    load_source,
    set_parameters,
)


def component_definition(
    body: Mapping[str, Any], file: str | None, base: Path, ctx: Ctx
) -> list[RawControl]:
    """Implemented requirements, completed from the catalog/profile their
    ``control-implementations[].source`` names when it is a local file."""
    if not check_keys("component-definition", body, file, ctx):
        return []
    if not validate_oscal("component-definition", body, file, ctx):
        return []
    out: list[RawControl] = []
    for c_i, comp in enumerate(items(body, "components", file, ctx)):
        for i_i, impl in enumerate(items(comp, "control-implementations", file, ctx)):
            path_ci = f"components[{c_i}].control-implementations[{i_i}]"
            source = impl.get("source") if isinstance(impl, Mapping) else None
            path = resolve_href(source, base, body, file, ctx)
            catalog: dict[str, CatalogControl] | None = None
            if path is not None:
                if not path.exists():
                    ctx.add(f"source file not found: {path}", file, key="source")
                    continue
                catalog = load_source(path, ctx)
            shared = items(impl, "set-parameters", file, ctx)
            found: list[tuple[RawControl, CatalogControl, list[Any], str]] = []
            for r_i, ir in enumerate(items(impl, "implemented-requirements", file, ctx)):
                raw = raw_control(ir, file, ctx)
                if raw is None:
                    continue
                set_params = items(ir, "set-parameters", file, ctx, raw.control_id)
                if catalog is None:
                    if set_params or shared:
                        ctx.add(
                            "set-parameters needs a catalog or profile to set parameters in",
                            file,
                            raw.control_id,
                            "set-parameters",
                            hint="point control-implementations[].source at a catalog or "
                            "profile file, or write the threshold as a prop",
                        )
                    out.append(raw)
                    continue
                cc = catalog.get(str(raw.control_id))
                if cc is None:
                    if catalog:  # empty: loading it failed and said why
                        ctx.add(
                            f"control-id '{raw.control_id}' is not in {source}."
                            f"{did_you_mean(str(raw.control_id), catalog)}",
                            file,
                            raw.control_id,
                            "control-id",
                        )
                    continue
                found.append(
                    (
                        raw,
                        copy_control(cc),
                        set_params,
                        f"{path_ci}.implemented-requirements[{r_i}]",
                    )
                )
            shared_at: dict[str, str] = {}
            set_parameters(  # control-implementation level: every requirement
                shared,
                [cc for _, cc, _, _ in found],
                file,
                ctx,
                "component-definition",
                f"{path_ci}.set-parameters",
                shared_at,
            )
            for raw, cc, set_params, path_ir in found:
                set_parameters(
                    set_params,
                    [cc],
                    file,
                    ctx,
                    "component-definition",
                    f"{path_ir}.set-parameters",
                    dict(shared_at),
                )
                base_raw = catalog_control(cc, ctx)
                here = at(file, path_ir, None) + (f" (line {raw.line})" if raw.line else "")
                _check_overrides(base_raw, raw, here, ctx)
                theirs = dict(base_raw.props)
                replaced = None
                if "threshold" in theirs and any(n == "threshold" for n, _ in raw.props):
                    old_at = base_raw.prop_where.get("threshold", base_raw.file or "")
                    kind = "profile" if "modify.alters" in old_at else "catalog"
                    replaced = (theirs["threshold"], old_at, kind)
                out.append(
                    RawControl(
                        raw.control_id,
                        file,
                        raw.line,
                        merge_props(base_raw.props, raw.props),
                        raw.title or base_raw.title,
                        raw.description,
                        base_raw.threshold,
                        base_raw.threshold_source,
                        base_raw.objective_id,
                        base_raw.statement_id,
                        base_raw.threshold_param,
                        {**base_raw.prop_where, **{n: here for n, _ in raw.props}},
                        replaced,
                    )
                )
    return out


def _check_overrides(base: RawControl, cd: RawControl, here: str, ctx: Ctx) -> None:
    """A component-definition's props replace the catalog/profile control's props of the
    same name. Replacing what the control *measures* (metric, operator) is an error
    naming both places; an enforcement mode (``enforcement_mode``, or a warn/warning
    ``severity``: :mod:`fairpolicy.policy.modes`) that gates less than the one it replaces
    is an error when a profile set it (the baseline the component claims to implement) and
    a warning otherwise (reported with the results)."""
    mine = {n: v for n, v in cd.props}
    theirs = {n: v for n, v in base.props}
    cid = cd.control_id
    for name in ("metric_key", "operator"):
        if name in mine and name in theirs and str(mine[name]).strip() != str(theirs[name]).strip():
            ctx.add(
                f"prop '{name}' is '{mine[name]}' here ({here}) but '{theirs[name]}' in the "
                f"control it implements ({base.prop_where.get(name, base.file)}); a "
                "component-definition may not change what a control measures",
                cd.file,
                cid,
                name,
                hint=f"remove the '{name}' prop from the implemented requirement, or change "
                "the catalog/profile",
            )
    gating = ("enforcement_mode", "severity")
    if not any(n in mine for n in gating) or not any(n in theirs for n in gating):
        return
    merged = {**theirs, **mine}
    new = effective_mode(merged.get("enforcement_mode"), merged.get("severity"))
    old = effective_mode(theirs.get("enforcement_mode"), theirs.get("severity"))
    if new is not None and old is not None and MODE_RANK[new] > MODE_RANK[old]:
        mode_new, mode_old = new.value, old.value
        old_at = next(
            (base.prop_where[n] for n in gating if n in theirs and n in base.prop_where),
            base.file or "",
        )
        text = (
            f"control '{cid}': enforcement_mode '{mode_new}' ({here}) gates less than "
            f"'{mode_old}' ({old_at})"
        )
        if "modify.alters" in old_at:
            ctx.add(
                text + "; a component-definition may not loosen the profile's enforcement",
                cd.file,
                cid,
                "enforcement_mode",
                hint="remove enforcement_mode from the implemented requirement, or change the "
                "profile",
            )
        else:
            ctx.warnings.append(text + "; the component-definition's mode applies")
