"""The vendored NIST OSCAL 1.2.3 JSON schema and fairpolicy's validator around it."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from fairpolicy import oscal_schema
from fairpolicy.errors import OutputError, PolicyError, UsageError
from fairpolicy.oscal_schema import check_document, validate_document

ROOT = Path(__file__).resolve().parents[1]
VENDORED = ROOT / "schemas" / "oscal" / "oscal_complete_schema.json"
PACKAGED = ROOT / "src" / "fairpolicy" / "schemas_nist" / "oscal_complete_schema.json"
SAMPLES = ROOT / "tests" / "oscal_samples"
POLICY_FILES = ROOT / "tests" / "policy" / "files"

#: (model, file): the vendored OSCAL samples.
SAMPLE_FILES = [
    *((p.name.split(".")[0], p) for p in sorted(SAMPLES.iterdir())),
    *(
        (p.name.split(".")[0], p)
        for p in sorted(POLICY_FILES.iterdir())
        if p.name.split(".")[0] in ("catalog", "profile", "component-definition")
    ),
]
PACK_FILES = sorted(
    p for p in (ROOT / "policies").rglob("*.*") if p.suffix in (".json", ".yaml", ".yml")
)


def read(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)


def sample(name: str = "assessment-results") -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SAMPLES / f"{name}.json").read_text())
    return data


# ---------------------------------------------------------------- the vendored file


def test_vendored_schema_is_the_documented_nist_file() -> None:
    readme = (ROOT / "schemas" / "oscal" / "README.md").read_text()
    row = re.search(r"\| `oscal_complete_schema.json` \| (\d+) \| `([0-9a-f]{64})` \|", readme)
    assert row, "schemas/oscal/README.md lost its size/SHA-256 table"
    size, sha = int(row.group(1)), row.group(2)
    for path in (VENDORED, PACKAGED):
        data = path.read_bytes()
        assert len(data) == size, path
        assert hashlib.sha256(data).hexdigest() == sha, f"{path} differs from the NIST file"
    assert sha == "384324105c7a817af0f65b120a963146caa0e0d55d969cf0daf60e063b87a206"


def test_schema_is_oscal_1_2_3_with_every_model() -> None:
    schema = oscal_schema.load_schema()
    assert schema["$id"].endswith(f"/{oscal_schema.OSCAL_VERSION}/oscal-complete-schema.json")
    roots = {b["required"][0] for b in schema["oneOf"]}
    assert set(oscal_schema.MODELS) <= roots


def test_schema_loads_from_the_package_not_the_checkout() -> None:
    from importlib import resources

    packaged = resources.files("fairpolicy").joinpath("schemas_nist", oscal_schema.SCHEMA_FILE)
    assert packaged.read_bytes() == VENDORED.read_bytes()


def test_importing_the_module_stays_light() -> None:
    code = (
        "import sys, fairpolicy.oscal_schema; "
        "print(','.join(m for m in ('jsonschema', 'regex', 'pydantic') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


# ---------------------------------------------------------------- valid documents


@pytest.mark.parametrize(("model", "path"), SAMPLE_FILES, ids=[p.name for _, p in SAMPLE_FILES])
def test_every_sample_is_valid(model: str, path: Path) -> None:
    assert validate_document(read(path), model, lenient=path.suffix != ".json") == []


@pytest.mark.parametrize(("model", "path"), SAMPLE_FILES, ids=[p.name for _, p in SAMPLE_FILES])
def test_every_sample_is_valid_strictly(model: str, path: Path) -> None:
    """The vendored OSCAL samples are valid without the lenient YAML allowances (their
    digests are checked in test_reference_copy.py)."""
    assert validate_document(read(path), model) == [], path.name


@pytest.mark.parametrize("path", PACK_FILES, ids=[f"{p.parent.name}/{p.name}" for p in PACK_FILES])
def test_policy_packs_are_valid_oscal(path: Path) -> None:
    doc = read(path)
    (model,) = doc
    assert model in ("catalog", "profile", "component-definition")
    assert validate_document(doc, model, lenient=path.suffix != ".json") == []


def test_policy_packs_found() -> None:
    assert len(PACK_FILES) >= 8


def test_validating_the_sample_results_is_fast() -> None:
    doc = sample()
    validate_document(doc, "assessment-results")  # builds and caches the validator
    start = time.perf_counter()
    for _ in range(20):
        assert validate_document(doc, "assessment-results") == []
    assert (time.perf_counter() - start) / 20 < 0.05  # ~1.5 ms measured


def test_validators_are_cached_per_model() -> None:
    v = oscal_schema._validator("catalog", False)
    assert oscal_schema._validator("catalog", False) is v
    assert oscal_schema._validator("catalog", True) is not v


# ---------------------------------------------------------------- broken documents


def test_missing_finding_target_status() -> None:
    doc = sample()
    del doc["assessment-results"]["results"][0]["findings"][0]["target"]["status"]
    assert validate_document(doc, "assessment-results") == [
        "at $.assessment-results.results[0].findings[0].target: 'status' is a required property"
    ]


@pytest.mark.parametrize(
    "uuid",
    [
        "1234",
        "626f001b-8220-1597-a8e4-1a947cfff6ca",  # version 1
        "626f001b-8220-5597-c8e4-1a947cfff6ca",  # wrong variant
        "626f001b82205597a8e41a947cfff6ca",
        " 626f001b-8220-5597-a8e4-1a947cfff6ca",
    ],
)
def test_bad_uuid(uuid: str) -> None:
    doc = sample()
    doc["assessment-results"]["uuid"] = uuid
    (error,) = validate_document(doc, "assessment-results")
    assert error.startswith(f"at $.assessment-results.uuid: {uuid!r} is not a version 4 or 5 UUID")
    assert error.endswith("(UUIDDatatype)")


def test_colon_prop_name_is_not_an_oscal_token() -> None:
    doc = sample()
    doc["assessment-results"]["results"][0]["observations"][0]["props"][0]["name"] = "input:x"
    (error,) = validate_document(doc, "assessment-results")
    assert error.startswith(
        "at $.assessment-results.results[0].observations[0].props[0].name: "
        "'input:x' is not an OSCAL token"
    )
    assert "(TokenDatatype)" in error


def test_missing_last_modified() -> None:
    doc = sample()
    del doc["assessment-results"]["metadata"]["last-modified"]
    assert validate_document(doc, "assessment-results") == [
        "at $.assessment-results.metadata: 'last-modified' is a required property"
    ]


def test_every_error_of_a_document_is_reported() -> None:
    doc = sample()
    ar = doc["assessment-results"]
    ar["uuid"] = "nope"
    del ar["metadata"]["last-modified"]
    ar["results"][0]["findings"][0]["target"]["status"]["state"] = "passed"
    ar["extra"] = True
    errors = validate_document(doc, "assessment-results")
    assert len(errors) == 4
    assert "at $.assessment-results: Additional properties are not allowed ('extra' was " in (
        "\n".join(errors)
    )
    assert (
        "at $.assessment-results.results[0].findings[0].target.status.state: "
        "'passed' is not one of ['satisfied', 'not-satisfied']" in errors
    )


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("input.target", True),
        ("_private", True),
        ("catégorie", True),  # \p{L}: needs the regex module
        ("名前", True),
        ("x-1.2_y", True),
        ("input:target", False),
        ("1abc", False),
        ("with space", False),
        ("", False),
    ],
)
def test_token_pattern_uses_unicode_letter_classes(name: str, ok: bool) -> None:
    doc = read(POLICY_FILES / "catalog.json")
    doc["catalog"]["controls"][0]["props"][0]["name"] = name
    assert (validate_document(doc, "catalog") == []) is ok


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("2026-01-15T12:00:00Z", True),
        ("2026-01-15T12:00:00.123+05:30", True),
        ("2024-02-29T00:00:00Z", True),
        ("2026-01-15T12:00:00", False),  # no timezone
        ("2025-02-29T00:00:00Z", False),  # not a leap year
        ("2026-01-15 12:00:00Z", False),
        ("2026-01-15T12:00:00Z\n", False),  # ECMA-262 `$`: no final newline
    ],
)
def test_date_time_with_timezone(value: str, ok: bool) -> None:
    doc = sample()
    doc["assessment-results"]["metadata"]["last-modified"] = value
    assert (validate_document(doc, "assessment-results") == []) is ok


@pytest.mark.parametrize(
    ("title", "ok"), [("a title", True), ("two\nlines", False), ("x\n", False)]
)
def test_markup_line_is_one_line(title: str, ok: bool) -> None:
    doc = sample()
    doc["assessment-results"]["metadata"]["title"] = title
    assert (validate_document(doc, "assessment-results") == []) is ok


@pytest.mark.parametrize(
    ("href", "why"),
    [
        ("assessment-plan.json", None),
        ("../plans/assessment plan.json", "the character ' ' must be percent-encoded"),
        ("../plans/assessment%20plan.json", None),
        ("#626f001b-8220-5597-a8e4-1a947cfff6ca", None),
        ("https://example.org/ap.json?x=1#frag", None),
        ("file:///tmp/ap.json", None),
        ("C:\\plans\\ap.json", "the character '\\\\' must be percent-encoded"),
        ("100%.json", "'%' must start a percent-encoding"),
        ("a#b#c", "more than one '#'"),
        ("1http://x", "'1http:' is not a URI scheme"),
    ],
)
def test_uri_reference_format(href: str, why: str | None) -> None:
    doc = sample()
    doc["assessment-results"]["import-ap"]["href"] = href
    errors = validate_document(doc, "assessment-results")
    if why is None:
        assert errors == []
    else:
        (error,) = errors
        assert error.startswith(f"at $.assessment-results.import-ap.href: {href!r} is not a valid")
        assert why in error


def test_uri_format_needs_a_scheme() -> None:
    doc = sample()
    props = doc["assessment-results"]["results"][0]["observations"][0]["props"]
    props[0]["ns"] = "fairpolicy.example.org/ns"
    props[1]["ns"] = "https://fairpolicy.example.org/ns oscal"
    errors = validate_document(doc, "assessment-results")
    assert len(errors) == 2, errors  # one message per value, not pattern + format
    assert "is not an absolute URI with a scheme" in errors[0]
    assert "the character ' ' must be percent-encoded" in errors[1]


def test_json_numbers_are_not_strings_and_any_of_names_the_deepest_reason() -> None:
    doc = read(POLICY_FILES / "catalog.json")
    doc["catalog"]["controls"][0]["params"][0]["values"] = [0.1]
    assert validate_document(doc, "catalog") == [
        "at $.catalog.controls[0].params[0].values[0]: 0.1 is not a string (OSCAL writes every "
        'value as a string: "0.1") ($.catalog.controls[0].params[0] matches none of the forms '
        "OSCAL allows there)"
    ]


def test_lenient_mode_takes_yaml_scalars_as_their_text() -> None:
    doc = read(POLICY_FILES / "catalog.yaml")
    doc["catalog"]["controls"][0]["params"][0]["values"] = [0.1]
    doc["catalog"]["metadata"]["last-modified"] = dt.datetime(2026, 1, 15, tzinfo=dt.UTC)
    doc["catalog"]["metadata"]["version"] = 2
    assert validate_document(doc, "catalog", lenient=True) == []
    assert len(validate_document(doc, "catalog")) == 3
    doc["catalog"]["metadata"]["last-modified"] = dt.datetime(2026, 1, 15)  # naive
    (error,) = validate_document(doc, "catalog", lenient=True)
    assert "is not a date-time with a timezone" in error


def test_wrong_model_root() -> None:
    assert validate_document(sample(), "catalog") == [
        "at $: 'catalog' is a required property",
        "at $: Additional properties are not allowed ('assessment-results' was unexpected)",
    ]


def test_unknown_model() -> None:
    with pytest.raises(ValueError, match="unknown OSCAL model 'ssp'"):
        validate_document({}, "ssp")


# ---------------------------------------------------------------- check_document


def test_check_document_passes_valid_documents() -> None:
    check_document(sample(), "assessment-results", "ar.json")


def test_check_document_raises_output_error_for_results() -> None:
    doc = sample()
    del doc["assessment-results"]["metadata"]["last-modified"]
    with pytest.raises(OutputError) as info:
        check_document(doc, "assessment-results", "out/ar.json")
    assert info.value.render() == (
        "cannot write output (not valid against the NIST OSCAL 1.2.3 assessment-results JSON "
        "schema): out/ar.json: at $.assessment-results.metadata: 'last-modified' is a required "
        "property."
    )


def test_check_document_raises_policy_error_for_policies() -> None:
    doc = read(POLICY_FILES / "catalog.json")
    doc["catalog"]["uuid"] = "x"
    doc["catalog"]["controls"][0]["props"][0]["name"] = "metric:key"
    with pytest.raises(PolicyError) as info:
        check_document(doc, "catalog", "cat.json")
    text = info.value.render()
    assert text.startswith(
        "invalid policy (not valid against the NIST OSCAL 1.2.3 catalog JSON schema): 2 problems"
    )
    assert "  - cat.json: at $.catalog.uuid: 'x' is not a version 4 or 5 UUID" in text
    assert "  - cat.json: at $.catalog.controls[0].props[0].name: 'metric:key'" in text


def test_check_document_error_class_can_be_chosen_and_problems_are_capped() -> None:
    doc = sample()
    doc["assessment-results"]["results"][0]["observations"] = [
        {"uuid": f"bad-{i}", "description": "d", "methods": ["TEST"], "collected": "now"}
        for i in range(20)
    ]
    with pytest.raises(UsageError) as info:
        check_document(doc, "assessment-results", None, error=UsageError)
    problems = info.value.problems
    assert len(problems) == oscal_schema.MAX_PROBLEMS + 1
    assert problems[-1].message == "and 15 more schema errors."
