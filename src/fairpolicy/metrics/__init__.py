"""Metric families and the registry (see :mod:`fairpolicy.metrics.registry`)."""
