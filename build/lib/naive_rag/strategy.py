"""Naive RAG as a lab strategy: the case's passages in Chroma, searched by cosine."""
from __future__ import annotations

from collections.abc import Mapping

from core.contract import BuildContext, Strategy, Value
from indexes import VECTOR_INDEX

from .retriever import NaiveRetriever


def build(ctx: BuildContext, params: Mapping[str, Value]) -> NaiveRetriever:
    return NaiveRetriever(ctx.shared(VECTOR_INDEX), ctx.embedder)


NAIVE = Strategy("naive", "Naive RAG", "Question embedding, top-k passages by cosine similarity in ChromaDB.", build,
                 products=(VECTOR_INDEX,))
