"""Registry entries of the data-quality metrics (:mod:`fairpolicy.metrics.quality`),
kept beside the registry so that it stays one readable table: Venturalitica's HUDERIA
templates' ``data_completeness``, ``provenance_completeness`` and ``data_minimization``.
They measure the data set's columns (``input.columns``, ``input.fields``,
``input.sensitive_columns``: comma lists), not groups of rows."""

from __future__ import annotations

from fairpolicy.metrics.base import Family, MetricSpec

__all__ = ["QUALITY"]

quality = Family("quality")

QUALITY: dict[str, MetricSpec] = {
    "data_completeness": MetricSpec(
        key="data_completeness",
        fn=quality.data_completeness,
        summary="mean over columns of the share of rows holding a value (every column "
        "unless input.columns names some)",
        inputs=(),
        optional=("columns",),
        tasks=("data",),
        kind="data",
        ideal=1.0,
        better="higher",
        groups_needed=1,
        example_operator=">=",
        example_threshold="0.95",
        null_stratum=None,
        column_role="columns",
        column_counts="each",
    ),
    "provenance_completeness": MetricSpec(
        key="provenance_completeness",
        fn=quality.provenance_completeness,
        summary="share of rows whose input.fields columns all hold a value (not rounded)",
        inputs=("fields",),
        tasks=("data",),
        kind="data",
        ideal=1.0,
        better="higher",
        groups_needed=1,
        example_operator=">=",
        example_threshold="0.9",
        null_stratum=None,
        column_role="fields",
        column_counts="joint",
    ),
    "data_minimization": MetricSpec(
        key="data_minimization",
        fn=quality.data_minimization,
        summary="1 − sensitive columns / all columns (input.sensitive_columns, never guessed)",
        inputs=("sensitive_columns",),
        tasks=("data",),
        kind="data",
        ideal=1.0,
        better="higher",
        groups_needed=1,
        example_operator=">=",
        example_threshold="0.7",
        null_stratum=None,
        column_role="sensitive_columns",
        column_counts="names",
    ),
}
