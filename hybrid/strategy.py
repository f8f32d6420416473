"""Hybrid retrieval: BM25 and dense cosine rankings fused by Reciprocal Rank Fusion.

RRF only looks at ranks, so BM25 scores and cosine similarities never have to share a scale. Each list is taken
to ``depth`` passages; a passage missing from one list simply gets nothing from it. The BM25 list is weighted
(weighted RRF): with equal weights BM25's weaker ranking pulled MuSiQue R@5 below dense alone (0.583 vs 0.615).
The defaults (depth 100, BM25 weight 0.33) were picked on hotpotqa_train100 and 2wiki_first20 (mean R@5 over a
3 x 4 grid, benchmarks/results/hybrid_grid.json); musique_train100, printed beside them, was not used to choose.
The development suite's rule (benchmarks/choose.py) later re-decided all three and kept them (indexes/fusion.py).
"""
from __future__ import annotations

from collections.abc import Mapping

from core.contract import BuildContext, Strategy, Value, params_of
from indexes import BM25_INDEX, VECTOR_INDEX

from .retriever import HybridRetriever, HybridSettings


def build(ctx: BuildContext, params: Mapping[str, Value]) -> HybridRetriever:
    return HybridRetriever(ctx.shared(VECTOR_INDEX), ctx.shared(BM25_INDEX), ctx.embedder)


HYBRID = Strategy("hybrid", "Hybrid BM25 + vector", "BM25 and dense cosine rankings fused by Reciprocal Rank "
                  "Fusion.", build, params=params_of(HybridSettings), products=(VECTOR_INDEX, BM25_INDEX))
