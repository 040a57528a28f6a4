"""Enforcement-mode spellings: one table for ``enforcement_mode`` and ``severity``.

``enforcement_mode`` (block | warn | monitor) decides whether a failure fails the gate;
``warning`` is accepted for ``warn`` (Venturalitica's templates write both). A control
without ``enforcement_mode`` whose ``severity`` is ``warn`` or ``warning`` (any case) is
``warn``; every other severity (``high``, ``low``, …) is a label and leaves the default,
``block``. The loader and the component-definition checks both read this table, so the
two spellings can never gate differently.
"""

from __future__ import annotations

from typing import Any

from fairpolicy.policy.schema import EnforcementMode

__all__ = ["MODE_RANK", "MODE_SPELLINGS", "SEVERITY_MODES", "effective_mode", "mode_of"]

#: every accepted ``enforcement_mode`` spelling (lower case) → the mode
MODE_SPELLINGS = {
    "block": EnforcementMode.BLOCK,
    "warn": EnforcementMode.WARN,
    "warning": EnforcementMode.WARN,
    "monitor": EnforcementMode.MONITOR,
}

#: ``severity`` values (lower case) that set the mode when ``enforcement_mode`` is absent
SEVERITY_MODES = {"warn": EnforcementMode.WARN, "warning": EnforcementMode.WARN}

#: enforcement modes from the one that gates most to the one that gates least
MODE_RANK = {EnforcementMode.BLOCK: 0, EnforcementMode.WARN: 1, EnforcementMode.MONITOR: 2}


def mode_of(value: Any) -> EnforcementMode | None:
    """The mode an ``enforcement_mode`` value spells; None when it spells none."""
    return MODE_SPELLINGS.get(str(value).strip().lower()) if value is not None else None


def effective_mode(enforcement_mode: Any, severity: Any) -> EnforcementMode | None:
    """The mode a control's props give: ``enforcement_mode`` when written (None when it is
    not a known spelling), else ``warn`` for a warn/warning severity, else ``block``."""
    if enforcement_mode is not None and str(enforcement_mode).strip():
        return mode_of(enforcement_mode)
    if severity is not None:
        return SEVERITY_MODES.get(str(severity).strip().lower(), EnforcementMode.BLOCK)
    return EnforcementMode.BLOCK
