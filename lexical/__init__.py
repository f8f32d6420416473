"""Lexical retrieval: BM25, a reference baseline that uses no embeddings at all."""
from .bm25 import BM25Retriever

__all__ = ["BM25Retriever"]
