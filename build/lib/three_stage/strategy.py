"""The 3-stage pipeline (from the hybrid-retrieval article), on the lab's shared indexes and knowledge graph.

1. **Hybrid** (always): dense + BM25 fused by weighted RRF, a pool of candidates.
2. **Graph boost** (always, cheap): the entities of the top-k passages and their 1-hop neighbours in the graph;
   every pool passage that mentions one gets its score x ``boost``. It only re-orders the pool: the graph never
   competes with the hybrid ranking for a place, it adjusts scores already on the list.
3. **Graph expansion** (only when earned): Personalized PageRank from the entities the question names, when the
   hybrid ranking is unsure (the gap between its best score and the first one outside the top-k is below
   ``margin`` of the best) or the question names ``min_entities`` or more graph entities. Its passages join the
   pool and their PageRank mass is added to the scores.
"""
from __future__ import annotations

from collections.abc import Mapping

from core.contract import BuildContext, Strategy, Value, params_of
from indexes import BM25_INDEX, VECTOR_INDEX
from kg import KNOWLEDGE_GRAPH

from .retriever import ThreeStageRetriever, ThreeStageSettings


def build(ctx: BuildContext, params: Mapping[str, Value]) -> ThreeStageRetriever:
    return ThreeStageRetriever(ctx.shared(VECTOR_INDEX), ctx.shared(BM25_INDEX), ctx.shared(KNOWLEDGE_GRAPH).graph,
                               ctx.embedder)


THREE_STAGE = Strategy(
    "three-stage", "3-stage pipeline", "Hybrid always; a cheap 1-hop graph boost always; PageRank graph expansion "
    "only when the hybrid ranking is unsure or the question names several entities.", build,
    params=params_of(ThreeStageSettings), uses_triples=True, products=(VECTOR_INDEX, BM25_INDEX, KNOWLEDGE_GRAPH))
