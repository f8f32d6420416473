"""HippoRAG as lab strategies: its parameters and how it is built on the shared knowledge graph."""
from __future__ import annotations

from collections.abc import Mapping

from core.contract import BuildContext, Strategy, Value, params_of
from indexes import BM25_INDEX
from kg import KNOWLEDGE_GRAPH
from kg.walk import ChatModel, HippoConfig, HippoRAGRetriever

V2_PARAMS = params_of(HippoConfig, exclude=("linking",))
V1_PARAMS = tuple(p for p in V2_PARAMS if p.name in ("damping", "engine", "explain"))


def _builder(linking: str):
    def build(ctx: BuildContext, params: Mapping[str, Value]) -> HippoRAGRetriever:
        graph = ctx.shared(KNOWLEDGE_GRAPH).graph
        chat = ChatModel(ctx.backend.client, ctx.backend.model) if ctx.backend else None
        # BM25 is built in memory in milliseconds: always there for the lexical prior (lexical_weight)
        return HippoRAGRetriever(graph, ctx.embedder, HippoConfig(linking=linking), chat=chat,
                                 lexical=ctx.shared(BM25_INDEX) if linking == "v2" else None)
    return build


HIPPORAG = Strategy(
    "hipporag", "HippoRAG", "Facts linked by embedding seed a Personalized PageRank walk over the knowledge graph "
    "(HippoRAG 2 linking).", _builder("v2"), params=V2_PARAMS, uses_triples=True,
    products=(KNOWLEDGE_GRAPH, BM25_INDEX))
HIPPORAG_V1 = Strategy(
    "hipporag-v1", "HippoRAG v1", "An LLM names the question's entities; each links to its closest graph node; "
    "phrase-only PageRank (the seed article's method).", _builder("v1"), params=V1_PARAMS,
    needs_llm=True, uses_triples=True, products=(KNOWLEDGE_GRAPH,), extra_llm_calls=lambda values, top_k: 1)  # question NER
