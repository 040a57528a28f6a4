"""Output formats. One module per format, each with ``render(results, opts) -> str``.

Formatters only read :class:`~fairpolicy.results.Results`; none knows a
metric. ``FORMATS`` maps a format name to its module (imported on use).
An unknown name is an error listing the valid ones, never a fallback.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from fairpolicy.errors import UsageError, did_you_mean

if TYPE_CHECKING:
    from fairpolicy.results import Results

FORMATS: dict[str, str] = {
    "text": "fairpolicy.formatters.text",
    "json": "fairpolicy.formatters.json_",
}


@dataclass(frozen=True)
class RenderOptions:
    color: bool = False
    verbose: bool = False


class Formatter(Protocol):
    def __call__(self, results: Results, opts: RenderOptions) -> str: ...


def get(name: str) -> Formatter:
    if name not in FORMATS:
        raise UsageError(
            f"unknown output format '{name}'.{did_you_mean(name, FORMATS)} "
            f"Valid formats: {', '.join(FORMATS)}."
        )
    module = importlib.import_module(FORMATS[name])
    render: Formatter = module.render
    return render
