"""OSCAL documents: shared types, reading, props, trestle validation and href confinement.

Everything here turns documents into :class:`RawControl` objects (a control id, its
props as ``(name, value)`` pairs, an optional threshold taken from an OSCAL param, and
where it was written). :mod:`fairpolicy.policy.profile` resolves catalogs and profiles,
:mod:`fairpolicy.policy.component` reads component-definitions, and
:mod:`fairpolicy.policy.load` validates raw controls into
:class:`~fairpolicy.policy.schema.Control` objects; these modules only gather them.

A document with ``uuid`` and ``metadata`` claims to be OSCAL and is validated with
compliance-trestle's models first (imported lazily: they take half a second to import).
Documents in the lenient forms (no uuid/metadata, or ``input:x`` prop names, which are
not OSCAL tokens) are read as plain mappings. Both are then walked as plain mappings,
which keeps the line numbers the YAML loader recorded.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from fairpolicy.errors import PolicyError, Problem
from fairpolicy.exact import written_number
from fairpolicy.policy.schema import NS
from fairpolicy.records import lean

if TYPE_CHECKING:  # a param's values: catalogs and profiles only
    from fairpolicy.policy.params import ParamValue

#: Root keys of the mapping forms, in the order error messages list them.
ROOTS = ("assessment-plan", "component-definition", "catalog", "profile", "system-security-plan")

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


@lean(frozen=False)
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
    #: ``--strict``: every document must be valid OSCAL (else one warning per document)
    strict: bool = False
    #: why the policy is recognisably Venturalitica's (:mod:`fairpolicy.policy.dialect`)
    recognised: str | None = None
    #: what the dialect changed, and Venturalitica's spellings read (said once each)
    dialect_notes: list[str] = field(default_factory=list)

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


@lean(frozen=False)
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
    value = yaml.SafeLoader.construct_yaml_float(loader, node)
    return written_number(node.value, value)


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
    sha = hashlib.sha256(data).hexdigest()
    key = (sha, path.suffix.lower() == ".json")
    if key not in _PARSED:  # a check reads its policy twice (prefetch, load): parse once
        _PARSED[key] = parse_text(text, file, json_fallback=key[1])
        while len(_PARSED) > 8:
            del _PARSED[next(iter(_PARSED))]
    return _deep_copy(_PARSED[key], {}), sha


#: documents parsed without error, by (sha256 of the bytes, read as JSON if YAML fails);
#: callers get a deep copy (line numbers kept), so a caller's changes never leak
_PARSED: dict[tuple[str, bool], Any] = {}

_ATOMS = (str, int, float, bool, type(None))


def _deep_copy(obj: Any, memo: dict[int, Any]) -> Any:
    """:func:`copy.deepcopy` of a parsed document, ~5× faster: the mappings and lists a
    loader builds are copied here (line numbers kept, an alias still one shared object),
    scalars are immutable and shared, anything else (a ``!!set``, ``!!omap``…) goes to
    ``copy.deepcopy`` with the same memo."""
    if type(obj) in _ATOMS:
        return obj
    done = memo.get(id(obj))
    if done is not None:
        return done
    if type(obj) is _LineDict or type(obj) is dict:
        out = type(obj)()
        if isinstance(obj, _LineDict) and isinstance(out, _LineDict):
            out.line = obj.line
        memo[id(obj)] = out
        for k, v in obj.items():
            out[_deep_copy(k, memo)] = _deep_copy(v, memo)
        return out
    if type(obj) is list:
        items: list[Any] = []
        memo[id(obj)] = items
        items.extend(_deep_copy(v, memo) for v in obj)
        return items
    return copy.deepcopy(obj, memo)


def parse_text(text: str, file: str | None, *, json_fallback: bool = False) -> Any:
    """YAML (which also reads JSON) with line numbers; a JSON file YAML rejects
    (tab indentation) is read again as JSON, without line numbers."""
    fast = _parse_plain_json(text)
    if fast is None:
        fast = _parse_plain_yaml(text)
    if fast is not None:
        return fast
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


_HAVE_LIBYAML = hasattr(yaml, "CSafeLoader")


class _CLoader(yaml.CSafeLoader if _HAVE_LIBYAML else yaml.SafeLoader):  # type: ignore[misc]
    """libyaml's parser with :class:`_Loader`'s constructors and resolver (so the same
    values and line numbers), for :func:`_parse_plain_json` only."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.duplicates: list[tuple[Any, int]] = []


_CLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_CLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_CLoader.add_constructor("tag:yaml.org,2002:float", _construct_float)

#: what the pure-Python reader would read differently from libyaml; with what it refuses
#: (its own compiled ``NON_PRINTABLE``: one pattern of both would compile that large
#: character class again, ~3 ms of every start), see :func:`_not_plain`
_DIFFERENT = re.compile(r"[\t\x85\u2028\u2029]|\\u[dD][89a-fA-F]|\\/")


def _not_plain(text: str) -> bool:
    """Whether ``text`` holds a character or escape the pure-Python reader refuses or
    reads differently from libyaml."""
    return bool(_DIFFERENT.search(text) or yaml.reader.Reader.NON_PRINTABLE.search(text))


def _plain_shape(value: Any, depth: int = 1) -> bool:
    """JSON nested well under :data:`MAX_DEPTH` with keys well under YAML's 1,024-character
    simple-key limit."""
    if depth > MAX_DEPTH // 2:
        return False
    if isinstance(value, dict):
        return all(len(k) <= 120 and _plain_shape(v, depth + 1) for k, v in value.items())
    if isinstance(value, list):
        return all(_plain_shape(v, depth + 1) for v in value)
    return True


def _parse_plain_json(text: str) -> Any | None:
    """A plain JSON document (no tab, no escape or character the pure-Python reader treats
    differently, not deep, no duplicate key) parsed by libyaml with the same constructors:
    the same values and line numbers as :class:`_Loader`, ~15× faster (issue 17, a lean
    start). None: anything else, or any doubt; the pure-Python path then decides."""
    head = text.lstrip(" \r\n")
    if not _HAVE_LIBYAML or head[:1] not in ("{", "[") or _not_plain(text):
        return None
    try:
        if not _plain_shape(json.loads(text)):
            return None
        loader = _CLoader(text)
        try:
            data = loader.get_single_data()
        finally:
            loader.dispose()
    except (ValueError, RecursionError, yaml.YAMLError):
        return None
    return None if loader.duplicates else data


#: YAML the fast path leaves to the pure-Python loader, wherever it appears (in a quoted
#: scalar or a comment too): anchors and aliases, tags, escapes, a BOM, '?' (a complex key;
#: it ends a plain scalar in PyYAML's flow context, not in libyaml's), merge keys,
#: directives, what may start a block scalar, lines of 1,000 characters or more
_NOT_SIMPLE_YAML = re.compile(
    r"[&*!\\?\ufeff]|<<|^%|(?:^|[:\-\[{,])[ ]*[|>]|^[^\n]{1000}", re.MULTILINE
)


def _parse_plain_yaml(text: str) -> Any | None:
    """A simple YAML document (none of :data:`_NOT_SIMPLE_YAML`, nothing :func:`_not_plain`
    finds, every scalar on one line, not deep, no duplicate key) parsed by libyaml with the
    same constructors as :class:`_Loader`: the same values and line numbers, ~8× faster
    (issue 17). None: anything else, or any doubt; the pure-Python path then decides."""
    if not _HAVE_LIBYAML or _NOT_SIMPLE_YAML.search(text) or _not_plain(text):
        return None
    try:
        loader = _CLoader(text)
        try:
            node = loader.get_single_node()
            if node is None or not _simple_nodes(node):
                return None
            data = loader.construct_document(node)
        finally:
            loader.dispose()
    except (ValueError, RecursionError, yaml.YAMLError):
        return None
    return None if loader.duplicates else data


def _simple_nodes(root: yaml.Node) -> bool:
    """Nested well under :data:`MAX_DEPTH`, every scalar on one line (no folding)."""
    stack = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH // 2:
            return False
        if isinstance(node, yaml.ScalarNode):
            if node.start_mark.line != node.end_mark.line:
                return False
        elif isinstance(node, yaml.SequenceNode):
            stack += [(child, depth + 1) for child in node.value]
        else:
            stack += [(child, depth + 1) for pair in node.value for child in pair]
    return True


def _parse_json(text: str, file: str | None) -> Any:
    try:
        data = json.loads(
            text,
            object_pairs_hook=_json_pairs(file),
            parse_float=lambda t: written_number(t, float(t)),
        )
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
                _foreign_prop(p, file, control, ctx)
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


def _ns_key(ns: str) -> str:
    """A namespace URI without scheme, case and trailing slashes, to spot near misses."""
    return re.sub(r"^[a-z][a-z0-9+.-]*://", "", ns.strip().lower()).rstrip("/")


def _foreign_prop(p: Mapping[str, Any], file: str | None, control: Any, ctx: Ctx) -> None:
    """A prop in another tool's ``ns`` is not fairpolicy's to read, unless the ``ns`` is a
    near miss of fairpolicy's (``http://``, another case): then it is an error, as a
    setting dropped on a typo could loosen the gate."""
    ns, name = str(p["ns"]), str(p["name"]).strip()
    if _ns_key(ns) == _ns_key(NS):
        ctx.add(
            f"prop '{name}' has ns '{ns}', which is not fairpolicy's namespace but a near "
            "miss of it, so it would be ignored",
            file,
            control,
            name,
            hint=f"write ns: '{NS}' exactly (or leave ns out)",
        )


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


#: at most this many schema problems are listed in the lenient warning
LENIENT_LISTED = 10


def validate_oscal(root: str, body: Any, file: str | None, ctx: Ctx) -> bool:
    """Validate a document that claims to be OSCAL (under ``ctx.strict``: every catalog,
    profile and component-definition) with trestle's model for ``root``.

    Lenient by default: what OSCAL's schema would reject (a missing ``last-modified``,
    ``oscal-version``, a ``description`` …) is one warning listing every problem and the
    fix, and the document is evaluated: fairpolicy reads its own fields, and keys it does
    not read are refused anyway (:mod:`fairpolicy.policy.keys`). Under ``ctx.strict`` the
    same problems are errors. Returns False when the document must not be read."""
    if not claims_oscal(body) and not ctx.strict:
        return True
    if not ctx.strict:
        found: list[tuple[str, str]] = []
        ok = _trestle_problems(root, body, file, found)
        if not ok:
            listed = "; ".join(f"{loc}: {msg}" for loc, msg in found[:LENIENT_LISTED])
            more = len(found) - LENIENT_LISTED
            ctx.warnings.append(
                f"{file or 'policy'}: not valid OSCAL ({root}): {len(found)} problem(s) NIST's "
                f"schema would reject: {listed}{f'; and {more} more' if more > 0 else ''}. "
                "It was evaluated anyway (the results written are valid OSCAL). Fix: "
                f"`fairpolicy convert {file or 'POLICY'} -o catalog.json --profile "
                "profile.json` writes valid OSCAL, or add the fields; --strict makes this an "
                "error."
            )
        return True
    found = []
    if _trestle_problems(root, body, file, found):
        return True
    for loc, msg in found[:10]:
        ctx.add(
            f"not valid OSCAL: {msg}",
            file,
            key=loc,
            hint=f"fix the document against the OSCAL {root} schema (--strict requires "
            "valid OSCAL input), or run `fairpolicy convert` to write it",
        )
    if len(found) > 10:
        ctx.add(f"not valid OSCAL: {len(found) - 10} more errors", file)
    return False


def _trestle_problems(root: str, body: Any, file: str | None, found: list[tuple[str, str]]) -> bool:
    """Validate with trestle's model for ``root``; True when valid, else the (location,
    message) problems are appended to ``found``. Successes are cached by content."""
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
    elif root == "system-security-plan":
        from trestle.oscal.ssp import SystemSecurityPlan as Model  # type: ignore[assignment]
    else:
        from trestle.oscal.component import (  # type: ignore[assignment]
            ComponentDefinition as Model,
        )
    from pydantic import ValidationError
    from trestle.common.err import TrestleError

    try:
        Model.model_validate(document)
    except (ValidationError, TrestleError) as exc:
        # trestle re-raises a ValidationError that touches oscal-version as a TrestleError
        cause = exc if isinstance(exc, ValidationError) else exc.__context__
        if not isinstance(cause, ValidationError):
            found.append((root, str(exc)))
            return False
        for err in cause.errors():
            loc = root + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"])
            found.append((loc, str(err["msg"])))
        return False
    cache.remember(key)
    return True


# ---------------------------------------------------------------- href loading and confinement


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


def at(file: str | None, path: str, obj: Any = None) -> str:
    """A place for messages: ``file, path (line N)``."""
    line = line_of(obj)
    return f"{file or 'policy'}, {path}" + (f" (line {line})" if line else "")
