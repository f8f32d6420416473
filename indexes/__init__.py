"""Indexes several strategies share, each a build ``Product``: the Chroma vector index and a BM25 index."""
from . import fusion
from .fusion import hybrid_search, rank_evidence, rrf
from .lexical import BM25_INDEX, BM25Index
from .vector import VECTOR_INDEX, IndexStoreError, VectorIndex, cosine_collection, open_chroma, writing_chroma

__all__ = ["fusion", "BM25_INDEX", "VECTOR_INDEX", "BM25Index", "IndexStoreError", "VectorIndex", "cosine_collection",
           "hybrid_search", "open_chroma", "rank_evidence", "rrf", "writing_chroma"]
