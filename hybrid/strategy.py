"""Hybrid retrieval (seed 004): BM25 and dense cosine rankings fused by Reciprocal Rank Fusion.

RRF only looks at ranks, so BM25 scores and cosine similarities never have to share a scale. Each list is taken
to ``depth`` passages; a passage missing from one list simply gets nothing from it. The BM25 list is weighted
(weighted RRF): with equal weights BM25's weaker ranking pulled MuSiQue R@5 below dense alone (0.583 vs 0.615).
The defaults (depth 100, BM25 weight 0.33) were picked on hotpotqa_train100 and 2wiki_first20 (mean R@5 over a
3 x 4 grid, benchmarks/results/hybrid_grid.json); musique_train100, printed beside them, was not used to choose.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from casebook.contract import BuildContext, Param, Strategy, Value
from casebook.types import Explanation, Retrieval
from indexes import BM25_INDEX, VECTOR_INDEX, BM25Index, VectorIndex, fusion, hybrid_search, rank_evidence
from llm import Embedder

RRF_K = Param("rrf_k", fusion.RRF_K, "RRF constant k: each list adds 1 / (k + rank); 60 is the original paper's choice",
              minimum=1, maximum=1000)
DEPTH = Param("depth", fusion.DEPTH, "how many passages each list (BM25, dense) contributes before fusion",
              minimum=1, maximum=1000)
BM25_WEIGHT = Param("bm25_weight", fusion.BM25_WEIGHT, "weight of the BM25 list in the fusion (the dense list weighs 1)",
                    minimum=0.0, maximum=10.0, step=0.01)


class HybridRetriever:
    def __init__(self, dense: VectorIndex, lexical: BM25Index, embedder: Embedder):
        self.dense, self.lexical, self.embedder = dense, lexical, embedder

    def retrieve(self, question: str, top_k: int, expansions: Sequence[str] = (),
                 params: Mapping[str, object] | None = None) -> Retrieval:
        if not question or not question.strip():
            raise ValueError("the question is empty")
        p = HYBRID.values(params)
        ex = Explanation(method=f"Reciprocal Rank Fusion (k={p['rrf_k']}, BM25 weight {p['bm25_weight']}) of dense "
                                f"cosine and BM25 rankings")
        fused, ranks = hybrid_search(self.dense, self.lexical, self.embedder, question, expansions,
                                     int(p["depth"]), int(p["rrf_k"]), float(p["bm25_weight"]), ex)
        top = fused[:top_k]
        ex.evidence = rank_evidence(ranks, top)
        if not self.lexical.tokens(" ".join(ex.queries)):
            ex.fallback = "no searchable word for BM25: the dense ranking alone decided"
        return Retrieval(top, ex)


def build(ctx: BuildContext, params: Mapping[str, Value]) -> HybridRetriever:
    return HybridRetriever(ctx.shared(VECTOR_INDEX), ctx.shared(BM25_INDEX), ctx.embedder)


HYBRID = Strategy("hybrid", "Hybrid BM25 + vector", "BM25 and dense cosine rankings fused by Reciprocal Rank "
                  "Fusion (seed 004).", build, params=(RRF_K, DEPTH, BM25_WEIGHT),
                  products=(VECTOR_INDEX, BM25_INDEX))
