"""Per-game outcomes of the card game (win shares and ranks), kept free of any game playing.

Three numbers describe how a seat did in one game: its *win share* (1 for a sole winner, ``1/k``
for each of ``k`` players tied for the lowest total, else 0, so the shares of a game always sum to
1), its bad-luck points, and its *rank* (1 = lowest total; tied players get the average of the
ranks they span, so the ranks of a game always sum to ``n(n+1)/2``). Both conventions keep a
shared result from being counted as a full win or a full loss for everybody involved.

The tournament feeds the Student-t intervals of :mod:`friday13_env.core.stats` one sample per
*deal* (the mean over every seat rotation of that deal), because the rotations of one deal share its
cards and are therefore not independent of each other.
"""

from __future__ import annotations

from collections.abc import Sequence

from friday13_env.friday13.engine import winners

__all__ = ["average_ranks", "win_shares"]


def win_shares(scores: Sequence[int]) -> list[float]:
    """Each seat's share of the win: the ``k`` players tied for the lowest total get ``1/k`` each."""
    best = winners(scores)
    share = 1.0 / len(best)
    return [share if seat in best else 0.0 for seat in range(len(scores))]


def average_ranks(scores: Sequence[int]) -> list[float]:
    """Rank 1 for the lowest total; tied seats share the mean of the ranks they occupy."""
    ranks = []
    for score in scores:
        below = sum(other < score for other in scores)
        tied = sum(other == score for other in scores)
        ranks.append(below + (tied + 1) / 2)
    return ranks
