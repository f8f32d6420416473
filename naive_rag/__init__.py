"""Naive RAG: passages embedded into ChromaDB, top-k by cosine similarity."""
from .index import IndexStoreError, VectorIndex, open_chroma
from .retriever import NaiveRetriever

__all__ = ["IndexStoreError", "NaiveRetriever", "VectorIndex", "open_chroma"]
