"""Arrow compute kernels called by name, without importing :mod:`pyarrow.compute`.

Importing ``pyarrow.compute`` builds a Python wrapper, with a docstring parsed by pydoc,
for each of Arrow's several hundred kernels: about 25 ms of a check's start-up (issue 17,
"a lean start"), for the two or three kernels a CSV check calls. :func:`call` runs the same
C++ kernel through ``call_function`` — what those wrappers themselves call when given no
options — so the results are the same.
"""

from __future__ import annotations

from typing import Any


def call(name: str, *args: Any) -> Any:
    """The Arrow kernel ``name`` applied to ``args`` with its default options (as
    ``pyarrow.compute.<name>(*args)``)."""
    try:
        from pyarrow._compute import call_function
    except ImportError:  # pragma: no cover - a pyarrow that moved it; the public name has it
        from pyarrow.compute import call_function
    return call_function(name, list(args))
