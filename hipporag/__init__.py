"""HippoRAG: LLM OpenIE -> knowledge graph (NetworkX) -> Personalized PageRank passage ranking."""
from .graph import KnowledgeGraph, build_graph
from .index import GraphBuild, build_or_load, passage_triples
from .retriever import ChatModel, HippoConfig, HippoRAGRetriever

__all__ = ["ChatModel", "GraphBuild", "HippoConfig", "HippoRAGRetriever", "KnowledgeGraph", "build_graph",
           "build_or_load", "passage_triples"]
