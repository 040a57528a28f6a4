"""A param's values as a catalog/profile chain left them (a leaf: the profile resolver builds
them, :class:`fairpolicy.policy.oscal.RawControl` names the type)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["ParamValue", "Params"]


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
