"""Lexical retrieval: BM25, a reference baseline that uses no embeddings at all."""
from .retriever import BM25Retriever
from .strategy import BM25

__all__ = ["BM25", "BM25Retriever"]
