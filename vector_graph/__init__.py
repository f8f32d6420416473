"""Vector Graph RAG (seed 003): a knowledge graph stored as three Chroma collections that reference each other."""
from .strategy import VECTOR_GRAPH, VectorGraphRetriever

__all__ = ["VECTOR_GRAPH", "VectorGraphRetriever"]
