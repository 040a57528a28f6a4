"""``-o json``: the results model as JSON (schema in ``schemas/results.schema.json``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fairpolicy.formatters import RenderOptions
    from fairpolicy.results import Results


def render(results: Results, opts: RenderOptions) -> str:
    return results.to_json(indent=2) + "\n"
