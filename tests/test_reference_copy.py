"""The vendored reference fixtures and OSCAL samples are unchanged copies of shared/."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "reference"

PAIRS = [
    (SHARED / "fixtures" / p.name, p) for p in sorted((ROOT / "tests" / "reference").iterdir())
]
PAIRS = [(a, b) for a, b in PAIRS if b.suffix in (".csv", ".json")]
PAIRS += [
    (SHARED / "oscal" / p.name, p)
    for p in sorted((ROOT / "tests" / "policy" / "files").iterdir())
    if p.name.split(".")[0] in ("catalog", "profile", "component-definition")
]


@pytest.mark.parametrize(("shared", "copy"), PAIRS, ids=[b.name for _, b in PAIRS])
def test_copy_matches_shared(shared: Path, copy: Path) -> None:
    if not shared.exists():
        pytest.skip(f"{shared} not present (outside the project's workplace)")
    assert copy.read_bytes() == shared.read_bytes()


def test_all_reference_files_vendored() -> None:
    assert len([p for p in PAIRS if p[1].suffix == ".csv"]) == 3
