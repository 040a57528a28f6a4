"""Validation against NIST's OSCAL 1.2.3 JSON schema (the vendored, unmodified file).

The schema ships inside the package (``fairpolicy/schemas_nist/oscal_complete_schema.json``,
byte-identical to NIST's ``oscal_complete_schema.json`` release asset; origin and SHA-256
in ``schemas/oscal/README.md``). Its root is a ``oneOf`` with one branch per model; a
document is validated against the branch of the model it claims, so errors point into the
document instead of at "not valid under any of the given schemas".

The schema is draft-07, but its patterns are written for a Unicode-aware ECMA-262 engine
(``\\p{L}``, ``\\p{N}``), which Python's :mod:`re` cannot compile. The ``pattern`` keyword
is therefore evaluated with the :mod:`regex` module, with ECMA-262's meaning of ``$`` (end
of input only, not before a final newline) and ``.`` (no line terminators). OSCAL checks
UUIDs, tokens, dates and URIs with ``pattern``; the one datatype it leaves to ``format``
alone, ``uri-reference``, is checked here against RFC 3986 (``uri`` too), so the result does
not depend on which optional format libraries happen to be installed.

Validators are built once per model (and per YAML leniency) and cached; the whole module
imports :mod:`jsonschema` lazily so ``fairpolicy --help`` stays fast.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
from collections.abc import Iterator, Mapping
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fairpolicy.errors import FairpolicyError, OutputError, PolicyError, Problem

if TYPE_CHECKING:
    import regex
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

__all__ = [
    "MODELS",
    "OSCAL_VERSION",
    "SCHEMA_FILE",
    "check_document",
    "load_schema",
    "schema_path",
    "validate_document",
]

#: The OSCAL release of the vendored schema.
OSCAL_VERSION = "1.2.3"

#: The vendored NIST file, inside the package (``fairpolicy/schemas_nist/``).
SCHEMA_FILE = "oscal_complete_schema.json"

#: Models fairpolicy reads or writes (the schema has more: ssp, poam, mapping-collection).
MODELS = (
    "assessment-results",
    "assessment-plan",
    "system-security-plan",
    "catalog",
    "profile",
    "component-definition",
)

#: At most this many schema errors become problems of one :func:`check_document` call.
MAX_PROBLEMS = 25

#: What a value matching each OSCAL datatype's pattern looks like, for error messages.
_DATATYPE_HELP = {
    "UUIDDatatype": "a version 4 or 5 UUID (RFC 4122), e.g. 3c0b7d52-7f1e-4b8a-9a43-1f2d6c8e4a70",
    "TokenDatatype": "an OSCAL token: a letter or '_', then letters, digits, '.', '-' or '_' "
    "(no ':' and no spaces; write 'input.target', not 'input:target')",
    "DateTimeWithTimezoneDatatype": "a date-time with a timezone, e.g. 2026-01-15T12:00:00Z",
    "DateDatatype": "a date with an optional timezone, e.g. 2026-01-15",
    "StringDatatype": "a non-empty string without leading or trailing whitespace",
    "MarkupLineDatatype": "a single line of text",
    "URIDatatype": "an absolute URI with a scheme, e.g. https://example.org/ns",
    "Base64Datatype": "base64 text",
    "DecimalDatatype": "a decimal number",
    "EmailAddressDatatype": "an email address",
}


# ---------------------------------------------------------------- the vendored schema


def schema_path() -> Path:
    """The vendored schema file on disk (for the validation cache's key)."""
    return Path(str(resources.files("fairpolicy").joinpath("schemas_nist", SCHEMA_FILE)))


@functools.cache
def load_schema() -> dict[str, Any]:
    """The vendored NIST OSCAL complete schema, parsed (cached; do not mutate)."""
    text = resources.files("fairpolicy").joinpath("schemas_nist", SCHEMA_FILE).read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def _model_schema(model: str) -> dict[str, Any]:
    """The complete schema with its root narrowed to the ``oneOf`` branch of ``model``."""
    complete = load_schema()
    for branch in complete["oneOf"]:
        if branch.get("required") == [model]:
            return {
                "$schema": complete["$schema"],
                "$id": complete["$id"],
                "type": "object",
                **branch,
                "definitions": complete["definitions"],
            }
    raise ValueError(f"the OSCAL {OSCAL_VERSION} schema has no model '{model}'")  # pragma: no cover


@functools.cache
def _datatype_of_pattern() -> dict[str, str]:
    """Pattern text → name of the datatype definition that declares it."""
    out: dict[str, str] = {}
    for name, definition in load_schema()["definitions"].items():
        for part in (definition, *definition.get("allOf", ())):
            if isinstance(part, Mapping) and isinstance(part.get("pattern"), str):
                out.setdefault(part["pattern"], name)
    return out


# ---------------------------------------------------------------- ECMA-262 patterns via `regex`


def _ecma_to_regex(pattern: str) -> str:
    """Rewrite the two ECMA-262 meanings Python engines differ on: ``$`` matches only at
    the end of the input, ``.`` matches no line terminator. Escapes and classes are kept."""
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif ch == "$":
            ch = r"\Z"
        elif ch == ".":
            ch = r"[^\n\r\u2028\u2029]"
        out.append(ch)
        i += 1
    return "".join(out)


@functools.cache
def _compiled(pattern: str) -> regex.Pattern[str]:
    import regex

    return regex.compile(_ecma_to_regex(pattern))


def _as_text(instance: Any) -> str:
    """A string-like instance as OSCAL text (YAML scalars in lenient mode)."""
    if isinstance(instance, bool):
        return "true" if instance else "false"
    if isinstance(instance, dt.datetime | dt.date):
        return instance.isoformat()
    return str(instance)


def _pattern(
    validator: Any, pattern: str, instance: Any, schema: Mapping[str, Any]
) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "string"):
        return
    if _compiled(pattern).search(_as_text(instance)) is None:
        name = _datatype_of_pattern().get(pattern)
        if name in _DATATYPE_HELP:
            message = f"{instance!r} is not {_DATATYPE_HELP[name]} ({name})"
        else:
            message = f"{instance!r} does not match {pattern!r}"
        yield ValidationError(message)


# ---------------------------------------------------------------- RFC 3986 formats

_URI_CHARS = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#[]@!$&'()*+,;=%"
)
_HEX = frozenset("0123456789abcdefABCDEF")


def _uri_problem(text: str, *, absolute: bool) -> str | None:
    """Why ``text`` is not an RFC 3986 URI (``absolute``) or URI reference; None when it is."""
    for i, ch in enumerate(text):
        if ch not in _URI_CHARS:
            return f"the character {ch!r} must be percent-encoded"
        if ch == "%" and not (len(text) >= i + 3 and set(text[i + 1 : i + 3]) <= _HEX):
            return "'%' must start a percent-encoding such as %20"
    if text.count("#") > 1:
        return "it has more than one '#'"
    head = text.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    scheme, colon, _ = head.partition(":")
    if colon:
        if not (scheme[:1].isascii() and scheme[:1].isalpha()) or not all(
            c.isascii() and (c.isalnum() or c in "+-.") for c in scheme
        ):
            return f"'{scheme}:' is not a URI scheme (a relative path's first segment has no ':')"
    elif absolute:
        return "it has no scheme (such as https:)"
    return None


_FORMATS = {
    "uri": functools.partial(_uri_problem, absolute=True),
    "uri-reference": functools.partial(_uri_problem, absolute=False),
}
_FORMAT_NAMES = {"uri": "URI", "uri-reference": "URI reference"}


def _format(validator: Any, name: str, instance: Any, schema: Mapping[str, Any]) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    check = _FORMATS.get(name)
    if check is None or not validator.is_type(instance, "string"):
        return  # date-time, email: the datatype's pattern already decides
    why = check(_as_text(instance))
    if why is not None:
        yield ValidationError(f"{instance!r} is not a valid {_FORMAT_NAMES[name]}: {why}")


# ---------------------------------------------------------------- validators


def _lenient_string(checker: Any, instance: Any) -> bool:
    return isinstance(instance, str | int | float | dt.date)  # bool is an int


@functools.cache
def _validator(model: str, lenient: bool) -> Validator:
    from jsonschema import Draft7Validator
    from jsonschema.validators import extend

    if model not in MODELS:
        raise ValueError(f"unknown OSCAL model '{model}'; models: {', '.join(MODELS)}")
    type_checker = Draft7Validator.TYPE_CHECKER
    if lenient:
        type_checker = type_checker.redefine("string", _lenient_string)
    cls = extend(
        Draft7Validator,
        validators={"pattern": _pattern, "format": _format},
        type_checker=type_checker,
    )
    validator: Validator = cls(_model_schema(model))
    return validator


def _json_path(error: ValidationError) -> str:
    path = "$"
    for part in error.absolute_path:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def _leaf(error: ValidationError) -> ValidationError:
    """The deepest error under an ``anyOf``/``oneOf`` failure: the most specific reason."""
    best = error
    for sub in error.context or ():
        leaf = _leaf(sub)
        if len(leaf.absolute_path) > len(best.absolute_path):
            best = leaf
    return best


def _render(error: ValidationError) -> str:
    leaf = _leaf(error)
    message = leaf.message
    scalar = leaf.instance
    if (
        leaf.validator == "type"
        and leaf.validator_value == "string"
        and isinstance(scalar, int | float)
    ):
        message = f"{json.dumps(scalar)} is not a string (OSCAL writes every value as a "
        message += f'string: "{_as_text(scalar)}")'
    text = f"at {_json_path(leaf)}: {message}"
    if leaf is not error:
        text += f" ({_json_path(error)} matches none of the forms OSCAL allows there)"
    return text


def validate_document(doc: Any, model: str, *, lenient: bool = False) -> list[str]:
    """Every way ``doc`` breaks the NIST OSCAL 1.2.3 JSON schema of ``model``.

    ``doc`` is the whole document (``{"catalog": {...}}``); ``model`` one of
    :data:`MODELS`. Each error reads ``at $.json.path: what is wrong``; the list is empty
    when the document is valid. ``lenient`` accepts YAML numbers, booleans and dates
    where OSCAL wants a string (the policy loader's coercion) and checks their text.
    """
    errors = list(_validator(model, lenient).iter_errors(doc))
    # a bad URI breaks its datatype's pattern too: say it once
    patterned = {tuple(e.absolute_path) for e in errors if e.validator != "format"}
    seen: dict[str, None] = {}
    for error in errors:
        if error.validator == "format" and tuple(error.absolute_path) in patterned:
            continue
        seen.setdefault(_render(error), None)
    return list(seen)


def check_document(
    doc: Any,
    model: str,
    file: str | None,
    *,
    lenient: bool = False,
    error: type[FairpolicyError] | None = None,
) -> None:
    """Raise when ``doc`` breaks the NIST schema of ``model``: one problem per schema error.

    The error class defaults to :class:`OutputError` for assessment results (fairpolicy
    writes those) and :class:`PolicyError` for the other models (policies are read).
    """
    errors = validate_document(doc, model, lenient=lenient)
    if not errors:
        return
    cls = error or (OutputError if model == "assessment-results" else PolicyError)
    problems = [Problem(f"{e}.", file=file) for e in errors[:MAX_PROBLEMS]]
    if len(errors) > MAX_PROBLEMS:
        problems.append(Problem(f"and {len(errors) - MAX_PROBLEMS} more schema errors.", file))
    title = f"{cls.title} (not valid against the NIST OSCAL {OSCAL_VERSION} {model} JSON schema)"
    raise cls(problems, title=title)
