"""Ranking statistics: the group of each ranked item, in rank order."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fairpolicy.stats.bincount import IntArray


@dataclass(frozen=True, eq=False)
class RankingStats:
    """The group of each ranked item, in rank order (position 0 is the top).

    Items whose group is not compared (missing dimension, excluded group) keep
    their position with group −1, so exposure and top-k shares stay positional.
    """

    order: IntArray  # (n,) group index per position, −1 = not compared

    def select(self, idx: NDArray[np.intp], n_groups: int) -> RankingStats:
        remap = np.full(n_groups + 1, -1, dtype=np.int64)
        remap[idx] = np.arange(len(idx))
        return RankingStats(remap[self.order])
