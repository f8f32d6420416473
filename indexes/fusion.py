"""Reciprocal Rank Fusion: merge ranked lists by rank alone, so scores on different scales never mix."""
from __future__ import annotations

from collections.abc import Sequence


def rrf(rankings: Sequence[Sequence[str]], k: int = 60,
        weights: Sequence[float] | None = None) -> list[tuple[str, float]]:
    """Each id scores the sum of weight / (k + rank) over the lists it is in (rank from 1, weight 1 unless given);
    best first, ties by id."""
    scores: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights or [1.0] * len(rankings), strict=True):
        for rank, item in enumerate(ranking, 1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
