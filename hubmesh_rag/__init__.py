"""hubmesh (seed 002): an LLM-free entity-document graph and PageRank, fused with cosine relevance."""
from .strategy import HUBMESH, HubmeshRetriever

__all__ = ["HUBMESH", "HubmeshRetriever"]
