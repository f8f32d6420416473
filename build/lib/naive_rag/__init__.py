"""Naive RAG: passages embedded into ChromaDB (the shared vector index), top-k by cosine similarity."""
from .retriever import NaiveRetriever
from .strategy import NAIVE

__all__ = ["NAIVE", "NaiveRetriever"]
