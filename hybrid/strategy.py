"""Hybrid retrieval (seed 004): BM25 and dense cosine rankings fused by Reciprocal Rank Fusion.

RRF only looks at ranks, so BM25 scores and cosine similarities never have to share a scale. Each list is taken
to ``depth`` passages; a passage missing from one list simply gets nothing from it. The BM25 list is weighted
(weighted RRF): with equal weights BM25's weaker ranking pulled MuSiQue R@5 below dense alone (0.583 vs 0.615).
The defaults (depth 100, BM25 weight 0.33) were picked on hotpotqa_train100 and 2wiki_first20 (mean R@5 over a
3 x 4 grid, benchmarks/results/hybrid_grid.json); musique_train100 was not looked at for the choice.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from casebook.contract import BuildContext, Param, Strategy, Value
from casebook.types import Evidence, Explanation, Retrieval
from indexes import BM25_INDEX, VECTOR_INDEX, BM25Index, VectorIndex, rrf
from llm import Embedder

RRF_K = Param("rrf_k", 60, "RRF constant k: each list adds 1 / (k + rank); 60 is the original paper's choice",
              minimum=1, maximum=1000)
DEPTH = Param("depth", 100, "how many passages each list (BM25, dense) contributes before fusion",
              minimum=1, maximum=1000)
BM25_WEIGHT = Param("bm25_weight", 0.33, "weight of the BM25 list in the fusion (the dense list weighs 1)",
                    minimum=0.0, maximum=10.0, step=0.01)


def fused_ranking(dense: VectorIndex, lexical: BM25Index, embedder: Embedder, question: str,
                  expansions: Sequence[str], depth: int, rrf_k: int, bm25_weight: float, ex: Explanation
                  ) -> tuple[list[tuple[str, float]], dict[str, tuple[int | None, int | None]]]:
    """(passage id, RRF score) best first, and each passage's (dense rank, BM25 rank); records its stages."""
    queries = [question.strip()] + [e for e in expansions if e.strip()]
    with ex.stage("embed"):
        vectors = embedder.embed(queries)
    with ex.stage("dense search", f"top {depth} by cosine in Chroma"):
        best: dict[str, float] = {}
        for hits in dense.search(vectors, depth):
            for pid, sim in hits:
                best[pid] = max(sim, best.get(pid, -1.0))
        dense_ids = [pid for pid, _ in sorted(best.items(), key=lambda kv: -kv[1])]
    with ex.stage("bm25 search", f"top {depth} by BM25"):
        lexical_ids = [pid for pid, _ in lexical.search(" ".join(queries), depth)]
    with ex.stage("fusion", f"reciprocal rank fusion, k={rrf_k}, BM25 weight {bm25_weight}"):
        fused = rrf([dense_ids, lexical_ids], rrf_k, [1.0, bm25_weight])
    dense_rank = {pid: r for r, pid in enumerate(dense_ids, 1)}
    lexical_rank = {pid: r for r, pid in enumerate(lexical_ids, 1)}
    ranks = {pid: (dense_rank.get(pid), lexical_rank.get(pid)) for pid, _ in fused}
    ex.queries = queries
    return fused, ranks


def rank_evidence(ranks: Mapping[str, tuple[int | None, int | None]], scored: Sequence[tuple[str, float]]
                  ) -> list[Evidence]:
    """Each ranked passage with its two ranks: the evidence of a fusion."""
    def show(r: int | None) -> str:
        return str(r) if r is not None else "-"
    return [Evidence(f"{pid}: dense rank {show(ranks[pid][0])}, BM25 rank {show(ranks[pid][1])}", round(score, 6),
                     True, "both lists" if None not in ranks[pid] else "one list") for pid, score in scored]


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
        fused, ranks = fused_ranking(self.dense, self.lexical, self.embedder, question, expansions,
                                     int(p["depth"]), int(p["rrf_k"]), float(p["bm25_weight"]), ex)
        top = fused[:top_k]
        ex.evidence = rank_evidence(ranks, top)
        if not self.lexical.tokens(" ".join(ex.queries)):
            ex.fallback = "no searchable word for BM25: the dense ranking alone decided"
        return Retrieval(top, ex)


def build(ctx: BuildContext, params: Mapping[str, Value]) -> HybridRetriever:
    return HybridRetriever(ctx.shared(VECTOR_INDEX), ctx.shared(BM25_INDEX), ctx.embedder)


HYBRID = Strategy("hybrid", "Hybrid BM25 + vector", "BM25 and dense cosine rankings fused by Reciprocal Rank "
                  "Fusion (seed 004).", build, params=(RRF_K, DEPTH, BM25_WEIGHT))
