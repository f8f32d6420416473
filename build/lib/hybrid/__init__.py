"""Hybrid retrieval: BM25 and dense rankings fused by Reciprocal Rank Fusion."""
from .retriever import HybridRetriever, HybridSettings
from .strategy import HYBRID

__all__ = ["HYBRID", "HybridRetriever", "HybridSettings"]
