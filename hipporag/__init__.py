"""HippoRAG: question -> linked facts or entities -> Personalized PageRank over the knowledge graph -> passages."""
from kg.walk import ChatModel, HippoConfig, HippoRAGRetriever

from .strategy import HIPPORAG, HIPPORAG_V1

__all__ = ["HIPPORAG", "HIPPORAG_V1", "ChatModel", "HippoConfig", "HippoRAGRetriever"]
