"""The naive retriever: embed the question, take the top-k passages by cosine similarity."""
from __future__ import annotations

import time

from casebook.types import Retrieval
from llm import Embedder

from .index import VectorIndex


class NaiveRetriever:
    name = "naive"

    def __init__(self, index: VectorIndex, embedder: Embedder):
        self.index, self.embedder = index, embedder

    def retrieve(self, question: str, top_k: int, expansions: list[str] | None = None) -> Retrieval:
        if not question or not question.strip():
            raise ValueError("the question is empty")
        queries = [question.strip()] + [e for e in (expansions or []) if e.strip()]
        t0 = time.perf_counter()
        vectors = self.embedder.embed(queries)
        t1 = time.perf_counter()
        # Each extra query (from query expansion) is searched too; a passage keeps its best similarity.
        per_query = self.index.search(vectors, top_k)
        best: dict[str, float] = {}
        for hits in per_query:
            for pid, sim in hits:
                best[pid] = max(sim, best.get(pid, -1.0))
        ranked = sorted(best.items(), key=lambda kv: -kv[1])[:top_k]
        t2 = time.perf_counter()
        trace = {"queries": queries, "metric": "cosine similarity (1 - Chroma cosine distance)",
                 "collection": self.index.name}
        return Retrieval(passages=ranked, trace=trace,
                         timings_ms={"embed": (t1 - t0) * 1000, "search": (t2 - t1) * 1000})
