"""Hybrid retrieval (seed 004): BM25 and dense rankings fused by Reciprocal Rank Fusion."""
from .strategy import HYBRID, HybridRetriever

__all__ = ["HYBRID", "HybridRetriever"]
