"""hubmesh as a lab strategy: the real ``hubmesh`` package over our Chroma collection and embedder.

At build time an entity-document graph is made without an LLM (spaCy NER, or the knowledge graph's OpenIE
phrases); at query time hubmesh runs Personalized PageRank from the question's entities and fuses cosine relevance,
PPR diffusion and its multi-anchor convergence term, as the package does: zero LLM tokens, deterministic.
"""
from __future__ import annotations

import time
from collections.abc import Mapping

from core.contract import BuildContext, BuildReport, Strategy, Value, params_of, settings_with
from indexes import VECTOR_INDEX
from kg import KNOWLEDGE_GRAPH
from kg.nlp import load_spacy

from .entities import SavedMentions, phrase_mentions, spacy_mentions
from .retriever import UNLIMITED_TOKENS, HubmeshRetriever, HubmeshSettings


def build(ctx: BuildContext, params: Mapping[str, Value]) -> HubmeshRetriever:
    from hubmesh import Document, Planner
    from hubmesh.kg import build_entity_kg

    from .store import PreloadedStore

    started = time.perf_counter()
    index = ctx.shared(VECTOR_INDEX)
    passages = ctx.case.passages
    if params["entities"] == "openie":
        g = ctx.shared(KNOWLEDGE_GRAPH).graph
        found = phrase_mentions(passages, g.phrases, g.phrase_passages)
    else:
        found = spacy_mentions(passages, ctx.storage.ner_dir)
    kg = build_entity_kg([Document(id=p.id, text=p.text) for p in passages], nlp=SavedMentions(found))
    planner = Planner(store=PreloadedStore(index.client, index.collection, index.vectors()), kg=kg, nlp=load_spacy())
    retriever = HubmeshRetriever(planner, kg, index, ctx.embedder, settings_with(HubmeshSettings(), params))
    if passages:   # one query at build time makes hubmesh's document matrix, so the first question is quick
        planner.retrieve(passages[0].text[:200], top_k=1, budget_tokens=UNLIMITED_TOKENS,
                         query_vec=ctx.embedder.embed([passages[0].text[:200]])[0])
    entities = sum(1 for n in kg.graph.nodes if str(n).startswith("ent:"))
    ctx.reports.append(BuildReport("hubmesh entity graph", round((time.perf_counter() - started) * 1000, 1),
                                   counts={"entities": entities, "edges": kg.graph.number_of_edges()},
                                   details={"entities from": str(params["entities"])}))
    return retriever


HUBMESH = Strategy(
    "hubmesh", "hubmesh", "Entity-document graph from spaCy NER (no LLM); PageRank from the question's entities "
    "fused with cosine relevance by the hubmesh package; zero LLM tokens per query.", build,
    params=params_of(HubmeshSettings),
    products=lambda p: (VECTOR_INDEX, KNOWLEDGE_GRAPH) if p["entities"] == "openie" else (VECTOR_INDEX,))
