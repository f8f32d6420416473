"""BM25 retrieval over the shared BM25 index, with the same retrieve interface as every strategy."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from core.types import Explanation, Retrieval
from indexes import BM25Index


class BM25Retriever:
    def __init__(self, index: BM25Index):
        self.index = index

    def retrieve(self, question: str, top_k: int, expansions: Sequence[str] = (),
                 params: Mapping[str, object] | None = None) -> Retrieval:
        text = " ".join([question, *expansions])
        ex = Explanation(method="BM25 word-match score (English stopwords removed)", queries=[text])
        with ex.stage("search"):
            hits = self.index.search(text, top_k)
        unmatched = sum(1 for _, score in hits if score <= 0)
        if hits and unmatched == len(hits):   # no passage shares a word: a ranking by index order means nothing
            hits = []
        elif unmatched:
            ex.fallback = f"{unmatched} of the {len(hits)} passages share no word with the question (score 0, in " \
                          "index order)"
        if not hits:
            ex.fallback = ("no word of the question occurs in any passage" if self.index.tokens(text)
                           else "no searchable word in the question")
        return Retrieval(hits, ex)
