"""Registry entries of the privacy metrics (:mod:`fairpolicy.metrics.privacy`), kept
beside the registry so that it stays one readable table: Venturalitica's HUDERIA
templates' ``k_anonymity``, ``l_diversity`` and ``t_closeness``. The quasi-identifiers are
bound as the dimension, the sensitive attribute as the target (``input.quasi_identifiers``
and ``input.sensitive_attribute`` are read as those, for these keys only)."""

from __future__ import annotations

import math

from fairpolicy.metrics.base import Family, MetricSpec
from fairpolicy.metrics.families import BOTH

__all__ = ["PRIVACY"]

privacy = Family("privacy")

PRIVACY: dict[str, MetricSpec] = {
    "k_anonymity": MetricSpec(
        key="k_anonymity",
        fn=privacy.k_anonymity,
        summary="rows in the smallest quasi-identifier group (Sweeney's k)",
        inputs=("dimension",),
        tasks=("data",),
        kind="data",
        ideal=math.inf,
        better="higher",
        value_range=(0.0, math.inf),
        groups_needed=1,
        example_operator=">=",
        example_threshold="5",
        null_stratum=None,
    ),
    "l_diversity": MetricSpec(
        key="l_diversity",
        fn=privacy.l_diversity,
        summary="fewest distinct sensitive values in a quasi-identifier group (distinct l)",
        inputs=("target", "dimension"),
        tasks=BOTH,
        ideal=math.inf,
        better="higher",
        value_range=(0.0, math.inf),
        min_samples_applies=False,
        groups_needed=1,
        example_operator=">=",
        example_threshold="3",
        null_stratum=None,
    ),
    "t_closeness": MetricSpec(
        key="t_closeness",
        fn=privacy.t_closeness,
        summary="largest total-variation distance of a group's sensitive values from the table's",
        inputs=("target", "dimension"),
        tasks=BOTH,
        min_samples_applies=False,
        groups_needed=1,
        example_threshold="0.2",
    ),
}
