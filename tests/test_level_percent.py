"""Confidence levels as printed: never "100%" for a level below 1 (a monitoring window's
interval at 1 − α_t was shown as a "100% CI"), the usual levels as before."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairpolicy.exact import level_percent
from fairpolicy.stats.sequential import window_level


@pytest.mark.parametrize(
    ("level", "text"),
    [(0.95, "95"), (0.9, "90"), (0.975, "97.5"), (0.99, "99"), (0.999, "99.9"), (1.0, "100")],
)
def test_usual_levels(level: float, text: str) -> None:
    assert level_percent(level) == text


@given(st.floats(0.5, 1.0, exclude_max=True))
def test_below_one_is_never_shown_as_100_and_reads_back_close(level: float) -> None:
    text = level_percent(level)
    assert text != "100" and float(text) < 100
    # the distance to 100 % is shown to at least one significant digit (down to 1e-10 %;
    # closer than that the text is 99.999999999999)
    gap, shown_gap = 100 - level * 100, 100 - float(text)
    if gap > 1e-10:
        assert shown_gap == pytest.approx(gap, rel=0.5)


def test_a_level_within_double_precision_of_one() -> None:
    assert level_percent(0.9999999999999999) == "99.999999999999"


def test_every_window_level_of_a_year_of_days() -> None:
    texts = [level_percent(window_level(t, 0.05)) for t in range(1, 366)]
    assert all(t != "100" and t.startswith("99.") for t in texts)
