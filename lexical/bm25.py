"""BM25 over the case's passages (bm25s), with the same retrieve interface as every strategy."""
from __future__ import annotations

import time
from typing import Sequence

from casebook.types import Passage, Retrieval


class BM25Retriever:
    name = "bm25"

    def __init__(self, passages: Sequence[Passage]):
        import bm25s

        self._bm25s = bm25s
        self.ids = [p.id for p in passages]
        self.index = bm25s.BM25()
        self.index.index(bm25s.tokenize([p.embedding_text for p in passages], stopwords="en", show_progress=False),
                         show_progress=False)

    def retrieve(self, question: str, top_k: int, expansions: list[str] | None = None) -> Retrieval:
        if not question or not question.strip():
            raise ValueError("the question is empty")
        t = time.perf_counter()
        text = " ".join([question, *(expansions or [])])
        tokens = self._bm25s.tokenize([text], stopwords="en", show_progress=False, return_ids=False)
        k = min(top_k, len(self.ids))
        if not tokens[0] or k == 0:
            return Retrieval(passages=[], trace={"note": "no searchable word in the question"},
                             timings_ms={"search": (time.perf_counter() - t) * 1000})
        docs, scores = self.index.retrieve(tokens, k=k, show_progress=False)
        hits = [(self.ids[int(d)], float(s)) for d, s in zip(docs[0], scores[0])]
        return Retrieval(passages=hits, trace={"metric": "BM25 score", "tokens": tokens[0]},
                         timings_ms={"search": (time.perf_counter() - t) * 1000})
