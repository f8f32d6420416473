"""The knowledge graph graph strategies share: LLM OpenIE -> phrase and passage nodes (NetworkX) -> PageRank.

Built once per build and passed to every strategy that asks for ``KNOWLEDGE_GRAPH``; no strategy reaches into
another for it.
"""
from .build import KNOWLEDGE_GRAPH, GraphBuild, build_or_load, missing_triples, passage_triples
from .graph import Fact, KnowledgeGraph, build_graph
from .ppr import ENGINES, PPRResult

__all__ = ["ENGINES", "KNOWLEDGE_GRAPH", "Fact", "GraphBuild", "KnowledgeGraph", "PPRResult", "build_graph",
           "build_or_load", "missing_triples", "passage_triples"]
