"""Naive RAG: passages embedded into ChromaDB, top-k by cosine similarity."""
from .index import IndexStoreError, VectorIndex, open_chroma
from .retriever import NaiveRetriever
from .strategy import NAIVE

__all__ = ["NAIVE", "IndexStoreError", "NaiveRetriever", "VectorIndex", "open_chroma"]
