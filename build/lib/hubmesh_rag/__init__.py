"""hubmesh: an LLM-free entity-document graph and PageRank, fused with cosine relevance."""
from .retriever import HubmeshRetriever, HubmeshSettings
from .strategy import HUBMESH

__all__ = ["HUBMESH", "HubmeshRetriever", "HubmeshSettings"]
