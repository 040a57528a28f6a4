"""Where a percentile or BCa interval reads its replicates: one constant shared by the
bootstrap (:mod:`fairpolicy.stats.bootstrap`, which computes such intervals) and the
sequential window gate (:mod:`fairpolicy.stats.sequential`, which checks whether a
window's replicates can resolve its level), kept here so neither imports the other."""

from __future__ import annotations

#: a percentile or BCa interval (a value without the band) is read at tails (1 − level)/2
#: ÷ WIDEN: 95 % → the 0.5 % and 99.5 % quantiles. Measured in docs/statistics.md: the
#: plain 95 % interval of theil_index wrongly passes ``ci_upper`` 7 % (n = 50), this 2.5 %.
WIDEN = 5.0
