"""BM25 over the case's passages (bm25s), with the same retrieve interface as every strategy."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from casebook.types import Explanation, Passage, Retrieval


class BM25Retriever:
    def __init__(self, passages: Sequence[Passage]):
        import bm25s

        self._bm25s = bm25s
        self.ids = [p.id for p in passages]
        self.index = bm25s.BM25()
        self.index.index(bm25s.tokenize([p.embedding_text for p in passages], stopwords="en", show_progress=False),
                         show_progress=False)

    def retrieve(self, question: str, top_k: int, expansions: Sequence[str] = (),
                 params: Mapping[str, object] | None = None) -> Retrieval:
        if not question or not question.strip():
            raise ValueError("the question is empty")
        text = " ".join([question, *expansions])
        ex = Explanation(method="BM25 word-match score (English stopwords removed)", queries=[text])
        with ex.stage("search"):
            tokens = self._bm25s.tokenize([text], stopwords="en", show_progress=False, return_ids=False)
            k = min(top_k, len(self.ids))
            hits: list[tuple[str, float]] = []
            if tokens[0] and k:
                docs, scores = self.index.retrieve(tokens, k=k, show_progress=False)
                hits = [(self.ids[int(d)], float(s)) for d, s in zip(docs[0], scores[0], strict=True)]
        if not tokens[0]:
            ex.fallback = "no searchable word in the question"
        return Retrieval(hits, ex)
