"""Vector Graph RAG: a knowledge graph stored as three Chroma collections that reference each other."""
from .retriever import VectorGraphRetriever, VectorGraphSettings
from .strategy import VECTOR_GRAPH

__all__ = ["VECTOR_GRAPH", "VectorGraphRetriever", "VectorGraphSettings"]
