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


#: Arrow primitive types → the NumPy dtype of their data buffer
_PRIMITIVE = {
    "double": "float64",
    "float": "float32",
    "int64": "int64",
    "int32": "int32",
    "int16": "int16",
    "int8": "int8",
    "uint64": "uint64",
    "uint32": "uint32",
    "uint16": "uint16",
    "uint8": "uint8",
}
_ARROW_OF = {v: k for k, v in _PRIMITIVE.items()}


def _data(arr: Any) -> Any:
    """The values of one primitive Arrow array, read from its data buffer (a read-only
    view; slots of null entries hold whatever the buffer has)."""
    import numpy as np

    dtype = _PRIMITIVE[str(arr.type)]
    offset = arr.offset * np.dtype(dtype).itemsize
    return np.frombuffer(arr.buffers()[1], dtype=dtype, count=len(arr), offset=offset)


def numpy_of(arr: Any) -> Any:
    """A (chunked) Arrow array as a NumPy array, like ``to_numpy(zero_copy_only=False)``.

    pyarrow's ``to_numpy`` and ``pa.array`` import pandas to check for its types (about
    0.2 s of start-up). A primitive numeric array without nulls is read straight from its
    data buffers instead; anything else falls back to ``to_numpy``."""
    import numpy as np

    chunks = arr.chunks if hasattr(arr, "chunks") else [arr]
    dtype = _PRIMITIVE.get(str(arr.type))
    if dtype is None or arr.null_count:
        return arr.to_numpy(zero_copy_only=False)
    parts = [_data(c) for c in chunks if len(c)]
    if not parts:
        return np.zeros(0, dtype=dtype)
    return parts[0].copy() if len(parts) == 1 else np.concatenate(parts)


def arrow_of(values: Any) -> Any:
    """A 1-D NumPy array of a primitive numeric type as an Arrow array, like
    ``pa.array(values)`` but without importing pandas (see :func:`numpy_of`)."""
    import numpy as np
    import pyarrow as pa

    values = np.ascontiguousarray(values)
    kind = _ARROW_OF.get(str(values.dtype))
    if kind is None or values.ndim != 1:
        return pa.array(values)
    return pa.Array.from_buffers(pa.type_for_alias(kind), len(values), [None, pa.py_buffer(values)])
