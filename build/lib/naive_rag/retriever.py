"""The naive retriever: embed the question, take the top-k passages by cosine similarity."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from core.types import Explanation, Retrieval
from indexes import VectorIndex
from llm import Embedder


class NaiveRetriever:
    def __init__(self, index: VectorIndex, embedder: Embedder):
        self.index, self.embedder = index, embedder

    def retrieve(self, question: str, top_k: int, expansions: Sequence[str] = (),
                 params: Mapping[str, object] | None = None) -> Retrieval:
        queries = [question.strip()] + [e for e in expansions if e.strip()]
        ex = Explanation(method=f"cosine similarity (1 - Chroma cosine distance) in collection {self.index.name}",
                         queries=queries)
        with ex.stage("embed"):
            vectors = self.embedder.embed(queries)
        with ex.stage("search"):
            ranked = self.index.search_merged(vectors, top_k)
        return Retrieval(ranked, ex)
