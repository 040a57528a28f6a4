"""Column bindings given outside the policy: ``--bind`` and ``--rename`` (and the Python
API's ``bind=`` / ``rename=``, and the configuration file's ``bind`` / ``rename`` tables).

Three forms, each explicit about which controls it touches:

- ``--rename OLD=NEW``: the data calls a column NEW that the policy calls OLD. Every control
  that reads OLD (in any role, inside a comma list too) reads NEW instead; a control that
  does not read OLD is untouched. The fix for a renamed column.
- ``--bind CONTROL:ROLE=COLUMN``: one control's role.
- ``--bind ROLE=COLUMN``: the role of every control. It supplies a role a template leaves
  open; when it replaces a column a control's policy wrote, the control is *moved*.

Every control whose columns one of them changed is recorded (:func:`apply_binds`): the
control carries its changes (role, column written, column read, the option that did it)
into its finding, and the run's warnings name each one, so every output lists them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fairpolicy.errors import UsageError, did_you_mean
from fairpolicy.policy.schema import LIST_ROLES, ROLES, Control, Policy
from fairpolicy.records import lean

__all__ = ["Binds", "apply_binds", "binds_from_api", "parse_bind", "parse_rename"]


@lean
class Binds:
    """The bindings of one run, validated for shape (not yet against a policy)."""

    #: role → column, for every control (``--bind ROLE=COLUMN``)
    roles: dict[str, str]
    #: (control id, role) → column (``--bind CONTROL:ROLE=COLUMN``)
    controls: dict[tuple[str, str], str]
    #: column written in the policy → column of the data (``--rename OLD=NEW``)
    renames: dict[str, str]

    def __bool__(self) -> bool:
        return bool(self.roles or self.controls or self.renames)

    def as_options(self) -> dict[str, dict[str, str]]:
        """What the results record (``run.options.bind`` and ``run.options.rename``)."""
        bind = dict(self.roles)
        bind.update({f"{cid}:{role}": col for (cid, role), col in self.controls.items()})
        return {"bind": bind, "rename": dict(self.renames)}

    def prefetch_pairs(self) -> dict[str, str]:
        """Role → column pairs a speculative read may start with (a guess: the real read
        follows the applied bindings)."""
        out = {role: col for (_, role), col in self.controls.items()}
        return {**out, **self.roles}

    def bound_roles(self) -> tuple[str, ...]:
        """Roles given for every control, and ``CONTROL:ROLE`` for one control's (the
        loader then accepts them as bound)."""
        return (*self.roles, *(f"{cid}:{role}" for cid, role in self.controls))


NONE = Binds(roles={}, controls={}, renames={})


def _pair(item: Any, flag: str, form: str) -> tuple[str, str]:
    if not isinstance(item, str):
        raise UsageError(
            f"{flag} expects {form} text, got {type(item).__name__} {item!r}.", key=flag
        )
    key, sep, value = item.partition("=")
    if not sep or not key.strip() or not value.strip():
        raise UsageError(
            f"{flag} expects {form}, got '{item}'.",
            key=flag,
            hint="e.g. --rename sex=gender (a column the data renamed), --bind "
            "dimension=gender (every control) or --bind four-fifths-sex:dimension=gender "
            "(one control)",
        )
    return key.strip(), value.strip()


def _add(out: dict[Any, str], key: Any, value: str, flag: str, shown: str) -> None:
    if key in out and out[key] != value:
        raise UsageError(
            f"{flag} {shown} twice: to '{out[key]}' and to '{value}'.",
            key=flag,
            hint="give each once; a dimension of several columns is one --bind dimension=COL1,COL2",
        )
    out[key] = value


def parse_bind(items: Sequence[Any], flag: str = "--bind") -> Binds:
    """``ROLE=COLUMN`` and ``CONTROL:ROLE=COLUMN`` items. An unknown role is an error
    (with the rename to use when it names a column, see :func:`apply_binds`)."""
    roles: dict[str, str] = {}
    controls: dict[tuple[str, str], str] = {}
    for item in items:
        key, column = _pair(item, flag, "ROLE=COLUMN or CONTROL:ROLE=COLUMN")
        cid, colon, role = key.rpartition(":")
        if colon:
            if not cid.strip() or not role.strip():
                raise UsageError(
                    f"{flag} {item}: write CONTROL:ROLE=COLUMN (a control id, a colon, a role).",
                    key=flag,
                )
            target = (cid.strip(), role.strip())
            _add(controls, target, column, flag, f"binds control '{target[0]}' role '{target[1]}'")
        else:
            _add(roles, key, column, flag, f"binds the role '{key}'")
    return Binds(roles=roles, controls=controls, renames={})


def parse_rename(items: Sequence[Any], flag: str = "--rename") -> dict[str, str]:
    """``OLD=NEW`` items: a column the policy names, and the data's name for it."""
    out: dict[str, str] = {}
    for item in items:
        old, new = _pair(item, flag, "OLD=NEW")
        _add(out, old, new, flag, f"renames the column '{old}'")
    return out


def _mapping(value: Any, name: str, example: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise UsageError(
            f"{name}= takes a mapping, not a {type(value).__name__} ({value!r}).",
            key=name,
            hint=f"pass e.g. {name}={example} (the command line's {name.upper()} items "
            "'KEY=COLUMN' are written as a dict in Python)",
        )
    out: dict[str, str] = {}
    for k, v in value.items():
        if not isinstance(k, str) or not k.strip():
            raise UsageError(f"{name}= has the key {k!r}: keys are non-empty text.", key=name)
        if not isinstance(v, str) or not v.strip():
            raise UsageError(
                f"{name}={{{k!r}: {v!r}}}: the value must be a column name (non-empty text).",
                key=name,
                hint=f"name the column, e.g. {name}={example}; to keep the policy's own "
                f"column, leave '{k}' out",
            )
        out[k.strip()] = v.strip()
    return out


def binds_from_api(bind: Any, rename: Any = None) -> Binds:
    """``fairpolicy.check(bind=..., rename=...)``: mappings of text to a column name
    (``bind`` keys ``ROLE`` or ``CONTROL:ROLE``); anything else is a UsageError naming the
    argument and the fix."""
    if isinstance(bind, Binds):
        binds = bind
    else:
        pairs = _mapping(bind, "bind", "{'dimension': 'gender'}")
        binds = parse_bind([f"{k}={v}" for k, v in pairs.items()], flag="bind")
    renames = dict(binds.renames)
    for old, new in _mapping(rename, "rename", "{'sex': 'gender'}").items():
        _add(renames, old, new, "rename", f"renames the column '{old}'")
    return Binds(roles=binds.roles, controls=binds.controls, renames=renames)


def _columns(c: Control) -> set[str]:
    return {col for role in c.inputs for col in c.role_columns(role)}


def _rename_value(role: str, value: str, renames: Mapping[str, str]) -> str:
    if role not in LIST_ROLES:
        return renames.get(value, value)
    parts = [p.strip() for p in value.split(",")]
    return ",".join(renames.get(p, p) for p in parts)


def _check(policy: Policy, binds: Binds) -> None:
    ids = [c.control_id for c in policy.controls]
    read = sorted({col for c in policy.controls for col in _columns(c)})
    for role in binds.roles:
        if role not in ROLES:
            if role in read:
                raise UsageError(
                    f"--bind {role}=...: '{role}' is not a role but a column the policy reads.",
                    key="--bind",
                    hint=f"to read the data's column instead of '{role}' wherever the policy "
                    f"names it, pass --rename {role}={binds.roles[role]}",
                )
            raise UsageError(
                f"--bind {role}=...: unknown role '{role}'.{did_you_mean(role, ROLES)} "
                f"Roles: {', '.join(ROLES)}.",
                key="--bind",
                hint="a column the data renamed: --rename OLD=NEW; one control: "
                "--bind CONTROL:ROLE=COLUMN",
            )
    for cid, role in binds.controls:
        if cid not in ids:
            raise UsageError(
                f"--bind {cid}:{role}=...: the policy has no control '{cid}'."
                f"{did_you_mean(cid, ids)} Controls: {', '.join(ids)}.",
                key="--bind",
            )
        if role not in ROLES:
            raise UsageError(
                f"--bind {cid}:{role}=...: unknown role '{role}'.{did_you_mean(role, ROLES)} "
                f"Roles: {', '.join(ROLES)}.",
                key="--bind",
            )
    for old, new in binds.renames.items():
        if old not in read:
            raise UsageError(
                f"--rename {old}={new}: no control reads a column '{old}'."
                f"{did_you_mean(old, read)} Columns the policy reads: "
                f"{', '.join(read) or '(none)'}.",
                key="--rename",
                hint="name a column the policy writes (input.<role>); to bind a role the "
                "policy leaves open use --bind ROLE=COLUMN",
            )


def _reads(c: Control, role: str) -> bool:
    """Whether the control's metric reads ``role`` (a role bound for every control that
    the metric does not read changes nothing it measures)."""
    from fairpolicy.metrics.registry import REGISTRY

    spec = REGISTRY.get(c.metric_key)
    if spec is None:
        return True
    return role in (*spec.inputs, *spec.one_of, *spec.optional) or (
        role in ("prediction", "score") and spec.needs_scores
    )


def apply_binds(policy: Policy, binds: Binds) -> Policy:
    """The policy with ``binds`` applied; each control records what changed
    (``Control.bind_changes``: role, column written (None: none), column read, the option)
    and the policy's warnings name every changed control. Raises UsageError for an unknown
    role or control, or a rename of a column no control reads."""
    if not binds:
        return policy
    _check(policy, binds)
    controls = []
    notes: list[str] = []
    for c in policy.controls:
        inputs = dict(c.inputs)
        by: dict[str, list[str]] = {}
        for role, value in c.inputs.items():
            renamed = _rename_value(role, value, binds.renames)
            olds = [o for o in binds.renames if o in c.role_columns(role)]
            if renamed != value and olds:  # not a comma list's spaces alone ('age, gender')
                inputs[role] = renamed
                by.setdefault(role, []).extend(f"--rename {o}={binds.renames[o]}" for o in olds)
        for role, column in binds.roles.items():
            if inputs.get(role) != column:
                inputs[role] = column
                by[role] = [f"--bind {role}={column}"]
        for (cid, role), column in binds.controls.items():
            if cid == c.control_id and inputs.get(role) != column:
                inputs[role] = column
                by[role] = [f"--bind {cid}:{role}={column}"]
        changes = tuple(
            (role, c.inputs.get(role), inputs[role], "; ".join(by[role]))
            for role in by
            if inputs[role] != c.inputs.get(role) and _reads(c, role)
        )
        for role, before, after, how in changes:
            if before is None:
                what = f"input.{role} (not written) now reads '{after}'"
            else:
                what = f"input.{role} moved from '{before}' to '{after}'"
            notes.append(f"{how} changed control '{c.control_id}': {what}")
        controls.append(c.model_copy(update={"inputs": inputs, "bind_changes": changes}))
    return policy.model_copy(
        update={"controls": tuple(controls), "warnings": (*policy.warnings, *notes)}
    )


def refuse_moves(policy: Policy, available: Sequence[str], file: str | None) -> None:
    """A bind for every control (``--bind ROLE=COLUMN``) may supply a role a control leaves
    open, or replace a column the data does not have; moving a control whose written
    columns the data has is exit 2 naming each such control: the rename
    (``--rename OLD=NEW``) or a per-control bind (``--bind CONTROL:ROLE=COLUMN``) says
    which controls are meant."""
    have = set(available)
    moved: list[str] = []
    hints: list[str] = []
    for c in policy.controls:
        for role, written, read, how in c.bind_changes:
            if written is None or not how.startswith("--bind ") or ":" in how.split("=")[0]:
                continue
            split = role in LIST_ROLES
            cols = [x.strip() for x in written.split(",")] if split else [written]
            now = {x.strip() for x in read.split(",")} if split else {read}
            if any(x in have and x not in now for x in cols):  # a column the data has, dropped
                moved.append(f"'{c.control_id}' (input.{role} '{written}' → '{read}')")
                hints.append(f"--bind {c.control_id}:{role}={read}")
    if moved:
        raise UsageError(
            f"--bind would move {len(moved)} control(s) off columns the data has: "
            f"{', '.join(moved)}. A bind for every control only supplies a role a control "
            "leaves open or replaces a column the data lacks.",
            file=file,
            key="--bind",
            hint="for a renamed column pass --rename OLD=NEW (only the controls that read OLD "
            "change); to move a control on purpose bind it alone: " + " ".join(hints),
        )
