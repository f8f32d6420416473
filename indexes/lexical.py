"""A BM25 index over a case's passages (bm25s): built in memory in milliseconds, so it is not saved."""
from __future__ import annotations

import logging
import time
from collections.abc import Sequence

import numpy as np

from core.contract import BuildContext, BuildReport, Product
from core.types import Passage


class BM25Index:
    def __init__(self, passages: Sequence[Passage]):
        import bm25s

        # bm25s sets its own logger to DEBUG when imported, so its "Building index from IDs" lines reach the CLI's
        # and the app's handlers as if they mattered: back to the default threshold.
        logging.getLogger("bm25s").setLevel(logging.WARNING)
        self._bm25s = bm25s
        self.ids = [p.id for p in passages]
        self.index = bm25s.BM25()
        self.index.index(bm25s.tokenize([p.embedding_text for p in passages], stopwords="en", show_progress=False),
                         show_progress=False)

    def tokens(self, text: str) -> list[str]:
        """The words BM25 matches on (English stopwords removed)."""
        return self._bm25s.tokenize([text], stopwords="en", show_progress=False, return_ids=False)[0]

    def scores(self, text: str) -> np.ndarray:
        """Every passage's BM25 score for ``text``, in ``ids`` order (no ranking: what a prior over all passages
        needs); zeros when the text has no word the passages have."""
        tokens = [t for t in self.tokens(text) if t in self.index.vocab_dict]
        if not tokens:
            return np.zeros(len(self.ids))
        return np.asarray(self.index.get_scores(tokens), dtype=float)

    def search(self, text: str, k: int) -> list[tuple[str, float]]:
        """The top-k (passage id, BM25 score), best first; [] when the text has no searchable word. Passages that
        share no word with the text come last with score 0 (fusion ranks them; the BM25 strategy drops them)."""
        tokens = self.tokens(text)
        k = min(k, len(self.ids))
        if not tokens or k == 0:
            return []
        docs, scores = self.index.retrieve([tokens], k=k, show_progress=False)
        return [(self.ids[int(d)], float(s)) for d, s in zip(docs[0], scores[0], strict=True)]


def _make(ctx: BuildContext) -> BM25Index:
    started = time.perf_counter()
    index = BM25Index(ctx.case.passages)
    ctx.reports.append(BuildReport(name="bm25 index", elapsed_ms=round((time.perf_counter() - started) * 1000, 1),
                                   counts={"passages": len(index.ids)}))
    return index


BM25_INDEX: Product[BM25Index] = Product("bm25 index", _make)
