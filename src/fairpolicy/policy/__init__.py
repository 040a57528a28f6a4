"""Policy models and loading."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["load_policy"]

if TYPE_CHECKING:
    from fairpolicy.policy.load import load_policy


def __getattr__(name: str) -> Any:
    if name == "load_policy":  # on first use: importing schema alone stays light
        from fairpolicy.policy.load import load_policy

        return load_policy
    raise AttributeError(f"module 'fairpolicy.policy' has no attribute {name!r}")
