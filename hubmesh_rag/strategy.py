"""hubmesh (seed 002) as a lab strategy: the real ``hubmesh`` package over our Chroma collection and embedder.

At build time an entity-document graph is made without an LLM (spaCy NER, or the knowledge graph's OpenIE
phrases); at query time hubmesh runs Personalized PageRank from the question's entities and fuses cosine relevance,
PPR diffusion and its multi-anchor convergence term, as the package does: zero LLM tokens, deterministic.
"""
from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from casebook.contract import BuildContext, BuildReport, Param, Strategy, Value
from casebook.types import Evidence, Explanation, PathStep, Retrieval, Seed
from indexes import VECTOR_INDEX, VectorIndex
from kg import KNOWLEDGE_GRAPH
from llm import Embedder

from .entities import Mentions, load_spacy, phrase_mentions, spacy_mentions

UNLIMITED_TOKENS = 10**9   # hubmesh packs to a token budget; the lab compares top-k lists, so the budget never binds

PARAMS = (
    Param("entities", "spacy", "where the entity graph's entities come from: spaCy NER, or the knowledge graph's "
          "OpenIE phrases", choices=("spacy", "openie"), build_time=True),
    Param("seed_entities", "", "extra entity names (comma-separated) that join the question's own as PageRank "
          "seeds: steer the walk"),
    Param("exclude_docs", "", "passage ids (comma-separated) hubmesh must not return, e.g. ones already read"),
)


class HubmeshRetriever:
    def __init__(self, planner, kg, index: VectorIndex, embedder: Embedder):
        self.planner, self.kg, self.index, self.embedder = planner, kg, index, embedder

    def retrieve(self, question: str, top_k: int, expansions: Sequence[str] = (),
                 params: Mapping[str, object] | None = None) -> Retrieval:
        if not question or not question.strip():
            raise ValueError("the question is empty")
        p = HUBMESH.values(params)
        text = " ".join([question.strip(), *expansions])
        ex = Explanation(method="hubmesh: cosine relevance + PageRank diffusion over its entity-document graph + "
                                "multi-anchor convergence; zero LLM tokens", queries=[text])
        with ex.stage("embed"):
            vector = self.embedder.embed([text])[0]
        injected = _names(p["seed_entities"])
        with ex.stage("hubmesh", "question NER, PageRank, scoring, packing"):
            result = self.planner.retrieve(text, top_k=top_k, budget_tokens=UNLIMITED_TOKENS, query_vec=vector,
                                           seed_entities=injected or None,
                                           exclude_docs=_names(p["exclude_docs"]) or None)
        label = self.kg.entity_node_to_label
        mentions = result.debug.get("query_mentions", [])
        linked = self.kg.query_entity_nodes(mentions) + (self.kg.query_entity_nodes(injected) if injected else [])
        seeds = result.debug.get("ppr_seeds", [])
        ex.seeds = [Seed(label.get(s, s), round(1 / len(seeds), 6)) for s in seeds]
        if not self.kg.entity_to_docs:
            ex.fallback = "no entity was found in the documents: ranked by cosine relevance alone"
        elif not linked:
            ex.fallback = ("the question names no entity of the graph: the walk starts from the entities of the top "
                           "cosine passages (hubmesh's fallback)")
        ex.evidence = [Evidence(f"{s.doc.id}: cosine {s.similarity:.3f}, PageRank {s.ppr_score:.5f}",
                                round(s.composite_score, 6), True, "composite score") for s in result.sources]
        for m in mentions:
            known = bool(self.kg.query_entity_nodes([m]))
            ex.evidence.append(Evidence(f"question mention '{m}'", 1.0, known,
                                        "linked to the graph" if known else "not in the graph"))
        ex.paths = {path.node_ids[-1][4:]: [self._step(a, b) for a, b in zip(path.node_ids, [*path.node_ids[1:], None],
                                                                            strict=True)]
                    for path in result.reasoning if path.node_ids[-1].startswith("doc:")}
        return Retrieval([(s.doc.id, float(s.composite_score)) for s in result.sources], ex)

    def _step(self, node: str, nxt: str | None) -> PathStep:
        graph = self.kg.graph
        kind = "passage" if node.startswith("doc:") else "entity"
        name = node[4:] if kind == "passage" else self.kg.entity_node_to_label.get(node, node)
        relation = "" if nxt is None else {"mentions": "mentions" if kind == "passage" else "mentioned in",
                                           "co_occurs": "appears with"}.get(graph.edges[node, nxt].get("kind"), "")
        return PathStep(name, kind, relation)


def _names(text: object) -> list[str]:
    return [t.strip() for t in str(text).split(",") if t.strip()]


def build(ctx: BuildContext, params: Mapping[str, Value]) -> HubmeshRetriever:
    from hubmesh import Document, Planner
    from hubmesh.adapters import ChromaStore
    from hubmesh.kg import build_entity_kg

    started = time.perf_counter()
    index = ctx.shared(VECTOR_INDEX)
    passages = ctx.case.passages
    if params["entities"] == "openie":
        g = ctx.shared(KNOWLEDGE_GRAPH).graph
        found = phrase_mentions(passages, g.phrases, g.phrase_passages)
    else:
        found = spacy_mentions(passages, ctx.storage.data_dir / "hubmesh")
    kg = build_entity_kg([Document(id=p.id, text=p.text) for p in passages], nlp=Mentions(found))
    planner = Planner(store=ChromaStore(index.client, index.collection), kg=kg, nlp=load_spacy())
    retriever = HubmeshRetriever(planner, kg, index, ctx.embedder)
    if passages:   # one query at build time loads every passage vector from Chroma, so the first question is quick
        planner.retrieve(passages[0].text[:200], top_k=1, budget_tokens=UNLIMITED_TOKENS,
                         query_vec=ctx.embedder.embed([passages[0].text[:200]])[0])
    entities = sum(1 for n in kg.graph.nodes if str(n).startswith("ent:"))
    ctx.reports.append(BuildReport("hubmesh entity graph", round((time.perf_counter() - started) * 1000, 1),
                                   counts={"entities": entities, "edges": kg.graph.number_of_edges()},
                                   details={"entities from": str(params["entities"])}))
    return retriever


HUBMESH = Strategy(
    "hubmesh", "hubmesh", "Entity-document graph from spaCy NER (no LLM); PageRank from the question's entities "
    "fused with cosine relevance by the hubmesh package; zero LLM tokens per query (seed 002).", build,
    params=PARAMS, products=lambda p: (VECTOR_INDEX, KNOWLEDGE_GRAPH) if p["entities"] == "openie" else (VECTOR_INDEX,))
