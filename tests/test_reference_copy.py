"""The vendored reference fixtures and OSCAL samples are unchanged copies.

The tests use the vendored copies only. Their SHA-256 digests were recorded when they
were copied in, so an accidental edit (a reformat, a line-ending change, a "fixed"
reference value) fails here instead of silently moving the reference.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: repository path → SHA-256 of the copy as vendored (the reference fixtures computed by
#: the anchor libraries, and the OSCAL samples).
DIGESTS: dict[str, str] = {
    "tests/reference/binary_2g.csv": (
        "8571f59e5549df7a61a367cccff45111aa069062218ef3c7ca43c883abcf6d77"
    ),
    "tests/reference/multiclass_3.csv": (
        "d5c4e7b8f2f68b6843f34b5d5f2f307b417852a2d4a7c3d804748801944d5505"
    ),
    "tests/reference/multiclass_6_2site.csv": (
        "62bf4aef6884ed916cc995298768c08c494c7b0b3c130d1e3f2370e97d8a3fe2"
    ),
    "tests/reference/reference.json": (
        "5b8ddcbc563c9cf909f8bf26b3f9bb97d980455f5dd4131e43ac19e44dd1cb80"
    ),
    "tests/policy/files/catalog.json": (
        "f4f6465d8c4c7448b88683ba9890312099874189a97e62ff2a6559e9d370505b"
    ),
    "tests/policy/files/catalog.yaml": (
        "007cc883ca71d68f4b62acafc4189a6db84b4fa67c8562531d6ee3e42c5901e4"
    ),
    "tests/policy/files/component-definition.json": (
        "731adc0bb309bc8a57f23042fa98fadc6ff9254b7aebb4b48e716be61f8dec66"
    ),
    "tests/policy/files/component-definition.yaml": (
        "c4c4c64815d36c00b5bcd5b962af55376a481c102ad4f54cd337bbb1b9a89727"
    ),
    "tests/policy/files/profile.json": (
        "8ed4c140765959ea1e81c75a87fa88455d95b0ccf64d3c53a9d173b4e27d9ae5"
    ),
    "tests/policy/files/profile.yaml": (
        "a09544135cf1c5889c82baccc33754b5322496c36cf2bdeab47c3962dcbfc401"
    ),
    "tests/oscal_samples/assessment-plan.json": (
        "ce994895f4dffebc735fb349367a509f6407f69566b8b48bec268bc28c5fd761"
    ),
    "tests/oscal_samples/assessment-plan.yaml": (
        "3d380e89f338659d9c3af5683044470b20ee5ceb615616dce41042e05dcfa14e"
    ),
    "tests/oscal_samples/assessment-results.json": (
        "284272c6893a1acb54f95f59ae09e59f9da1fdf3aee3b8b25acd3d8eb9397afe"
    ),
    "tests/oscal_samples/assessment-results.yaml": (
        "fe04803e913d0d374190b98888ff7b3f1e50459f34e38300cd57709ba85f8b55"
    ),
}


@pytest.mark.parametrize(("path", "digest"), sorted(DIGESTS.items()), ids=sorted(DIGESTS))
def test_vendored_copy_is_unchanged(path: str, digest: str) -> None:
    assert hashlib.sha256((ROOT / path).read_bytes()).hexdigest() == digest, (
        f"{path} differs from the copy as vendored; the reference tests compare against it"
    )


def test_every_vendored_file_has_a_digest() -> None:
    """A new fixture or OSCAL sample is vendored with its digest, not left unchecked."""
    vendored = {
        *(p for p in (ROOT / "tests" / "reference").iterdir() if p.suffix in (".csv", ".json")),
        *(ROOT / "tests" / "oscal_samples").iterdir(),
        *(
            p
            for p in (ROOT / "tests" / "policy" / "files").iterdir()
            if p.name.split(".")[0] in ("catalog", "profile", "component-definition")
        ),
    }
    assert {p.relative_to(ROOT).as_posix() for p in vendored} == set(DIGESTS)
    assert len([p for p in DIGESTS if p.endswith(".csv")]) == 3
