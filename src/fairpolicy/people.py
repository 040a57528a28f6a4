"""The people of an assessment as written on the command line or in a policy: ``Name`` or
``Name <email>`` (``--assessor``, the ``assessor`` metadata prop). A bottom-layer module:
the policy loader, the CLI and the OSCAL writers all read it."""

from __future__ import annotations

import re
from collections.abc import Sequence

_PERSON = re.compile(r"^\s*(?P<name>[^<>]*?)\s*(?:<(?P<email>[^<>\s]+@[^<>\s]+)>)?\s*$")


def parse_person(text: str) -> tuple[str, str | None]:
    """``Name <email>`` → (name, email); a bare name has no email. Raises ValueError."""
    m = _PERSON.match(text)
    if not m or not m.group("name"):
        raise ValueError(f"'{text}' is not a name, optionally followed by <email>")
    return m.group("name"), m.group("email")


def check_people(
    assessors: Sequence[str], organization: str | None, flag: str = "--assessor"
) -> None:
    """``--assessor`` (or ``flag``) values are ``Name`` or ``Name <email>``, and
    ``--organization`` is not empty (checked before any work). Raises UsageError."""
    from fairpolicy.errors import UsageError

    for text in assessors:
        try:
            parse_person(text)
        except ValueError as exc:
            raise UsageError(
                f"{flag}: {exc}.",
                hint=f"write {flag} 'Ada Lovelace <ada@example.org>'.",
            ) from None
    if organization is not None and not organization.strip():
        raise UsageError("--organization is empty.", hint="name the assessors' organization.")
