"""Dialects: whose meaning a policy's metric keys carry.

fairpolicy reads Venturalitica's policy format, and most of Venturalitica's keys mean what
fairpolicy's keys of the same name mean. Two do not (:data:`DIFFERING`): Venturalitica's
``equalized_odds_ratio`` is the TPR gap plus the FPR gap (fairpolicy's, fairlearn's, is a
ratio), and its ``macro_equal_opportunity_multiclass`` is the largest per-class TPR gap
(fairpolicy's is their mean). A key means what the policy's author meant:

1. a ``dialect`` prop (``venturalitica`` or ``fairpolicy``) on the control, or once for
   the policy in ``metadata.props``, says which;
2. otherwise a policy recognisably written for Venturalitica (:func:`recognise`: its props
   spelled ``input:<role>``, or an assessment-plan/component-definition without
   ``metadata.oscal-version``, which Venturalitica's SDK, quickstart and templates never
   write and fairpolicy's converter and NIST OSCAL always do) is read in Venturalitica's
   dialect;
3. otherwise the key has fairpolicy's meaning, said in a warning naming Venturalitica's;
   a gate that only Venturalitica's meaning makes sense of (an upper bound on fairlearn's
   ratio, whose ideal is 1) is refused with the mapping.

A control read in Venturalitica's dialect is evaluated with the registry key that computes
Venturalitica's number (:data:`DIFFERING`); its finding records ``dialect: venturalitica``
and the key as written, and the run's warnings say so once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from fairpolicy.policy.schema import Control, Operator

__all__ = ["DIALECTS", "DIFFERING", "recognise", "resolve", "summary"]

DIALECTS = ("fairpolicy", "venturalitica")

#: Venturalitica's key → (the registry key computing Venturalitica's number, fairpolicy's
#: meaning, Venturalitica's meaning)
DIFFERING: dict[str, tuple[str, str, str]] = {
    "equalized_odds_ratio": (
        "equalized_odds_sum",
        "fairlearn's ratio min(TPR min/max, FPR min/max), 1 = parity",
        "Venturalitica's calc_equalized_odds_ratio, (max − min) TPR + (max − min) FPR, 0 = parity",
    ),
    "macro_equal_opportunity_multiclass": (
        "multiclass_equal_opportunity",
        "the mean over classes of each class's TPR gap",
        "Venturalitica's calc_macro_equal_opportunity_multiclass, the largest per-class TPR gap",
    ),
}

_UPPER = (Operator.LT, Operator.LE)
_LOWER = (Operator.GT, Operator.GE)


def recognise(form: str, metadata: Mapping[str, Any], colon: bool) -> str | None:
    """Why the document is Venturalitica's (None: it is not recognisably so)."""
    if colon:
        return "its props are spelled input:<role>, Venturalitica's spelling"
    if form == "system-security-plan":  # a NIST SSP (importing a profile) is refused
        return (
            "it is a system-security-plan carrying its controls' props, as "
            "`venturalitica pull` writes"
        )
    if form in ("assessment-plan", "component-definition") and not metadata.get("oscal-version"):
        return (
            f"its {form} has no metadata.oscal-version, as Venturalitica's SDK writes them "
            "(fairpolicy's and OSCAL's carry one)"
        )
    return None


def resolve(
    written: str,
    key: str,
    declared: str | None,
    recognised: str | None,
    operator: Operator | None,
    better: str,
    err: Callable[..., None],
    notes: list[str],
) -> tuple[str, str | None]:
    """(registry key to evaluate, dialect recorded on the control) for a control whose
    metric is written ``written`` (canonical ``key``). ``declared``: the control's (or the
    policy's) ``dialect`` prop; ``notes`` collects the warning for rule 3."""
    if declared is not None and declared.lower() not in DIALECTS:
        err(
            f"dialect '{declared}' is not one of {', '.join(DIALECTS)}",
            "dialect",
            "write dialect: venturalitica for a policy written for Venturalitica, "
            "dialect: fairpolicy for fairpolicy's meanings (`fairpolicy metrics show KEY`)",
        )
        return key, None
    dialect = None if declared is None else declared.lower()
    if written not in DIFFERING:
        return key, dialect
    theirs_key, ours, theirs = DIFFERING[written]
    if dialect is None and recognised is not None:
        dialect = "venturalitica"
    if dialect == "venturalitica":
        return theirs_key, dialect
    if dialect == "fairpolicy":
        return key, dialect
    contradicts = operator in (_UPPER if better == "higher" else _LOWER)
    mapping = (
        f"'{written}' means {ours} in fairpolicy, and {theirs} in Venturalitica "
        f"(fairpolicy's key for that: {theirs_key})"
    )
    if contradicts and operator is not None:
        err(
            f"{mapping}; the gate '{operator.value}' only makes sense of Venturalitica's "
            "meaning, and nothing says which tool this policy was written for",
            "metric_key",
            "add a prop dialect: venturalitica (to the control, or once in metadata.props) "
            f"to evaluate it as Venturalitica does, or write metric_key {theirs_key}; "
            "dialect: fairpolicy keeps fairpolicy's meaning",
        )
        return key, None
    note = (
        f"{mapping}: read with fairpolicy's meaning, as nothing marks this policy as written "
        "for Venturalitica; add the prop dialect: venturalitica if it was (or dialect: "
        "fairpolicy to say it was not)"
    )
    if note not in notes:
        notes.append(note)
    return key, None


def summary(controls: Sequence[Control], ctx: Any) -> list[str]:
    """The run's warnings about dialects, each said once: Venturalitica's spellings read
    (any ``input.<parameter>`` such as ``input.average``, a plain ``quasi_identifiers``),
    the controls evaluated with Venturalitica's meaning and why, and
    rule 3's notes."""
    out: list[str] = []
    params: dict[str, list[str]] = {}
    roles: dict[tuple[str, str], list[str]] = {}
    for note in ctx.dialect_notes:
        kind, _, rest = note.partition(":")
        if kind == "param":
            name, _, cid = rest.partition(":")
            params.setdefault(name, []).append(cid)
        elif kind == "role":
            name, role, cid = rest.split(":", 2)
            roles.setdefault((name, role), []).append(cid)
    for name, cids in params.items():
        out.append(
            f"input.{name} is read as the parameter {name} of the metric (Venturalitica's "
            f"spelling: it passes every input. prop to the metric; fairpolicy writes the prop "
            f"{name}) in control(s) {', '.join(cids)}"
        )
    for (name, role), cids in roles.items():
        out.append(
            f"the prop {name} is read as the role input.{role}, the column(s) it names "
            f"(Venturalitica passes it to the metric as a keyword; fairpolicy writes "
            f"input.{role}) in control(s) {', '.join(cids)}"
        )
    moved = [
        c for c in controls if c.dialect == "venturalitica" and c.metric_key_as_written in DIFFERING
    ]
    if moved:
        why = (
            "declared with dialect: venturalitica"
            if ctx.recognised is None
            else f"recognised: {ctx.recognised}"
        )
        parts = [
            f"'{c.control_id}' {c.metric_key_as_written} as {DIFFERING[c.metric_key_as_written][2]}"
            f" (fairpolicy's key {c.metric_key})"
            for c in moved
        ]
        out.append(f"read in Venturalitica's dialect ({why}): " + "; ".join(parts))
    out += [n for n in ctx.dialect_notes if not n.startswith(("param:", "role:"))]
    return out
