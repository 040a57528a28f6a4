"""OSCAL documents: reading, props, and catalog → profile → component-definition chains.

Everything here turns documents into :class:`RawControl` objects (a control id, its
props as ``(name, value)`` pairs, an optional threshold taken from an OSCAL param, and
where it was written). :mod:`fairpolicy.policy.load` validates raw controls into
:class:`~fairpolicy.policy.schema.Control` objects; this module only gathers them.

A document with ``uuid`` and ``metadata`` claims to be OSCAL and is validated with
compliance-trestle's models first (imported lazily: they take half a second to import).
Documents in the lenient forms (no uuid/metadata, or ``input:x`` prop names, which are
not OSCAL tokens) are read as plain mappings. Both are then walked as plain mappings,
which keeps the line numbers the YAML loader recorded.
"""

from __future__ import annotations

import copy
import dataclasses
import fnmatch
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from fairpolicy.errors import PolicyError, Problem, did_you_mean
from fairpolicy.policy.schema import NS

#: Root keys of the mapping forms, in the order error messages list them.
ROOTS = ("assessment-plan", "component-definition", "catalog", "profile")

#: Props fairpolicy reads past: OSCAL core names, prose, and governance metadata that
#: Venturalitica's templates carry (its loader's profile properties and compiler output).
INFORMATIVE_PROPS = frozenset(
    {
        *("label", "sort-id", "status", "alt-identifier", "marking"),
        *("reference", "rationale", "note", "remarks", "source", "article"),
        *("evaluation_method", "evaluation_window", "target_type", "treatment_id"),
        *("policy_id", "objective_id", "risk_acceptance_criteria", "threshold_justification"),
        *("stakeholder_consultation_ref", "control_tier", "frameworks", "standard_clauses"),
    }
)

Prop = tuple[str, Any]


@dataclass(frozen=True)
class ParamValue:
    """The values of one param as the policy chain left them, and where they were set."""

    values: list[Any] | None
    file: str | None
    #: kind of document that set them: ``catalog``, ``profile``, ``component-definition``
    kind: str
    #: the place for messages: file, path in the document and line
    where: str
    #: the values this one replaced, earliest first (a catalog's, then a profile's, ...)
    earlier: tuple[ParamValue, ...] = ()


#: param id → its values
Params = dict[str, ParamValue]


@dataclass
class Ctx:
    """Problems and warnings collected while loading one policy (and what it imports)."""

    problems: list[Problem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    colon_files: set[str | None] = field(default_factory=set)
    #: every document read while resolving the policy besides the policy file itself:
    #: (path, SHA-256 of its bytes, OSCAL model), in the order read
    documents: list[tuple[str, str, str]] = field(default_factory=list)
    #: folders the policy's hrefs may resolve into (None: not confined)
    roots: tuple[Path, ...] | None = None

    def add(
        self,
        message: str,
        file: str | None,
        control: Any = None,
        key: str | None = None,
        hint: str | None = None,
    ) -> None:
        ctl = None if control is None else str(control)
        if not message.endswith((".", "?", "!")):
            message += "."
        self.problems.append(Problem(message, file=file, control=ctl, key=key, hint=hint))


@dataclass
class RawControl:
    """A control as written, before validation."""

    control_id: Any
    file: str | None
    line: int | None
    props: list[Prop]
    title: Any = None
    description: Any = None
    #: (key for messages, values) when the threshold comes from an OSCAL param
    threshold: tuple[str, list[Any]] | None = None
    #: which document set that param's values (``catalog``, ``profile``,
    #: ``component-definition``); None when the threshold is not a param's
    threshold_source: str | None = None
    #: ids of the catalog control's ``assessment-objective`` and ``statement`` parts
    objective_id: str | None = None
    statement_id: str | None = None
    #: the threshold param's values (with the values they replaced); None without a param
    threshold_param: ParamValue | None = None
    #: prop name → where that prop was written (for messages naming both places)
    prop_where: dict[str, str] = field(default_factory=dict)
    #: the catalog/profile control's ``threshold`` prop that a component-definition's
    #: ``threshold`` prop replaced: (value, where, ``profile`` or ``catalog``)
    replaced_threshold: tuple[Any, str, str] | None = None


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


# ---------------------------------------------------------------- reading files


class _LineDict(dict[Any, Any]):
    """A mapping that remembers the 1-based line it started on."""

    line: int | None = None


#: a policy file larger than this is refused before it is parsed
MAX_POLICY_BYTES = 10 << 20
#: collections nested deeper than this are refused (the parser and every walker recurse)
MAX_DEPTH = 100
#: nodes that aliases may add beyond those written (a "billion laughs" adds 9**9)
MAX_ALIAS_NODES = 100_000


class _LimitError(Exception):
    """A document over one of the limits above; never retried as JSON."""

    def __init__(self, message: str, mark: Any = None, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = None if mark is None else mark.line + 1
        self.hint = hint


class _Loader(yaml.SafeLoader):
    """Safe YAML (JSON is YAML) with line numbers; duplicate keys are recorded; nesting
    depth and alias expansion are limited."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.duplicates: list[tuple[Any, int]] = []
        self.depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise _LimitError(
                    f"the document is nested deeper than {MAX_DEPTH} levels",
                    self.peek_event().start_mark,  # type: ignore[no-untyped-call]
                    "a policy needs a few levels; flatten the document",
                )
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1

    def compose_document(self) -> Any:
        node = super().compose_document()
        if node is not None:
            _check_aliases(node)
        return node


def _check_aliases(root: yaml.Node) -> None:
    """Refuse recursive aliases and aliases that expand the document by more than
    :data:`MAX_ALIAS_NODES` nodes. Linear in the nodes written (sizes are memoised)."""
    sizes: dict[int, int] = {}
    active: set[int] = set()

    def size(node: yaml.Node) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in active:
            raise _LimitError(
                "an alias refers to a collection that contains it (a recursive alias)",
                node.start_mark,
                "write the structure out without the recursive alias",
            )
        active.add(key)
        total = 1
        if isinstance(node, yaml.SequenceNode):
            total += sum(size(child) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            total += sum(size(k) + size(v) for k, v in node.value)
        active.discard(key)
        sizes[key] = total
        return total

    expanded = size(root)
    if expanded - len(sizes) > MAX_ALIAS_NODES:
        raise _LimitError(
            f"aliases (*name) expand the document to {expanded:,} nodes from the "
            f"{len(sizes):,} written, more than {MAX_ALIAS_NODES:,} extra (an alias bomb, "
            "'billion laughs')",
            None,
            "write repeated parts out, or use fewer aliases",
        )


def _construct_int(loader: _Loader, node: yaml.ScalarNode) -> Any:
    if not _PLAIN_INT.fullmatch(node.value):  # 0_10, 0x1A, 1:30, 012: keep the text
        return node.value
    try:
        return yaml.SafeLoader.construct_yaml_int(loader, node)
    except ValueError:  # more digits than int() converts (sys.get_int_max_str_digits)
        raise yaml.constructor.ConstructorError(
            None, None, f"found a number with {len(node.value)} digits", node.start_mark
        ) from None


def _construct_float(loader: _Loader, node: yaml.ScalarNode) -> Any:
    if not _PLAIN_FLOAT.fullmatch(node.value) and not _NONFINITE.fullmatch(node.value):
        # 1_0.5, 1:30.0: keep the text (.inf and .nan stay floats; no one misreads them)
        return node.value
    return yaml.SafeLoader.construct_yaml_float(loader, node)


#: YAML 1.1 reads 0_10, 0x1A, 010 (octal) and 1:30 (base 60) as numbers; a policy means
#: none of these, so they stay the text written and the strict number grammar
#: (:mod:`fairpolicy.policy.numbers`) refuses them where a number is due.
_PLAIN_INT = re.compile(r"[+-]?(?:0|[1-9][0-9]*)", re.ASCII)
_NONFINITE = re.compile(r"[+-]?\.(?:nan|inf)", re.ASCII | re.IGNORECASE)
_PLAIN_FLOAT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)


def _construct_mapping(loader: _Loader, node: yaml.MappingNode) -> _LineDict:
    own = {id(key_node) for key_node, _ in node.value}  # a `<<` merge may be overridden
    loader.flatten_mapping(node)
    out = _LineDict()
    out.line = node.start_mark.line + 1
    written: set[Any] = set()
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            if id(key_node) in own:
                if key in written:
                    loader.duplicates.append((key, key_node.start_mark.line + 1))
                written.add(key)
            out[key] = loader.construct_object(value_node, deep=True)
        except TypeError:
            raise yaml.constructor.ConstructorError(
                None, None, "found a mapping key that is not a scalar", key_node.start_mark
            ) from None
    return out


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_Loader.add_constructor("tag:yaml.org,2002:float", _construct_float)


def line_of(obj: Any) -> int | None:
    return obj.line if isinstance(obj, _LineDict) else None


def read_document(path: Path) -> tuple[Any, str]:
    """Parse a YAML or JSON file; returns (data, sha256 of its bytes). Raises PolicyError."""
    file = str(path)
    try:
        from fairpolicy.files import open_regular

        with open_regular(path, PolicyError, "policy") as fh:  # a FIFO would block
            data = fh.read(MAX_POLICY_BYTES + 1)
    except FileNotFoundError:
        raise PolicyError(
            Problem("policy file not found.", file=file, hint=f"check the path ({path.absolute()})")
        ) from None
    except OSError as exc:
        raise PolicyError(Problem(f"cannot read the file: {exc.strerror}.", file=file)) from None
    except ValueError:  # a NUL in the path
        raise PolicyError(Problem("not a valid path (it holds a NUL byte).", file=file)) from None
    if len(data) > MAX_POLICY_BYTES:
        size = path.stat().st_size
        raise PolicyError(
            Problem(
                f"the file is larger than {MAX_POLICY_BYTES >> 20} MiB ({size / (1 << 20):.1f} "
                "MiB); a policy is a few kilobytes.",
                file=file,
                hint="check that this is the policy file, not data",
            )
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise PolicyError(
            Problem(f"not UTF-8 text (bad byte at offset {exc.start}).", file=file)
        ) from None
    return parse_text(text, file, json_fallback=path.suffix.lower() == ".json"), hashlib.sha256(
        data
    ).hexdigest()


def parse_text(text: str, file: str | None, *, json_fallback: bool = False) -> Any:
    """YAML (which also reads JSON) with line numbers; a JSON file YAML rejects
    (tab indentation) is read again as JSON, without line numbers."""
    loader = None
    try:
        loader = _Loader(text)  # the reader refuses control characters here already
        data = loader.get_single_data()
    except _LimitError as exc:
        at = f" (line {exc.line})" if exc.line else ""
        raise PolicyError(Problem(f"{exc.message}{at}.", file=file, hint=exc.hint)) from None
    except yaml.YAMLError as exc:
        if json_fallback:
            return _parse_json(text, file)
        raise PolicyError(_yaml_problem(exc, file, text)) from None
    finally:
        if loader is not None:
            loader.dispose()
    assert loader is not None
    if loader.duplicates:
        raise PolicyError(
            [
                Problem(
                    f"duplicate key '{key}' on line {line}.",
                    file=file,
                    key=str(key),
                    hint="a key may appear once per mapping; remove or rename one of them",
                )
                for key, line in loader.duplicates
            ]
        )
    return data


def _parse_json(text: str, file: str | None) -> Any:
    try:
        data = json.loads(text, object_pairs_hook=_json_pairs(file))
    except json.JSONDecodeError as jexc:
        where = f"line {jexc.lineno}, column {jexc.colno}"
        raise PolicyError(Problem(f"cannot parse JSON: {jexc.msg} ({where}).", file=file)) from None
    except (RecursionError, ValueError) as exc:  # nesting; a number too long for int()
        what = (
            f"the document is nested deeper than {MAX_DEPTH} levels"
            if isinstance(exc, RecursionError)
            else str(exc).split(";")[0]
        )
        raise PolicyError(Problem(f"cannot parse JSON: {what}.", file=file)) from None
    if _depth(data) > MAX_DEPTH:
        raise PolicyError(
            Problem(f"the document is nested deeper than {MAX_DEPTH} levels.", file=file)
        )
    return data


def _depth(obj: Any) -> int:
    """Nesting depth of parsed JSON, without recursion."""
    deepest, stack = 0, [(obj, 1)]
    while stack:
        node, d = stack.pop()
        if isinstance(node, dict | list):
            deepest = max(deepest, d)
            stack += [(v, d + 1) for v in (node.values() if isinstance(node, dict) else node)]
    return deepest


def _json_pairs(file: str | None) -> Callable[[list[tuple[str, Any]]], dict[str, Any]]:
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                raise PolicyError(Problem(f"duplicate key '{key}'.", file=file, key=key))
            out[key] = value
        return out

    return hook


def _yaml_problem(exc: yaml.YAMLError, file: str | None, text: str = "") -> Problem:
    if isinstance(exc, yaml.reader.ReaderError):
        line = text[: exc.position].count("\n") + 1
        return Problem(
            f"cannot parse YAML: the text holds the control character U+{exc.character:04X} "
            f"(line {line}).",
            file=file,
            hint="remove it; YAML allows tab, line breaks and printable characters only",
        )
    if not isinstance(exc, yaml.MarkedYAMLError):
        return Problem(f"cannot parse YAML: {exc}.", file=file)
    what = " ".join(s for s in (exc.context, exc.problem) if s) or "syntax error"
    mark = exc.problem_mark or exc.context_mark
    where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
    hint = None
    if "constructor for the tag" in what:
        hint = "policies are plain YAML or JSON; remove the '!' tag"
    elif "'\\t'" in what:
        hint = "indent YAML with spaces; a tab cannot start a token"
    return Problem(f"cannot parse YAML: {what}{where}.", file=file, hint=hint)


# ---------------------------------------------------------------- plain-mapping helpers


def items(obj: Any, key: str, file: str | None, ctx: Ctx, control: Any = None) -> list[Any]:
    """``obj[key]`` as a list ([] when absent); a non-list is a problem."""
    value = obj.get(key) if isinstance(obj, Mapping) else None
    if value is None:
        return []
    if isinstance(value, list):
        return value
    ctx.add(f"'{key}' must be a list, not {type(value).__name__}", file, control, key)
    return []


def mapping(obj: Any, key: str) -> Mapping[str, Any]:
    value = obj.get(key) if isinstance(obj, Mapping) else None
    return value if isinstance(value, Mapping) else {}


def read_props(raw: Any, file: str | None, control: Any, ctx: Ctx) -> list[Prop]:
    """fairpolicy's props of one control: a list of {name, value, ns?} or a mapping.

    Props in a foreign ``ns`` and informative props are dropped; ``input:x`` becomes
    ``input.x`` with one warning per file.
    """
    if raw is None:
        return []
    pairs: list[tuple[Any, Any]] = []
    if isinstance(raw, Mapping):
        pairs = list(raw.items())
    elif isinstance(raw, list):
        for p in raw:
            if not (isinstance(p, Mapping) and isinstance(p.get("name"), str) and p["name"]):
                ctx.add(
                    f"a prop must be a mapping with 'name' and 'value', got {p!r}",
                    file,
                    control,
                    "props",
                )
            elif p.get("ns") in (None, "") or str(p["ns"]).rstrip("/") == NS:
                pairs.append((p["name"], p.get("value")))
    else:
        ctx.add("props must be a list of {name, value} or a mapping", file, control, "props")
    out: list[Prop] = []
    for name, value in pairs:
        name = str(name).strip()
        if name in INFORMATIVE_PROPS:
            continue
        if isinstance(value, Mapping) or (isinstance(value, list) and name != "threshold"):
            ctx.add(f"prop '{name}' must have a single value, got {value!r}", file, control, name)
            continue
        if name.startswith("input:"):
            if file not in ctx.colon_files:
                ctx.colon_files.add(file)
                ctx.warnings.append(
                    f"{file or 'policy'}: OSCAL prop names cannot contain ':'; "
                    f"write 'input.{name[6:]}' instead of '{name}'"
                )
            name = "input." + name[6:]
        out.append((name, value))
    return out


def raw_control(item: Any, file: str | None, ctx: Ctx) -> RawControl | None:
    """An implemented-requirement (or a bare-list control) as a raw control."""
    if not isinstance(item, Mapping):
        ctx.add(f"a control must be a mapping, got {item!r}", file)
        return None
    cid = item.get("control-id", item.get("id"))
    return RawControl(
        control_id=cid,
        file=file,
        line=line_of(item),
        props=read_props(item.get("props"), file, cid, ctx),
        title=item.get("title"),
        description=item.get("description"),
    )


def merge_props(base: list[Prop], override: list[Prop]) -> list[Prop]:
    names = {name for name, _ in override}
    return [p for p in base if p[0] not in names] + override


# ---------------------------------------------------------------- trestle validation


def claims_oscal(body: Any) -> bool:
    """Has uuid and metadata, and no ``input:x`` prop names (which OSCAL rejects)."""
    return (
        isinstance(body, Mapping)
        and "uuid" in body
        and "metadata" in body
        and not any(":" in str(p.get("name", "")) for p in _all_props(body))
    )


def _all_props(obj: Any) -> Iterator[Mapping[str, Any]]:
    if isinstance(obj, Mapping):
        for key, value in obj.items():
            if key == "props" and isinstance(value, list):
                yield from (p for p in value if isinstance(p, Mapping))
            else:
                yield from _all_props(value)
    elif isinstance(obj, list):
        for value in obj:
            yield from _all_props(value)


def _stringify(obj: Any) -> Any:
    """YAML numbers and booleans as the strings OSCAL wants."""
    if isinstance(obj, bool):
        return "true" if obj else "false"
    if isinstance(obj, int | float):
        return str(obj)
    if isinstance(obj, Mapping):
        return {k: _stringify(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_stringify(v) for v in obj]
    return obj


def validate_oscal(root: str, body: Any, file: str | None, ctx: Ctx) -> bool:
    """Validate a document that claims to be OSCAL with trestle's model for ``root``."""
    if not claims_oscal(body):
        return True
    from fairpolicy import cache

    document = _stringify(body)
    key = cache.key_for(
        f"trestle:{root}", document, ("compliance-trestle", "pydantic"), (Path(__file__),)
    )
    if cache.seen_valid(key):  # only successes are cached: errors are always fresh
        return True
    if root == "catalog":
        from trestle.oscal.catalog import Catalog as Model
    elif root == "profile":
        from trestle.oscal.profile import Profile as Model  # type: ignore[assignment]
    else:
        from trestle.oscal.component import (  # type: ignore[assignment]
            ComponentDefinition as Model,
        )
    from trestle.common.err import TrestleError

    try:
        Model.model_validate(document)
    except (ValidationError, TrestleError) as exc:
        # trestle re-raises a ValidationError that touches oscal-version as a TrestleError
        cause = exc if isinstance(exc, ValidationError) else exc.__context__
        if not isinstance(cause, ValidationError):
            ctx.add(f"not valid OSCAL: {exc}", file, key=root)
            return False
        errors = cause.errors()
        for err in errors[:10]:
            loc = root + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"])
            ctx.add(
                f"not valid OSCAL: {err['msg']}",
                file,
                key=loc,
                hint=f"fix the document against the OSCAL {root} schema (it has uuid and "
                "metadata, so it is read as OSCAL)",
            )
        if len(errors) > 10:
            ctx.add(f"not valid OSCAL: {len(errors) - 10} more errors", file)
        return False
    cache.remember(key)
    return True


# ---------------------------------------------------------------- catalogs and profiles


def resolve_href(href: Any, base: Path, body: Any, file: str | None, ctx: Ctx) -> Path | None:
    """A local file for ``href``: relative to ``base``, or a ``#uuid`` back-matter
    resource's rlink. None when it names no local file (remote URL, unknown fragment)."""
    if not isinstance(href, str) or not href.strip():
        return None
    if href.startswith("#"):
        for res in items(mapping(body, "back-matter"), "resources", file, ctx):
            if isinstance(res, Mapping) and res.get("uuid") == href[1:]:
                for link in items(res, "rlinks", file, ctx):
                    target = link.get("href") if isinstance(link, Mapping) else None
                    if isinstance(target, str) and not target.startswith("#"):
                        return resolve_href(target, base, body, file, ctx)
        return None
    if href.startswith("file://"):
        return confined(Path(href[7:]), href, file, ctx)
    if "://" in href:
        ctx.warnings.append(f"{file or 'policy'}: '{href}' is not a local file; not fetched")
        return None
    return confined(base / href, href, file, ctx)


def confinement(base: Path, allow: Any = ()) -> tuple[Path, ...]:
    """The folders a policy loaded from ``base`` may name files in: its own folder tree
    and every ``--allow-path`` folder (resolved: symbolic links followed)."""
    return tuple(Path(os.path.realpath(p)) for p in (base, *allow))


def confined(path: Path, href: str, file: str | None, ctx: Ctx) -> Path:
    """``path`` when it lies under one of ``ctx.roots`` (after resolving ``..`` and
    symbolic links); a PolicyError naming the href and the flag otherwise."""
    if ctx.roots is None:
        return path
    real = Path(os.path.realpath(path))
    if any(real == root or root in real.parents for root in ctx.roots):
        return path
    raise PolicyError(
        Problem(
            f"href '{href}' names {real}, outside the policy's folder {ctx.roots[0]}; a "
            "policy may only import files in its own folder tree.",
            file=file,
            key="href",
            hint=f"copy the file next to the policy, or allow its folder with --allow-path "
            f"{real.parent} (fairpolicy.check(..., allow_paths=[...])).",
        )
    )


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


def at(file: str | None, path: str, obj: Any = None) -> str:
    """A place for messages: ``file, path (line N)``."""
    line = line_of(obj)
    return f"{file or 'policy'}, {path}" + (f" (line {line})" if line else "")


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
            controls[cid] = _copy(cc)
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


def _copy(cc: CatalogControl) -> CatalogControl:
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


# ---------------------------------------------------------------- component-definitions


def component_definition(
    body: Mapping[str, Any], file: str | None, base: Path, ctx: Ctx
) -> list[RawControl]:
    """Implemented requirements, completed from the catalog/profile their
    ``control-implementations[].source`` names when it is a local file."""
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
                    (raw, _copy(cc), set_params, f"{path_ci}.implemented-requirements[{r_i}]")
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


#: enforcement modes from the one that gates most to the one that gates least
MODE_RANK = {"block": 0, "warn": 1, "monitor": 2}


def _check_overrides(base: RawControl, cd: RawControl, here: str, ctx: Ctx) -> None:
    """A component-definition's props replace the catalog/profile control's props of the
    same name. Replacing what the control *measures* (metric, operator) is an error
    naming both places; an enforcement_mode that gates less than the one it replaces is
    an error when a profile set it (the baseline the component claims to implement) and a
    warning otherwise (reported with the results)."""
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
    mode_new = str(mine.get("enforcement_mode", "")).strip().lower()
    mode_old = str(theirs.get("enforcement_mode", "")).strip().lower()
    if (
        mode_new in MODE_RANK
        and mode_old in MODE_RANK
        and MODE_RANK[mode_new] > MODE_RANK[mode_old]
    ):
        old_at = base.prop_where.get("enforcement_mode", base.file or "")
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
