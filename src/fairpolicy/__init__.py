"""fairpolicy: policy-as-code compliance checks for machine-learning fairness.

    >>> import fairpolicy
    >>> results = fairpolicy.check("policy.yaml", "predictions.csv")  # doctest: +SKIP
    >>> results.exit_code  # doctest: +SKIP
    0

Heavy modules (pandas, pyarrow, trestle) load on first use, so importing
fairpolicy and ``fairpolicy --help`` stay fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fairpolicy.version import __version__

__all__ = ["FairpolicyError", "Results", "__version__", "check", "load_policy"]

if TYPE_CHECKING:
    from fairpolicy.errors import FairpolicyError
    from fairpolicy.policy.load import load_policy
    from fairpolicy.present import Results
    from fairpolicy.runner import check


def __getattr__(name: str) -> Any:
    if name == "check":
        from fairpolicy.runner import check

        return check
    if name == "Results":
        from fairpolicy.present import Results

        return Results
    if name == "load_policy":
        from fairpolicy.policy.load import load_policy

        return load_policy
    if name == "FairpolicyError":
        from fairpolicy.errors import FairpolicyError

        return FairpolicyError
    raise AttributeError(f"module 'fairpolicy' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public names, lazy ones included (``dir(fairpolicy)``, tab completion)."""
    return sorted({*__all__, *(n for n in globals() if n.startswith("__"))})
