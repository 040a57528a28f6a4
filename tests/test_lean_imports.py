"""A run imports only what it uses (issue 17, "a lean start"; not a timed test).

Each case runs a command in a fresh interpreter and lists the third-party packages it
imported. The class of regression caught: a heavy library (pandas, compliance-trestle,
jsonschema, duckdb, pyspark, scipy, scikit-learn) slipping onto a path that does not need
it through a module-level import anywhere in ``src/``. Timings are measured, not tested,
by ``benchmarks/startup.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

HEAVY = {"pandas", "trestle", "jsonschema", "duckdb", "pyspark", "scipy", "sklearn"}

#: imported only to validate, serialise or describe a record (fairpolicy.records): a check
#: with a text report needs none of it (~100 ms)
PYDANTIC = {"pydantic", "pydantic_core"}

LIST_POLICY = (
    "- control-id: dp\n  props:\n"
    "  - {name: metric_key, value: demographic_parity_diff}\n"
    "  - {name: threshold, value: '0.5'}\n  - {name: operator, value: '<'}\n"
    "  - {name: input.target, value: y_true}\n  - {name: input.prediction, value: y_pred}\n"
    "  - {name: input.dimension, value: sex}\n"
)

OSCAL_POLICY = {
    "component-definition": {
        "uuid": "9a6f2b1e-0c4d-4e8f-a1b2-c3d4e5f60718",
        "metadata": {
            "title": "t",
            "last-modified": "2026-01-01T00:00:00+00:00",
            "version": "1",
            "oscal-version": "1.2.1",
        },
        "components": [
            {
                "uuid": "1b2c3d4e-5f60-4718-8a9b-0c1d2e3f4a5b",
                "type": "software",
                "title": "model",
                "description": "model",
                "control-implementations": [
                    {
                        "uuid": "2c3d4e5f-6071-4829-9bac-1d2e3f4a5b6c",
                        "source": "#catalog",
                        "description": "gate",
                        "implemented-requirements": [
                            {
                                "uuid": "3d4e5f60-7182-4a3b-8c4d-5e6f7a8b9c0d",
                                "control-id": "dp",
                                "description": "DP gap",
                                "props": [
                                    {"name": n, "value": v}
                                    for n, v in (
                                        ("metric_key", "demographic_parity_diff"),
                                        ("threshold", "0.5"),
                                        ("operator", "<"),
                                        ("input.target", "y_true"),
                                        ("input.prediction", "y_pred"),
                                        ("input.dimension", "sex"),
                                    )
                                ],
                            }
                        ],
                    }
                ],
            }
        ],
    }
}

PROBE = (
    "import json, sys\n"
    "from fairpolicy.cli import main\n"
    "try:\n    code = main(sys.argv[1:])\nexcept SystemExit as exc:\n    code = exc.code\n"
    "mods = sorted({m.split('.')[0] for m in sys.modules} - set(sys.stdlib_module_names))\n"
    "sys.stderr.write('\\nMODULES ' + json.dumps([code, mods]) + '\\n')\n"
)


def imported(args: list[str], cache: Path, **env: str) -> tuple[int, set[str]]:
    environ = dict(os.environ, XDG_CACHE_HOME=str(cache), PYTHONPATH=str(REPO / "src"))
    environ.pop("FAIRPOLICY_NO_CACHE", None)
    environ.pop("FAIRPOLICY_CHECK_RECORDS", None)  # the suite's check imports pydantic
    environ.update(env)
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        capture_output=True,
        text=True,
        env=environ,
        check=False,
    )
    line = [x for x in proc.stderr.splitlines() if x.startswith("MODULES ")]
    assert line, proc.stderr
    code, mods = json.loads(line[-1][len("MODULES ") :])
    return code, set(mods)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    data = tmp_path / "d.csv"
    data.write_text("y_true,y_pred,sex\n" + "1,1,F\n0,1,M\n1,0,F\n0,0,M\n" * 20)
    policy = tmp_path / "p.yaml"
    policy.write_text(LIST_POLICY)
    oscal = tmp_path / "c.json"
    oscal.write_text(json.dumps(OSCAL_POLICY))
    return {"data": data, "policy": policy, "oscal": oscal, "cache": tmp_path / "cache"}


def test_help_imports_no_third_party_package(files: dict[str, Path]) -> None:
    code, mods = imported(["--help"], files["cache"])
    assert code == 0
    assert mods <= {"fairpolicy", "certifi", "_distutils_hack", "__main__"}, mods


def test_validate_of_a_list_policy_reads_no_data_library(files: dict[str, Path]) -> None:
    code, mods = imported(["validate", str(files["policy"])], files["cache"])
    assert code == 0
    assert not mods & (HEAVY | PYDANTIC | {"pyarrow"}), mods & (HEAVY | PYDANTIC | {"pyarrow"})


def test_check_of_a_csv_with_a_list_policy_imports_nothing_heavy(files: dict[str, Path]) -> None:
    code, mods = imported(["check", str(files["policy"]), str(files["data"])], files["cache"])
    assert code in (0, 1)
    assert {"pyarrow", "numpy"} <= mods
    assert not mods & HEAVY, mods & HEAVY
    assert not mods & PYDANTIC, mods & PYDANTIC


@pytest.mark.parametrize("fmt", ["json", "oscal", "sarif"])
def test_a_machine_readable_report_imports_pydantic_to_write_it(
    files: dict[str, Path], fmt: str
) -> None:
    """The other side of the text check above: the JSON a report writes is the records
    validated and dumped by pydantic (so the probe does see pydantic when it is used)."""
    code, mods = imported(
        ["check", str(files["policy"]), str(files["data"]), "-o", fmt], files["cache"]
    )
    assert code in (0, 1)
    assert "pydantic" in mods


@pytest.mark.parametrize("weights", ["2", "0.5"], ids=["frequency", "survey"])
def test_a_weighted_check_of_a_csv_imports_nothing_heavy(
    files: dict[str, Path], weights: str, tmp_path: Path
) -> None:
    """Sample weights (whole or fractional, with a bootstrap interval) are read from the
    Arrow buffers: pyarrow's to_numpy / pa.array / group_by would import pandas (~0.2 s)."""
    data = tmp_path / "w.csv"
    rows = "".join(f"{i % 2},{(i // 2) % 2},{'FM'[i % 3 == 0]},{weights}\n" for i in range(90))
    data.write_text("y_true,y_pred,sex,w\n" + rows)
    code, mods = imported(
        ["check", str(files["policy"]), str(data), "--bind", "weight=w", "--bootstrap", "50"],
        files["cache"],
    )
    assert code in (0, 1)
    assert not mods & (HEAVY | PYDANTIC), mods & (HEAVY | PYDANTIC)


ALL_MODULES_PROBE = PROBE.replace(
    "mods = sorted({m.split('.')[0] for m in sys.modules} - set(sys.stdlib_module_names))",
    "mods = sorted(sys.modules)",
)


def modules_imported(args: list[str], cache: Path, cwd: Path | None = None) -> tuple[int, set[str]]:
    """Every module (dotted names, the standard library's too) a command imported."""
    environ = dict(os.environ, XDG_CACHE_HOME=str(cache), PYTHONPATH=str(REPO / "src"))
    environ.pop("FAIRPOLICY_NO_CACHE", None)
    environ.pop("FAIRPOLICY_CHECK_RECORDS", None)
    proc = subprocess.run(
        [sys.executable, "-c", ALL_MODULES_PROBE, *args],
        capture_output=True,
        text=True,
        env=environ,
        cwd=cwd,
        check=False,
    )
    line = [x for x in proc.stderr.splitlines() if x.startswith("MODULES ")]
    assert line, proc.stderr
    code, mods = json.loads(line[-1][len("MODULES ") :])
    return code, set(mods)


CONFIG_NAMES = ("fairpolicy.toml", "pyproject.toml")


def test_a_check_without_a_configuration_file_reads_no_toml(files: dict[str, Path]) -> None:
    """Configuration discovery finds no ``fairpolicy.toml`` or ``pyproject.toml`` here, so
    the TOML parser is never imported (nor is the ``check`` subparser built twice)."""
    folder = files["data"].parent
    assert not any((p / n).exists() for p in (folder, *folder.parents) for n in CONFIG_NAMES)
    args = ["check", str(files["policy"]), str(files["data"])]
    code, mods = modules_imported(args, files["cache"], cwd=folder)
    assert code in (0, 1)
    assert "tomllib" not in mods


#: modules a text check of a CSV with a bare-list policy (no baseline, SSP, assessors or
#: report file) never uses: each is imported only on the path that does (issue 17)
UNUSED_BY_A_LIST_CHECK = {
    "fairpolicy.baseline",  # --baseline / --max-regression
    "fairpolicy.ssp",  # --ssp
    "fairpolicy.people",  # --assessor / --organization, or a policy naming people
    "fairpolicy.policy.component",  # component-definitions
    "fairpolicy.policy.profile",  # catalogs and profiles
    "fairpolicy.oscal_schema",  # the NIST schema: key checks read schemas_nist/oscal_keys.json
    "secrets",  # staging a report file (hmac, base64)
    "hmac",
    "glob",  # a data path that is a pattern
    "fairpolicy.stats.scores",  # score, regression and ranking bindings
    "fairpolicy.stats.regression",
    "fairpolicy.stats.ranking",
}


def test_a_list_policy_check_imports_no_module_it_does_not_use(files: dict[str, Path]) -> None:
    folder = files["data"].parent
    args = ["check", str(files["policy"]), str(files["data"])]
    code, mods = modules_imported(args, files["cache"], cwd=folder)
    assert code in (0, 1)
    assert not mods & UNUSED_BY_A_LIST_CHECK, mods & UNUSED_BY_A_LIST_CHECK


def test_check_of_a_csv_calls_arrow_kernels_without_pyarrow_compute(
    files: dict[str, Path],
) -> None:
    """``pyarrow.compute`` builds a wrapper per kernel when imported (~25 ms): the kernels a
    CSV check with text groups and integer labels needs are called by name
    (:mod:`fairpolicy.data.kernels`), for a bare list and for OSCAL alike."""
    for policy in (files["policy"], files["oscal"]):
        code, mods = modules_imported(["check", str(policy), str(files["data"])], files["cache"])
        assert code in (0, 1)
        assert "pyarrow.csv" in mods
        assert "pyarrow.compute" not in mods, policy.name


def test_oscal_check_imports_trestle_only_until_the_policy_is_known_valid(
    files: dict[str, Path],
) -> None:
    args = ["check", str(files["oscal"]), str(files["data"])]
    code, cold = imported(args, files["cache"])
    assert code in (0, 1) and "trestle" in cold
    code2, warm = imported(args, files["cache"])
    assert code2 == code
    assert not warm & HEAVY, warm & HEAVY
    assert not warm & PYDANTIC, warm & PYDANTIC
    code3, off = imported(args, files["cache"], FAIRPOLICY_NO_CACHE="1")
    assert code3 == code and "trestle" in off


METRIC_FAMILIES = {
    "binary",
    "f1",
    "holistic",
    "multiclass",
    "performance",
    "ranking",
    "rates",
    "regression",
    "scores",
}

FAMILY_PROBE = PROBE.replace(
    "mods = sorted({m.split('.')[0] for m in sys.modules} - set(sys.stdlib_module_names))",
    "mods = sorted(m.split('.')[2] for m in sys.modules if m.startswith('fairpolicy.metrics.'))",
)


def families_imported(args: list[str], cache: Path) -> tuple[int, set[str]]:
    environ = dict(os.environ, XDG_CACHE_HOME=str(cache), PYTHONPATH=str(REPO / "src"))
    proc = subprocess.run(
        [sys.executable, "-c", FAMILY_PROBE, *args],
        capture_output=True,
        text=True,
        env=environ,
        check=False,
    )
    line = [x for x in proc.stderr.splitlines() if x.startswith("MODULES ")]
    assert line, proc.stderr
    code, mods = json.loads(line[-1][len("MODULES ") :])
    return code, set(mods) & METRIC_FAMILIES


@pytest.mark.parametrize(
    ("key", "family"),
    [
        ("demographic_parity_diff", "binary"),
        ("multiclass_demographic_parity", "multiclass"),
        ("theil_index", "rates"),
    ],
)
def test_a_check_imports_only_the_metric_families_its_controls_use(
    files: dict[str, Path], key: str, family: str
) -> None:
    """The registry holds every spec without importing every family (issue 17): a check
    imports the family of each control's metric (and what that module itself imports),
    never the others."""
    from fairpolicy.metrics.registry import REGISTRY

    policy = files["policy"].with_name(f"{key}.yaml")
    policy.write_text(LIST_POLICY.replace("demographic_parity_diff", key))
    code, used = families_imported(["check", str(policy), str(files["data"])], files["cache"])
    assert code in (0, 1)
    module = sys.modules[REGISTRY[key].fn.__module__]
    own_imports = {
        name
        for name in METRIC_FAMILIES
        if getattr(module, name, None) is sys.modules.get(f"fairpolicy.metrics.{name}")
        or any(
            getattr(getattr(module, attr), "__module__", None) == f"fairpolicy.metrics.{name}"
            for attr in vars(module)
            if not attr.startswith("__")
        )
    }
    assert family in used
    assert used <= {family} | own_imports, used - {family} - own_imports


def test_validate_imports_no_metric_family(files: dict[str, Path]) -> None:
    code, used = families_imported(["validate", str(files["policy"])], files["cache"])
    assert code == 0
    assert not used, used


PLUGIN_PROBE = (
    "import os, sys\n"
    "from fairpolicy.cli import main\n"
    "sys.argv = ['fairpolicy', *sys.argv[1:], '-o', 'json']\n"
    "code = main()\n"
    "loader = sys.modules.get('pydantic.plugin._loader')\n"
    "scanned = loader is not None and loader._plugins is not None\n"
    "setting = os.environ.get('PYDANTIC_DISABLE_PLUGINS')\n"
    "sys.stderr.write(f'\\nPLUGINS {code} {scanned} {setting}\\n')\n"
)


@pytest.mark.parametrize("given", [None, "some-plugin"])
def test_the_program_does_not_scan_the_installed_distributions_for_pydantic_plugins(
    files: dict[str, Path], given: str | None
) -> None:
    """pydantic reads every installed distribution's entry points for plugins when it
    builds its first model (here: to write the JSON report); run as the program,
    fairpolicy turns that off (``PYDANTIC_DISABLE_PLUGINS``), unless the caller set the
    variable themselves."""
    environ = dict(os.environ, XDG_CACHE_HOME=str(files["cache"]), PYTHONPATH=str(REPO / "src"))
    environ.pop("PYDANTIC_DISABLE_PLUGINS", None)
    environ.pop("FAIRPOLICY_CHECK_RECORDS", None)
    if given is not None:
        environ["PYDANTIC_DISABLE_PLUGINS"] = given
    proc = subprocess.run(
        [sys.executable, "-c", PLUGIN_PROBE, "check", str(files["policy"]), str(files["data"])],
        capture_output=True,
        text=True,
        env=environ,
        check=False,
    )
    line = [x for x in proc.stderr.splitlines() if x.startswith("PLUGINS ")]
    assert line, proc.stderr
    code, scanned, setting = line[-1].split()[1:]
    assert code in ("0", "1")
    if given is None:
        assert (scanned, setting) == ("False", "__all__")
    else:
        assert (scanned, setting) == ("True", given)
