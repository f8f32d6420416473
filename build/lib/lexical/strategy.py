"""BM25 as a lab strategy."""
from __future__ import annotations

from collections.abc import Mapping

from core.contract import BuildContext, Strategy, Value
from indexes import BM25_INDEX

from .retriever import BM25Retriever


def build(ctx: BuildContext, params: Mapping[str, Value]) -> BM25Retriever:
    return BM25Retriever(ctx.shared(BM25_INDEX))


BM25 = Strategy("bm25", "BM25", "Lexical baseline: BM25 word matching, no embeddings.", build,
                products=(BM25_INDEX,))
