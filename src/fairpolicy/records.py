"""Frozen records: plain dataclasses that pydantic validates, serialises and describes on demand.

The policy and results models are frozen, keyword-only standard-library dataclasses
(:func:`record` on a :class:`Record`), made by :func:`lean`, which writes a dataclass's
methods once instead of compiling them for every class (most of fairpolicy's other
dataclasses use it too). Building and reading them costs nothing beyond the dataclass;
pydantic — about 100 ms to import and to build the validators — is imported only when a
record is validated (a results JSON read back), turned into JSON (``-o json``, the OSCAL and
SARIF outputs, the API's ``to_dict``) or described (the results JSON Schema). A text report
of a check never imports it (pinned by ``tests/test_lean_imports.py``).

The contract pydantic enforced at construction is kept where it matters:

- :meth:`Record.model_dump` validates the record again (``revalidate_instances``: every
  nested record too) before dumping, so the JSON holds exactly what a pydantic model would
  have held (an ``int`` in a ``float`` field is written ``1.0``, a tuple as a list);
- with ``FAIRPOLICY_CHECK_RECORDS=1`` (the test suite sets it, for in-process and
  subprocess runs alike) every record checks at construction that pydantic's validation
  of it changes nothing — no value of another type, no missing or unknown field, no
  literal out of range — and raises :class:`TypeError` naming the record and field
  otherwise. So every record the suite builds is already in its validated form.

Field metadata that only pydantic reads (aliases, ``exclude_if``, descriptions) is written
``Annotated[T, Field(...)]`` in the (postponed, string) annotations; ``Field`` is imported for
the type checker only and supplied to the annotation's module when pydantic first reads it.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import threading
from collections.abc import Callable
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    Literal,
    Self,
    TypeVar,
    dataclass_transform,
    overload,
)

if TYPE_CHECKING:
    from pydantic import TypeAdapter

#: every record's pydantic configuration: unknown fields are an error; validating a record
#: validates it (and every record in it) again rather than passing the instance through
RECORD_CONFIG: dict[str, Any] = {"extra": "forbid", "revalidate_instances": "always"}

#: check every record at construction against its pydantic validation (the test suite)
CHECK = os.environ.get("FAIRPOLICY_CHECK_RECORDS", "") not in ("", "0")

_checking = threading.local()


_T = TypeVar("_T")
_MISSING: Any = dataclasses.MISSING


@overload
def lean(cls: type[_T], /) -> type[_T]: ...


@overload
def lean(
    *, frozen: bool = True, eq: bool = True, kw_only: bool = False
) -> Callable[[type[_T]], type[_T]]: ...


@dataclass_transform(frozen_default=True)
def lean(
    cls: type[_T] | None = None,
    /,
    *,
    frozen: bool = True,
    eq: bool = True,
    kw_only: bool = False,
) -> type[_T] | Callable[[type[_T]], type[_T]]:
    """``@dataclass(frozen=..., eq=..., kw_only=...)`` whose methods are written once here.

    ``dataclasses`` writes each class's ``__init__``, ``__repr__``, ``__eq__``, ``__hash__``,
    ``__setattr__`` and ``__delattr__`` as source text and compiles it: ~0.5 ms per class,
    40 % of the time a check spends importing fairpolicy's own modules (issue 17). These
    take the dataclass's fields (order, ``kw_only``, defaults, ``default_factory``,
    ``compare``, ``repr``) from ``dataclasses.fields`` and behave as the generated methods
    do: positional then keyword arguments, ``__post_init__`` last; a frozen instance
    refuses assignment and deletion (``FrozenInstanceError``); equality compares the
    ``compare`` fields of instances of the same class; a frozen ``eq`` class hashes them,
    an unfrozen one is unhashable; ``eq=False`` keeps identity. A method the class defines
    itself is kept. ``dataclasses.fields``, ``replace``, ``asdict``, pickling and copying
    work as for any dataclass. Calls cost ~1 µs more than the generated ones: classes built
    per bootstrap replicate (``GroupStats``, ``MetricValue``, ``GroupValue``) keep
    ``@dataclass``.
    """

    def wrap(c: type[_T]) -> type[_T]:
        out = dataclasses.dataclass(init=False, repr=False, eq=False, kw_only=kw_only)(c)
        fields = dataclasses.fields(out)  # type: ignore[arg-type]
        spec = tuple((f.name, f.default, f.default_factory) for f in fields)
        attrs: dict[str, Any] = {
            "__lean_spec__": spec,
            "__lean_positional__": tuple(f.name for f in fields if not f.kw_only),
            "__lean_compare__": tuple(f.name for f in fields if f.compare),
            "__lean_repr__": tuple(f.name for f in fields if f.repr),
            "__init__": _init,
            "__repr__": _repr,
        }
        if eq:
            attrs["__eq__"] = _eq
            attrs["__hash__"] = _hash if frozen else None
        if frozen:
            attrs["__setattr__"] = _frozen_setattr
            attrs["__delattr__"] = _frozen_delattr
        own = vars(out)
        for name, value in attrs.items():
            # a class body defining __eq__ gets __hash__ = None from Python: not its own
            if name not in own or (name == "__hash__" and own[name] is None):
                type.__setattr__(out, name, value)
        return out

    return wrap if cls is None else wrap(cls)


def _init(self: Any, *args: Any, **given: Any) -> None:
    where = f"{type(self).__qualname__}.__init__()"
    if args:
        positional = self.__lean_positional__
        if len(args) > len(positional):
            raise TypeError(
                f"{where} takes {len(positional) + 1} positional arguments but "
                f"{len(args) + 1} were given"
            )
        for name, value in zip(positional, args, strict=False):
            if name in given:
                raise TypeError(f"{where} got multiple values for argument '{name}'")
            given[name] = value
    put = object.__setattr__
    missing = []
    for name, default, factory in self.__lean_spec__:
        if name in given:
            put(self, name, given.pop(name))
        elif default is not _MISSING:
            put(self, name, default)
        elif factory is not _MISSING:
            put(self, name, factory())
        else:
            missing.append(name)
    if given:
        raise TypeError(f"{where} got an unexpected keyword argument '{next(iter(given))}'")
    if missing:
        names = " and ".join(", ".join(repr(n) for n in missing).rsplit(", ", 1))
        raise TypeError(
            f"{where} missing {len(missing)} required argument"
            f"{'s' if len(missing) > 1 else ''}: {names}"
        )
    post = getattr(self, "__post_init__", None)
    if post is not None:
        post()


def _values(self: Any) -> tuple[Any, ...]:
    return tuple(getattr(self, name) for name in self.__lean_compare__)


def _eq(self: Any, other: object) -> bool:
    if other.__class__ is not self.__class__:
        return NotImplemented  # type: ignore[no-any-return]
    same: bool = _values(self) == _values(other)
    return same


def _hash(self: Any) -> int:
    return hash(_values(self))


def _repr(self: Any) -> str:
    shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__lean_repr__)
    return f"{type(self).__qualname__}({shown})"


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Any, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


@dataclass_transform(kw_only_default=True, frozen_default=True)
def record(cls: type[_T]) -> type[_T]:
    """A :class:`Record` class: ``@dataclass(frozen=True, kw_only=True)`` by :func:`lean`."""
    return lean(kw_only=True)(cls)


class Record:
    """Base of the frozen records: pydantic's ``model_*`` API, with pydantic imported lazily."""

    __pydantic_config__: ClassVar[dict[str, Any]] = RECORD_CONFIG

    def __post_init__(self) -> None:
        if CHECK and not getattr(_checking, "active", False):
            _check(self)

    def model_copy(self, *, update: dict[str, Any] | None = None) -> Self:
        """A copy with ``update``'s fields replaced (constructed again: checks and derived
        fields such as the results' gate run on the copy)."""
        return dataclasses.replace(self, **(update or {}))  # type: ignore[type-var]

    def model_dump(
        self,
        *,
        mode: Literal["json", "python"] = "python",
        by_alias: bool = False,
        include: Any = None,
        exclude: Any = None,
        exclude_none: bool = False,
    ) -> dict[str, Any]:
        """The record as pydantic dumps it, after validating it again (see the module)."""
        ad = adapter(type(self))
        out: dict[str, Any] = ad.dump_python(
            ad.validate_python(self),
            mode=mode,
            by_alias=by_alias,
            include=include,
            exclude=exclude,
            exclude_none=exclude_none,
        )
        return out

    def model_dump_json(
        self, *, indent: int | None = None, by_alias: bool = False, exclude_none: bool = False
    ) -> str:
        """The record as pydantic's JSON, after validating it again (see the module)."""
        ad = adapter(type(self))
        raw = ad.dump_json(
            ad.validate_python(self), indent=indent, by_alias=by_alias, exclude_none=exclude_none
        )
        return raw.decode("utf-8")

    @classmethod
    def model_validate(cls, obj: Any) -> Self:
        """``obj`` (a mapping by field name or alias, or a record) validated into a record;
        raises pydantic's ``ValidationError``."""
        out: Self = adapter(cls).validate_python(obj)
        return out

    @classmethod
    def model_validate_json(cls, text: str | bytes) -> Self:
        out: Self = adapter(cls).validate_json(text)
        return out

    @classmethod
    def model_json_schema(
        cls, *, by_alias: bool = True, mode: Literal["validation", "serialization"] = "validation"
    ) -> dict[str, Any]:
        out: dict[str, Any] = adapter(cls).json_schema(by_alias=by_alias, mode=mode)
        return out

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))  # type: ignore[arg-type]


_lock = threading.Lock()
_adapters: dict[type, TypeAdapter[Any]] = {}


def adapter(cls: type) -> TypeAdapter[Any]:
    """pydantic's adapter of a record class (built once per class, the first time needed)."""
    found = _adapters.get(cls)
    if found is not None:
        return found
    import pydantic

    with _lock:
        if cls not in _adapters:
            for base in cls.__mro__:
                module = sys.modules.get(base.__module__)
                if module is not None and dataclasses.is_dataclass(base):
                    # the name the postponed annotations use for pydantic's field metadata
                    module.__dict__.setdefault("Field", pydantic.Field)
            _adapters[cls] = pydantic.TypeAdapter(cls)
        return _adapters[cls]


def _check(record: Record) -> None:
    """TypeError unless validating ``record`` gives it back unchanged, type for type."""
    import pydantic

    _checking.active = True
    try:
        try:
            again = adapter(type(record)).validate_python(record)
        except pydantic.ValidationError as exc:
            raise TypeError(f"{type(record).__name__} is not valid: {exc}") from None
    finally:
        _checking.active = False
    for f in dataclasses.fields(record):  # type: ignore[arg-type]
        where = _differs(getattr(record, f.name), getattr(again, f.name))
        if where is not None:
            raise TypeError(
                f"{type(record).__name__}.{f.name}{where[0]}: built as "
                f"{where[1]!r} ({type(where[1]).__name__}), validated as {where[2]!r} "
                f"({type(where[2]).__name__}); build it in its validated form"
            )


def _differs(a: Any, b: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """Where ``a`` and its validated form ``b`` differ in value or type (records are compared
    by identity of class only: each checked itself when it was built)."""
    if type(a) is not type(b):
        return path, a, b
    if isinstance(a, Record):
        return None
    if isinstance(a, dict):
        if list(a) != list(b):
            return path, a, b
        for k in a:
            if (d := _differs(a[k], b[k], f"{path}[{k!r}]")) is not None:
                return d
        return None
    if isinstance(a, list | tuple):
        if len(a) != len(b):
            return path, a, b
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if (d := _differs(x, y, f"{path}[{i}]")) is not None:
                return d
        return None
    if a != b and not (isinstance(a, float) and a != a and b != b):
        return path, a, b
    return None
