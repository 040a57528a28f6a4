"""The frozen records (fairpolicy.records): dataclasses at run time, pydantic on demand.

What the pydantic models guaranteed must still hold: the JSON holds validated values, an
unknown field is refused, the suite's records are built in their validated form, and every
model class is a frozen record.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import threading

import pydantic
import pytest

import fairpolicy.records as records
from fairpolicy import results as model
from fairpolicy.policy import schema
from fairpolicy.present import Results as PublicResults
from fairpolicy.records import Record


def _record_classes() -> list[type]:
    return [
        cls
        for module in (model, schema)
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if issubclass(cls, Record) and cls is not Record and cls.__module__ == module.__name__
    ]


def test_every_model_class_is_a_frozen_keyword_only_record() -> None:
    classes = _record_classes()
    assert len(classes) >= 18, [c.__name__ for c in classes]
    for cls in classes:
        assert dataclasses.is_dataclass(cls), cls
        # the methods written once (fairpolicy.records.lean), never generated or replaced
        for method, fn in (
            ("__init__", records._init),
            ("__setattr__", records._frozen_setattr),
            ("__delattr__", records._frozen_delattr),
            ("__eq__", records._eq),
            ("__hash__", records._hash),
        ):
            assert getattr(cls, method) is fn, (cls, method)
        assert cls.__lean_compare__ == tuple(f.name for f in dataclasses.fields(cls))


def test_construction_behaves_as_a_frozen_keyword_only_dataclass() -> None:
    t = schema.Threshold(value=0.5)
    with pytest.raises(TypeError, match="positional"):
        schema.Threshold(0.5)  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'value'"):
        t.value = 0.1  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field 'value'"):
        del t.value  # type: ignore[misc]
    with pytest.raises(TypeError, match="missing 2 required arguments: 'path' and 'sha256'"):
        model.PolicyInfo()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="missing 1 required argument: 'version'"):
        model.Tool()  # type: ignore[call-arg]
    # default factories give each record its own list
    a, b = model.PolicyInfo(path=None, sha256=None), model.PolicyInfo(path=None, sha256=None)
    assert a.documents == [] and a.documents is not b.documents
    assert dataclasses.replace(t, value=0.25) == schema.Threshold(value=0.25)
    import copy
    import pickle

    f = model.Tool(version="1")
    assert pickle.loads(pickle.dumps(f)) == f and copy.deepcopy(f) == f


def _finding(**over: object) -> model.Finding:
    base: dict[str, object] = {
        "control_id": "c1",
        "title": None,
        "metric_key": "demographic_parity_diff",
        "inputs": {"target": "y"},
        "params": {},
        "value": 0.25,
        "operator": "<",
        "threshold": 0.5,
        "status": "pass",
        "message": "ok",
    }
    base.update(over)
    return model.Finding(**base)  # type: ignore[arg-type]


def test_the_suite_checks_every_record_it_builds() -> None:
    """conftest turns the check on; an int in a float field is caught, naming the field."""
    assert records.CHECK
    with pytest.raises(TypeError, match=r"Finding\.threshold: built as 1 \(int\)"):
        _finding(threshold=1)
    with pytest.raises(TypeError, match="Finding is not valid"):
        _finding(status="passed")
    with pytest.raises(TypeError, match=r"Finding\.groups: built as \(\) \(tuple\)"):
        _finding(groups=())


def test_the_json_holds_validated_values_even_unchecked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the check (a user's run), a record built loosely is written as the pydantic
    model wrote it: validated first, so an int threshold is 1.0 and a tuple a list."""
    monkeypatch.setattr(records, "CHECK", False)
    f = _finding(threshold=1, value=0, groups=())
    assert f.threshold == 1 and type(f.threshold) is int
    dumped = f.model_dump(mode="json")
    assert json.dumps(dumped["threshold"]) == "1.0"
    assert json.dumps(dumped["value"]) == "0.0"
    assert dumped["groups"] == []
    assert "change" not in dumped  # exclude_if: left out when None


def test_an_unknown_field_is_refused_on_both_paths() -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        _finding(colour="red")
    data = _finding().model_dump(mode="json")
    data["colour"] = "red"
    with pytest.raises(pydantic.ValidationError, match="colour"):
        model.Finding.model_validate(data)
    # and a round trip without it is the same record
    del data["colour"]
    assert model.Finding.model_validate(data) == _finding()


def test_summary_pass_alias_round_trips() -> None:
    s = model.Summary(total=1, pass_=1, fail=0, warn=0, inconclusive=0, error=0, gate="pass")
    dumped = s.model_dump(mode="json", by_alias=True)
    assert dumped["pass"] == 1 and "pass_" not in dumped
    assert model.Summary.model_validate(dumped) == s
    by_name = {k: v for k, v in dumped.items() if k != "pass"}
    assert model.Summary.model_validate({**by_name, "pass_": 1}) == s


def test_a_copy_decides_the_gate_again() -> None:
    """model_copy constructs the record again: the gate can never disagree with the findings
    of a copy (a pydantic model_copy skipped the validator)."""
    run = model.RunInfo(started="a", finished="b")
    tool = model.Tool(version="1")
    policy = model.PolicyInfo(path=None, sha256=None)
    data = model.DataInfo(path=None, sha256=None, rows=0)
    dummy = model.Summary(total=0, pass_=0, fail=0, warn=0, inconclusive=0, error=0, gate="pass")
    r = model.Results(
        tool=tool, policy=policy, data=data, run=run, summary=dummy, findings=[_finding()]
    )
    assert r.summary.gate == "pass" and r.exit_code == 0
    failed = r.model_copy(update={"findings": [_finding(status="fail", value=0.75)]})
    assert failed.summary.gate == "fail" and failed.exit_code == 1
    assert failed.findings[0].gate_effect == "fail"


def test_the_public_results_validate_as_themselves() -> None:
    run = model.RunInfo(started="a", finished="b")
    r = PublicResults(
        tool=model.Tool(version="1"),
        policy=model.PolicyInfo(path=None, sha256=None),
        data=model.DataInfo(path=None, sha256=None, rows=0),
        run=run,
        summary=model.Summary(
            total=0, pass_=0, fail=0, warn=0, inconclusive=0, error=0, gate="pass"
        ),
        findings=[_finding()],
    )
    again = PublicResults.model_validate_json(r.to_json())
    assert type(again) is PublicResults
    assert again == r
    assert "PASS" in repr(again)


def test_the_adapters_are_built_once_under_concurrency() -> None:
    """Threads dumping records of a class whose adapter is not built yet all get one."""
    records._adapters.clear()
    f = _finding()
    out: list[object] = []
    errors: list[BaseException] = []

    def dump() -> None:
        try:
            out.append(f.model_dump(mode="json"))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=dump) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(out) == 8 and all(o == out[0] for o in out)


def test_a_threshold_must_be_finite() -> None:
    with pytest.raises(ValueError, match="finite"):
        schema.Threshold(value=float("nan"))
    assert schema.Threshold(value=0.5).render() == "0.5"


def test_equality_hash_and_repr_are_the_dataclass_ones() -> None:
    """Record writes them once (not generated per class): fields in order, same class only."""
    import dataclasses as dc

    @dc.dataclass(frozen=True, kw_only=True)
    class Plain:
        value: float | None = None
        low: float | None = None
        high: float | None = None
        text: str | None = None

    a, b = schema.Threshold(value=0.5), schema.Threshold(value=0.5)
    assert a == b and hash(a) == hash(b) and a is not b
    assert a != schema.Threshold(low=0.1, high=0.5)
    assert repr(a) == repr(Plain(value=0.5)).replace(Plain.__qualname__, "Threshold")
    assert a != Plain(value=0.5)  # another class, same fields: never equal
    assert (a == 0.5) is False
    f = _finding()
    assert f == _finding() and f != _finding(value=0.3)
    with pytest.raises(TypeError, match="unhashable"):
        hash(f)  # holds dicts, as the pydantic model did
    with pytest.raises(dc.FrozenInstanceError):
        f.value = 0.1  # type: ignore[misc]


# ---------------------------------------------------------------- lean == dataclass


def _pair(frozen: bool, eq: bool) -> tuple[type, type]:
    """The same class written with @dataclass and with @lean."""
    import dataclasses as dc

    def body(name: str) -> type:
        ns: dict[str, object] = {
            "__annotations__": {
                "a": "int",
                "b": "str",
                "c": "list[int]",
                "hidden": "int",
                "extra": "int",
            },
            "b": "x",
            "c": dc.field(default_factory=list),
            "hidden": dc.field(default=0, repr=False, compare=False),
            "extra": dc.field(default=1, kw_only=True),
        }
        return type(name, (), ns)

    plain = dc.dataclass(frozen=frozen, eq=eq)(body("C"))
    light = records.lean(frozen=frozen, eq=eq)(body("C"))
    return plain, light


@pytest.mark.parametrize("frozen", [True, False])
@pytest.mark.parametrize("eq", [True, False])
def test_lean_behaves_as_the_generated_dataclass(frozen: bool, eq: bool) -> None:
    import copy
    import dataclasses as dc
    import pickle

    plain, light = _pair(frozen, eq)
    globals()["C"] = light  # pickle finds the class by name
    for args, kwargs in [((1,), {}), ((1, "y"), {"extra": 5}), ((), {"a": 2, "c": [3]})]:
        p, q = plain(*args, **kwargs), light(*args, **kwargs)
        assert repr(p) == repr(q)
        assert dc.asdict(p) == dc.asdict(q)
        assert (p == plain(*args, **kwargs)) == (q == light(*args, **kwargs))
        assert (q == light(*args, **kwargs)) is eq  # identity without eq
        assert (q == plain(*args, **kwargs)) is False  # another class
        # compare=False fields take no part in equality or hashing
        assert (light(1, hidden=9) == light(1, hidden=8)) is eq

        # hashing: the same outcome (unhashable list field, no hash, identity hash)
        def outcome(obj: object) -> object:
            try:
                return hash(obj) if eq else "identity" if hash(obj) == object.__hash__(obj) else "?"
            except TypeError as exc:
                return str(exc)

        assert outcome(p) == outcome(q)
        assert dc.replace(q, a=7).a == 7 and dc.replace(p, a=7).a == 7
        assert copy.deepcopy(q) == q if eq else True
        assert dc.asdict(pickle.loads(pickle.dumps(q))) == dc.asdict(q)
        if frozen:
            with pytest.raises(dc.FrozenInstanceError):
                q.a = 3
            with pytest.raises(dc.FrozenInstanceError):
                del q.a
        else:
            q.a = 3
            assert q.a == 3
    for bad_args, bad_kwargs in [
        ((), {}),
        ((1, "y", [1], 0, 9), {}),
        ((1,), {"a": 1}),
        ((1,), {"z": 1}),
    ]:
        with pytest.raises(TypeError):
            plain(*bad_args, **bad_kwargs)
        with pytest.raises(TypeError):
            light(*bad_args, **bad_kwargs)
    # default factories give each instance its own list
    assert light(1).c is not light(1).c


def test_lean_keeps_what_the_class_writes_itself_and_runs_post_init() -> None:
    seen = []

    @records.lean
    class Own:
        x: int

        def __repr__(self) -> str:
            return "own"

        def __post_init__(self) -> None:
            seen.append(self.x)

    assert repr(Own(x=3)) == "own" and seen == [3]
    assert Own(x=3) == Own(x=3) and hash(Own(x=3)) == hash(Own(x=3))


def test_the_classes_a_check_builds_use_lean_or_are_built_per_replicate() -> None:
    """Every dataclass of a check's path writes its methods once (fairpolicy.records.lean),
    except those built per bootstrap replicate, where a generated __init__ is faster."""
    import importlib
    import pkgutil

    import fairpolicy

    per_replicate = {"GroupStats", "SurveyCells", "MetricValue", "GroupValue", "Excluded"}
    generated = []
    for info in pkgutil.walk_packages(fairpolicy.__path__, "fairpolicy."):
        if info.name.startswith(("fairpolicy.integrations", "fairpolicy.pytest_plugin")):
            continue
        module = importlib.import_module(info.name)
        for name, cls in vars(module).items():
            if (
                isinstance(cls, type)
                and cls.__module__ == info.name
                and dataclasses.is_dataclass(cls)
                and "__lean_spec__" not in vars(cls)
                and name not in per_replicate
            ):
                generated.append(info.name + "." + name)
    # modules off the check path may keep @dataclass; the check path's must not
    on_path = {
        "fairpolicy.errors",
        "fairpolicy.outputs",
        "fairpolicy.planning",
        "fairpolicy.assemble",
        "fairpolicy.evidence",
        "fairpolicy.config",
        "fairpolicy.formatters",
        "fairpolicy.results",
        "fairpolicy.policy.schema",
        "fairpolicy.policy.oscal",
        "fairpolicy.metrics.base",
        "fairpolicy.data.limits",
        "fairpolicy.data.sources.base",
        "fairpolicy.data.sources.csv_guard",
        "fairpolicy.data.bind.groups",
        "fairpolicy.data.bind.label_types",
        "fairpolicy.stats.columns",
    }
    assert not [g for g in generated if g.rsplit(".", 1)[0] in on_path], generated
