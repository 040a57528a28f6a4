"""A cache of validation successes, keyed by a hash of what was validated.

Validating a policy that claims to be OSCAL with compliance-trestle's models costs about a
quarter of a second, nearly all of it importing the models, and it gives the same answer
for the same document every time. So a document that passed is remembered:
a file named by (and holding) the SHA-256 of what was checked, the document's canonical
JSON and the versions of fairpolicy and of the validating libraries, in the user cache folder,
``$XDG_CACHE_HOME/fairpolicy/valid`` (``~/.cache/fairpolicy/valid`` when unset). A hit
skips the validation; a miss validates and records a success.

Only successes are stored: a document that fails is validated again on every run, so its
error messages are exactly those of the validator, never a stored copy. A changed byte, a
different root or another library version gives another key, never a wrong hit.

Safe to share and to lose: entries are written atomically (a temporary file in the same
folder, then :func:`os.replace`), concurrent writers write the same content, and an entry
that cannot be read, or whose content is not its own key, counts as a miss.
``FAIRPOLICY_NO_CACHE=1`` turns the cache off; a folder that cannot be created or written
is skipped silently (the run only loses the saving).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["cache_dir", "enabled", "key_for", "remember", "seen_valid"]

#: Bump when what a key covers changes.
FORMAT = "1"


def enabled() -> bool:
    """False when ``FAIRPOLICY_NO_CACHE`` is set to anything but empty or ``0``."""
    return os.environ.get("FAIRPOLICY_NO_CACHE", "").strip() in ("", "0")


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/fairpolicy`` (an absolute XDG path only), else ``~/.cache/fairpolicy``."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "fairpolicy"


@functools.cache
def _installed_version(name: str) -> str:
    """``name``'s installed version, looked up once per process: each lookup walks every
    ``sys.path`` folder (~1 ms), and a check of an OSCAL profile asks for every document it
    reads. A package that is not found raises, which is not cached (asked again next time)."""
    from importlib.metadata import version

    return version(name)


def _versions(packages: tuple[str, ...]) -> list[str]:
    from importlib.metadata import PackageNotFoundError

    from fairpolicy.version import __version__

    out = [f"fairpolicy={__version__}"]
    for name in packages:
        try:
            out.append(f"{name}={_installed_version(name)}")
        except PackageNotFoundError:
            out.append(f"{name}=?")
    return out


def key_for(
    kind: str, document: Any, packages: tuple[str, ...] = (), files: tuple[Path, ...] = ()
) -> str | None:
    """The SHA-256 key of validating ``document`` as ``kind`` with ``packages``' versions
    and ``files`` (fairpolicy's own validating code and data, by size and modification
    time, so an edited checkout never meets a stale entry); None when the document has no
    canonical JSON (then it is never cached)."""
    try:
        body = json.dumps(document, sort_keys=True, ensure_ascii=False, allow_nan=True)
    except (TypeError, ValueError):  # a date or another non-JSON value from YAML
        return None
    stamps = []
    for file in files:
        try:
            st = file.stat()
        except OSError:
            return None
        stamps.append(f"{file.name}:{st.st_size}:{st.st_mtime_ns}")
    head = json.dumps([FORMAT, kind, *_versions(packages), *stamps])
    digest = hashlib.sha256(head.encode())
    digest.update(b"\0")
    digest.update(body.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def _entry(key: str) -> Path:
    return cache_dir() / "valid" / key


def seen_valid(key: str | None) -> bool:
    """True when a success under ``key`` is recorded (and the cache is on)."""
    if key is None or not enabled():
        return False
    try:
        return _entry(key).read_text(encoding="ascii") == key
    except (OSError, ValueError):
        return False


def remember(key: str | None) -> None:
    """Record a success under ``key``; silently nothing when that is not possible."""
    if key is None or not enabled():
        return
    path = _entry(key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "w", encoding="ascii") as fh:
                fh.write(key)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError:
        return
