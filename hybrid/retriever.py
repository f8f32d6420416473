"""The hybrid retriever: BM25 and dense cosine rankings fused by weighted Reciprocal Rank Fusion."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from core.contract import setting, settings_with
from core.types import Explanation, Retrieval
from indexes import BM25Index, VectorIndex, fusion, hybrid_search, rank_evidence
from llm import Embedder


@dataclass(frozen=True)
class HybridSettings:
    """Query-time settings; the defaults live in indexes.fusion, which says the rule and the suite run that kept
    each (benchmarks/choose.py --strategy hybrid; the package docstring has the first grid)."""
    rrf_k: int = setting(fusion.RRF_K, "RRF constant k: each list adds 1 / (k + rank); 60 is the original paper's "
                         "choice", minimum=1, maximum=1000)
    depth: int = setting(fusion.DEPTH, "how many passages each list (BM25, dense) contributes before fusion",
                         minimum=1, maximum=1000)
    bm25_weight: float = setting(fusion.BM25_WEIGHT, "weight of the BM25 list in the fusion (the dense list weighs 1)",
                                 minimum=0.0, maximum=10.0, step=0.01)


class HybridRetriever:
    def __init__(self, dense: VectorIndex, lexical: BM25Index, embedder: Embedder,
                 settings: HybridSettings = HybridSettings()):
        self.dense, self.lexical, self.embedder, self.settings = dense, lexical, embedder, settings

    def retrieve(self, question: str, top_k: int, expansions: Sequence[str] = (),
                 params: Mapping[str, object] | None = None) -> Retrieval:
        p = settings_with(self.settings, params)
        ex = Explanation(method=f"Reciprocal Rank Fusion (k={p.rrf_k}, BM25 weight {p.bm25_weight}) of dense "
                                f"cosine and BM25 rankings")
        fused, ranks = hybrid_search(self.dense, self.lexical, self.embedder, question, expansions,
                                     p.depth, p.rrf_k, p.bm25_weight, ex)
        top = fused[:top_k]
        ex.evidence = rank_evidence(ranks, top)
        if not self.lexical.tokens(" ".join(ex.queries)):
            ex.fallback = "no searchable word for BM25: the dense ranking alone decided"
        return Retrieval(top, ex)
