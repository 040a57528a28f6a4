"""Settings read from the environment, validated like any other input.

``SOURCE_DATE_EPOCH`` (reproducible-builds.org) fixes every timestamp a run writes. A
value that is not a whole number of seconds, or lies outside the years 1970–9999, is an
error (exit 2), not ignored and not an internal error.
"""

from __future__ import annotations

import os

from fairpolicy.errors import UsageError

#: 9999-12-31T23:59:59Z, the last second an ISO 8601 year of four digits can name
MAX_EPOCH = 253_402_300_799


def source_date_epoch() -> int | None:
    """``SOURCE_DATE_EPOCH`` as seconds, None when unset or empty; UsageError otherwise."""
    raw = os.environ.get("SOURCE_DATE_EPOCH")
    if raw is None or not raw.strip():
        return None
    text = raw.strip()
    if not text.isdecimal() or not text.isascii():
        raise UsageError(
            f"the environment variable SOURCE_DATE_EPOCH={raw!r} is not a whole number of "
            "seconds since 1970-01-01 UTC. Fix: set it to a Unix time such as the last "
            "commit's ($(git log -1 --format=%ct)), or unset it."
        )
    value = int(text)
    if value > MAX_EPOCH:
        raise UsageError(
            f"the environment variable SOURCE_DATE_EPOCH={text} is out of range: it lies "
            f"after the year 9999 (at most {MAX_EPOCH}). Fix: set it to a Unix time in "
            "seconds (not milliseconds), such as $(git log -1 --format=%ct), or unset it."
        )
    return value
